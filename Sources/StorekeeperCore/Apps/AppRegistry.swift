import AppStore
import Foundation
import NIOConcurrencyHelpers
import Storage

/// Who is calling: the app a key belongs to, resolved, and the kind of key.
public struct Caller: Sendable {
    public let app: AppRuntime
    public let keyKind: APIKeyRecord.Kind
}

/// The apps and API keys, read from the database and cached for a short time (`ttl`): a change made through this
/// process is seen at once (it invalidates), one made by another process within `ttl`.
public final class AppRegistry: Sendable {
    let database: StorageDatabase
    let chainCache = ChainCache(capacity: 1024)
    let clock: @Sendable () -> Date
    private let freshness: Freshness
    private let apps = NIOLockedValueBox<[String: AppRuntime]>([:])
    private let keys = NIOLockedValueBox<[String: (record: APIKeyRecord, loadedAt: UInt64)]>([:])

    public init(database: StorageDatabase, ttl: Duration, clock: @escaping @Sendable () -> Date) {
        self.database = database
        self.clock = clock
        self.freshness = Freshness(ttl)
    }

    /// The app with this id.
    public func app(id: String) async throws -> AppRuntime {
        guard !id.isEmpty, id.utf8.count <= 64 else { throw CoreError.appNotFound(appId: id) }
        if let cached = apps.withLockedValue({ $0[id] }), freshness.isFresh(cached.loadedAt) { return cached }
        guard let record = try await database.reading({ try await $0.app(id: id) }) else {
            throw CoreError.appNotFound(appId: id)
        }
        let runtime = try Self.runtime(record, cache: chainCache, clock: clock)
        apps.withLockedValue { $0[id] = runtime }
        return runtime
    }

    static func runtime(_ record: AppRecord, cache: ChainCache, clock: @escaping @Sendable () -> Date) throws(CoreError)
        -> AppRuntime
    {
        let config: AppConfiguration
        do {
            config = try JSONDecoder().decode(AppConfiguration.self, from: Data(record.config.utf8))
        } catch {
            throw .internalError("app \(record.id)'s stored configuration does not decode: \(DecodingErrorDescription.describe(error))")
        }
        return try AppRuntime(
            id: record.id, config: config, updatedAt: record.updatedAt, cache: cache, clock: clock, loadedAt: Freshness.now)
    }

    /// Forgets the app and its keys (after a change to either).
    public func invalidate(app id: String) {
        apps.withLockedValue { $0[id] = nil }
        keys.withLockedValue { $0 = $0.filter { $0.value.record.appId != id } }
    }

    /// Who a bearer token is. A missing, malformed, unknown or revoked key gets the same answer, so a caller learns
    /// nothing about which keys exist.
    public func authenticate(bearer token: String) async throws -> Caller {
        guard let presented = APIKeys.parse(token.trimmingCharacters(in: .whitespaces)) else {
            throw CoreError.unauthenticated("the API key is not valid")
        }
        var record = keys.withLockedValue { cache -> APIKeyRecord? in
            guard let hit = cache[presented.id], freshness.isFresh(hit.loadedAt) else { return nil }
            return hit.record
        }
        if record == nil {
            record = try await database.reading { try await $0.key(id: presented.id) }
            if let loaded = record {
                let now = Freshness.now
                keys.withLockedValue { $0[presented.id] = (loaded, now) }
            }
        }
        guard let record, record.revokedAt == nil, record.kind == presented.kind,
            APIKeys.constantTimeEqual(record.secretHash, APIKeys.hash(presented.secret))
        else {
            throw CoreError.unauthenticated("the API key is not valid")
        }
        return Caller(app: try await app(id: record.appId), keyKind: record.kind)
    }
}
