import Logging
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit

/// A `SQLiteHandle` as SQLKit's `SQLDatabase`: statements serialized by SQLiteKit's dialect, binds encoded and rows
/// decoded by SQLiteKit's coders (so values read and written are the same as through SQLiteNIO), run on the caller's
/// thread.
struct SQLiteHandleDatabase: SQLDatabase {
    let handle: SQLiteHandle
    let logger: Logger
    let eventLoop: any EventLoop
    var dialect: any SQLDialect { SQLiteDialect() }
    var queryLogLevel: Logger.Level? { nil }

    init(_ handle: SQLiteHandle, logger: Logger, eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.any()) {
        self.handle = handle
        self.logger = logger
        self.eventLoop = eventLoop
    }

    private static let encoder = SQLiteDataEncoder()

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        eventLoop.makeCompletedFuture { try run(query, onRow) }
    }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try run(query, onRow)
    }

    private func run(_ query: any SQLExpression, _ onRow: (any SQLRow) -> Void) throws {
        let (sql, binds) = serialize(query)
        let values = try binds.map { try Self.encoder.encode($0) }
        try handle.execute(sql, binds: values) { onRow(SQLiteHandleSQLRow(row: $0)) }
    }
}

/// A `SQLiteHandleRow` as SQLKit's `SQLRow`, decoded as SQLiteKit decodes its own rows.
private struct SQLiteHandleSQLRow: SQLRow {
    let row: SQLiteHandleRow
    private static let decoder = SQLiteDataDecoder()

    var allColumns: [String] { row.columns.names }

    func contains(column: String) -> Bool { row.columns.offsets[column] != nil }

    func decodeNil(column: String) throws -> Bool { (row.value(column) ?? .null) == .null }

    func decode<D: Decodable>(column: String, as: D.Type) throws -> D {
        guard let value = row.value(column) else {
            throw DecodingError.keyNotFound(
                SQLiteHandleColumnKey(column), .init(codingPath: [], debugDescription: "no column \(column) in the row"))
        }
        return try Self.decoder.decode(D.self, from: value)
    }
}

private struct SQLiteHandleColumnKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
