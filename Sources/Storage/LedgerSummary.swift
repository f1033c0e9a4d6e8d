import SQLKit

/// The money ledger summed per app, environment, product and UTC hour (`ledger_hourly`): what the metrics over many
/// subscriptions read instead of the ledger's rows. It is derived like the ledger and moves with it in the same
/// transaction: triggers on `ledger` (`createTriggers`) add what every inserted, updated or deleted row moves the
/// sums by, so that no writer of the ledger can leave it behind and a customer's recompute writes the ledger in one
/// statement. `rebuildLedgerSummary` computes it again from the ledger.
///
/// A write does not update the summary's rows: every customer of an app writing in the same hour would wait on the
/// same row's lock until the one before it commits. The triggers append the rows a write replaced and wrote to
/// `ledger_moves` instead (inserts, which wait on nobody, and small enough that a statement which fires them is quick to
/// prepare), readers add their sums to the summary (`summing`), and `foldLedgerSummaryChanges` moves them into it now
/// and then (the server's `LedgerSummaryFolder`).
///
/// Its definition lives beside the schema because the migrations that create the table and its triggers use it.
public enum LedgerSummary {
    public static let table = "ledger_hourly"
    /// Ledger rows as written (`sign` 1) and as replaced or deleted (`sign` -1), in the order they were (`seq`), with
    /// the columns the sums read: what is not folded into `table` yet.
    public static let movesTable = "ledger_moves"
    /// Where the differences waited before `movesTable` (from migration 5 until 9 folds them in).
    static let changesTable = "ledger_hourly_changes"
    /// The summary's grain: a UTC hour (every zone whose offset is a whole number of hours is served by it).
    public static let hour: Int64 = 3_600_000

    // MARK: - What the sums count

    /// A paid subscription period: an auto-renewable's period other than a free trial, not family-shared, not free.
    public static let paid =
        "kind IN ('intro', 'promo', 'offerCode', 'winBack', 'regular') AND family_shared = 0 AND (price IS NULL OR price > 0)"
    public static let trial = "kind = 'trial' AND family_shared = 0"
    /// Revenue: anything paid for, not family-shared.
    public static let revenue = "kind <> 'trial' AND family_shared = 0 AND price > 0"
    /// Rows that grant access for a while: counted from their start until their access ends (never when it ends
    /// before it starts).
    static let lasting = "(active_until IS NULL OR active_until > start_at)"

    /// USD of a money column (NULL without a rate: sums leave it out, and metrics report it apart).
    public static func usd(_ column: String) -> String { "usd_rate * \(column) / 1000" }
    /// Estimated proceeds of a money column: less the commission, less tax included in the price.
    public static func proceeds(_ column: String) -> String {
        "usd_rate * (\(column)) * (1000 - commission_per_mille) / (1000 + COALESCE(tax_per_mille, 0)) / 1000"
    }
    /// The ledger's columns the sums read (and the keys), with their types: a change to any other column moves no sum.
    /// A sum that read another would fail on `movesTable`, which carries only these.
    static let readColumns: [(name: String, type: SQLDataType)] = [
        ("app_id", .text), ("environment", .text), ("product_id", .text), ("group_id", .text), ("kind", .text),
        ("start_at", .bigint), ("active_until", .bigint), ("renewal_number", .bigint), ("price", .bigint),
        ("family_shared", .bigint), ("refunded_at", .bigint), ("refund_amount", .bigint), ("monthly_price", .bigint),
        ("commission_per_mille", .bigint), ("tax_per_mille", .bigint), ("will_renew", .bigint), ("acquisition", .text),
        ("usd_rate", .custom(SQLRaw("DOUBLE PRECISION"))),
    ]
    /// The names of `readColumns`.
    public static let summedColumns = readColumns.map(\.name)

    /// A sum over ledger rows. A `running` sum is kept twice: added in the hour a row starts (`<name>_started`) and in
    /// the hour its access ends (`<name>_ended`), so that what is active at an hour is the difference of the two
    /// summed over the hours before it. Any other sum is booked in the hour its row starts.
    public struct Sum: Sendable {
        public let name: String
        /// The rows it counts.
        public let predicate: String
        /// What each of those rows adds (SQL's NULL: nothing).
        public let expression: String
        public let running: Bool

        /// The summary's columns for this sum.
        public var columns: [String] { running ? [name + "_started", name + "_ended"] : [name] }
    }

    static func count(_ name: String, _ predicate: String, running: Bool) -> Sum {
        Sum(name: name, predicate: predicate, expression: "1", running: running)
    }

    public static let activePaid = count("paid", paid, running: true)
    public static let activePaidRenewOff = Sum(
        name: "paid_renew_off", predicate: paid, expression: "CASE WHEN will_renew = 0 THEN 1 ELSE 0 END", running: true)
    public static let activeMRR = Sum(name: "paid_mrr", predicate: paid, expression: usd("monthly_price"), running: true)
    public static let activeMRRProceeds = Sum(
        name: "paid_mrr_proceeds", predicate: paid, expression: proceeds("monthly_price"), running: true)
    public static let activeTrials = count("trial", trial, running: true)

    public static let trialsStarted = count("trials", trial, running: false)
    static let acquired = paid + " AND acquisition IS NOT NULL"
    static func acquisition(_ name: String, _ kind: String) -> Sum {
        Sum(name: name, predicate: acquired, expression: "CASE WHEN acquisition = '\(kind)' THEN 1 ELSE 0 END", running: false)
    }
    public static let acquiredNew = acquisition("acquired_new", "new")
    public static let acquiredByConversion = acquisition("acquired_conversion", "trialConversion")
    public static let acquiredBack = acquisition("acquired_resubscription", "resubscription")
    public static let sales = count("sales", revenue, running: false)
    public static let salesRefunded = Sum(
        name: "sales_refunded", predicate: revenue, expression: "CASE WHEN refunded_at IS NULL THEN 0 ELSE 1 END", running: false)
    public static let gross = Sum(name: "gross", predicate: revenue, expression: usd("price"), running: false)
    public static let refunds = Sum(name: "refunds", predicate: revenue, expression: usd("COALESCE(refund_amount, 0)"), running: false)
    public static let netProceeds = Sum(
        name: "net_proceeds", predicate: revenue, expression: proceeds("price - COALESCE(refund_amount, 0)"), running: false)
    public static let newGross = Sum(
        name: "new_gross", predicate: revenue, expression: "CASE WHEN COALESCE(renewal_number, 0) = 0 THEN \(usd("price")) ELSE 0 END",
        running: false)
    public static let renewalGross = Sum(
        name: "renewal_gross", predicate: revenue,
        expression: "CASE WHEN COALESCE(renewal_number, 0) > 0 THEN \(usd("price")) ELSE 0 END", running: false)

    public static let sums: [Sum] = [
        activePaid, activePaidRenewOff, activeMRR, activeMRRProceeds, activeTrials, trialsStarted, acquiredNew,
        acquiredByConversion, acquiredBack, sales, salesRefunded, gross, refunds, netProceeds, newGross, renewalGross,
    ]
    /// Every column the sums fill, in order.
    public static let columns: [String] = sums.flatMap(\.columns)
    static let keys = ["app_id", "environment", "hour", "product_id", "group_id"]

    // MARK: - SQL

    /// The migration's table: its keys and a DOUBLE PRECISION per column.
    static func create(_ db: any SQLDatabase) async throws {
        try await keysAndSums(db.create(table: table)).primaryKey(keys).run()
    }

    /// The table of differences not yet folded in (`changesTable`), in write order.
    static func createChanges(_ db: any SQLDatabase) async throws {
        try await keysAndSums(db.create(table: changesTable).column("seq", type: .bigint, .primaryKey(autoIncrement: true))).run()
    }

    /// Replaces the differences table with `movesTable` and the ledger's triggers that fill it: the differences
    /// waiting are folded in first.
    static func moveByTriggers(_ db: any SQLDatabase) async throws {
        var moves = db.create(table: movesTable)
            .column("seq", type: .bigint, .primaryKey(autoIncrement: true))
            .column("sign", type: .bigint, .notNull)
        for (name, type) in readColumns { moves = moves.column(name, type: type) }
        try await moves.run()
        let summed = columns.map { "SUM(\($0))" }.joined(separator: ", ")
        try await db.raw(
            """
            INSERT INTO \(unsafeRaw: table) (\(unsafeRaw: (keys + columns).joined(separator: ", ")))
            SELECT \(unsafeRaw: keys.joined(separator: ", ")), \(unsafeRaw: summed) FROM \(unsafeRaw: changesTable) WHERE true
            GROUP BY \(unsafeRaw: keys.joined(separator: ", ")) \(unsafeRaw: addingOnConflict)
            """
        ).run()
        try await db.drop(table: changesTable).run()
        try await createTriggers(db)
    }

    /// An `ON CONFLICT` clause that adds the inserted sums to the summary's row for the same key.
    static let addingOnConflict =
        "ON CONFLICT (\(keys.joined(separator: ", "))) DO UPDATE SET "
        + columns.map { "\($0) = \(table).\($0) + excluded.\($0)" }.joined(separator: ", ")

    /// The summary's key columns and a DOUBLE PRECISION per sum column, added to a table being created.
    private static func keysAndSums(_ table: SQLCreateTableBuilder) -> SQLCreateTableBuilder {
        var table =
            table
            .column("app_id", type: .text, .notNull)
            .column("environment", type: .text, .notNull)
            .column("hour", type: .bigint, .notNull)
            .column("product_id", type: .text, .notNull)
            .column("group_id", type: .text, .notNull)
        for column in columns { table = table.column(column, type: .custom(SQLRaw("DOUBLE PRECISION")), .notNull) }
        return table
    }

    /// `SELECT <select> FROM … WHERE <filter> GROUP BY <group>` over the summary and the sums of the moves not folded
    /// in yet: the sums as they are now. `select` and `filter` name the summary's own columns.
    public static func summing(select: String, where filter: SQLQueryString, groupBy group: String) -> SQLQueryString {
        var query = SQLQueryString("")
        var moves = SQLQueryString("(")
        moves.appendInterpolation(pending)
        moves.appendInterpolation(unsafeRaw: ") AS moved")
        for (index, source) in [SQLQueryString(stringLiteral: table), moves].enumerated() {
            if index > 0 { query.appendInterpolation(unsafeRaw: " UNION ALL ") }
            query.appendInterpolation(unsafeRaw: "SELECT \(select) FROM ")
            query.appendInterpolation(source)
            query.appendInterpolation(unsafeRaw: " WHERE ")
            query.appendInterpolation(filter)
            query.appendInterpolation(unsafeRaw: " GROUP BY \(group)")
        }
        return query
    }

    /// The sums of the moves not folded in yet, per key.
    static let pending = contributions(from: movesTable, signed: true, where: "true")

    /// The sums of the ledger rows that `filter` selects, per key: each row in the hour it starts, and once more
    /// (its running sums only) in the hour its access ends. `source` is where the rows come from: the ledger, or in
    /// the triggers the rows a write replaced and wrote, with a `sign` column (-1 and 1) that each row's values are
    /// multiplied by.
    static func contributions(from source: String = "ledger", signed: Bool = false, where filter: SQLQueryString) -> SQLQueryString {
        func cell(_ sum: Sum, _ value: String) -> String { "CASE WHEN \(sum.predicate) THEN \(value) END" }
        let starting = sums.flatMap { sum in
            sum.running ? [cell(sum, "CASE WHEN \(lasting) THEN \(sum.expression) END"), "NULL"] : [cell(sum, sum.expression)]
        }
        let ending = sums.flatMap { sum in
            sum.running ? ["NULL", cell(sum, "CASE WHEN \(lasting) THEN \(sum.expression) END")] : ["NULL"]
        }
        let sign = signed ? "sign * " : ""
        func select(_ hour: String, _ cells: [String]) -> String {
            let named = zip(cells, columns).map { "\(sign)CAST(\($0) AS DOUBLE PRECISION) AS \($1)" }
            return
                "SELECT app_id, environment, \(hour) AS hour, product_id, group_id, \(named.joined(separator: ", ")) FROM \(source) WHERE "
        }
        var query = SQLQueryString(
            "SELECT \(unsafeRaw: keys.joined(separator: ", ")), \(unsafeRaw: columns.map { "CAST(SUM(\($0)) AS DOUBLE PRECISION) AS \($0)" }.joined(separator: ", ")) FROM ("
        )
        query.appendInterpolation(unsafeRaw: select("start_at / \(hour)", starting))
        query.appendInterpolation(filter)
        query.appendInterpolation(unsafeRaw: " UNION ALL ")
        query.appendInterpolation(unsafeRaw: select("active_until / \(hour)", ending))
        query.appendInterpolation(unsafeRaw: "active_until IS NOT NULL AND (")
        query.appendInterpolation(filter)
        query.appendInterpolation(unsafeRaw: ")) AS edges GROUP BY \(keys.joined(separator: ", "))")
        return query
    }

    /// `INSERT INTO <table> … SELECT` the sums of `contributions`, the keys whose sums are all zero left out.
    static func inserting(into table: String, _ contributions: SQLQueryString) -> SQLQueryString {
        var query = SQLQueryString(
            "INSERT INTO \(unsafeRaw: table) (\(unsafeRaw: (keys + columns).joined(separator: ", "))) SELECT \(unsafeRaw: keys.joined(separator: ", ")), "
        )
        query.appendInterpolation(unsafeRaw: columns.map { "COALESCE(\($0), 0)" }.joined(separator: ", "))
        query.appendInterpolation(unsafeRaw: " FROM (")
        query.appendInterpolation(contributions)
        query.appendInterpolation(unsafeRaw: ") AS summed WHERE ")
        query.appendInterpolation(unsafeRaw: columns.map { "COALESCE(\($0), 0) <> 0" }.joined(separator: " OR "))
        return query
    }

    /// The triggers that append to `movesTable` the rows each write of the ledger replaced (`sign` -1) and wrote (1).
    /// On SQLite they run for each row (an update only when a column the sums read changed); on PostgreSQL once per
    /// statement, over its transition tables (an update's rows that equal in those columns cancel out).
    static func createTriggers(_ db: any SQLDatabase) async throws {
        let names = readColumns.map(\.name).joined(separator: ", ")
        let insert = "INSERT INTO \(movesTable) (sign, \(names)) "
        if db.dialect.name == "postgresql" {
            let (replaced, written) = ("SELECT \(names) FROM replaced", "SELECT \(names) FROM written")
            for (event, tables, rows) in [
                ("INSERT", "NEW TABLE AS written", "SELECT 1, \(names) FROM written"),
                (
                    "UPDATE", "OLD TABLE AS replaced NEW TABLE AS written",
                    "SELECT -1, * FROM (\(replaced) EXCEPT ALL \(written)) AS r UNION ALL SELECT 1, * FROM (\(written) EXCEPT ALL \(replaced)) AS w"
                ),
                ("DELETE", "OLD TABLE AS replaced", "SELECT -1, \(names) FROM replaced"),
            ] {
                try await StatementTrigger.create(
                    db, name: "ledger_summary_" + event.lowercased(), after: event, on: "ledger", referencing: tables,
                    body: insert + rows + ";")
            }
            return
        }
        for event in ["INSERT", "UPDATE", "DELETE"] { try await db.raw(SQLQueryString(sqliteTrigger(event))).run() }
    }

    /// SQLite's trigger for `event` on the ledger, one per row. The update's fires only for an UPDATE that sets a
    /// column the sums read, and writes only when one of them changed: SQLite compiles a trigger into every statement
    /// that may fire it, so an UPDATE of other columns alone (a renewal's predecessor learning its successor) is
    /// prepared without it (`replaceLedger`). A replaced row (INSERT OR REPLACE) moves the sums by the delete's trigger:
    /// every SQLite connection runs with recursive_triggers on, without which a REPLACE fires no delete trigger.
    static func sqliteTrigger(_ event: String) -> String {
        func row(_ sign: String, _ name: String) -> String {
            "(\(sign), " + readColumns.map { "\(name).\($0.name)" }.joined(separator: ", ") + ")"
        }
        let names = readColumns.map(\.name).joined(separator: ", ")
        let (on, rows) =
            switch event {
            case "INSERT": ("INSERT ON ledger", row("1", "NEW"))
            case "UPDATE":
                (
                    "UPDATE OF \(names) ON ledger WHEN "
                        + readColumns.map { "OLD.\($0.name) IS NOT NEW.\($0.name)" }.joined(separator: " OR "),
                    row("-1", "OLD") + ", " + row("1", "NEW")
                )
            default: ("DELETE ON ledger", row("-1", "OLD"))
            }
        return """
            CREATE TRIGGER ledger_summary_\(event.lowercased()) AFTER \(on)
            BEGIN INSERT INTO \(movesTable) (sign, \(names)) VALUES \(rows); END
            """
    }

    /// Migration 11: SQLite's update trigger limited to the updates that set a column the sums read.
    static func limitUpdateTrigger(_ db: any SQLDatabase) async throws {
        guard db.dialect.name != "postgresql" else { return }
        try await db.raw("DROP TRIGGER ledger_summary_update").run()
        try await db.raw(SQLQueryString(sqliteTrigger("UPDATE"))).run()
    }

    /// Fills the summary from the ledger (the table empty beforehand), in one statement.
    static func fill(_ db: any SQLDatabase, where filter: SQLQueryString) async throws {
        try await db.raw(inserting(into: table, contributions(where: filter))).run()
    }
}

extension StorageSession {
    /// Folds the oldest `limit` moves (`movesTable`) into the summary, and answers how many it folded. On PostgreSQL
    /// one transaction folds at a time (another answers 0 at once), and never while the summary is rebuilt; readers
    /// see the moves either still apart or already folded, never both.
    public func foldLedgerSummaryChanges(limit: Int) async throws -> Int {
        if kind == .postgres {
            let row = try await sql.raw("SELECT pg_try_advisory_xact_lock(\(unsafeRaw: Self.summaryLock)) AS locked").first()
            guard try row?.decode(column: "locked", as: Bool.self) == true else { return 0 }
        }
        let moves = LedgerSummary.movesTable
        let oldest = "SELECT seq FROM \(moves) ORDER BY seq LIMIT \(limit)"
        if kind == .postgres {
            // One statement: the batch deleted and its sums added, so that a move committed meanwhile is in neither.
            var query = SQLQueryString("WITH batch AS (DELETE FROM \(unsafeRaw: moves) WHERE seq IN (\(unsafeRaw: oldest)) RETURNING *), ")
            query.appendInterpolation(unsafeRaw: "folded AS (")
            query.appendInterpolation(
                LedgerSummary.inserting(into: LedgerSummary.table, LedgerSummary.contributions(from: "batch", signed: true, where: "true")))
            query.appendInterpolation(unsafeRaw: " \(LedgerSummary.addingOnConflict) RETURNING 1) SELECT COUNT(*) AS n FROM batch")
            return Int(try await sql.raw(query).first()?.decode(column: "n", as: Int64.self) ?? 0)
        }
        // SQLite: the one writer, so nothing is written between these statements.
        let batch = try await sql.raw("SELECT MAX(seq) AS bound, COUNT(*) AS n FROM (\(unsafeRaw: oldest)) AS oldest").first()
        guard let bound = try batch?.decode(column: "bound", as: Int64?.self), let count = try batch?.decode(column: "n", as: Int64.self)
        else {
            return 0
        }
        var insert = LedgerSummary.inserting(
            into: LedgerSummary.table,
            LedgerSummary.contributions(from: "(SELECT * FROM \(moves) WHERE seq <= \(bound)) AS batch", signed: true, where: "true"))
        insert.appendInterpolation(unsafeRaw: " \(LedgerSummary.addingOnConflict)")
        try await sql.raw(insert).run()
        try await sql.raw("DELETE FROM \(unsafeRaw: moves) WHERE seq <= \(bind: bound)").run()
        return Int(count)
    }

    /// The advisory lock (PostgreSQL) that folding and rebuilding the summary take (a fold that ran beside a rebuild
    /// could add moves the rebuilt sums already hold): its arguments, a constant and the schema, since the
    /// tables it guards are the schema's and advisory locks are the database's.
    static let summaryLock = "1397967711, hashtext(current_schema())"  // 0x5353_4B5F: "SK_"

    /// Holds off every other writer of the ledger until the transaction ends, for a change that reads or rewrites
    /// the rows of many customers (their own recomputes would move the summary meanwhile). Readers are not held; on
    /// SQLite the one writer already has the database to itself.
    public func lockLedgerForWriting() async throws {
        if kind == .postgres { try await sql.raw("LOCK TABLE ledger IN SHARE ROW EXCLUSIVE MODE").run() }
    }

    /// Computes the summary again from the ledger (one app's, or every app's).
    public func rebuildLedgerSummary(appId: String? = nil) async throws {
        try await lockLedgerForWriting()
        if kind == .postgres { try await sql.raw("SELECT pg_advisory_xact_lock(\(unsafeRaw: Self.summaryLock))").run() }
        // The moves written by this transaction's ledger writes, and by the transactions before it, are in the
        // ledger the summary is computed from.
        var filter = SQLQueryString("true")
        if let appId {
            filter = "app_id = \(bind: appId)"
        }
        for table in [LedgerSummary.table, LedgerSummary.movesTable] {
            var delete = SQLQueryString("DELETE FROM \(unsafeRaw: table)")
            if let appId {
                delete.appendInterpolation(unsafeRaw: " WHERE app_id = ")
                delete.appendInterpolation(bind: appId)
            }
            try await sql.raw(delete).run()
        }
        try await LedgerSummary.fill(sql, where: filter)
    }
}

extension Array {
    /// Consecutive slices of at most `size` elements (statements in slices, under the databases' limits on binds).
    public func chunks(of size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
