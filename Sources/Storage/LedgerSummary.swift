import NIOConcurrencyHelpers
import SQLKit

/// The money ledger summed per app, environment, product and UTC hour (`ledger_hourly`): what the metrics over many
/// subscriptions read instead of the ledger's rows. It is derived like the ledger and moves with it in the same
/// transaction, by the difference between the sums of the rows a change rewrites, taken before and after it;
/// `rebuildLedgerSummary` computes it again from the ledger.
///
/// A transaction does not update the summary's rows: every customer of an app writing in the same hour would wait on
/// the same row's lock until the one before it commits. It appends its differences to `ledger_hourly_changes`
/// instead (inserts, which wait on nobody), readers add those to the summary (`summing`), and
/// `foldLedgerSummaryChanges` moves them into it now and then (the server's `LedgerSummaryFolder`).
///
/// Its definition lives beside the schema because the migration that creates the table fills it from the ledger.
public enum LedgerSummary {
    public static let table = "ledger_hourly"
    /// Differences not yet folded into `table`: the same keys and columns, in the order they were written.
    public static let changesTable = "ledger_hourly_changes"
    /// The summary's grain: a UTC hour (every zone whose offset is a whole number of hours is served by it).
    public static let hour: Int64 = 3_600_000

    // MARK: - What the sums count

    // Each rule is written twice, in SQL (filling the summary from the ledger, and the metrics that read the ledger's
    // rows) and in Swift (moving the summary by a customer's changed rows without asking the database to plan a
    // query): the tests hold the two to the same sums on random ledgers.

    /// A paid subscription period: an auto-renewable's period other than a free trial, not family-shared, not free.
    public static let paid =
        "kind IN ('intro', 'promo', 'offerCode', 'winBack', 'regular') AND family_shared = 0 AND (price IS NULL OR price > 0)"
    static func isPaid(_ row: LedgerFigures) -> Bool {
        ["intro", "promo", "offerCode", "winBack", "regular"].contains(row.kind) && !row.familyShared && (row.price.map { $0 > 0 } ?? true)
    }
    public static let trial = "kind = 'trial' AND family_shared = 0"
    static func isTrial(_ row: LedgerFigures) -> Bool { row.kind == "trial" && !row.familyShared }
    /// Revenue: anything paid for, not family-shared.
    public static let revenue = "kind <> 'trial' AND family_shared = 0 AND price > 0"
    static func isRevenue(_ row: LedgerFigures) -> Bool { row.kind != "trial" && !row.familyShared && (row.price ?? 0) > 0 }
    /// Rows that grant access for a while: counted from their start until their access ends (never when it ends
    /// before it starts).
    static let lasting = "(active_until IS NULL OR active_until > start_at)"
    static func isLasting(_ row: LedgerFigures) -> Bool { row.activeUntil.map { $0 > row.start } ?? true }

    /// USD of a money column (NULL without a rate: sums leave it out, and metrics report it apart).
    public static func usd(_ column: String) -> String { "usd_rate * \(column) / 1000" }
    static func usd(_ row: LedgerFigures, _ amount: Int64?) -> Double? {
        guard let rate = row.usdRate, let amount else { return nil }
        return rate * Double(amount) / 1000
    }
    /// Estimated proceeds of a money column: less the commission, less tax included in the price.
    public static func proceeds(_ column: String) -> String {
        "usd_rate * (\(column)) * (1000 - commission_per_mille) / (1000 + COALESCE(tax_per_mille, 0)) / 1000"
    }
    static func proceeds(_ row: LedgerFigures, _ amount: Int64?) -> Double? {
        guard let rate = row.usdRate, let amount else { return nil }
        return rate * Double(amount) * Double(1000 - row.commissionPerMille) / Double(1000 + (row.taxPerMille ?? 0)) / 1000
    }

    /// A sum over ledger rows. A `running` sum is kept twice: added in the hour a row starts (`<name>_started`) and in
    /// the hour its access ends (`<name>_ended`), so that what is active at an hour is the difference of the two
    /// summed over the hours before it. Any other sum is booked in the hour its row starts.
    public struct Sum: Sendable {
        public let name: String
        /// The rows it counts, in SQL and in Swift.
        public let predicate: String
        let counts: @Sendable (LedgerFigures) -> Bool
        /// What each of those rows adds, in SQL and in Swift (`nil` for SQL's NULL: nothing).
        public let expression: String
        let value: @Sendable (LedgerFigures) -> Double?
        public let running: Bool

        /// The summary's columns for this sum.
        public var columns: [String] { running ? [name + "_started", name + "_ended"] : [name] }
    }

    static func count(_ name: String, _ predicate: String, _ counts: @escaping @Sendable (LedgerFigures) -> Bool, running: Bool) -> Sum {
        Sum(name: name, predicate: predicate, counts: counts, expression: "1", value: { _ in 1 }, running: running)
    }

    public static let activePaid = count("paid", paid, isPaid, running: true)
    public static let activePaidRenewOff = Sum(
        name: "paid_renew_off", predicate: paid, counts: isPaid, expression: "CASE WHEN will_renew = 0 THEN 1 ELSE 0 END",
        value: { $0.willRenew == false ? 1 : 0 }, running: true)
    public static let activeMRR = Sum(
        name: "paid_mrr", predicate: paid, counts: isPaid, expression: usd("monthly_price"), value: { usd($0, $0.monthlyPrice) },
        running: true)
    public static let activeMRRProceeds = Sum(
        name: "paid_mrr_proceeds", predicate: paid, counts: isPaid, expression: proceeds("monthly_price"),
        value: { proceeds($0, $0.monthlyPrice) }, running: true)
    public static let activeTrials = count("trial", trial, isTrial, running: true)

    public static let trialsStarted = count("trials", trial, isTrial, running: false)
    static let acquired = paid + " AND acquisition IS NOT NULL"
    static func isAcquired(_ row: LedgerFigures) -> Bool { isPaid(row) && row.acquisition != nil }
    static func acquisition(_ name: String, _ kind: String) -> Sum {
        Sum(
            name: name, predicate: acquired, counts: isAcquired, expression: "CASE WHEN acquisition = '\(kind)' THEN 1 ELSE 0 END",
            value: { $0.acquisition == kind ? 1 : 0 }, running: false)
    }
    public static let acquiredNew = acquisition("acquired_new", "new")
    public static let acquiredByConversion = acquisition("acquired_conversion", "trialConversion")
    public static let acquiredBack = acquisition("acquired_resubscription", "resubscription")
    public static let sales = count("sales", revenue, isRevenue, running: false)
    public static let salesRefunded = Sum(
        name: "sales_refunded", predicate: revenue, counts: isRevenue, expression: "CASE WHEN refunded_at IS NULL THEN 0 ELSE 1 END",
        value: { $0.refundedAt == nil ? 0 : 1 }, running: false)
    public static let gross = Sum(
        name: "gross", predicate: revenue, counts: isRevenue, expression: usd("price"), value: { usd($0, $0.price) }, running: false)
    public static let refunds = Sum(
        name: "refunds", predicate: revenue, counts: isRevenue, expression: usd("COALESCE(refund_amount, 0)"),
        value: { usd($0, $0.refundAmount ?? 0) }, running: false)
    public static let netProceeds = Sum(
        name: "net_proceeds", predicate: revenue, counts: isRevenue, expression: proceeds("price - COALESCE(refund_amount, 0)"),
        value: { row in proceeds(row, row.price.map { $0 - (row.refundAmount ?? 0) }) }, running: false)
    public static let newGross = Sum(
        name: "new_gross", predicate: revenue, counts: isRevenue,
        expression: "CASE WHEN COALESCE(renewal_number, 0) = 0 THEN \(usd("price")) ELSE 0 END",
        value: { ($0.renewalNumber ?? 0) == 0 ? usd($0, $0.price) : 0 }, running: false)
    public static let renewalGross = Sum(
        name: "renewal_gross", predicate: revenue, counts: isRevenue,
        expression: "CASE WHEN COALESCE(renewal_number, 0) > 0 THEN \(usd("price")) ELSE 0 END",
        value: { ($0.renewalNumber ?? 0) > 0 ? usd($0, $0.price) : 0 }, running: false)

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

    /// `SELECT <select> FROM … WHERE <filter> GROUP BY <group>` over the summary and its unfolded differences: the
    /// sums as they are now. `select` and `filter` name the summary's own columns.
    public static func summing(select: String, where filter: SQLQueryString, groupBy group: String) -> SQLQueryString {
        var query = SQLQueryString("")
        for (index, source) in [table, changesTable].enumerated() {
            if index > 0 { query.appendInterpolation(unsafeRaw: " UNION ALL ") }
            query.appendInterpolation(unsafeRaw: "SELECT \(select) FROM \(source) WHERE ")
            query.appendInterpolation(filter)
            query.appendInterpolation(unsafeRaw: " GROUP BY \(group)")
        }
        return query
    }

    /// The sums of the ledger rows that `filter` selects, per key: each row in the hour it starts, and once more
    /// (its running sums only) in the hour its access ends.
    static func contributions(where filter: SQLQueryString) -> SQLQueryString {
        func cell(_ sum: Sum, _ value: String) -> String { "CASE WHEN \(sum.predicate) THEN \(value) END" }
        let starting = sums.flatMap { sum in
            sum.running ? [cell(sum, "CASE WHEN \(lasting) THEN \(sum.expression) END"), "NULL"] : [cell(sum, sum.expression)]
        }
        let ending = sums.flatMap { sum in
            sum.running ? ["NULL", cell(sum, "CASE WHEN \(lasting) THEN \(sum.expression) END")] : ["NULL"]
        }
        func select(_ hour: String, _ cells: [String]) -> String {
            let named = zip(cells, columns).map { "CAST(\($0) AS DOUBLE PRECISION) AS \($1)" }
            return "SELECT app_id, environment, \(hour) AS hour, product_id, group_id, \(named.joined(separator: ", ")) FROM ledger WHERE "
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

    /// The same sums as `contributions(where:)`, of rows in hand.
    static func contributions(of rows: [LedgerFigures]) -> [Key: [Double]] {
        var result: [Key: [Double]] = [:]
        func add(_ row: LedgerFigures, at instant: Int64, column: Int, _ value: Double) {
            let key = Key(
                appId: row.appId, environment: row.environment, hour: instant / hour, productId: row.productId, groupId: row.groupId)
            result[key, default: Array(repeating: 0, count: columns.count)][column] += value
        }
        for row in rows {
            var column = 0
            for sum in sums {
                defer { column += sum.columns.count }
                guard sum.counts(row), let value = sum.value(row) else { continue }
                guard sum.running else {
                    add(row, at: row.start, column: column, value)
                    continue
                }
                guard isLasting(row) else { continue }
                add(row, at: row.start, column: column, value)
                if let end = row.activeUntil { add(row, at: end, column: column + 1, value) }
            }
        }
        return result
    }

    /// Fills the summary from the ledger (the table empty beforehand), in one statement.
    static func fill(_ db: any SQLDatabase, where filter: SQLQueryString) async throws {
        var query = SQLQueryString(
            "INSERT INTO \(unsafeRaw: table) (\(unsafeRaw: (keys + columns).joined(separator: ", "))) SELECT \(unsafeRaw: keys.joined(separator: ", ")), "
        )
        query.appendInterpolation(unsafeRaw: columns.map { "COALESCE(\($0), 0)" }.joined(separator: ", "))
        query.appendInterpolation(unsafeRaw: " FROM (")
        query.appendInterpolation(contributions(where: filter))
        query.appendInterpolation(unsafeRaw: ") AS summed WHERE true")
        try await db.raw(query).run()
    }

    /// One key's sums.
    struct Row: Hashable {
        var key: Key
        var values: [Double]
    }

    struct Key: Hashable, Comparable {
        var appId: String
        var environment: String
        var hour: Int64
        var productId: String
        var groupId: String

        static func < (a: Key, b: Key) -> Bool {
            (a.appId, a.environment, a.hour, a.productId, a.groupId) < (b.appId, b.environment, b.hour, b.productId, b.groupId)
        }
    }

    static func read(_ db: any SQLDatabase, where filter: SQLQueryString) async throws -> [Key: [Double]] {
        var result: [Key: [Double]] = [:]
        for row in try await db.raw(contributions(where: filter)).all() {
            let (key, values) = try decode(row)
            result[key] = values
        }
        return result
    }

    /// Adds `deltas` to the summary, keys in order (so that concurrent writers take the rows' locks in one order and
    /// never deadlock on them).
    static func add(_ deltas: [Key: [Double]], to db: any SQLDatabase) async throws {
        for rows in valueRows(deltas) {
            try await db.raw(
                """
                INSERT INTO \(unsafeRaw: table) (\(unsafeRaw: (keys + columns).joined(separator: ", "))) VALUES \(SQLList(rows))
                ON CONFLICT (\(unsafeRaw: keys.joined(separator: ", "))) DO UPDATE SET
                \(unsafeRaw: columns.map { "\($0) = \(table).\($0) + excluded.\($0)" }.joined(separator: ", "))
                """
            ).run()
        }
    }

    /// Appends `deltas` to the unfolded differences.
    static func append(_ deltas: [Key: [Double]], to db: any SQLDatabase) async throws {
        for rows in valueRows(deltas) {
            try await db.raw(
                "INSERT INTO \(unsafeRaw: changesTable) (\(unsafeRaw: (keys + columns).joined(separator: ", "))) VALUES \(SQLList(rows))"
            ).run()
        }
    }

    /// The keys that change something, in order, as rows of VALUES: in slices of 500 (SQLite binds at most 32,766
    /// values per statement; a row has 26).
    static func valueRows(_ deltas: [Key: [Double]]) -> [[SQLGroupExpression]] {
        let ordered = deltas.filter { $0.value.contains { $0 != 0 } }.sorted { $0.key < $1.key }
        let rows = ordered.map { key, values in
            SQLGroupExpression(
                [SQLBind(key.appId), SQLBind(key.environment), SQLBind(key.hour), SQLBind(key.productId), SQLBind(key.groupId)]
                    + values.map { SQLBind($0) as any SQLExpression })
        }
        return rows.chunks(of: 500).map(Array.init)
    }

    /// Reads a row of the summary's keys and columns.
    static func decode(_ row: any SQLRow) throws -> (key: Key, values: [Double]) {
        let key = Key(
            appId: try row.decode(column: "app_id", as: String.self),
            environment: try row.decode(column: "environment", as: String.self),
            hour: try row.decode(column: "hour", as: Int64.self),
            productId: try row.decode(column: "product_id", as: String.self),
            groupId: try row.decode(column: "group_id", as: String.self))
        return (key, try columns.map { try row.decode(column: $0, as: Double?.self) ?? 0 })
    }
}

/// What a transaction's ledger changes move the summary by, gathered until it is about to commit and then appended
/// to the unfolded differences in one statement.
final class LedgerSummaryChanges: Sendable {
    private let deltas = NIOLockedValueBox<[LedgerSummary.Key: [Double]]>([:])

    func add(_ changes: [LedgerSummary.Key: [Double]], sign: Double) {
        deltas.withLockedValue { deltas in
            for (key, values) in changes {
                let old = deltas[key] ?? Array(repeating: 0, count: values.count)
                deltas[key] = zip(old, values).map { $0 + sign * $1 }
            }
        }
    }

    /// Takes the gathered changes (of one app, or all), leaving none behind.
    func take(appId: String? = nil) -> [LedgerSummary.Key: [Double]] {
        deltas.withLockedValue { deltas in
            let taken = deltas.filter { appId == nil || $0.key.appId == appId }
            deltas = deltas.filter { appId != nil && $0.key.appId != appId }
            return taken
        }
    }
}

extension StorageSession {
    /// Runs `change`, which rewrites ledger rows, and moves the summary by what it changed: the sums of the rows
    /// `before` selects (taken first) subtracted, those of the rows `after` selects (taken last) added. Together the
    /// two must select every row the change removes, adds or alters, before and after it. The summary itself is
    /// written when the transaction is about to commit (`applyLedgerSummaryChanges`).
    public func maintainingLedgerSummary<T>(
        before: SQLQueryString, after: SQLQueryString, _ change: () async throws -> T
    ) async throws -> T {
        let old = try await LedgerSummary.read(sql, where: before)
        let result = try await change()
        let new = try await LedgerSummary.read(sql, where: after)
        summaryChanges.add(old, sign: -1)
        summaryChanges.add(new, sign: 1)
        return result
    }

    /// Moves the summary by rows in hand: `removed` (as they were) taken away, `added` counted.
    public func moveLedgerSummary(removing removed: [LedgerFigures], adding added: [LedgerFigures]) {
        summaryChanges.add(LedgerSummary.contributions(of: removed), sign: -1)
        summaryChanges.add(LedgerSummary.contributions(of: added), sign: 1)
    }

    /// Writes the summary's pending changes, as differences to fold in later (`writing` does, last).
    public func applyLedgerSummaryChanges() async throws {
        try await LedgerSummary.append(summaryChanges.take(), to: sql)
    }

    /// Folds the oldest `limit` unfolded differences into the summary, and answers how many it folded. On PostgreSQL
    /// one transaction folds at a time (another answers 0 at once), and never while the summary is rebuilt; readers
    /// see the differences either still apart or already folded, never both.
    public func foldLedgerSummaryChanges(limit: Int) async throws -> Int {
        if kind == .postgres {
            let row = try await sql.raw("SELECT pg_try_advisory_xact_lock(\(unsafeRaw: Self.summaryLock)) AS locked").first()
            guard try row?.decode(column: "locked", as: Bool.self) == true else { return 0 }
        }
        let table = LedgerSummary.changesTable
        let rows = try await sql.raw(
            """
            DELETE FROM \(unsafeRaw: table) WHERE seq IN (SELECT seq FROM \(unsafeRaw: table) ORDER BY seq LIMIT \(unsafeRaw: "\(limit)"))
            RETURNING \(unsafeRaw: (LedgerSummary.keys + LedgerSummary.columns).joined(separator: ", "))
            """
        ).all()
        var deltas: [LedgerSummary.Key: [Double]] = [:]
        for row in rows {
            let (key, values) = try LedgerSummary.decode(row)
            deltas[key] = zip(deltas[key] ?? Array(repeating: 0, count: values.count), values).map { $0 + $1 }
        }
        try await LedgerSummary.add(deltas, to: sql)
        return rows.count
    }

    /// The advisory lock (PostgreSQL) that folding and rebuilding the summary take (a fold that ran beside a rebuild
    /// could add differences the rebuilt sums already hold): its arguments, a constant and the schema, since the
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
        // Changes gathered earlier in this transaction, and those written by the transactions before it, are in the
        // ledger the summary is computed from.
        _ = summaryChanges.take(appId: appId)
        var filter = SQLQueryString("true")
        if let appId {
            filter = "app_id = \(bind: appId)"
        }
        for table in [LedgerSummary.table, LedgerSummary.changesTable] {
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

/// What the summary's sums read of a ledger row.
public struct LedgerFigures: Sendable, Hashable {
    public var appId: String
    public var environment: String
    public var productId: String
    public var groupId: String
    public var kind: String
    public var start: Int64
    public var activeUntil: Int64?
    public var renewalNumber: Int64?
    public var price: Int64?
    public var familyShared: Bool
    public var refundedAt: Int64?
    public var refundAmount: Int64?
    public var monthlyPrice: Int64?
    public var commissionPerMille: Int64
    public var taxPerMille: Int64?
    public var willRenew: Bool?
    public var acquisition: String?
    public var usdRate: Double?

    public init(
        appId: String, environment: String, productId: String, groupId: String, kind: String, start: Int64, activeUntil: Int64?,
        renewalNumber: Int64?, price: Int64?, familyShared: Bool, refundedAt: Int64?, refundAmount: Int64?, monthlyPrice: Int64?,
        commissionPerMille: Int64, taxPerMille: Int64?, willRenew: Bool?, acquisition: String?, usdRate: Double?
    ) {
        (self.appId, self.environment, self.productId, self.groupId, self.kind) = (appId, environment, productId, groupId, kind)
        (self.start, self.activeUntil, self.renewalNumber, self.price, self.familyShared) =
            (start, activeUntil, renewalNumber, price, familyShared)
        (self.refundedAt, self.refundAmount, self.monthlyPrice, self.commissionPerMille) =
            (refundedAt, refundAmount, monthlyPrice, commissionPerMille)
        (self.taxPerMille, self.willRenew, self.acquisition, self.usdRate) = (taxPerMille, willRenew, acquisition, usdRate)
    }
}

extension Array {
    /// Consecutive slices of at most `size` elements (statements in slices, under the databases' limits on binds).
    public func chunks(of size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
