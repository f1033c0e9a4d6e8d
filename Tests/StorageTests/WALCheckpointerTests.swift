import NIOConcurrencyHelpers
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

    /// A fresh SQLite database with a `scratch` table, its checkpoints taken over.
    static func checkpointed() async throws -> (StorageDatabase, WALCheckpointer) {
        let database = try await StorageDatabase.open(try await TestDatabase.sqlite.fresh())
        try await database.transaction { try await $0.raw("CREATE TABLE scratch (bytes BLOB)").run() }
        return (database, try #require(try await database.takeOverCheckpoints()))
    }

    @Test(
        "while a checkpointer runs the writer copies nothing back, and the checkpointer copies everything; stopped, the writer checkpoints again"
    )
    func checkpointsOffTheWriter() async throws {
        let (database, checkpointer) = try await Self.checkpointed()
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

    @Test(
        "a long log is copied once more between two writes, and the next write starts it over; not while a reader is still in it"
    )
    func rewind() async throws {
        let (database, checkpointer) = try await Self.checkpointed()
        try await Self.write(database, count: 700)
        // A read transaction that began before the last writes: what it reads stays in the log, so the log stays.
        try await database.read { sql in
            try await sql.raw("BEGIN").run()
            _ = try await sql.raw("SELECT COUNT(*) AS n FROM scratch").first()
            try await Self.write(database, count: 5)
            let held = try await checkpointer.checkpointAndRewind()
            #expect(held.logPages > 1400 && held.copied < held.logPages, "\(held)")
            try await Self.write(database, count: 5)
            try await sql.raw("COMMIT").run()
        }
        let kept = try await checkpointer.checkpoint()
        #expect(kept.logPages > 1400, "the log was started over under a reader: \(kept)")
        // The reader gone: all of it copied, and the next writes write it over from its start.
        let rewound = try await checkpointer.checkpointAndRewind()
        #expect(rewound.copied == rewound.logPages, "\(rewound)")
        try await Self.write(database, count: 10)
        let after = try await checkpointer.checkpoint()
        #expect(after.logPages > 0 && after.logPages < 100, "the log was not started over: \(after)")
        // A short log is only checkpointed alongside the writes.
        #expect(try await checkpointer.checkpointAndRewind().logPages < 100)
        await checkpointer.stop()
        await database.close()
    }

    @Test(
        "a long log is copied a second time once the write under way has committed (which a copy alongside it misses), so that the next write starts it over"
    )
    func rewindAfterTheWriteUnderWay() async throws {
        let (database, checkpointer) = try await Self.checkpointed()
        try await Self.write(database, count: 700)
        // A write transaction held open until told to commit.
        let (began, beginning) = AsyncStream<Void>.makeStream()
        let (commit, committing) = AsyncStream<Void>.makeStream()
        let writing = Task {
            try await database.transaction { db in
                try await db.raw("INSERT INTO scratch (bytes) VALUES (randomblob(6000))").run()
                beginning.yield()
                for await _ in commit { break }
            }
        }
        for await _ in began { break }
        let done = NIOLockedValueBox(false)
        let rewinding = Task {
            let taken = try await checkpointer.checkpointAndRewind()
            done.withLockedValue { $0 = true }
            return taken
        }
        // It copies the log alongside the write under way, then waits for it to end: the write's commit lands in the
        // log after that copy, where the next write would find it uncopied and go on appending.
        try await Task.sleep(for: .milliseconds(300))
        #expect(done.withLockedValue { $0 } == false, "the second checkpoint did not wait for the write under way")
        committing.yield()
        try await writing.value
        let rewound = try await rewinding.value
        #expect(rewound.logPages > 1400 && rewound.copied == rewound.logPages, "\(rewound)")
        try await Self.write(database, count: 10)
        let after = try await checkpointer.checkpoint()
        #expect(after.logPages > 0 && after.logPages < 100, "the log was not started over: \(after)")
        await checkpointer.stop()
        await database.close()
    }

    @Test("PostgreSQL has no checkpointer to take over", .enabled(if: TestDatabase.postgresURL != nil))
    func noneOnPostgres() async throws {
        let database = try await StorageDatabase.open(try await TestDatabase.postgres.fresh())
        #expect(try await database.takeOverCheckpoints() == nil)
        await database.close()
    }
}
