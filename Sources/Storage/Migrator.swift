import Foundation
import SQLKit

/// One schema change. Migrations run in `version` order, each in its own transaction, and are recorded in
/// `storekeeper_migrations` so that each runs once.
public struct Migration: Sendable {
    public let version: Int
    public let name: String
    let apply: @Sendable (any SQLDatabase) async throws -> Void
}

/// Applies the schema's migrations and says which are pending.
public struct Migrator: Sendable {
    public let database: StorageDatabase
    public let migrations: [Migration]

    public init(database: StorageDatabase, migrations: [Migration] = Schema.migrations) {
        self.database = database
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// The versions already applied.
    public func applied() async throws -> Set<Int> {
        try await database.transaction { db in
            try await Self.createLedger(db)
            return Set(
                try await db.select().column("version").from("storekeeper_migrations").all()
                    .map { try $0.decode(column: "version", as: Int.self) })
        }
    }

    /// The migrations not yet applied, in order.
    public func pending() async throws -> [Migration] {
        let done = try await applied()
        return migrations.filter { !done.contains($0.version) }
    }

    /// Whether nothing has been applied and the database holds none of our tables: a fresh file.
    public func isFresh() async throws -> Bool {
        try await applied().isEmpty
    }

    /// Applies every pending migration, each in its own transaction; returns what was applied.
    @discardableResult
    public func migrate(now: Int64 = Int64(Date().timeIntervalSince1970 * 1000)) async throws -> [Migration] {
        var ran: [Migration] = []
        for migration in try await pending() {
            try await database.transaction(deadline: StorageDatabase.maintenanceDeadline) { db in
                // Checked again inside the transaction: two processes migrating at once apply each step once.
                let already = try await db.select().column("version").from("storekeeper_migrations")
                    .where("version", .equal, migration.version).first()
                guard already == nil else { return }
                try await migration.apply(db)
                try await db.insert(into: "storekeeper_migrations")
                    .columns("version", "name", "applied_at")
                    .values(SQLBind(migration.version), SQLBind(migration.name), SQLBind(now))
                    .run()
            }
            ran.append(migration)
        }
        return ran
    }

    private static func createLedger(_ db: any SQLDatabase) async throws {
        try await db.create(table: "storekeeper_migrations").ifNotExists()
            .column("version", type: .bigint, .primaryKey(autoIncrement: false))
            .column("name", type: .text, .notNull)
            .column("applied_at", type: .bigint, .notNull)
            .run()
    }
}
