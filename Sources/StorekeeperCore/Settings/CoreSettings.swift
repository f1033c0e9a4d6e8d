import Configuration
import Foundation
import Logging
import Storage

/// A configuration value that cannot be used: which key, and why.
public struct SettingError: Error, Sendable, CustomStringConvertible {
    public var key: String
    public var message: String

    public init(key: String, _ message: String) {
        self.key = key
        self.message = message
    }

    public var description: String { "\(key): \(message)" }
}

/// What the domain is configured with, read once from a swift-configuration reader (command-line arguments, then
/// `STOREKEEPER_*` environment variables, then the defaults below, each written here only).
public struct CoreSettings: Sendable {
    /// The keys, as the reader knows them (`storekeeper.database.url` is `STOREKEEPER_DATABASE_URL`).
    public enum Key {
        public static let databaseURL = "storekeeper.database.url"
        public static let migrate = "storekeeper.migrate"
        public static let logLevel = "storekeeper.log.level"
        public static let reconcileInterval = "storekeeper.reconcile.interval"
        public static let cacheTTL = "storekeeper.cache.ttl"
        public static let allowPrivateWebhooks = "storekeeper.allow.private.webhooks"
        public static let allowCustomAppleURLs = "storekeeper.allow.custom.apple.urls"
        public static let deliveryLease = "storekeeper.delivery.lease"
        public static let deliveryYield = "storekeeper.delivery.yield"
        public static let signingKey = "storekeeper.signing.key"
        public static let signingKeyFile = "storekeeper.signing.key.file"
        public static let signingRotation = "storekeeper.signing.rotation"
        public static let responseSigning = "storekeeper.response.signing"
        public static let ratesURL = "storekeeper.rates.url"
        public static let signInPerMinute = "storekeeper.signin.per.minute"
        public static let signInQueue = "storekeeper.signin.queue"
        public static let newIdsPerMinute = "storekeeper.new.ids.per.minute"
        public static let unclaimedIdsDays = "storekeeper.unclaimed.ids.days"
    }

    /// Where the data lives: `./storekeeper.sqlite` unless told otherwise.
    public var database: DatabaseLocation = .defaultSQLite
    /// Apply pending migrations at start. A new SQLite file is always migrated.
    public var migrate = false
    public var logLevel: Logger.Level = .info
    /// How often reconciliation runs inside the server; nil turns it off.
    public var reconcileInterval: Duration? = .seconds(600)
    /// How long a cached app, key, customer id or state is trusted before the database is asked again.
    public var cacheTTL: Duration = .seconds(1)
    /// Whether destinations may be internal addresses (loopback, private, link-local): off, against server-side
    /// request forgery; tests and internal receivers turn it on.
    public var allowPrivateWebhooks = false
    /// Whether an app's `serverAPI.baseURL` and `verifyReceiptURLs` may name hosts other than Apple's (`AppleURLPolicy`):
    /// off, since the calls carry the app's credentials; the simulator and tests turn it on.
    public var allowCustomAppleURLs = false
    /// How long a delivery worker holds a claimed batch before its rows are due again (a killed server's come back
    /// after this). Longer than a batch can take: four rounds of 15-second requests.
    public var deliveryLease: Duration = .seconds(120)
    /// How much deliveries give way to ingest: while notifications and purchases are being recorded all the time, a
    /// delivery lane rests this many times as long as each batch took (in proportion to how busy ingest was), so that
    /// at most 1 / (1 + yield) of its pace competes with ingest for the cores. What waits is delivered once ingest
    /// quietens. 0 delivers at full pace whatever ingest is doing. What a value costs ingest is measured by
    /// `Benchmarks/outbox.sh` (its second part).
    public var deliveryYield: Double = 10
    /// How often due answers to refund requests are looked for; nil: not by this process (tests drive the worker).
    public var refundAnswerInterval: Duration? = .seconds(1)
    /// The root signing key's private half, base64 (`STOREKEEPER_SIGNING_KEY`); nil: the key file.
    public var signingKey: String?
    /// The root signing key's file; nil: `storekeeper-signing.key` beside the SQLite database (`SigningRootKey`).
    public var signingKeyFile: String?
    /// How long one intermediate signing key signs before the next replaces it: a day.
    public var signingRotation: Duration = .seconds(86_400)
    /// Whether the customer API's answers are signed (README "Answers the device can trust"). Off only to measure
    /// what signing costs: an app in `enforced` mode refuses unsigned answers.
    public var responseSigning = true

    /// Where the exchange rates are fetched from every day (`STOREKEEPER_RATES_URL`): the ECB's reference rates of the
    /// last 90 days, in its XML layout; nil (an empty value, or `off`) fetches nothing.
    public var ratesURL: String? = RatesFeed.ecb90Days

    /// Dashboard sign-in attempts one client address may make a minute (as many at once), before any password is
    /// checked (`SignInThrottle`).
    public var signInPerMinute = 10
    /// Sign-ins that may wait for bcrypt's threads (`PasswordHashing`: half the cores) beyond those being checked;
    /// more are answered 429 at once.
    public var signInQueue = 8

    /// App user ids new to the server that one client address may have recorded by reads in a minute (their first
    /// sighting, and a customer made by a placement read); past it they are answered, not recorded.
    public var newIdsPerMinute = 120
    /// How long the first sighting of an app user id that never became a customer is kept; nil: for ever.
    public var unclaimedIdsRetention: Duration? = .seconds(30 * 86_400)

    /// The defaults.
    public init() {}

    /// Reads every setting, refusing a value that does not parse (never falling back to the default).
    public init(reader: ConfigReader) throws(SettingError) {
        if let url = reader.string(forKey: ConfigKey(Key.databaseURL), isSecret: true) {
            do { database = try DatabaseLocation(url: url) } catch { throw SettingError(key: Key.databaseURL, error.message) }
        }
        migrate = try Self.flag(reader, Key.migrate, default: migrate)
        if let level = reader.string(forKey: ConfigKey(Key.logLevel)) {
            guard let parsed = Logger.Level(rawValue: level) else {
                throw SettingError(
                    key: Key.logLevel, "unknown log level '\(level)': trace, debug, info, notice, warning, error or critical")
            }
            logLevel = parsed
        }
        if let seconds = try Self.seconds(reader, Key.reconcileInterval) {
            reconcileInterval = seconds == 0 ? nil : .seconds(seconds)
        }
        if let seconds = try Self.seconds(reader, Key.cacheTTL) { cacheTTL = .seconds(seconds) }
        allowPrivateWebhooks = try Self.flag(reader, Key.allowPrivateWebhooks, default: allowPrivateWebhooks)
        allowCustomAppleURLs = try Self.flag(reader, Key.allowCustomAppleURLs, default: allowCustomAppleURLs)
        if let seconds = try Self.seconds(reader, Key.deliveryLease) {
            guard seconds >= 1 else { throw SettingError(key: Key.deliveryLease, "at least 1 second") }
            deliveryLease = .seconds(seconds)
        }
        if let text = reader.string(forKey: ConfigKey(Key.deliveryYield)) {
            guard let value = Double(text), value.isFinite, (0...100).contains(value) else {
                throw SettingError(key: Key.deliveryYield, "a number from 0 to 100, not '\(text)'")
            }
            deliveryYield = value
        }
        signingKey = reader.string(forKey: ConfigKey(Key.signingKey), isSecret: true)
        signingKeyFile = reader.string(forKey: ConfigKey(Key.signingKeyFile))
        if let seconds = try Self.seconds(reader, Key.signingRotation) {
            guard seconds >= 60 else { throw SettingError(key: Key.signingRotation, "at least 60 seconds") }
            signingRotation = .seconds(seconds)
        }
        responseSigning = try Self.flag(reader, Key.responseSigning, default: responseSigning)
        if let count = try Self.count(reader, Key.signInPerMinute, in: 1...1_000_000) { signInPerMinute = count }
        if let count = try Self.count(reader, Key.signInQueue, in: 0...10_000) { signInQueue = count }
        if let count = try Self.count(reader, Key.newIdsPerMinute, in: 1...1_000_000) { newIdsPerMinute = count }
        if let days = try Self.count(reader, Key.unclaimedIdsDays, in: 0...36_500) {
            unclaimedIdsRetention = days == 0 ? nil : .seconds(days * 86_400)
        }
        if let url = reader.string(forKey: ConfigKey(Key.ratesURL)) {
            let trimmed = url.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed == "off" {
                ratesURL = nil
            } else {
                guard let parsed = URL(string: trimmed), ["http", "https"].contains(parsed.scheme), parsed.host != nil else {
                    throw SettingError(key: Key.ratesURL, "an http(s) URL, empty or off, not '\(url)'")
                }
                ratesURL = trimmed
            }
        }
    }

    /// A whole number in `range`, if the key is set.
    static func count(_ reader: ConfigReader, _ key: String, in range: ClosedRange<Int>) throws(SettingError) -> Int? {
        guard let text = reader.string(forKey: ConfigKey(key)) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw SettingError(key: key, "a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return value
    }

    /// A whole number of seconds ≥ 0, if the key is set.
    static func seconds(_ reader: ConfigReader, _ key: String) throws(SettingError) -> Int? {
        guard let text = reader.string(forKey: ConfigKey(key)) else { return nil }
        guard let value = Int(text), value >= 0 else { throw SettingError(key: key, "seconds ≥ 0, not '\(text)'") }
        return value
    }

    /// `true`/`false` (or `1`/`0`), if the key is set.
    public static func flag(_ reader: ConfigReader, _ key: String, default defaultValue: Bool) throws(SettingError) -> Bool {
        guard let text = reader.string(forKey: ConfigKey(key)) else { return defaultValue }
        switch text.lowercased() {
        case "true", "1", "yes": return true
        case "false", "0", "no": return false
        default: throw SettingError(key: key, "true or false, not '\(text)'")
        }
    }
}
