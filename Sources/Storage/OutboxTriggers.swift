import SQLKit

/// The outbox written by the database: triggers on `events` add, for every event version written (an insert, or an
/// update that moves a row to the end of the stream: a retraction or a restore), one `deliveries` row per destination
/// of its app that takes it, in the statement that writes the event and so in its transaction. No writer of events
/// can leave the outbox behind, and recording an event costs the writer no statement of its own for it: on SQLite,
/// where one writer takes every ingest in turn, each statement it runs is time every other ingest waits.
///
/// A destination takes an event when its `environments` (a JSON array) name the event's environment and its `events`
/// (a JSON array, or NULL for every type) its type; enabled or paused alike (a paused destination's deliveries wait
/// for it). The delivery is due when the event version was recorded (`recorded_at`, the ingest's clock); a second
/// write of the same version is ignored.
enum OutboxTriggers {
    /// The columns a trigger writes, with the value each takes from the written event row `row` and destination `i`.
    private static func values(_ row: String) -> [(column: String, value: String)] {
        [
            ("integration_id", "i.id"), ("event_seq", "\(row).seq"), ("app_id", "\(row).app_id"), ("event_id", "\(row).event_id"),
            ("retraction", "CASE WHEN \(row).retracted_at IS NULL THEN 0 ELSE 1 END"), ("status", "'pending'"), ("attempts", "0"),
            ("next_attempt_at", "\(row).recorded_at"), ("created_at", "\(row).recorded_at"), ("updated_at", "\(row).recorded_at"),
        ]
    }

    /// The deliveries of the event rows `rows` (a table or transition table, its rows named `row`; on SQLite `NEW`
    /// alone), for each destination that takes them.
    private static func insert(from rows: String?, row: String, postgres: Bool) -> String {
        let (environment, type) =
            postgres
            ? (
                "i.environments::jsonb @> jsonb_build_array(\(row).environment)",
                "i.events::jsonb @> jsonb_build_array(\(row).type)"
            )
            : (
                "EXISTS (SELECT 1 FROM json_each(i.environments) WHERE value = \(row).environment)",
                "EXISTS (SELECT 1 FROM json_each(i.events) WHERE value = \(row).type)"
            )
        let columns = values(row)
        return """
            INSERT INTO deliveries (\(columns.map(\.column).joined(separator: ", ")))
            SELECT \(columns.map(\.value).joined(separator: ", ")) FROM \(rows.map { "\($0) AS \(row), " } ?? "")integrations i
            WHERE i.app_id = \(row).app_id AND \(environment) AND (i.events IS NULL OR \(type))
            ON CONFLICT (integration_id, event_seq) DO NOTHING
            """
    }

    /// Migration 12: the triggers. On SQLite they run for each row (an update only when it sets `seq`, so no other
    /// UPDATE of events is prepared with them); on PostgreSQL once per statement, over its transition tables (an
    /// update's rows whose `seq` changed).
    static func create(_ db: any SQLDatabase) async throws {
        if db.dialect.name == "postgresql" {
            for (event, tables, source) in [
                ("INSERT", "NEW TABLE AS written", "written"),
                (
                    "UPDATE", "OLD TABLE AS replaced NEW TABLE AS written",
                    "(SELECT w.* FROM written w JOIN replaced r USING (app_id, event_id) WHERE w.seq <> r.seq)"
                ),
            ] {
                try await StatementTrigger.create(
                    db, name: "events_outbox_" + event.lowercased(), after: event, on: "events", referencing: tables,
                    body: insert(from: source, row: "e", postgres: true) + ";")
            }
            return
        }
        for (name, on) in [("events_outbox_insert", "INSERT ON events"), ("events_outbox_update", "UPDATE OF seq ON events")] {
            try await db.raw(
                SQLQueryString(
                    """
                    CREATE TRIGGER \(name) AFTER \(on) FOR EACH ROW
                    BEGIN \(insert(from: nil, row: "NEW", postgres: false)); END
                    """)
            )
            .run()
        }
    }
}
