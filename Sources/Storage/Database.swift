@preconcurrency import AsyncKit  // EventLoopGroupConnectionPool is thread-safe (it locks internally) but not marked Sendable
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PostgresKit
import SQLKit
import SQLiteKit

/// Where the data lives: a SQLite file (the default) or a PostgreSQL database, behind one SQLKit code path.
public enum DatabaseLocation: Sendable, Hashable, CustomStringConvertible {
    case sqlite(path: String)
    /// A `postgres://` URL, optionally with a schema that every statement uses (tests give each test its own).
    case postgres(url: String, schema: String? = nil)

    /// The default: `./storekeeper.sqlite`.
    public static let defaultSQLite = DatabaseLocation.sqlite(path: "storekeeper.sqlite")

    /// Parses `STOREKEEPER_DATABASE_URL`'s forms: `postgres://…` / `postgresql://…`, `sqlite:<path>`, or a plain path.
    public init(url: String) throws(StorageError) {
        if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            self = .postgres(url: url)
        } else if url.hasPrefix("sqlite://") {
            self = .sqlite(path: String(url.dropFirst("sqlite://".count)))
        } else if url.hasPrefix("sqlite:") {
            self = .sqlite(path: String(url.dropFirst("sqlite:".count)))
        } else if url.contains("://") {
            throw StorageError(.invalidConfiguration, "the database URL must start with postgres://, postgresql:// or sqlite:")
        } else {
            self = .sqlite(path: url)
        }
        if case .sqlite(let path) = self, path.isEmpty {
            throw StorageError(.invalidConfiguration, "the SQLite database path is empty")
        }
    }

    /// Never prints a password.
    public var description: String {
        switch self {
        case .sqlite(let path): return "sqlite:\(path)"
        case .postgres(let url, let schema):
            var shown = url
            if let components = URLComponents(string: url), let host = components.host {
                shown =
                    "postgres://\(components.user.map { "\($0)@" } ?? "")\(host)\(components.port.map { ":\($0)" } ?? "")\(components.path)"
            }
            return schema.map { "\(shown) (schema \($0))" } ?? shown
        }
    }
}

/// Why storage failed. `unavailable` is the retryable kind: the database could not be reached or answered an error
/// that a later attempt may not meet (a webhook answers 5xx for it, so Apple retries).
public struct StorageError: Error, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case invalidConfiguration
        case unavailable
        case pendingMigrations
        /// The database has migrations of a newer release that older servers may not run beside.
        case newerSchema
        case conflict
        case corrupt
        /// A statement the code asked for that the database cannot run: a bug.
        case misuse
        /// A value the database cannot hold or compare (PostgreSQL's data exceptions, SQLSTATE class 22, such as a
        /// text with NUL): trying again cannot help, and nothing is wrong with the database.
        case invalidValue
    }

    public let code: Code
    /// What an answer may say: never a statement's text.
    public let message: String
    /// What only the logs say: the driver's whole account of the failure, the statement included (its binds masked).
    public let detail: String?

    public init(_ code: Code, _ message: String, detail: String? = nil) {
        self.code = code
        self.message = message
        self.detail = detail
    }

    public var description: String { "\(code.rawValue): \(message)" + (detail.map { " [\($0)]" } ?? "") }
}

/// The open database: reads, and write transactions that commit or roll back as a whole.
///
/// On SQLite there is one writer connection, whose transactions take turns and commit in groups (`SQLiteWriter`;
/// SQLite allows one writer at a time anyway), and separate reader connections that see only committed data (WAL mode). On PostgreSQL
/// a connection pool; each transaction pins one connection.
public final class StorageDatabase: Sendable {
    public enum Kind: String, Sendable { case sqlite, postgres }

    public let kind: Kind
    public let location: DatabaseLocation
    private let backend: Backend
    let logger: Logger
    /// App user ids reads found naming no customer, kept right by this process's write transactions.
    public let absentAppUsers = AbsentAppUsers()

    private enum Backend: Sendable {
        case sqlite(writer: SQLiteWriter, readers: [SQLiteConnection], next: NIOLockedCounter)
        case postgres(pool: EventLoopGroupConnectionPool<PostgresConnectionSource>)
    }

    private init(kind: Kind, location: DatabaseLocation, backend: Backend, logger: Logger) {
        self.kind = kind
        self.location = location
        self.backend = backend
        self.logger = logger
    }

    /// Opens (and for SQLite creates) the database. Nothing is migrated here; see ``Migrator``.
    public static func open(_ location: DatabaseLocation, logger: Logger = Logger(label: "storekeeper.storage")) async throws
        -> StorageDatabase
    {
        switch location {
        case .sqlite(let path):
            // Every connection opened is closed again if a later one fails: SQLiteNIO asserts that none is dropped open.
            var readers: [SQLiteConnection] = []
            let writer: SQLiteHandle
            do {
                writer = try SQLiteHandle(path: path)
                for pragma in pragmas { try writer.execute(pragma, binds: []) { _ in } }
                for _ in 0..<2 { readers.append(try await connect(path, logger: logger)) }
            } catch {
                for connection in readers { await connection.closeEvenIfCancelled() }
                throw StorageError(.unavailable, "cannot open the SQLite database \(path): \(error)")
            }
            return StorageDatabase(
                kind: .sqlite, location: location,
                backend: .sqlite(
                    writer: SQLiteWriter(writer, database: SQLiteHandleDatabase(writer, logger: logger)), readers: readers,
                    next: NIOLockedCounter()),
                logger: logger)
        case .postgres(let url, let schema):
            var configuration: SQLPostgresConfiguration
            do {
                configuration = try SQLPostgresConfiguration(url: url)
            } catch {
                throw StorageError(.invalidConfiguration, "the PostgreSQL URL is not valid: \(error)")
            }
            if let schema { configuration.searchPath = [schema] }
            let pool = EventLoopGroupConnectionPool(
                source: PostgresConnectionSource(sqlConfiguration: configuration),
                maxConnectionsPerEventLoop: 4,
                requestTimeout: .seconds(10),
                logger: logger,
                on: MultiThreadedEventLoopGroup.singleton)
            let database = StorageDatabase(kind: .postgres, location: location, backend: .postgres(pool: pool), logger: logger)
            do {
                // Fail now, with a clear error, rather than on the first request.
                try await database.read { try await $0.raw("SELECT 1").run() }
            } catch {
                try? await pool.shutdownAsync()
                throw StorageError(.unavailable, "cannot reach PostgreSQL at \(location): \(String(reflecting: error))")
            }
            return database
        }
    }

    /// A connection to the SQLite file at `path`, configured as all of ours are, its calls made on `threadPool`.
    static func connect(_ path: String, threadPool: NIOThreadPool = .singleton, logger: Logger) async throws -> SQLiteConnection {
        let connection = try await SQLiteConnection.open(
            storage: .file(path: path), threadPool: threadPool, logger: logger, on: MultiThreadedEventLoopGroup.singleton.any()
        ).get()
        do { try await configure(connection, logger: logger) } catch {
            await connection.closeEvenIfCancelled()
            throw error
        }
        return connection
    }

    private static func configure(_ connection: SQLiteConnection, logger: Logger) async throws {
        let sql = connection.sql()
        for pragma in pragmas { try await sql.raw(SQLQueryString(pragma)).run() }
    }

    /// What every connection of ours sets. WAL: readers see the last commit while the writer works. synchronous=NORMAL
    /// in WAL mode loses nothing on a process crash (kill -9); only a power loss can drop the last commits.
    /// busy_timeout covers a second process. recursive_triggers: a row that INSERT OR REPLACE replaces fires its delete
    /// trigger only with this on: the ledger's summary needs it (LedgerSummary.sqliteTrigger). Its only other effect, a
    /// trigger firing itself, cannot happen: none writes a table with triggers. temp_store=MEMORY: the savepoints of
    /// group commit (`SQLiteWriter`) copy each page they change a second time into a statement journal, a temporary
    /// file otherwise (a write call per page, seen in the ingest profile); in memory it costs a copy.
    private static let pragmas = [
        "PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA busy_timeout=5000", "PRAGMA foreign_keys=ON",
        "PRAGMA recursive_triggers=ON", "PRAGMA temp_store=MEMORY",
    ]

    /// Runs `body` outside any transaction; it sees committed data only.
    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        switch backend {
        case .sqlite(_, let readers, let next):
            return try await Self.mapErrors { try await body(readers[next.next() % readers.count].sql(queryLogLevel: Self.queryLogLevel)) }
        case .postgres(let pool):
            let logger = logger
            return try await Self.withDeadline {
                try await Self.mapErrors { try await body(pool.database(logger: logger).sql(queryLogLevel: Self.queryLogLevel)) }
            }
        }
    }

    /// Runs `body` in one transaction: it commits if `body` returns, and rolls back if it throws. On PostgreSQL it
    /// must end within `deadline` (`maintenanceDeadline` for work over a whole table, such as a migration).
    public func transaction<T: Sendable>(
        deadline: Duration = StorageDatabase.deadline, _ body: @escaping @Sendable (any SQLDatabase) async throws -> T
    ) async throws -> T {
        try await connectedTransaction(deadline: deadline) { db, _ in try await body(db) }
    }

    /// `transaction`, its body also given the PostgreSQL connection it runs on (none on SQLite).
    private func connectedTransaction<T: Sendable>(
        deadline: Duration, _ body: @escaping @Sendable (any SQLDatabase, PostgresConnection?) async throws -> T
    ) async throws -> T {
        switch backend {
        case .sqlite(let writer, _, _):
            return try await Self.mapErrors { try await writer.transaction { try await body($0, nil) } }
        case .postgres(let pool):
            let logger = logger
            return try await Self.withDeadline(deadline) {
                try await Self.mapErrors {
                    try await pool.database(logger: logger).withConnection { connection in
                        connection.eventLoop.makeFutureWithTask {
                            try await Self.inTransaction(connection.sql(queryLogLevel: Self.queryLogLevel), begin: "BEGIN") {
                                try await body($0, connection)
                            }
                        }
                    }.get()
                }
            }
        }
    }

    private static func inTransaction<T>(
        _ db: any SQLDatabase, begin: String, _ body: @Sendable (any SQLDatabase) async throws -> T
    ) async throws -> T {
        try await db.raw(SQLQueryString(begin)).run()
        do {
            let value = try await body(db)
            // A transaction whose request was given up (the deadline answered 503, or the caller went away) rolls back
            // rather than commit behind an error: a 503 must not hide a change, such as a rotated key never shown.
            try Task.checkCancellation()
            try await db.raw("COMMIT").run()
            return value
        } catch {
            // On a lost connection the server has already rolled back, and a ROLLBACK sent there waits (30 s, seen
            // when PostgreSQL restarted) before failing, holding the request and its pooled connection.
            if !connectionLost(error) { try? await db.raw("ROLLBACK").run() }
            throw error
        }
    }

    /// Whether the connection itself failed (closed, reset, or ended by the server: SQLSTATE classes 08 and 57).
    static func connectionLost(_ error: any Error) -> Bool {
        if error is ChannelError || error is IOError || error is NIOConnectionError { return true }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .clientClosedConnection, .serverClosedConnection, .connectionError, .uncleanShutdown: return true
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("08") || state.hasPrefix("57")
        default: return false
        }
    }

    /// Statements are not logged, at any level: their binds hold secrets (destinations' tokens, app configurations)
    /// and customers' data, which must never reach a log.
    static let queryLogLevel: Logger.Level? = nil

    /// How long a PostgreSQL operation may take before its request is answered `unavailable` (503, so Apple retries).
    public static let deadline: Duration = .seconds(15)
    /// How long work over a whole table may take: a migration, the hourly summary computed again, an exchange-rate
    /// import that converts every row of its currencies (minutes on ten million ledger rows).
    public static let maintenanceDeadline: Duration = .seconds(3600)

    /// Runs `body` with a deadline. After PostgreSQL restarted under load, a request could wait on the driver for ever
    /// (seen in the outage test: every session idle on the server, the request never answered, and SIGTERM then never
    /// finishing); the deadline turns that into a retryable error. The late body is cancelled and left to end on its
    /// own; a transaction it was running rolls back instead of committing (see `inTransaction`), short of a COMMIT
    /// already sent.
    static func withDeadline<T: Sendable>(
        _ deadline: Duration = StorageDatabase.deadline, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let race = DeadlineRace<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { race.start($0, deadline: deadline, body: body) }
        } onCancel: {
            // The caller's cancellation reaches the body, as it would in a structured call.
            race.finish(.failure(CancellationError()))
        }
    }

    /// Driver errors become `StorageError.unavailable` (retryable); errors of our own pass through.
    private static func mapErrors<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as StorageError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            if let error = error as? PSQLError, error.serverInfo?[.sqlState]?.hasPrefix("22") == true {
                throw StorageError(.invalidValue, summary(of: error), detail: String(reflecting: error))
            }
            if error is SQLiteError || error is SQLiteHandleError || error is PSQLError || error is ConnectionPoolError
                || error is ChannelError
                || error is IOError || error is NIOConnectionError
            {
                throw StorageError(.unavailable, summary(of: error), detail: String(reflecting: error))
            }
            throw error
        }
    }

    /// A driver's error as an answer may tell it: PostgreSQL's code, message and SQLSTATE, never the statement that
    /// failed (PostgresNIO's full account carries it); the other drivers' descriptions hold no statement.
    static func summary(of error: any Error) -> String {
        guard let error = error as? PSQLError else { return String(describing: error) }
        var summary = "PostgreSQL: \(error.code)"
        if let message = error.serverInfo?[.message] { summary += ": \(message)" }
        if let state = error.serverInfo?[.sqlState] { summary += " (SQLSTATE \(state))" }
        return summary
    }

    /// Runs one statement on the SQLite writer's connection between transactions; nothing on PostgreSQL. For its
    /// checkpoints (`WALCheckpointer`), and for tests that make the file behave as read-only (`PRAGMA query_only`) or
    /// full (`PRAGMA max_page_count`), faults that file permissions cannot produce for root.
    func onSQLiteWriter(_ statement: String) async throws {
        guard case .sqlite(let writer, _, _) = backend else { return }
        try await writer.exclusive { try await Self.mapErrors { try writer.handle.execute(statement, binds: []) { _ in } } }
    }

    /// Runs `body` between SQLite's write transactions, none beginning until it returns (`SQLiteWriter.exclusive`); on
    /// PostgreSQL, just runs it. For the checkpoint that lets the writer start the log over (`WALCheckpointer`).
    func betweenSQLiteWrites<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        guard case .sqlite(let writer, _, _) = backend else { return try await body() }
        return try await writer.exclusive(body)
    }

    /// SQLite's `PRAGMA data_version` on the writer's connection, read between write transactions: it changes when
    /// another connection has committed, and this process's other connections (readers, the checkpointer) never
    /// commit, so a change means another process wrote. nil on PostgreSQL.
    public func sqliteOtherProcessesVersion() async throws -> Int64? {
        guard case .sqlite(let writer, _, _) = backend else { return nil }
        return try await writer.exclusive {
            try await Self.mapErrors {
                var version: Int64?
                try writer.handle.execute("PRAGMA data_version", binds: []) { row in
                    if case .integer(let value) = row.value("data_version") { version = Int64(value) }
                }
                guard let version else { throw StorageError(.corrupt, "PRAGMA data_version answered no number") }
                return version
            }
        }
    }

    /// Group commit's counts on SQLite (`SQLiteWriter`); nil on PostgreSQL.
    public var sqliteCommitStatistics: SQLiteCommitStatistics? {
        guard case .sqlite(let writer, _, _) = backend else { return nil }
        return writer.statistics
    }

    /// Whether the database answers (for `/health`).
    public func ping() async throws {
        try await read { try await $0.raw("SELECT 1").run() }
    }

    public func close() async {
        switch backend {
        case .sqlite(let writer, let readers, _):
            for connection in readers { await connection.closeEvenIfCancelled() }
            writer.handle.close()
        case .postgres(let pool):
            try? await pool.shutdownAsync()
        }
    }
}

/// A counter for round-robin choice of a reader.
final class NIOLockedCounter: Sendable {
    private let value = NIOLockedValueBox(0)
    func next() -> Int {
        value.withLockedValue {
            $0 &+= 1
            return $0 & Int.max
        }
    }
}

extension StorageDatabase {
    /// A write transaction over the repositories.
    public func writing<T: Sendable>(
        deadline: Duration = StorageDatabase.deadline, _ body: @escaping @Sendable (StorageSession) async throws -> T
    ) async throws -> T {
        let kind = self.kind
        let names = absentAppUsers.transactionLog()
        // Ended whatever the outcome, after the commit or rollback: only then may a read remember a name as absent.
        defer { names.ended() }
        return try await connectedTransaction(deadline: deadline) {
            try await body(StorageSession(sql: $0, kind: kind, connection: $1, names: names))
        }
    }

    /// Reads over the repositories, outside a transaction.
    public func reading<T: Sendable>(_ body: @escaping @Sendable (StorageSession) async throws -> T) async throws -> T {
        let kind = self.kind
        return try await read { try await body(StorageSession(sql: $0, kind: kind)) }
    }
}

/// The repositories, over one connection or transaction.
public struct StorageSession: Sendable {
    public let sql: any SQLDatabase
    public let kind: StorageDatabase.Kind
    /// The one PostgreSQL connection `sql` runs on, in a transaction (for `FixedQuery`'s prepared statements).
    let connection: PostgresConnection?
    /// The app user ids this write transaction names customers by (`AbsentAppUsers`); nil outside `writing`.
    let names: AppUserNameLog?

    public init(sql: any SQLDatabase, kind: StorageDatabase.Kind) {
        self.init(sql: sql, kind: kind, connection: nil, names: nil)
    }

    init(sql: any SQLDatabase, kind: StorageDatabase.Kind, connection: PostgresConnection?, names: AppUserNameLog? = nil) {
        self.sql = sql
        self.kind = kind
        self.connection = connection
        self.names = names
    }
}

/// One database call against its deadline: the first of the body's result, the deadline or the caller's cancellation
/// answers the caller, and the body is then cancelled (a no-op when it is what finished).
private final class DeadlineRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var work: Task<Void, Never>?
        var timer: Task<Void, Never>?
        var finished = false
    }
    private let state = NIOLockedValueBox(State())

    func start(_ continuation: CheckedContinuation<T, any Error>, deadline: Duration, body: @escaping @Sendable () async throws -> T) {
        let cancelledAlready = state.withLockedValue { state -> Bool in
            if state.finished { return true }
            state.continuation = continuation
            return false
        }
        guard !cancelledAlready else { return continuation.resume(throwing: CancellationError()) }
        let timer = Task {
            guard (try? await Task.sleep(for: deadline)) != nil else { return }
            self.finish(.failure(StorageError(.unavailable, "the database did not answer within \(deadline)")))
        }
        let work = Task {
            let result: Result<T, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            self.finish(result)
        }
        let finishedMeanwhile = state.withLockedValue { state -> Bool in
            state.work = work
            state.timer = timer
            return state.finished
        }
        if finishedMeanwhile {
            work.cancel()
            timer.cancel()
        }
    }

    func finish(_ result: Result<T, any Error>) {
        let (continuation, work, timer) = state.withLockedValue { state in
            guard !state.finished else {
                return (nil, nil, nil) as (CheckedContinuation<T, any Error>?, Task<Void, Never>?, Task<Void, Never>?)
            }
            state.finished = true
            defer { state.continuation = nil }
            return (state.continuation, state.work, state.timer)
        }
        work?.cancel()
        timer?.cancel()
        continuation?.resume(with: result)
    }
}

extension SQLiteConnection {
    /// Closes the connection, also in a cancelled task. SQLiteNIO's async `close()` runs on its thread pool only if the
    /// task is not cancelled, and throws otherwise, leaving the connection open; the future-based `close()` always runs.
    /// A server whose start fails (a taken port) cancels every service mid-start, and an open connection that is
    /// dropped stops the process (SQLiteNIO asserts that none is), so every close of ours goes through here.
    func closeEvenIfCancelled() async {
        try? await close().get()
    }
}
