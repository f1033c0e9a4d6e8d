import SQLKit

/// An app as stored: its configuration is a JSON document that the server owns the shape of.
public struct AppRecord: Sendable, Hashable {
    public var id: String
    public var bundleId: String
    public var config: String
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(id: String, bundleId: String, config: String, createdAt: Int64, updatedAt: Int64) {
        self.id = id
        self.bundleId = bundleId
        self.config = config
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// An API key as stored: its public id and the SHA-256 of its secret part, never the key itself.
public struct APIKeyRecord: Sendable, Hashable {
    public enum Kind: String, Sendable, Codable { case `public`, secret }
    public var keyId: String
    public var appId: String
    public var kind: Kind
    public var secretHash: String
    public var createdAt: Int64
    public var revokedAt: Int64?

    public init(keyId: String, appId: String, kind: Kind, secretHash: String, createdAt: Int64, revokedAt: Int64? = nil) {
        self.keyId = keyId
        self.appId = appId
        self.kind = kind
        self.secretHash = secretHash
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}

extension StorageSession {
    public func insertApp(_ app: AppRecord) async throws {
        try await sql.insert(into: "apps")
            .columns("id", "bundle_id", "config", "created_at", "updated_at")
            .values(SQLBind(app.id), SQLBind(app.bundleId), SQLBind(app.config), SQLBind(app.createdAt), SQLBind(app.updatedAt))
            .run()
    }

    public func updateApp(id: String, bundleId: String, config: String, at now: Int64) async throws {
        try await sql.update("apps")
            .set("bundle_id", to: bundleId).set("config", to: config).set("updated_at", to: now)
            .where("id", .equal, id)
            .run()
    }

    public func app(id: String) async throws -> AppRecord? {
        try await sql.select().columns("id", "bundle_id", "config", "created_at", "updated_at").from("apps")
            .where("id", .equal, id).first().map(Self.appRecord)
    }

    public func apps() async throws -> [AppRecord] {
        try await sql.select().columns("id", "bundle_id", "config", "created_at", "updated_at").from("apps")
            .orderBy("created_at").all().map(Self.appRecord)
    }

    private static func appRecord(_ row: any SQLRow) throws -> AppRecord {
        AppRecord(
            id: try row.decode(column: "id", as: String.self),
            bundleId: try row.decode(column: "bundle_id", as: String.self),
            config: try row.decode(column: "config", as: String.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self),
            updatedAt: try row.decode(column: "updated_at", as: Int64.self))
    }

    public func insertKey(_ key: APIKeyRecord) async throws {
        try await sql.insert(into: "api_keys")
            .columns("key_id", "app_id", "kind", "secret_hash", "created_at", "revoked_at")
            .values(
                SQLBind(key.keyId), SQLBind(key.appId), SQLBind(key.kind.rawValue), SQLBind(key.secretHash),
                SQLBind(key.createdAt), SQLBind(key.revokedAt)
            )
            .run()
    }

    /// The key with this id, revoked or not.
    public func key(id: String) async throws -> APIKeyRecord? {
        try await sql.select().columns("key_id", "app_id", "kind", "secret_hash", "created_at", "revoked_at").from("api_keys")
            .where("key_id", .equal, id).first().map(Self.keyRecord)
    }

    public func keys(app appId: String) async throws -> [APIKeyRecord] {
        try await sql.select().columns("key_id", "app_id", "kind", "secret_hash", "created_at", "revoked_at").from("api_keys")
            .where("app_id", .equal, appId).orderBy("created_at").all().map(Self.keyRecord)
    }

    /// Revokes every live key of one kind of an app (a rotation), returning how many.
    @discardableResult
    public func revokeKeys(app appId: String, kind: APIKeyRecord.Kind, at now: Int64) async throws -> Int {
        let live = try await keys(app: appId).filter { $0.kind == kind && $0.revokedAt == nil }
        try await sql.update("api_keys").set("revoked_at", to: now)
            .where("app_id", .equal, appId).where("kind", .equal, kind.rawValue).where("revoked_at", .is, SQLLiteral.null)
            .run()
        return live.count
    }

    private static func keyRecord(_ row: any SQLRow) throws -> APIKeyRecord {
        let kind = try row.decode(column: "kind", as: String.self)
        guard let parsed = APIKeyRecord.Kind(rawValue: kind) else {
            throw StorageError(.corrupt, "api_keys.kind holds '\(kind)'")
        }
        return APIKeyRecord(
            keyId: try row.decode(column: "key_id", as: String.self),
            appId: try row.decode(column: "app_id", as: String.self),
            kind: parsed,
            secretHash: try row.decode(column: "secret_hash", as: String.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self),
            revokedAt: try row.decode(column: "revoked_at", as: Int64?.self))
    }
}
