import Foundation
import SQLKit

/// One schema change. Migrations run in `version` order, each in its own transaction, and are recorded in
/// `storekeeper_migrations` so that each runs once.
public struct Migration: Sendable {
    public let version: Int
    public let name: String
    /// Whether a server that knows only the migrations before this one may run beside it on the same database (during a
    /// rolling upgrade, or to roll back): the change is additive (new tables, columns with defaults, indexes) and the
    /// older server's reads and writes stay right. Recorded in `storekeeper_migration_rules`, so that an older server,
    /// which does not know this migration, can tell (`Migrator.newer()`). The rule is in `docs/versioning.md`.
    public let besidePrevious: Bool
    let apply: @Sendable (any SQLDatabase) async throws -> Void

    public init(version: Int, name: String, besidePrevious: Bool = false, apply: @escaping @Sendable (any SQLDatabase) async throws -> Void)
    {
        self.version = version
        self.name = name
        self.besidePrevious = besidePrevious
        self.apply = apply
    }
}

/// A migration the database has and this build does not know: a newer release applied it.
public struct NewerMigration: Sendable, Hashable {
    public var version: Int
    public var name: String
    /// What the release that applied it recorded: whether older servers may run beside it (nil: it recorded nothing).
    public var besidePrevious: Bool?
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

    /// The migrations the database has that this build does not know (a newer release applied them), oldest first.
    public func newer() async throws -> [NewerMigration] {
        let known = Set(migrations.map(\.version))
        return try await database.transaction { db in
            try await Self.createLedger(db)
            var rules: [Int: Bool] = [:]
            for row in try await db.raw("SELECT version, beside_previous FROM storekeeper_migration_rules").all() {
                rules[try row.decode(column: "version", as: Int.self)] = try row.decode(column: "beside_previous", as: Int.self) != 0
            }
            return try await db.raw("SELECT version, name FROM storekeeper_migrations ORDER BY version").all().compactMap { row in
                let version = try row.decode(column: "version", as: Int.self)
                guard !known.contains(version) else { return nil }
                return NewerMigration(
                    version: version, name: try row.decode(column: "name", as: String.self), besidePrevious: rules[version])
            }
        }
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
        try await recordRules()
        return ran
    }

    /// Records every known migration's rule (for the older servers that will read it), those of a database migrated
    /// before rules were recorded too.
    func recordRules() async throws {
        try await database.transaction { db in
            for migration in migrations {
                try await db.raw(
                    """
                    INSERT INTO storekeeper_migration_rules (version, beside_previous)
                    VALUES (\(bind: migration.version), \(bind: migration.besidePrevious ? 1 : 0))
                    ON CONFLICT (version) DO UPDATE SET beside_previous = excluded.beside_previous
                    """
                ).run()
            }
        }
    }

    private static func createLedger(_ db: any SQLDatabase) async throws {
        try await db.create(table: "storekeeper_migrations").ifNotExists()
            .column("version", type: .bigint, .primaryKey(autoIncrement: false))
            .column("name", type: .text, .notNull)
            .column("applied_at", type: .bigint, .notNull)
            .run()
        try await db.create(table: "storekeeper_migration_rules").ifNotExists()
            .column("version", type: .bigint, .primaryKey(autoIncrement: false))
            .column("beside_previous", type: .bigint, .notNull)
            .run()
    }
}
