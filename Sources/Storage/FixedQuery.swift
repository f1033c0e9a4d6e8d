import Foundation
import Logging
import PostgresKit
import SQLKit

/// A statement whose text never changes, run on every ingest: PostgreSQL parses and plans it once per connection (a
/// prepared statement, reused while the connection lives) instead of on every run, which for a statement over a wide
/// table with many indexes costs more than running it. SQLite prepares every statement anyway (SQLiteNIO keeps no
/// statement cache), so there it runs as any other.
///
/// Parameters are written `$1`, `$2`, … in both texts, and every value is bound as text (or NULL): cast it in the text
/// where a column of another type needs it (`$1::json` on PostgreSQL).
///
/// Never run one after a statement of the same transaction has failed: PostgreSQL refuses to prepare it there, and
/// PostgresNIO keeps a failed preparation as the statement's answer for the rest of the connection's life. (Storekeeper
/// stops a transaction at its first failed statement and rolls it back.)
public protocol FixedQuery: Sendable {
    /// Its name on a PostgreSQL connection, unique among fixed queries. A changed text needs a new name only across a
    /// connection's life, and connections do not outlive the process.
    static var name: String { get }
    static var postgres: String { get }
    /// Its SQLite text; nil for a statement that only PostgreSQL runs (its callers write SQLite's otherwise).
    static var sqlite: String? { get }
}

extension StorageSession {
    /// Runs `query` with `binds` for its parameters, in order, and answers its rows.
    public func run<Query: FixedQuery>(_ query: Query.Type, _ binds: [String?]) async throws -> [any SQLRow] {
        if kind == .postgres {
            if let connection { return try await Self.prepared(query, binds, on: connection) }
            // Outside a transaction: any connection of the pool, the rows read before it is given back.
            if let pool = sql as? any PostgresDatabase {
                return try await pool.withConnection { connection in
                    connection.eventLoop.makeFutureWithTask { try await Self.prepared(query, binds, on: connection) }
                }.get()
            }
        }
        guard let text = kind == .postgres ? Query.postgres : Query.sqlite else {
            throw StorageError(.misuse, "\(Query.name) is a statement for PostgreSQL only")
        }
        return try await sql.raw(Self.query(text, binds)).all()
    }

    private static func prepared<Query: FixedQuery>(_ query: Query.Type, _ binds: [String?], on connection: PostgresConnection)
        async throws -> [any SQLRow]
    {
        var rows: [any SQLRow] = []
        for try await row in try await connection.execute(Prepared<Query>(binds: binds), logger: connection.logger) { rows.append(row) }
        return rows
    }

    /// A text as SQLKit's query, each `$n` replaced by the n-th bind (a repeated `$n` binds its value again).
    static func query(_ text: String, _ binds: [String?]) throws -> SQLQueryString {
        var query = SQLQueryString("")
        var rest = Substring(text)
        while let dollar = rest.firstIndex(where: { $0 == "$" }) {
            let digits = rest[rest.index(after: dollar)...].prefix(while: \.isASCIIDigit)
            query.appendInterpolation(unsafeRaw: String(rest[..<dollar]))
            if let n = Int(digits) {
                guard n >= 1, n <= binds.count else {
                    throw StorageError(.misuse, "a fixed statement names $\(n) but is given \(binds.count) values")
                }
                query.appendInterpolation(bind: binds[n - 1])
            } else {
                query.appendInterpolation(unsafeRaw: "$")
            }
            rest = rest[digits.endIndex...]
        }
        query.appendInterpolation(unsafeRaw: String(rest))
        return query
    }
}

/// A fixed query as PostgresNIO's prepared statement: prepared by name on a connection the first time it runs there.
private struct Prepared<Query: FixedQuery>: PostgresPreparedStatement {
    typealias Row = any SQLRow
    static var name: String { Query.name }
    static var sql: String { Query.postgres }

    let binds: [String?]

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: binds.count)
        for value in binds {
            if let value { bindings.append(value) } else { bindings.appendNull() }
        }
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> any SQLRow { row.sql() }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
