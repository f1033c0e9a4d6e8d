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
    /// Failed sign-ins since `failuresSince`.
    public var failures: Int64
    public var failuresSince: Int64?
    public var lockedUntil: Int64?
    public var createdAt: Int64
    public var signedInAt: Int64?

    public init(
        id: String, email: String, passwordHash: String, allApps: Bool, apps: [String], failures: Int64 = 0,
        failuresSince: Int64? = nil, lockedUntil: Int64? = nil, createdAt: Int64, signedInAt: Int64? = nil
    ) {
        self.id = id
        self.email = email
        self.passwordHash = passwordHash
        self.allApps = allApps
        self.apps = apps
        self.failures = failures
        self.failuresSince = failuresSince
        self.lockedUntil = lockedUntil
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

    /// Records the outcome of a sign-in attempt: the failure count and its window, the lockout, the last sign-in.
    public func updateSignIn(
        user id: String, failures: Int64, failuresSince: Int64?, lockedUntil: Int64?, signedInAt: Int64?
    ) async throws {
        var update = sql.update("dashboard_users")
            .set("failures", to: SQLBind(failures)).set("failures_since", to: SQLBind(failuresSince))
            .set("locked_until", to: SQLBind(lockedUntil))
        if let signedInAt { update = update.set("signed_in_at", to: SQLBind(signedInAt)) }
        try await update.where("id", .equal, id).run()
    }

    public func updatePassword(user id: String, passwordHash: String) async throws {
        try await sql.update("dashboard_users").set("password_hash", to: SQLBind(passwordHash))
            .set("failures", to: SQLBind(0)).set("failures_since", to: SQLBind(Int64?.none))
            .set("locked_until", to: SQLBind(Int64?.none)).where("id", .equal, id).run()
    }

    /// Removes a user; false if there was none.
    public func deleteDashboardUser(id: String) async throws -> Bool {
        try await sql.delete(from: "dashboard_user_apps").where("user_id", .equal, id).run()
        let deleted = try await sql.delete(from: "dashboard_users").where("id", .equal, id).returning("id").all()
        return !deleted.isEmpty
    }

    /// Locks the user's row until the transaction ends (PostgreSQL), so that concurrent sign-ins count every failure.
    public func lockDashboardUser(id: String) async throws {
        guard kind == .postgres else { return }
        try await sql.raw("SELECT id FROM dashboard_users WHERE id = \(bind: id) FOR UPDATE").run()
    }

    private func dashboardUser(where column: String, _ value: String) async throws -> DashboardUserRecord? {
        guard
            let row = try await sql.select()
                .columns(
                    "id", "email", "password_hash", "all_apps", "failures", "failures_since", "locked_until", "created_at",
                    "signed_in_at"
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
            failures: try row.decode(column: "failures", as: Int64.self),
            failuresSince: try row.decode(column: "failures_since", as: Int64?.self),
            lockedUntil: try row.decode(column: "locked_until", as: Int64?.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self),
            signedInAt: try row.decode(column: "signed_in_at", as: Int64?.self))
    }
}
