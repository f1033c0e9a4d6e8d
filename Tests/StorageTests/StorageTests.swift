import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Storage
import TestSupport
import Testing

/// Storage on its own, on SQLite and (when `STOREKEEPER_TEST_POSTGRES_URL` is set) PostgreSQL: each test its own
/// database.
@Suite("Storage")
struct StorageTests {
    /// A migrated database with one app; closed again if migrating or adding the app fails (a PostgreSQL pool dropped
    /// open stops the test process: AsyncKit asserts).
    static func database(_ kind: TestDatabase) async throws -> StorageDatabase {
        let database = try await StorageDatabase.open(try await kind.fresh())
        do {
            _ = try await Migrator(database: database).migrate()
            try await database.writing { session in
                try await session.insertApp(AppRecord(id: "app_1", bundleId: "com.example", config: "{}", createdAt: 1, updatedAt: 1))
            }
        } catch {
            await database.close()
            throw error
        }
        return database
    }

    static func transaction(_ id: String, version: String = "v1", original: String = "1000") -> TransactionRecord {
        TransactionRecord(
            appId: "app_1", transactionId: id, version: version, originalTransactionId: original, environment: "Sandbox",
            productId: "pro.monthly", signedDate: 10, purchaseDate: 10, expiresDate: 20, revocationDate: nil, price: 9990,
            currency: "USD", source: .sdk, payload: #"{"transactionId":"\#(id)","version":"\#(version)"}"#, signed: nil, receivedAt: 11)
    }

    @Test("migrations: a new database has them all pending, and none after migrating", arguments: TestDatabase.available)
    func migrations(kind: TestDatabase) async throws {
        let database = try await StorageDatabase.open(try await kind.fresh())
        let migrator = Migrator(database: database)
        #expect(try await migrator.isFresh())
        #expect(try await migrator.pending().map(\.version) == Schema.migrations.map(\.version))
        let applied = try await migrator.migrate()
        #expect(applied.map(\.version) == Schema.migrations.map(\.version))
        #expect(try await migrator.pending().isEmpty)
        #expect(try await migrator.applied() == Set(Schema.migrations.map(\.version)))
        #expect(try await migrator.migrate().isEmpty)
        await database.close()
    }

    @Test(
        "facts are idempotent: the same version twice is stored once, a new version is stored beside it",
        arguments: TestDatabase.available)
    func idempotentFacts(kind: TestDatabase) async throws {
        let database = try await Self.database(kind)
        let inserted = try await database.writing { session in
            [
                try await session.insert(Self.transaction("1000")),
                try await session.insert(Self.transaction("1000")),
                try await session.insert(Self.transaction("1000", version: "v2")),
            ]
        }
        #expect(inserted == [true, false, true])
        let facts = try await database.reading { try await $0.facts(app: "app_1", originalTransactionIds: ["1000"]) }
        #expect(facts.transactions.count == 2)
        #expect(Set(facts.transactions) == [Self.transaction("1000").payload, Self.transaction("1000", version: "v2").payload])
        // Another original transaction's facts are not read.
        #expect(try await database.reading { try await $0.facts(app: "app_1", originalTransactionIds: ["2000"]) }.count == 0)
        await database.close()
    }

    @Test("notifications are keyed by UUID", arguments: TestDatabase.available)
    func notifications(kind: TestDatabase) async throws {
        let database = try await Self.database(kind)
        let notification = NotificationRecord(
            appId: "app_1", notificationUUID: "u-1", notificationType: "TEST", subtype: nil, environment: "Sandbox", signedDate: 5,
            originalTransactionId: nil, fact: "null", signed: "x.y.z", receivedAt: 6)
        let inserted = try await database.writing { session in
            [try await session.insert(notification), try await session.insert(notification)]
        }
        #expect(inserted == [true, false])
        #expect(try await database.reading { try await $0.notificationCount(app: "app_1") } == 1)
        await database.close()
    }

    @Test(
        "every audit action reads back as written; an unknown one is reported as corrupt, not guessed",
        arguments: TestDatabase.available)
    func audit(kind: TestDatabase) async throws {
        let database = try await Self.database(kind)
        try await database.writing { session in
            for (offset, action) in AuditAction.allCases.enumerated() {
                try await session.insertAudit(
                    AuditRecord(
                        appId: "app_1", action: action, originalTransactionId: "1000", fromCustomer: "a", toCustomer: "b",
                        detail: "step \(offset)", at: Int64(offset)))
            }
        }
        let rows = try await database.reading { try await $0.audit(app: "app_1") }
        #expect(rows.map(\.action) == AuditAction.allCases)
        #expect(rows.map(\.detail) == AuditAction.allCases.indices.map { "step \($0)" })
        try await database.transaction { sql in
            try await sql.raw("UPDATE audit_log SET action = 'teleport' WHERE detail = 'step 0'").run()
        }
        await #expect {
            _ = try await database.reading { try await $0.audit(app: "app_1") }
        } throws: { error in
            (error as? StorageError)?.code == .corrupt
        }
        await database.close()
    }

    /// A statement PostgreSQL cancels. PostgresNIO's account of a prepared statement that fails before answering
    /// carries its text (a statement without rows: one with rows fails while they are read, and is told without it).
    enum Sleeper: FixedQuery {
        static let name = "storekeeper_test_sleeper"
        static let postgres = "INSERT INTO sleeper SELECT 'marker-7f3' FROM pg_sleep($1::float8)"
        static let sqlite: String? = nil
    }

    /// A failing statement is `unavailable` (503, retried) with a message an answer may carry: the database's reason,
    /// never the statement; only the detail, for the logs, has PostgresNIO's whole account with the statement in it.
    @Test("a driver's failure is told without its statement; the logs' detail has it", arguments: TestDatabase.available)
    func driverFailures(kind: TestDatabase) async throws {
        let database = try await StorageDatabase.open(try await kind.fresh())
        let error = await #expect(throws: StorageError.self) {
            try await database.writing { session in
                if kind == .postgres {
                    // Canceled by the server (SQLSTATE 57014): a failure that a later attempt may not meet.
                    try await session.sql.raw("CREATE TEMPORARY TABLE sleeper (marker text)").run()
                    try await session.sql.raw("SET LOCAL statement_timeout = 50").run()
                    _ = try await session.run(Sleeper.self, ["5"])
                } else {
                    try await session.sql.raw("SELECT 'marker-7f3' AS marker FROM no_such_table").run()
                }
            }
        }
        #expect(error?.code == .unavailable)
        let message = error?.message ?? ""
        #expect(!message.contains("marker-7f3") && !message.contains("SELECT"), "\(message)")
        if kind == .postgres {
            #expect(message == "PostgreSQL: server: canceling statement due to statement timeout (SQLSTATE 57014)")
            #expect(error?.detail?.contains("marker-7f3") == true, "\(error?.detail ?? "no detail")")
        } else {
            #expect(message.contains("no such table: no_such_table"), "\(message)")
        }
        await database.close()
    }

    @Test("a SQLite file that cannot be opened is unavailable, and the error names it")
    func unopenableSQLite() async throws {
        let path = "/nonexistent-\(UUID().uuidString)/storekeeper.sqlite"
        let error = await #expect(throws: StorageError.self) { try await StorageDatabase.open(.sqlite(path: path)) }
        #expect(error?.code == .unavailable)
        #expect(error?.message.hasPrefix("cannot open the SQLite database \(path)") == true, "\(error?.message ?? "")")
    }

    @Test("database URLs: postgres and sqlite forms, and a clear error for anything else")
    func locations() throws {
        #expect(try DatabaseLocation(url: "postgres://u:p@h/db") == .postgres(url: "postgres://u:p@h/db"))
        #expect(try DatabaseLocation(url: "sqlite:/tmp/x.sqlite") == .sqlite(path: "/tmp/x.sqlite"))
        #expect(try DatabaseLocation(url: "data.sqlite") == .sqlite(path: "data.sqlite"))
        #expect(throws: StorageError.self) { try DatabaseLocation(url: "mysql://h/db") }
        #expect(!DatabaseLocation.postgres(url: "postgres://user:hunter2@h:5432/db").description.contains("hunter2"))
    }

    @Test("event cursors: what nextCursor gives, after takes back; anything else is refused")
    func cursors() {
        #expect(EventCursor("0") == .start)
        #expect(EventCursor("7412-19") == EventCursor(txOrder: 7412, seq: 19))
        #expect(EventCursor(EventCursor(txOrder: 3, seq: 4).description) == EventCursor(txOrder: 3, seq: 4))
        for bad in ["", "x", "1-", "-1", "1-2-3", "-1-2", "99999999999999999999-1"] { #expect(EventCursor(bad) == nil, "\(bad)") }
    }
}
