import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit

/// SQLite's checkpoints taken off the writer. By default the connection that commits copies the write-ahead log back
/// into the database file (and syncs the file) whenever the log has passed 1,000 pages, inside that commit, while every
/// other write waits for it. While a checkpointer runs the writer never checkpoints (`wal_autocheckpoint` 0): the
/// checkpointer copies the log on a connection and a thread of its own, PASSIVE (it waits for no writer or reader,
/// and none waits for it; what a reader still reads is copied next time), and once the log is long, once more between
/// two writes so that the next one starts it over (`checkpointAndRewind`). Committed data is as safe either way: a
/// commit is in the log before it is answered. Stopping it gives the writer its checkpoints back.
public final class WALCheckpointer: Sendable {
    private let database: StorageDatabase
    private let connection: SQLiteConnection
    private let threads: NIOThreadPool

    /// SQLite's own default: the committing connection checkpoints once the log has passed this many pages.
    static let writerPages = 1000

    fileprivate init(database: StorageDatabase, connection: SQLiteConnection, threads: NIOThreadPool) {
        self.database = database
        self.connection = connection
        self.threads = threads
    }

    /// Copies what it can of the log into the database file. Answers the log's length in pages and how many of them
    /// the file now holds (all, unless a reader still reads an older state).
    @discardableResult
    public func checkpoint() async throws -> CheckpointResult {
        do {
            let row = try await connection.sql().raw("PRAGMA wal_checkpoint(PASSIVE)").first()
            let log = try row?.decode(column: "log", as: Int.self) ?? 0
            return CheckpointResult(logPages: log, copied: try row?.decode(column: "checkpointed", as: Int.self) ?? 0)
        } catch {
            throw StorageError(.unavailable, "a checkpoint of the SQLite log failed: \(error)")
        }
    }

    /// A log at least this long is started over (`checkpointAndRewind`): SQLite's own default checkpoint size.
    static let rewindPages = writerPages

    /// `checkpoint()`, and when the log is `rewindPages` long or more, a second checkpoint between two write
    /// transactions (none begins while it runs), which copies what was committed during the first. SQLite writes the
    /// log over from its first page only when a write begins with the whole log in the database file and no reader
    /// still in it, which checkpoints taken alongside the writes never leave behind: without this, as long as writes
    /// keep coming, the log grows (a gigabyte in twenty seconds of ingest at full speed) and every page written past
    /// its end costs the kernel a new zeroed page of the file. A reader still in the log (its copied pages fall short
    /// of the log) leaves it for the next call. Answers the last checkpoint's figures.
    @discardableResult
    public func checkpointAndRewind() async throws -> CheckpointResult {
        let alongside = try await checkpoint()
        guard alongside.logPages >= Self.rewindPages else { return alongside }
        return try await database.betweenSQLiteWrites { try await checkpoint() }
    }

    /// Gives the writer its checkpoints back, copies what is left, and closes its connection and thread.
    public func stop() async {
        try? await database.onSQLiteWriter("PRAGMA wal_autocheckpoint=\(Self.writerPages)")
        _ = try? await checkpoint()
        await connection.closeEvenIfCancelled()
        try? await threads.shutdownGracefully()
    }
}

extension StorageDatabase {
    /// Takes the SQLite writer's checkpoints over (`WALCheckpointer`): nil on PostgreSQL. Call `stop()` on what it
    /// answers before the database closes.
    public func takeOverCheckpoints() async throws -> WALCheckpointer? {
        guard case .sqlite(let path) = location else { return nil }
        let threads = NIOThreadPool(numberOfThreads: 1)
        threads.start()
        let connection: SQLiteConnection
        do { connection = try await Self.connect(path, threadPool: threads, logger: logger) } catch {
            try? await threads.shutdownGracefully()
            throw StorageError(.unavailable, "cannot open the SQLite database \(path) to checkpoint it: \(error)")
        }
        do {
            try await onSQLiteWriter("PRAGMA wal_autocheckpoint=0")
        } catch {
            await connection.closeEvenIfCancelled()
            try? await threads.shutdownGracefully()
            throw StorageError(.unavailable, "cannot take the SQLite writer's checkpoints over: \(error)")
        }
        return WALCheckpointer(database: self, connection: connection, threads: threads)
    }
}

/// A checkpoint's figures: the log's length in pages, and how many of them the database file now holds.
public struct CheckpointResult: Sendable, Hashable {
    public var logPages: Int
    public var copied: Int
}
