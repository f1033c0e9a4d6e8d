import Entitlements
import Foundation
import Storage

/// A new app and its first keys. The keys are shown here once; only their hashes are stored.
public struct CreatedApp: Codable, Sendable {
    public var appId: String
    public var publicKey: String
    public var secretKey: String
}

/// A new key, shown once, and how many keys of its kind it replaced.
public struct RotatedKey: Codable, Sendable {
    public var kind: APIKeyRecord.Kind
    public var key: String
    public var revoked: Int
}

/// An app as an operator reviews it: what identifies it, what it accepts, and its keys, never a secret.
public struct AppSummary: Codable, Sendable, Hashable {
    /// One key: its kind, the part that names it (`pk_<id>`, never the secret after it), when it was made and revoked.
    public struct Key: Codable, Sendable, Hashable {
        public var kind: APIKeyRecord.Kind
        public var prefix: String
        public var createdAt: Int64
        public var revokedAt: Int64?
    }

    public var appId: String
    public var bundleId: String
    public var appAppleId: Int64?
    public var environments: [String]
    public var products: Int
    public var createdAt: Int64
    public var updatedAt: Int64
    public var keys: [Key]
}

/// An entitlement and the products that grant it.
public struct EntitlementProducts: Codable, Sendable, Hashable {
    public var id: String
    public var productIds: [String]
}

/// Administers apps: creation, configuration and catalog changes, keys, and the app-wide reads (events, audit).
/// Every change invalidates what the caches hold of the app.
public struct AppAdministration: Sendable {
    let database: StorageDatabase
    let registry: AppRegistry
    let cache: CustomerStateCache
    let appleURLs: AppleURLPolicy
    let clock: @Sendable () -> Date

    public func create(_ config: AppConfiguration) async throws -> CreatedApp {
        try config.validate()
        try await appleURLs.validate(config)
        let appId = APIKeys.appId()
        let publicKey = APIKeys.generate(.public)
        let secretKey = APIKeys.generate(.secret)
        let json = try Self.encode(config)
        let now = clock().millisecondsSince1970
        try await database.writing { session in
            try await session.insertApp(AppRecord(id: appId, bundleId: config.bundleId, config: json, createdAt: now, updatedAt: now))
            for (kind, key) in [(APIKeyRecord.Kind.public, publicKey), (.secret, secretKey)] {
                try await session.insertKey(
                    APIKeyRecord(keyId: key.id, appId: appId, kind: kind, secretHash: key.secretHash, createdAt: now))
            }
        }
        return CreatedApp(appId: appId, publicKey: publicKey.key, secretKey: secretKey.key)
    }

    /// Replaces the app's configuration (validated first). Stored states of environments the app no longer allows
    /// are dropped; every cached state is forgotten (it was computed with the old catalog or environments).
    public func update(_ app: AppRuntime, to config: AppConfiguration) async throws {
        try config.validate()
        try await appleURLs.validate(config)
        let json = try Self.encode(config)
        let now = clock().millisecondsSince1970
        try await database.writing { session in
            try await session.updateApp(id: app.id, bundleId: config.bundleId, config: json, at: now)
            try await session.deleteStates(app: app.id, keeping: config.environments)
        }
        registry.invalidate(app: app.id)
        cache.forgetStates()
    }

    /// Replaces the app's product catalog.
    public func setCatalog(_ catalog: Catalog, of app: AppRuntime) async throws {
        var config = app.config
        config.catalog = catalog
        try await update(app, to: config)
    }

    /// The entitlements of the app's catalog and the products granting each, sorted by name.
    public func entitlements(of app: AppRuntime) -> [EntitlementProducts] {
        var products: [String: [String]] = [:]
        for product in app.config.catalog.products {
            for entitlement in product.entitlements { products[entitlement, default: []].append(product.id) }
        }
        return products.keys.sorted().map { EntitlementProducts(id: $0, productIds: products[$0]?.sorted() ?? []) }
    }

    /// Every app, oldest first, as an operator reviews it.
    public func list() async throws -> [AppSummary] {
        let records = try await database.reading { try await $0.apps() }
        var summaries: [AppSummary] = []
        for record in records.sorted(by: { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }) {
            summaries.append(try await summary(of: record.id))
        }
        return summaries
    }

    /// One app as an operator reviews it; `appNotFound` for an unknown id.
    public func summary(of appId: String) async throws -> AppSummary {
        let app = try await registry.app(id: appId)
        let (record, keys) = try await database.reading { session in
            (try await session.app(id: appId), try await session.keys(app: appId))
        }
        guard let record else { throw CoreError.appNotFound(appId: appId) }
        return AppSummary(
            appId: app.id, bundleId: app.config.bundleId, appAppleId: app.config.appAppleId, environments: app.config.environments,
            products: app.config.catalog.products.count, createdAt: record.createdAt, updatedAt: record.updatedAt,
            keys: keys.map {
                AppSummary.Key(kind: $0.kind, prefix: "\($0.kind.prefix)_\($0.keyId)", createdAt: $0.createdAt, revokedAt: $0.revokedAt)
            })
    }

    /// Issues a new key of one kind and revokes the old ones of that kind at once.
    public func rotateKey(_ kind: APIKeyRecord.Kind, of app: AppRuntime) async throws -> RotatedKey {
        let generated = APIKeys.generate(kind)
        let now = clock().millisecondsSince1970
        let revoked = try await database.writing { session in
            let revoked = try await session.revokeKeys(app: app.id, kind: kind, at: now)
            try await session.insertKey(
                APIKeyRecord(keyId: generated.id, appId: app.id, kind: kind, secretHash: generated.secretHash, createdAt: now))
            return revoked
        }
        registry.invalidate(app: app.id)
        return RotatedKey(kind: kind, key: generated.key, revoked: revoked)
    }

    /// A page of the app's event stream.
    public func events(of app: AppRuntime, query: EventQuery) async throws -> EventPage {
        try await database.reading { session in
            let records = try await session.events(app: app.id, after: query.after, limit: query.limit)
            return try await EventPage.read(records, after: query.after, session: session)
        }
    }

    /// The app's audit log, oldest first (at most `limit` rows).
    public func audit(of app: AppRuntime, limit: Int = 1000) async throws -> [AuditRecord] {
        try await database.reading { try await $0.audit(app: app.id, limit: limit) }
    }

    private static func encode(_ config: AppConfiguration) throws(CoreError) -> String {
        do {
            return String(decoding: try JSONEncoder.sortedKeys.encode(config), as: UTF8.self)
        } catch {
            throw .internalError("the configuration does not encode: \(error)")
        }
    }
}
