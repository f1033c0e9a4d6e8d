import SQLKit

/// A PostgreSQL trigger that runs once per statement over its transition tables: a PL/pgSQL function of the same name
/// running `body` (SQL statements, each ending with `;`), and the trigger calling it after `event` on `table`.
/// `tables` names the transition tables (`NEW TABLE AS written`, `OLD TABLE AS replaced`) that `body` reads.
enum StatementTrigger {
    static func create(_ db: any SQLDatabase, name: String, after event: String, on table: String, referencing tables: String, body: String)
        async throws
    {
        try await db.raw(
            "CREATE FUNCTION \(unsafeRaw: name)() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \(unsafeRaw: body) RETURN NULL; END $$"
        )
        .run()
        try await db.raw(
            """
            CREATE TRIGGER \(unsafeRaw: name) AFTER \(unsafeRaw: event) ON \(unsafeRaw: table) REFERENCING \(unsafeRaw: tables)
            FOR EACH STATEMENT EXECUTE FUNCTION \(unsafeRaw: name)()
            """
        ).run()
    }
}
