import Crypto
import Foundation
import HummingbirdBcrypt
import Storage

/// A person who signs in to the dashboard, and the apps they may see.
public struct DashboardUser: Sendable, Hashable {
    public var id: String
    public var email: String
    /// Every app (an operator).
    public var allApps: Bool
    /// The apps they may see, when not every app.
    public var apps: [String]

    public func canSee(app id: String) -> Bool { allApps || apps.contains(id) }

    init(_ record: DashboardUserRecord) {
        id = record.id
        email = record.email
        allApps = record.allApps
        apps = record.apps
    }
}

/// How a sign-in ended.
public enum SignInOutcome: Sendable, Equatable {
    case signedIn(DashboardUser)
    /// No such user, or the wrong password (which of the two is not said).
    case wrongCredentials
    /// Too many attempts from this client (or wrong passwords for this account from it): no password was checked;
    /// the next attempt is considered after `retryAfter` seconds. The same for accounts that do not exist.
    case throttled(retryAfter: Int64)
}

/// The dashboard's accounts: creation (bcrypt hashes, never a password at rest), sign-in throttled per client and
/// account (`SignInThrottle`) with bcrypt on its own threads (`PasswordHashing`), password changes that end the user's
/// sessions.
public struct DashboardAccounts: Sendable {
    /// bcrypt reads at most 72 bytes: a longer password would be cut silently, so it is refused.
    public static let passwordBytes = 12...72
    public static let defaultCost: UInt8 = 12

    let database: StorageDatabase
    public let hashing: PasswordHashing
    let throttle: SignInThrottle
    let clock: @Sendable () -> Date

    /// Creates a user who may see `apps` (or every app) with the given password, or a generated one (returned, to
    /// be shown once).
    public func create(
        email: String, password: String?, apps: [String], allApps: Bool, cost: UInt8 = Self.defaultCost
    ) async throws -> (user: DashboardUser, generatedPassword: String?) {
        let email = try Self.normalised(email: email)
        guard allApps || !apps.isEmpty else {
            throw CoreError.invalidInput(field: "apps", "name the apps the user may see, or give every app")
        }
        let generated = password == nil ? Self.generatedPassword() : nil
        let password = try Self.checked(password: password ?? generated ?? "")
        let unknown = try await database.reading { session in
            var missing: [String] = []
            for app in apps where try await session.app(id: app) == nil { missing.append(app) }
            return missing
        }
        if let first = unknown.first { throw CoreError.appNotFound(appId: first) }
        let hash = try await hashing.hash(password, cost: cost)
        let record = DashboardUserRecord(
            id: UUID().uuidString.lowercased(), email: email, passwordHash: hash, allApps: allApps, apps: allApps ? [] : apps,
            createdAt: clock().millisecondsSince1970)
        guard try await database.writing({ try await $0.insertDashboardUser(record) }) else {
            throw CoreError.invalidInput(field: "email", "a user with the email \(email) exists already")
        }
        return (DashboardUser(record), generated)
    }

    /// The seconds `client` must wait before its next sign-in attempt, nil when it may try now (nothing is counted).
    public func signInWait(client: String) -> Int64? {
        throttle.clientWait(client: client, now: clock().millisecondsSince1970).map { max(1, ($0 + 999) / 1000) }
    }

    /// Checks a password from `client` (an address). Whether the account exists, the work is the same: the throttle
    /// first, then a place in bcrypt's queue (429 at once without one), one database read, and one bcrypt verification
    /// (against a decoy hash for an unknown email, and with a password over 72 bytes cut to 72 and then refused), then
    /// the same answer.
    public func signIn(email: String, password: String, client: String) async throws -> SignInOutcome {
        let now = clock().millisecondsSince1970
        if let wait = throttle.admit(account: email, client: client, now: now) {
            return .throttled(retryAfter: max(1, (wait + 999) / 1000))
        }
        let fits = password.utf8.count <= Self.passwordBytes.upperBound
        let candidate = fits ? password : String(decoding: password.utf8.prefix(Self.passwordBytes.upperBound), as: UTF8.self)
        let (record, verified) = try await hashing.reserve { () async throws -> (DashboardUserRecord?, Bool) in
            let record: DashboardUserRecord?
            if let email = try? Self.normalised(email: email) {
                record = try await database.reading { try await $0.dashboardUser(email: email) }
            } else {
                record = nil
            }
            let hash = record?.passwordHash
            return (record, try await hashing.onThreads { Bcrypt.verify(candidate, hash: hash ?? Self.decoyHash) })
        }
        guard let record, verified, fits else {
            throttle.record(account: email, client: client, succeeded: false, now: now)
            return .wrongCredentials
        }
        throttle.record(account: email, client: client, succeeded: true, now: now)
        try await database.writing { try await $0.updateSignIn(user: record.id, signedInAt: now) }
        return .signedIn(DashboardUser(record))
    }

    /// The user a session names, nil if they were deleted since.
    public func user(id: String) async throws -> DashboardUser? {
        try await database.reading { try await $0.dashboardUser(id: id) }.map(DashboardUser.init)
    }

    /// The apps a user may see that exist, in the order stored (an operator's: every app).
    public func visibleApps(of user: DashboardUser, from apps: AppRegistry) async throws -> [AppRuntime] {
        let ids = user.allApps ? try await database.reading { try await $0.apps() }.map(\.id) : user.apps
        var visible: [AppRuntime] = []
        for id in ids {
            do { visible.append(try await apps.app(id: id)) } catch CoreError.appNotFound { continue }
        }
        return visible
    }

    public func users() async throws -> [DashboardUser] {
        try await database.reading { try await $0.dashboardUsers() }.map(DashboardUser.init)
    }

    /// Sets a new password (given, or generated and returned) and ends every session of the user.
    public func resetPassword(email: String, password: String?, cost: UInt8 = Self.defaultCost) async throws -> String? {
        let email = try Self.normalised(email: email)
        let generated = password == nil ? Self.generatedPassword() : nil
        let password = try Self.checked(password: password ?? generated ?? "")
        guard let user = try await database.reading({ try await $0.dashboardUser(email: email) }) else {
            throw CoreError.invalidInput(field: "email", "no user has the email \(email)")
        }
        let hash = try await hashing.hash(password, cost: cost)
        try await database.writing { session in
            try await session.updatePassword(user: user.id, passwordHash: hash)
            try await session.deleteSessions(user: user.id)
        }
        return generated
    }

    public func delete(email: String) async throws {
        let email = try Self.normalised(email: email)
        guard let user = try await database.reading({ try await $0.dashboardUser(email: email) }),
            try await database.writing({ try await $0.deleteDashboardUser(id: user.id) })
        else { throw CoreError.invalidInput(field: "email", "no user has the email \(email)") }
    }

    // MARK: - Rules

    /// An email as stored: trimmed, lowercased, one `@` between a local part and a domain, no spaces.
    static func normalised(email: String) throws(CoreError) -> String {
        let email = email.trimmingCharacters(in: .whitespaces).lowercased()
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard email.utf8.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
            !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
            email.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F })
        else { throw .invalidInput(field: "email", "\"\(email)\" is not an email address") }
        return email
    }

    static func checked(password: String) throws(CoreError) -> String {
        guard Self.passwordBytes.contains(password.utf8.count) else {
            throw .invalidInput(
                field: "password",
                "a password has \(Self.passwordBytes.lowerBound) to \(Self.passwordBytes.upperBound) bytes (bcrypt reads no more)")
        }
        return password
    }

    /// 20 characters from an alphabet without look-alikes (about 115 bits).
    static func generatedPassword() -> String {
        let alphabet = Array("23456789abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ")
        var generator = SystemRandomNumberGenerator()
        return String((0..<20).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
    }

    /// How a session key is stored: `sha256:` and its digest in hex, never the key itself (the ids are 128 random
    /// bits or more, so one unsalted hash is enough, as for API keys).
    public static func storedSessionKey(_ key: String) -> String { "sha256:" + Hex.encode(SHA256.hash(data: Data(key.utf8))) }

    /// A hash of no one's password, checked when the email is unknown (made on first use, on bcrypt's threads).
    static let decoyHash = Bcrypt.hash(generatedPassword(), cost: defaultCost)
}
