import SQLKit

extension StorageSession {
    /// PostgreSQL: a role that logs in with `password` and reads the export views and nothing else (views run with
    /// their owner's rights, so it needs no right on the tables behind them). Refused on SQLite, where a file's reader
    /// reads everything.
    public func createAnalystRole(name: String, password: String) async throws {
        guard sql.dialect.name == "postgresql" else {
            throw StorageError(.invalidConfiguration, "roles are PostgreSQL's: a SQLite file is read by whoever can read it")
        }
        guard let first = name.unicodeScalars.first, first == "_" || ("a"..."z").contains(first), name.count <= 63,
            name.unicodeScalars.allSatisfy({ $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) })
        else {
            throw StorageError(.invalidValue, "a role name is lower-case letters, digits and _ (at most 63), starting with a letter or _")
        }
        guard password.unicodeScalars.allSatisfy({ $0.isASCII && $0 != "'" && $0 != "\\" && $0.value >= 32 }) else {
            throw StorageError(.invalidValue, "the password is printable ASCII without quotes or backslashes")
        }
        let database = try await sql.raw("SELECT current_database() AS db, current_schema() AS schema").first()
        let db = try database?.decode(column: "db", as: String.self) ?? ""
        let schema = try database?.decode(column: "schema", as: String.self) ?? "public"
        let quoted = { (identifier: String) in "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
        // Identifiers cannot be bound: the name is checked above, the others come from the server.
        try await sql.raw("CREATE ROLE \(unsafeRaw: quoted(name)) LOGIN PASSWORD '\(unsafeRaw: password)'").run()
        try await sql.raw("GRANT CONNECT ON DATABASE \(unsafeRaw: quoted(db)) TO \(unsafeRaw: quoted(name))").run()
        try await sql.raw("GRANT USAGE ON SCHEMA \(unsafeRaw: quoted(schema)) TO \(unsafeRaw: quoted(name))").run()
        let views = ExportViews.views.map { quoted(schema) + "." + $0.name }.joined(separator: ", ")
        try await sql.raw("GRANT SELECT ON \(unsafeRaw: views) TO \(unsafeRaw: quoted(name))").run()
    }
}
