import Foundation
import HummingbirdBcrypt
import NIOPosix
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
    /// Too many failures in a minute: no password is checked until `until` (ms since 1970).
    case locked(until: Int64)
}

/// The dashboard's accounts: creation (bcrypt hashes, never a password at rest), sign-in with a lockout that every
/// server on the database shares, password changes.
public struct DashboardAccounts: Sendable {
    /// Failures allowed within `failureWindow` before the account locks for `lockout`.
    public static let maxFailures: Int64 = 5
    public static let failureWindow: Int64 = 60_000
    public static let lockout: Int64 = 60_000
    /// bcrypt reads at most 72 bytes: a longer password would be cut silently, so it is refused.
    public static let passwordBytes = 12...72
    public static let defaultCost: UInt8 = 12

    let database: StorageDatabase
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
        let hash = try await Self.hash(password, cost: cost)
        let record = DashboardUserRecord(
            id: UUID().uuidString.lowercased(), email: email, passwordHash: hash, allApps: allApps, apps: allApps ? [] : apps,
            createdAt: clock().millisecondsSince1970)
        guard try await database.writing({ try await $0.insertDashboardUser(record) }) else {
            throw CoreError.invalidInput(field: "email", "a user with the email \(email) exists already")
        }
        return (DashboardUser(record), generated)
    }

    /// Checks a password, counting failures per account: the fifth wrong one within a minute locks the account for
    /// a minute, during which no password is checked at all.
    public func signIn(email: String, password: String) async throws -> SignInOutcome {
        guard let email = try? Self.normalised(email: email),
            let record = try await database.reading({ try await $0.dashboardUser(email: email) })
        else {
            // The same work as for a real account, so that timing does not tell which emails exist.
            _ = try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: Self.decoyHash) }
            return .wrongCredentials
        }
        let now = clock().millisecondsSince1970
        if let until = record.lockedUntil, now < until { return .locked(until: until) }
        var matches = false
        if password.utf8.count <= Self.passwordBytes.upperBound { matches = try await Self.verify(password, hash: record.passwordHash) }
        let verified = matches
        return try await database.writing { session in
            try await session.lockDashboardUser(id: record.id)
            guard let current = try await session.dashboardUser(id: record.id) else { return .wrongCredentials }
            if let until = current.lockedUntil, now < until { return .locked(until: until) }
            if verified {
                try await session.updateSignIn(user: current.id, failures: 0, failuresSince: nil, lockedUntil: nil, signedInAt: now)
                return .signedIn(DashboardUser(current))
            }
            let windowOpen = current.failuresSince.map { now - $0 < Self.failureWindow } ?? false
            let failures = windowOpen ? current.failures + 1 : 1
            let since = windowOpen ? current.failuresSince : now
            if failures >= Self.maxFailures {
                let until = now + Self.lockout
                try await session.updateSignIn(user: current.id, failures: 0, failuresSince: nil, lockedUntil: until, signedInAt: nil)
                return .locked(until: until)
            }
            try await session.updateSignIn(user: current.id, failures: failures, failuresSince: since, lockedUntil: nil, signedInAt: nil)
            return .wrongCredentials
        }
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

    /// Sets a new password (given, or generated and returned); clears failures and any lockout.
    public func resetPassword(email: String, password: String?, cost: UInt8 = Self.defaultCost) async throws -> String? {
        let email = try Self.normalised(email: email)
        let generated = password == nil ? Self.generatedPassword() : nil
        let password = try Self.checked(password: password ?? generated ?? "")
        guard let user = try await database.reading({ try await $0.dashboardUser(email: email) }) else {
            throw CoreError.invalidInput(field: "email", "no user has the email \(email)")
        }
        let hash = try await Self.hash(password, cost: cost)
        try await database.writing { try await $0.updatePassword(user: user.id, passwordHash: hash) }
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

    /// A hash of no one's password, checked when the email is unknown (made on first use, on the thread pool).
    static let decoyHash = Bcrypt.hash(generatedPassword(), cost: defaultCost)

    // bcrypt is slow on purpose: off the cooperative pool.
    static func hash(_ password: String, cost: UInt8) async throws -> String {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    static func verify(_ password: String, hash: String) async throws -> Bool {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: hash) }
    }
}
