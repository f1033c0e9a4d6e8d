import SQLKit

/// A person who signs in to the dashboard.
public struct DashboardUserRecord: Sendable, Hashable {
    public var id: String
    /// Lowercased; unique.
    public var email: String
    /// bcrypt's modular-crypt string (`$2b$…`).
    public var passwordHash: String
    /// Every app, present and future (an operator); otherwise only `apps`.
    public var allApps: Bool
    public var apps: [String]
    public var createdAt: Int64
    public var signedInAt: Int64?

    public init(
        id: String, email: String, passwordHash: String, allApps: Bool, apps: [String], createdAt: Int64, signedInAt: Int64? = nil
    ) {
        self.id = id
        self.email = email
        self.passwordHash = passwordHash
        self.allApps = allApps
        self.apps = apps
        self.createdAt = createdAt
        self.signedInAt = signedInAt
    }
}

extension StorageSession {
    /// Adds a user; false if the email is taken.
    public func insertDashboardUser(_ user: DashboardUserRecord) async throws -> Bool {
        let inserted = try await sql.insert(into: "dashboard_users")
            .columns("id", "email", "password_hash", "all_apps", "failures", "created_at")
            .values(
                SQLBind(user.id), SQLBind(user.email), SQLBind(user.passwordHash), SQLBind(user.allApps ? 1 : 0), SQLBind(0),
                SQLBind(user.createdAt)
            )
            .ignoringConflicts(with: ["email"]).returning("id").all()
        guard !inserted.isEmpty else { return false }
        for app in Set(user.apps).sorted() {
            try await sql.insert(into: "dashboard_user_apps").columns("user_id", "app_id")
                .values(SQLBind(user.id), SQLBind(app)).run()
        }
        return true
    }

    public func dashboardUser(email: String) async throws -> DashboardUserRecord? {
        try await dashboardUser(where: "email", email)
    }

    public func dashboardUser(id: String) async throws -> DashboardUserRecord? {
        try await dashboardUser(where: "id", id)
    }

    /// Every user, by email.
    public func dashboardUsers() async throws -> [DashboardUserRecord] {
        let ids = try await sql.select().column("id").from("dashboard_users").orderBy("email").all()
            .map { try $0.decode(column: "id", as: String.self) }
        var users: [DashboardUserRecord] = []
        for id in ids { if let user = try await dashboardUser(id: id) { users.append(user) } }
        return users
    }

    /// Records a sign-in. (The columns `failures`, `failures_since` and `locked_until` are no longer used: sign-in
    /// attempts are throttled in memory since schema 22, and a release before it may still run beside.)
    public func updateSignIn(user id: String, signedInAt: Int64) async throws {
        try await sql.update("dashboard_users").set("signed_in_at", to: SQLBind(signedInAt)).where("id", .equal, id).run()
    }

    public func updatePassword(user id: String, passwordHash: String) async throws {
        try await sql.update("dashboard_users").set("password_hash", to: SQLBind(passwordHash)).where("id", .equal, id).run()
    }

    /// Removes a user and their sessions; false if there was none.
    public func deleteDashboardUser(id: String) async throws -> Bool {
        try await deleteSessions(user: id)
        try await sql.delete(from: "dashboard_user_apps").where("user_id", .equal, id).run()
        let deleted = try await sql.delete(from: "dashboard_users").where("id", .equal, id).returning("id").all()
        return !deleted.isEmpty
    }

    private func dashboardUser(where column: String, _ value: String) async throws -> DashboardUserRecord? {
        guard
            let row = try await sql.select()
                .columns(
                    "id", "email", "password_hash", "all_apps", "created_at", "signed_in_at"
                )
                .from("dashboard_users").where(SQLIdentifier(column), .equal, SQLBind(value)).first()
        else { return nil }
        let id = try row.decode(column: "id", as: String.self)
        let apps = try await sql.select().column("app_id").from("dashboard_user_apps").where("user_id", .equal, id)
            .orderBy("app_id").all().map { try $0.decode(column: "app_id", as: String.self) }
        return DashboardUserRecord(
            id: id, email: try row.decode(column: "email", as: String.self),
            passwordHash: try row.decode(column: "password_hash", as: String.self),
            allApps: try row.decode(column: "all_apps", as: Int64.self) != 0, apps: apps,
            createdAt: try row.decode(column: "created_at", as: Int64.self),
            signedInAt: try row.decode(column: "signed_in_at", as: Int64?.self))
    }
}
