import SQLKit

extension StorageSession {
    /// Stores a session value under a new key; false if the key exists (and has not expired).
    public func insertSession(key: String, value: String, expiresAt: Int64?, now: Int64) async throws -> Bool {
        try await sql.delete(from: "sessions").where("key", .equal, key).where("expires_at", .lessThanOrEqual, now).run()
        let inserted = try await sql.insert(into: "sessions").columns("key", "value", "expires_at")
            .values(SQLBind(key), SQLBind(value), SQLBind(expiresAt))
            .ignoringConflicts(with: ["key"]).returning("key").all()
        return !inserted.isEmpty
    }

    /// Stores a session value, replacing any; `keepExpiry` keeps a stored session's expiry.
    public func upsertSession(key: String, value: String, expiresAt: Int64?, keepExpiry: Bool) async throws {
        if try await sql.select().column("key").from("sessions").where("key", .equal, key).first() != nil {
            var update = sql.update("sessions").set("value", to: SQLBind(value))
            if !keepExpiry { update = update.set("expires_at", to: SQLBind(expiresAt)) }
            try await update.where("key", .equal, key).run()
        } else {
            try await sql.insert(into: "sessions").columns("key", "value", "expires_at")
                .values(SQLBind(key), SQLBind(value), SQLBind(expiresAt)).run()
        }
    }

    /// A session's value and expiry, unless it has expired.
    public func session(key: String, now: Int64) async throws -> StoredSession? {
        guard let row = try await sql.select().columns("value", "expires_at").from("sessions").where("key", .equal, key).first()
        else { return nil }
        let expiresAt = try row.decode(column: "expires_at", as: Int64?.self)
        if let expiresAt, expiresAt <= now { return nil }
        return StoredSession(value: try row.decode(column: "value", as: String.self), expiresAt: expiresAt)
    }

    public func deleteSession(key: String) async throws {
        try await sql.delete(from: "sessions").where("key", .equal, key).run()
    }

    /// Removes sessions that expired before `now`; returns how many.
    @discardableResult
    public func purgeSessions(expiredBefore now: Int64) async throws -> Int {
        try await sql.delete(from: "sessions").where("expires_at", .lessThanOrEqual, now).returning("key").all().count
    }
}

/// A stored session's value and expiry (ms since 1970; nil: none).
public struct StoredSession: Sendable, Hashable {
    public var value: String
    public var expiresAt: Int64?
}
