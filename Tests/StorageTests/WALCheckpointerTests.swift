import SQLKit
import Storage
import TestSupport
import Testing

/// SQLite's checkpoints taken off the writer, and given back.
@Suite("Storage: SQLite checkpoints")
struct WALCheckpointerTests {
    /// Writes `count` transactions of about two pages of log each.
    static func write(_ database: StorageDatabase, count: Int) async throws {
        for _ in 0..<count {
            try await database.transaction { try await $0.raw("INSERT INTO scratch (bytes) VALUES (randomblob(6000))").run() }
        }
    }

    @Test(
        "while a checkpointer runs the writer copies nothing back, and the checkpointer copies everything; stopped, the writer checkpoints again"
    )
    func checkpointsOffTheWriter() async throws {
        let database = try await StorageDatabase.open(try await TestDatabase.sqlite.fresh())
        try await database.transaction { try await $0.raw("CREATE TABLE scratch (bytes BLOB)").run() }
        let checkpointer = try #require(try await database.takeOverCheckpoints())
        // 700 transactions of two pages or more: past the writer's 1,000 pages, the log keeps growing.
        try await Self.write(database, count: 700)
        let taken = try await checkpointer.checkpoint()
        #expect(taken.logPages > 1400, "the writer checkpointed by itself: \(taken)")
        #expect(taken.copied == taken.logPages)
        await checkpointer.stop()
        // Its own checkpoints back, the writer starts the log over once past 1,000 pages.
        try await Self.write(database, count: 700)
        let log = try await database.read { sql in
            try await sql.raw("PRAGMA wal_checkpoint(PASSIVE)").first()?.decode(column: "log", as: Int.self)
        }
        let pages = try #require(log)
        #expect(pages > 0 && pages < 1100, "the log was not started over: \(pages) pages")
        await database.close()
    }

    @Test("PostgreSQL has no checkpointer to take over", .enabled(if: TestDatabase.postgresURL != nil))
    func noneOnPostgres() async throws {
        let database = try await StorageDatabase.open(try await TestDatabase.postgres.fresh())
        #expect(try await database.takeOverCheckpoints() == nil)
        await database.close()
    }
}
