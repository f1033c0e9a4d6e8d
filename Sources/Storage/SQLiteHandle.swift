import NIOConcurrencyHelpers
import NIOCore
import SQLiteNIO
// SQLite's C interface as SQLiteNIO bundles it (its symbols prefixed `sqlite_nio_`): a target of the sqlite-nio package
// that SQLiteKit already links. It must be this copy: two SQLite libraries in one process on one file each keep
// their own POSIX locks, which SQLite's documentation warns can corrupt the database.
import VaporCSQLite

/// One SQLite connection whose statements run on the calling thread, each prepared once and kept.
///
/// SQLiteNIO runs every statement on a thread of its pool and answers on an event loop: two thread hand-offs per
/// statement, most of a short statement's time on a busy server (a profile of ingest showed 28% of all CPU in the
/// kernel, most of it waking threads), and it prepares every statement again each time. A notification's write
/// transaction runs a dozen short statements; here they run where the transaction's task runs, with no hand-off, from
/// statements compiled once per connection. A statement blocks its thread while it runs, as it blocked a thread of
/// SQLiteNIO's pool; write transactions take the writer one at a time anyway.
final class SQLiteHandle: @unchecked Sendable {
    // @unchecked: `connection` and `statements` are touched only while `lock` is held (every method takes it), and the
    // connection is opened in SQLite's serialized mode besides.
    private let lock = NIOLock()
    private var connection: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    let path: String

    /// Prepared statements kept per connection; past this many (statements built with a varying number of binds),
    /// the cache starts over.
    static let cachedStatements = 512

    /// Opens (and creates) the file, in WAL mode with the pragmas every connection of ours has.
    init(path: String) throws(SQLiteHandleError) {
        self.path = path
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX
        let status = sqlite_nio_sqlite3_open_v2(path, &opened, flags, nil)
        guard status == SQLITE_OK, let opened else {
            let message = opened.flatMap { sqlite_nio_sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "cannot open"
            sqlite_nio_sqlite3_close_v2(opened)
            throw SQLiteHandleError(status: status, message: message)
        }
        connection = opened
    }

    deinit {
        closeLocked()
    }

    /// Runs one statement with its binds, handing each row to `onRow`.
    func execute(_ sql: String, binds: [SQLiteData], onRow: (SQLiteHandleRow) throws -> Void) throws {
        try lock.withLock { () throws in
            guard let connection else { throw SQLiteHandleError(status: SQLITE_MISUSE, message: "the connection is closed") }
            let statement = try prepared(sql, on: connection)
            defer {
                sqlite_nio_sqlite3_reset(statement)
                sqlite_nio_sqlite3_clear_bindings(statement)
            }
            try bind(binds, to: statement, on: connection)
            var columns: SQLiteHandleColumns?
            while true {
                let status = sqlite_nio_sqlite3_step(statement)
                if status == SQLITE_DONE { return }
                guard status == SQLITE_ROW else { throw Self.error(status, on: connection) }
                let names = try columns ?? Self.columns(of: statement)
                columns = names
                var values: [SQLiteData] = []
                values.reserveCapacity(names.names.count)
                for index in 0..<Int32(names.names.count) { values.append(try Self.value(at: index, of: statement)) }
                try onRow(SQLiteHandleRow(columns: names, values: values))
            }
        }
    }

    /// Whether a transaction is open on the connection (SQLite may end one by itself after some failures).
    var isInTransaction: Bool {
        lock.withLock { connection.map { sqlite_nio_sqlite3_get_autocommit($0) == 0 } ?? false }
    }

    /// Finalizes the kept statements and closes the connection; later calls fail.
    func close() {
        lock.withLock { closeLocked() }
    }

    private func closeLocked() {
        for statement in statements.values { sqlite_nio_sqlite3_finalize(statement) }
        statements = [:]
        if let connection { sqlite_nio_sqlite3_close_v2(connection) }
        connection = nil
    }

    private func prepared(_ sql: String, on connection: OpaquePointer) throws(SQLiteHandleError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let status = sqlite_nio_sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw Self.error(status, on: connection) }
        if statements.count >= Self.cachedStatements {
            for kept in statements.values { sqlite_nio_sqlite3_finalize(kept) }
            statements = [:]
        }
        statements[sql] = statement
        return statement
    }

    private func bind(_ binds: [SQLiteData], to statement: OpaquePointer, on connection: OpaquePointer) throws(SQLiteHandleError) {
        for (offset, value) in binds.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .integer(let integer): status = sqlite_nio_sqlite3_bind_int64(statement, index, Int64(integer))
            case .float(let double): status = sqlite_nio_sqlite3_bind_double(statement, index, double)
            case .null: status = sqlite_nio_sqlite3_bind_null(statement, index)
            case .text(let text):
                status = sqlite_nio_sqlite3_bind_text64(
                    statement, index, text, UInt64(text.utf8.count), Self.transient, UInt8(SQLITE_UTF8))
            case .blob(let buffer):
                status = buffer.withUnsafeReadableBytes {
                    sqlite_nio_sqlite3_bind_blob64(statement, index, $0.baseAddress, UInt64($0.count), Self.transient)
                }
            }
            guard status == SQLITE_OK else { throw Self.error(status, on: connection) }
        }
    }

    private static func columns(of statement: OpaquePointer) throws(SQLiteHandleError) -> SQLiteHandleColumns {
        let count = sqlite_nio_sqlite3_column_count(statement)
        var names: [String] = []
        names.reserveCapacity(Int(count))
        for index in 0..<count {
            guard let name = sqlite_nio_sqlite3_column_name(statement, index) else {
                throw SQLiteHandleError(status: SQLITE_NOMEM, message: "no name for column \(index)")
            }
            names.append(String(cString: name))
        }
        return SQLiteHandleColumns(names: names)
    }

    private static func value(at index: Int32, of statement: OpaquePointer) throws(SQLiteHandleError) -> SQLiteData {
        switch sqlite_nio_sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: return .integer(Int(sqlite_nio_sqlite3_column_int64(statement, index)))
        case SQLITE_FLOAT: return .float(sqlite_nio_sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            guard let text = sqlite_nio_sqlite3_column_text(statement, index) else {
                throw SQLiteHandleError(status: SQLITE_NOMEM, message: "no text for column \(index)")
            }
            let length = Int(sqlite_nio_sqlite3_column_bytes(statement, index))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self))
        case SQLITE_BLOB:
            let length = Int(sqlite_nio_sqlite3_column_bytes(statement, index))
            var buffer = ByteBufferAllocator().buffer(capacity: length)
            if let bytes = sqlite_nio_sqlite3_column_blob(statement, index) {
                buffer.writeBytes(UnsafeRawBufferPointer(start: bytes, count: length))
            }
            return .blob(buffer)
        default: return .null
        }
    }

    /// The failed call's error, its message read while the lock is still held (no other call can replace it).
    private static func error(_ status: Int32, on connection: OpaquePointer) -> SQLiteHandleError {
        SQLiteHandleError(status: status, message: sqlite_nio_sqlite3_errmsg(connection).map { String(cString: $0) } ?? "")
    }

    /// SQLite copies a bound text or blob before the bind call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

/// A row's column names, shared by every row of one statement's run.
final class SQLiteHandleColumns: Sendable {
    let names: [String]
    let offsets: [String: Int]

    init(names: [String]) {
        self.names = names
        offsets = Dictionary(names.enumerated().map { ($0.element, $0.offset) }, uniquingKeysWith: { first, _ in first })
    }
}

/// One row of a statement run on a `SQLiteHandle`.
struct SQLiteHandleRow: Sendable {
    let columns: SQLiteHandleColumns
    let values: [SQLiteData]

    func value(_ column: String) -> SQLiteData? {
        columns.offsets[column].map { values[$0] }
    }
}

/// A SQLite call that failed: its result code (https://sqlite.org/rescode.html) and SQLite's message.
struct SQLiteHandleError: Error, Sendable, CustomStringConvertible {
    let status: Int32
    let message: String

    var description: String { "SQLite error \(status): \(message)" }
}
