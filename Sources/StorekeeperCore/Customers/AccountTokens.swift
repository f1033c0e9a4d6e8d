import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import Storage

/// The appAccountToken of an app user id: the UUID the SDK passes to StoreKit's purchase option, which Apple puts in
/// every transaction and notification of the purchase, so that a notification finds its customer even when the app
/// user id is not a UUID and the app has not posted the purchase yet.
///
/// An app user id that is a UUID is its own token (the rule notifications always followed). Any other gets a UUID
/// derived from the app and the app user id (SHA-256, the version nibble set to 8, RFC 9562's custom version), which
/// the server registers when it first answers it, so that the token can be resolved back.
///
/// A read never writes on its own latency, and no client writes at will: the registration a read asks for (the id's
/// first sighting) is kept in memory and written in batches every second by `AccountTokenService`, at most
/// `newIds` new ids a minute per client address (the read is answered either way: the token is derived, not stored).
/// Tokens of ids that never became a customer are pruned after `unclaimedRetention`. Writes (a purchase, an alias)
/// register at once.
public final class AccountTokens: Sendable {
    let database: StorageDatabase
    let clock: @Sendable () -> Date
    /// New ids a client address may have registered by reads.
    let newIds: ClientRateLimiter
    /// How long a token whose app user id never became a customer is kept; nil: for ever.
    let unclaimedRetention: Duration?
    /// Tokens registered by this process, so that reads write at most once per app user id; bounded.
    private let registered = NIOLockedValueBox<Set<String>>([])
    private static let memoryLimit = 100_000
    /// Registrations asked by reads, waiting for the next batch (notifications of this server read them meanwhile).
    let pending: PendingSightings

    init(
        database: StorageDatabase, newIds: ClientRateLimiter, pending: PendingSightings, unclaimedRetention: Duration?,
        clock: @escaping @Sendable () -> Date
    ) {
        self.database = database
        self.newIds = newIds
        self.pending = pending
        self.unclaimedRetention = unclaimedRetention
        self.clock = clock
    }

    /// The token a read answers: registered in the next batch when the id is new to this process and `client` may
    /// still add new ids this minute. Never waits for the database.
    public func token(forRead appUserId: String, app appId: String, client: String) -> String {
        let token = Self.token(app: appId, appUserId: appUserId)
        guard token != appUserId.lowercased() else { return token }
        let key = PendingSightings.key(app: appId, token: token)
        guard !registered.withLockedValue({ $0.contains(key) }), !pending.contains(key) else { return token }
        let now = clock().millisecondsSince1970
        guard newIds.take(client: client, now: now) == nil else { return token }
        pending.add(key, PendingSightings.Sighting(app: appId, token: token, appUserId: appUserId, at: now))
        return token
    }

    /// Writes the registrations reads asked for since the last batch, in one transaction; how many.
    @discardableResult
    public func flush() async throws -> Int {
        let batch = pending.snapshot()
        guard !batch.isEmpty else { return 0 }
        // A failed batch stays pending for the next one.
        try await database.writing { session in
            for item in batch.values.sorted(by: { $0.at < $1.at }) {
                try await session.registerAccountToken(app: item.app, token: item.token, appUserId: item.appUserId, at: item.at)
            }
        }
        // Taken out only once written, so that a notification meanwhile still finds them.
        pending.remove(batch.keys)
        remember(batch.keys)
        return batch.count
    }

    /// Deletes the tokens of app user ids that never became a customer, registered before the retention; how many.
    @discardableResult
    public func pruneUnclaimed() async throws -> Int {
        guard let retention = unclaimedRetention else { return 0 }
        let before = clock().millisecondsSince1970 - retention.wholeMilliseconds
        let pruned = try await database.writing { try await $0.pruneUnclaimedAccountTokens(registeredBefore: before) }
        // A pruned id read again is registered again.
        if pruned > 0 { registered.withLockedValue { $0.removeAll(keepingCapacity: true) } }
        return pruned
    }

    private func remember(_ keys: some Sequence<String>) {
        registered.withLockedValue {
            if $0.count >= Self.memoryLimit { $0.removeAll(keepingCapacity: true) }
            for key in keys { $0.insert(key) }
        }
    }

    /// The token of `appUserId` in `appId`: lower-case UUID text.
    public static func token(app appId: String, appUserId: String) -> String {
        if let uuid = UUID(uuidString: appUserId) { return uuid.uuidString.lowercased() }
        var bytes = Array(SHA256.hash(data: Data("storekeeper.appAccountToken\u{0}\(appId)\u{0}\(appUserId)".utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let uuid = UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10],
                bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
        return uuid.uuidString.lowercased()
    }

    /// The token of `appUserId`, registered at once so that notifications carrying it resolve to `appUserId` (the
    /// write paths: a purchase, an alias).
    public func token(for appUserId: String, app appId: String) async throws -> String {
        let token = Self.token(app: appId, appUserId: appUserId)
        guard token != appUserId.lowercased() else { return token }
        let key = appId + "\u{0}" + token
        guard !registered.withLockedValue({ $0.contains(key) }) else { return token }
        let now = clock().millisecondsSince1970
        try await database.writing { try await $0.registerAccountToken(app: appId, token: token, appUserId: appUserId, at: now) }
        remember([key])
        return token
    }
}

/// First sightings a read asked to register, until their batch is written: what a notification of the same server
/// resolves a token by meanwhile (a purchase within a second of its customer's first read), and what the batch writes.
/// Bounded: past `limit`, a sighting is not recorded (the read is answered all the same).
final class PendingSightings: Sendable {
    struct Sighting: Sendable {
        var app: String
        var token: String
        var appUserId: String
        var at: Int64
    }

    static let limit = 20_000
    private let sightings = NIOLockedValueBox<[String: Sighting]>([:])

    static func key(app: String, token: String) -> String { app + "\u{0}" + token }

    func contains(_ key: String) -> Bool { sightings.withLockedValue { $0[key] != nil } }

    func add(_ key: String, _ sighting: Sighting) {
        sightings.withLockedValue {
            guard $0.count < Self.limit else { return }
            $0[key] = sighting
        }
    }

    func snapshot() -> [String: Sighting] { sightings.withLockedValue { $0 } }

    func remove(_ keys: some Sequence<String>) {
        sightings.withLockedValue { for key in keys { $0[key] = nil } }
    }

    /// The app user id a token was given to by a read whose sighting is not written yet.
    func appUserId(app: String, token: String) -> String? {
        sightings.withLockedValue { $0[Self.key(app: app, token: token)]?.appUserId }
    }
}

/// Writes the registrations reads asked for every second (and once more at shutdown, before the database closes), and
/// prunes unclaimed tokens every hour.
struct AccountTokenService: Service {
    let tokens: AccountTokens
    let logger: Logger
    var interval: Duration = .seconds(1)
    var pruneEvery: Duration = .seconds(3600)

    func run() async throws {
        var lastPrune = ContinuousClock.now - pruneEvery
        await everyUntilShutdown(interval, logger: logger, failure: "could not record the app user ids first seen") {
            try await tokens.flush()
            if ContinuousClock.now - lastPrune >= pruneEvery {
                lastPrune = ContinuousClock.now
                let pruned = try await tokens.pruneUnclaimed()
                if pruned > 0 { logger.info("pruned app user ids that never became customers", metadata: ["count": "\(pruned)"]) }
            }
        }
        do { try await tokens.flush() } catch {
            logger.warning("could not record the last app user ids first seen", metadata: ["error": "\(error)"])
        }
    }
}
