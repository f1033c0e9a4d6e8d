import SQLKit

extension StorageSession {
    /// Remembers which app user id an appAccountToken was given to; the first registration of a token wins.
    public func registerAccountToken(app appId: String, token: String, appUserId: String, at now: Int64) async throws {
        try await sql.insert(into: "account_tokens").columns("app_id", "token", "app_user_id", "created_at")
            .values(SQLBind(appId), SQLBind(token), SQLBind(appUserId), SQLBind(now))
            .ignoringConflicts(with: ["app_id", "token"])
            .run()
    }

    /// The app user id an appAccountToken was given to, if the server gave it.
    public func appUserId(app appId: String, accountToken token: String) async throws -> String? {
        try await sql.select().column("app_user_id").from("account_tokens")
            .where("app_id", .equal, appId).where("token", .equal, token)
            .first().map { try $0.decode(column: "app_user_id", as: String.self) }
    }

    /// Deletes the tokens registered before `registeredBefore` whose app user id names no customer (it never bought,
    /// restored or was aliased); how many.
    public func pruneUnclaimedAccountTokens(registeredBefore: Int64) async throws -> Int {
        try await sql.raw(
            """
            DELETE FROM account_tokens WHERE created_at < \(bind: registeredBefore) AND NOT EXISTS (
                SELECT 1 FROM app_users u WHERE u.app_id = account_tokens.app_id AND u.app_user_id = account_tokens.app_user_id)
            RETURNING token
            """
        ).all().count
    }
}
