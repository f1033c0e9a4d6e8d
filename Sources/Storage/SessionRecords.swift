import SQLKit

/// The dashboard's sessions. Keys are stored as their SHA-256 (`DatabasePersistDriver`), never as the cookie carries
/// them; `user_id` names the signed-in user, so that a password change or a deletion ends their sessions.
extension StorageSession {
    /// Stores a session value under a new key; false if the key exists (and has not expired).
    public func insertSession(key: String, value: String, user: String?, expiresAt: Int64?, now: Int64) async throws -> Bool {
        try await sql.delete(from: "sessions").where("key", .equal, key).where("expires_at", .lessThanOrEqual, now).run()
        let inserted = try await sql.insert(into: "sessions").columns("key", "value", "user_id", "expires_at")
            .values(SQLBind(key), SQLBind(value), SQLBind(user), SQLBind(expiresAt))
            .ignoringConflicts(with: ["key"]).returning("key").all()
        return !inserted.isEmpty
    }

    /// Stores a session value, replacing any; `keepExpiry` keeps a stored session's expiry.
    public func upsertSession(key: String, value: String, user: String?, expiresAt: Int64?, keepExpiry: Bool) async throws {
        if try await sql.select().column("key").from("sessions").where("key", .equal, key).first() != nil {
            var update = sql.update("sessions").set("value", to: SQLBind(value)).set("user_id", to: SQLBind(user))
            if !keepExpiry { update = update.set("expires_at", to: SQLBind(expiresAt)) }
            try await update.where("key", .equal, key).run()
        } else {
            try await sql.insert(into: "sessions").columns("key", "value", "user_id", "expires_at")
                .values(SQLBind(key), SQLBind(value), SQLBind(user), SQLBind(expiresAt)).run()
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

    /// Ends every session of a user.
    public func deleteSessions(user: String) async throws {
        try await sql.delete(from: "sessions").where("user_id", .equal, user).run()
    }

    /// How many sessions are stored (expired or not).
    public func sessionCount() async throws -> Int {
        let row = try await sql.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("sessions").first()
        return Int(try row?.decode(column: "n", as: Int64.self) ?? 0)
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
