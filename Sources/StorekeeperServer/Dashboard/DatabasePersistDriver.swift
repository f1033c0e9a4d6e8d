import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Storage
import StorekeeperCore

/// Hummingbird's key-value persistence over the database (table `sessions`), so that the dashboard's sessions are
/// shared by every server on it and survive a restart. A key is stored as its SHA-256 (someone who reads the table,
/// or a backup of it, learns no session id a cookie could carry), with the signed-in user of a `DashboardSession`.
/// Values are stored as JSON; expired keys read as absent and are purged every `purgeInterval` while the service
/// runs.
struct DatabasePersistDriver: PersistDriver {
    let database: StorageDatabase
    let clock: @Sendable () -> Date
    var purgeInterval: Duration = .seconds(600)
    var logger: Logger

    private static let encoder = JSONEncoder()
    private static let decoder = JSONDecoder()

    private var now: Int64 { clock().millisecondsSince1970 }

    private func expiry(_ expires: Duration?) -> Int64? { expires.map { now + $0.wholeMilliseconds } }

    static func storedKey(_ key: String) -> String { DashboardAccounts.storedSessionKey(key) }

    private static func user(_ value: some Sendable) -> String? { (value as? DashboardSession)?.userId }

    func create<Object: Codable & Sendable>(key: String, value: Object, expires: Duration?) async throws {
        let json = try String(decoding: Self.encoder.encode(value), as: UTF8.self)
        let (expiresAt, now, key, user) = (expiry(expires), self.now, Self.storedKey(key), Self.user(value))
        guard try await database.writing({ try await $0.insertSession(key: key, value: json, user: user, expiresAt: expiresAt, now: now) })
        else {
            throw PersistError.duplicate
        }
    }

    func set<Object: Codable & Sendable>(key: String, value: Object, expires: Duration?) async throws {
        let json = try String(decoding: Self.encoder.encode(value), as: UTF8.self)
        let (expiresAt, key, user) = (expiry(expires), Self.storedKey(key), Self.user(value))
        try await database.writing {
            try await $0.upsertSession(key: key, value: json, user: user, expiresAt: expiresAt, keepExpiry: expires == nil)
        }
    }

    func get<Object: Codable & Sendable>(key: String, as type: Object.Type) async throws -> Object? {
        try await getWithTTL(key: key, as: type)?.object
    }

    func getWithTTL<Object: Codable & Sendable>(key: String, as type: Object.Type) async throws -> (object: Object, ttl: Duration?)? {
        let (now, key) = (self.now, Self.storedKey(key))
        guard let stored = try await database.reading({ try await $0.session(key: key, now: now) }) else { return nil }
        let object: Object
        do { object = try Self.decoder.decode(type, from: Data(stored.value.utf8)) } catch { throw PersistError.invalidConversion }
        return (object, stored.expiresAt.map { .milliseconds($0 - now) })
    }

    func remove(key: String) async throws {
        let key = Self.storedKey(key)
        try await database.writing { try await $0.deleteSession(key: key) }
    }

    /// Purges expired sessions until shutdown.
    func run() async throws {
        await everyUntilShutdown(purgeInterval, logger: logger, failure: "could not purge expired sessions") {
            let now = self.now
            let purged = try await database.writing { try await $0.purgeSessions(expiredBefore: now) }
            if purged > 0 { logger.debug("purged expired sessions", metadata: ["count": "\(purged)"]) }
        }
    }
}
