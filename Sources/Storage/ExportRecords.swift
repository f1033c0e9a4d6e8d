import SQLKit

/// A value of an export view's row.
public enum ExportValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
}

/// Which rows of a view an export takes: an app's (nil: every app's) whose instant column is in [from, until).
public struct ExportRange: Sendable, Hashable {
    public var appId: String?
    public var from: Int64?
    public var until: Int64?

    public init(appId: String? = nil, from: Int64? = nil, until: Int64? = nil) {
        self.appId = appId
        self.from = from
        self.until = until
    }
}

extension StorageSession {
    /// Up to `limit` rows of an export view in its key's order, after the row whose key values are `after`.
    public func exportRows(
        _ view: ExportViews.View, range: ExportRange, after: [ExportValue]?, limit: Int
    ) async throws -> [[ExportValue]] {
        let columns = view.columns
        let keys = view.key.map { view.nullableKey.contains($0) ? "COALESCE(\($0), '')" : $0 }
        var conditions: [SQLQueryString] = []
        if let app = range.appId { conditions.append("app_id = \(bind: app)") }
        if let from = range.from { conditions.append("\(unsafeRaw: view.instant) >= \(bind: from)") }
        if let until = range.until { conditions.append("\(unsafeRaw: view.instant) < \(bind: until)") }
        if let after {
            let binds = after.map { value -> any SQLExpression in
                switch value {
                case .null: SQLBind("")
                case .integer(let v): SQLBind(v)
                case .real(let v): SQLBind(v)
                case .text(let v): SQLBind(v)
                }
            }
            var condition = SQLQueryString("(\(unsafeRaw: keys.joined(separator: ", "))) > ")
            condition.appendInterpolation(SQLGroupExpression(binds))
            conditions.append(condition)
        }
        var query = SQLQueryString("SELECT \(unsafeRaw: columns.map(\.name).joined(separator: ", ")) FROM \(unsafeRaw: view.name)")
        if !conditions.isEmpty {
            query.appendLiteral(" WHERE ")
            query.appendInterpolation(SQLList(conditions, separator: SQLRaw(" AND ")))
        }
        query.appendLiteral(" ORDER BY \(keys.joined(separator: ", ")) LIMIT ")
        query.appendInterpolation(bind: limit)
        return try await sql.raw(query).all().map { row in
            try columns.map { column -> ExportValue in
                if try row.decodeNil(column: column.name) { return .null }
                switch column.kind {
                case .integer: return .integer(try row.decode(column: column.name, as: Int64.self))
                case .real: return .real(try row.decode(column: column.name, as: Double.self))
                case .text: return .text(try row.decode(column: column.name, as: String.self))
                }
            }
        }
    }
}
