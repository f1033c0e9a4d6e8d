import Foundation
import SQLKit
import Storage

/// What a recompute reads of a customer before it writes: its original transactions (in order) and its stored ledger.
public struct OriginalsAndStoredLedger: Sendable {
    public var originals: [String]
    public var ledger: StoredLedger
}

/// A customer's stored ledger rows as they were written (without their USD rates), by environment and transaction id.
public struct StoredLedger: Sendable, Equatable {
    var rows: [String: [String: LedgerEntry]] = [:]

    public init() {}

    /// The rows in one environment, by transaction id.
    public func rows(in environment: String) -> [String: LedgerEntry] { rows[environment] ?? [:] }
}

extension StorageSession {
    /// What a recompute reads before it writes, in one query: the customer's original transactions (in order) and its
    /// stored ledger rows in every environment.
    public func originalTransactionIdsAndLedger(customer customerId: String) async throws -> OriginalsAndStoredLedger {
        let read = try await originalTransactionIds(customer: customerId, with: OriginalsAndLedger.self)
        return OriginalsAndStoredLedger(
            originals: read.originals, ledger: try Self.storedLedger(customerId: customerId, json: read.beside ?? "[]"))
    }

    /// The customer's stored ledger rows in every environment.
    public func storedLedger(customerId: String) async throws -> StoredLedger {
        guard let row = try await run(StoredLedgerRead.self, [customerId]).first else { return StoredLedger() }
        return try Self.storedLedger(customerId: customerId, json: try row.decode(column: "ledger", as: String.self))
    }

    static func storedLedger(customerId: String, json: String) throws -> StoredLedger {
        let decoded: [StoredLedgerRow]
        do { decoded = try JSONDecoder().decode([StoredLedgerRow].self, from: Data(json.utf8)) } catch {
            throw StorageError(.corrupt, "a ledger row of \(customerId) does not read back: \(error)")
        }
        var stored = StoredLedger()
        for row in decoded { stored.rows[row.entry.environment, default: [:]][row.entry.transactionId] = row.entry }
        return stored
    }

    /// Replaces a customer's ledger in one environment with `entries` (inside the transaction that recomputed the
    /// customer), writing only what differs from `stored`, its rows as read in this transaction (read here when not
    /// given): rows no longer there are deleted, new and altered rows written in one statement (on SQLite, a row
    /// altered only outside what the sums read in an UPDATE of its own). A transaction the ledger lists under another
    /// customer (transferred) moves to this one. A row in a currency other than USD is written with the latest stored
    /// rate on or before its purchase's day; without one it stays unconverted (NULL). The hourly summary moves by the
    /// difference by itself (the ledger's triggers).
    public func replaceLedger(
        customerId: String, environment: String, with entries: [LedgerEntry], stored: [String: LedgerEntry]? = nil
    ) async throws {
        try await writeLedger(customerId: customerId, environment: environment, with: entries, stored: stored, state: nil)
    }

    /// Writes what a customer's recompute derived in one environment, after `events` (which writes its events): its
    /// `state`, and its ledger (`replaceLedger`), `ledger` computing the rows. The two write no table in common.
    /// - PostgreSQL writes the state and the ledger's changed rows in one statement (`StateAndLedgerUpsert`), a round
    ///   trip less; the state alone when no row changed.
    /// - SQLite writes the events and the state, then the ledger.
    public func storeRecomputed(
        _ state: StateRecord, ledger: @escaping @Sendable () -> [LedgerEntry], stored: [String: LedgerEntry],
        after events: @escaping @Sendable () async throws -> Void
    ) async throws {
        try await events()
        try await writeLedger(customerId: state.customerId, environment: state.environment, with: ledger(), stored: stored, state: state)
    }

    /// `replaceLedger`, also writing `state` if given (with the rows on PostgreSQL, before them on SQLite).
    private func writeLedger(
        customerId: String, environment: String, with entries: [LedgerEntry], stored: [String: LedgerEntry]?, state: StateRecord?
    ) async throws {
        let rows: [String: LedgerEntry]
        if let stored { rows = stored } else { rows = try await storedLedger(customerId: customerId).rows(in: environment) }
        let ids = Set(entries.map(\.transactionId))
        let removed = rows.keys.filter { !ids.contains($0) }.sorted()
        let changed = entries.filter { rows[$0.transactionId] != $0 }
        for slice in removed.chunks(of: 500) {
            try await sql.raw(
                """
                DELETE FROM ledger WHERE customer_id = \(bind: customerId) AND environment = \(bind: environment)
                AND transaction_id IN \(SQLGroupExpression(slice.map { SQLBind($0) }))
                """
            ).run()
        }
        if kind == .postgres {
            // One text whatever the rows, prepared once per connection: the rows travel as one JSON array.
            // With no row changed, the state alone: the ledger's statement triggers would fire over no rows.
            if changed.isEmpty {
                if let state { try await upsert(state) }
            } else if let state {
                _ = try await run(StateAndLedgerUpsert.self, Self.stateBinds(state) + [LedgerUpsert.json(changed)])
            } else {
                _ = try await run(LedgerUpsert.self, [LedgerUpsert.json(changed)])
            }
            return
        }
        if let state { try await upsert(state) }
        // SQLite prepares every statement anyway, so what it compiles is what costs: a row whose change is outside what
        // the sums read (a renewal's predecessor learns of its successor) is an UPDATE of the columns that changed, in
        // place: the summary's update trigger is not compiled into it, and only the indexes that read those columns
        // move (a REPLACE deletes the row from every index and inserts it again, and moves the summary twice). A row
        // the customer did not have (a new period) is an INSERT that skips a taken key, which compiles no delete of a
        // row it replaces and no delete trigger. Any other row is written whole with INSERT OR REPLACE, about half what
        // an upsert's DO UPDATE costs to prepare (the delete trigger, with recursive_triggers on, takes the replaced
        // row out of the summary). It binds at most 32,766 values per statement: 30 a row, in slices of 500.
        var (new, whole): ([LedgerEntry], [LedgerEntry]) = ([], [])
        for entry in changed {
            let written = entry.written
            if let old = rows[entry.transactionId]?.written {
                if !LedgerColumns.changesOutsideSums(from: old, to: written) {
                    whole.append(entry)
                } else if let update = Self.outsideSumsUpdate(entry, from: old, to: written) {
                    try await sql.raw(update).run()
                }
            } else {
                new.append(entry)
            }
        }
        for slice in new.chunks(of: 500) {
            // A transaction the ledger lists under another customer (it moved here) is left out, and replaced below.
            let inserted = try await sql.raw(
                """
                INSERT INTO ledger (\(unsafeRaw: LedgerColumns.insertList)) VALUES \(SQLList(slice.map(Self.values)))
                ON CONFLICT DO NOTHING RETURNING transaction_id
                """
            ).all()
            guard inserted.count < slice.count else { continue }
            let ids = Set(try inserted.map { try $0.decode(column: "transaction_id", as: String.self) })
            whole += slice.filter { !ids.contains($0.transactionId) }
        }
        for slice in whole.chunks(of: 500) {
            try await sql.raw(
                "INSERT OR REPLACE INTO ledger (\(unsafeRaw: LedgerColumns.insertList)) VALUES \(SQLList(slice.map(Self.values)))"
            ).run()
        }
    }

    /// SQLite's UPDATE of the columns outside the sums (`LedgerColumns.outsideSumsIndices`) that differ between `old`
    /// and `written` (the row as stored, and `e.written`, made once by the caller), by the row's key; nil when none does.
    static func outsideSumsUpdate(_ e: LedgerEntry, from old: [LedgerValue?], to written: [LedgerValue?]) -> SQLQueryString? {
        let changed = LedgerColumns.outsideSumsIndices.filter { old[$0] != written[$0] }
        guard !changed.isEmpty else { return nil }
        var query = SQLQueryString("UPDATE ledger SET ")
        for (n, index) in changed.enumerated() {
            query.appendInterpolation(unsafeRaw: (n == 0 ? "" : ", ") + LedgerColumns.written[index] + " = ")
            query.appendInterpolation(Self.bind(written[index]))
        }
        let key: SQLQueryString =
            " WHERE app_id = \(bind: e.appId) AND environment = \(bind: e.environment) AND transaction_id = \(bind: e.transactionId)"
        query.appendInterpolation(key)
        return query
    }

    private static func bind(_ value: LedgerValue?) -> any SQLExpression {
        switch value {
        case nil: SQLLiteral.null
        case .text(let text)?: SQLBind(text)
        case .integer(let integer)?: SQLBind(integer)
        }
    }

    /// Sets the USD rate of the ledger rows in `currencies` (every customer's) to the latest stored rate on or before
    /// each purchase's day; a currency without a rate stays unconverted (NULL). USD rows carry their rate (1) from the
    /// insert. The hourly summary moves by the difference (the ledger's triggers). Other writers of the ledger wait
    /// until this commits, so that none writes a row at the rates of before it that this does not see.
    public func convertLedgerToUSD(currencies: [String]) async throws {
        guard !currencies.isEmpty else { return }
        try await lockLedgerForWriting()
        var rows = SQLQueryString("currency IN ")
        rows.appendInterpolation(SQLGroupExpression(currencies.map { SQLBind($0) }))
        try await sql.raw(Self.usdConversion(where: rows)).run()
    }

    static func usdConversion(where filter: SQLQueryString) -> SQLQueryString {
        var query = SQLQueryString(
            """
            UPDATE ledger SET
                usd_rate = \(unsafeRaw: LedgerColumns.latestRate("usd_per_unit", currency: "ledger.currency", day: "ledger.purchase_day")),
                rate_day = \(unsafeRaw: LedgerColumns.latestRate("day", currency: "ledger.currency", day: "ledger.purchase_day"))
            WHERE currency IS NOT NULL AND currency <> 'USD' AND\u{20}
            """)
        query.appendInterpolation(filter)
        return query
    }

    /// A row's VALUES: what it stores, its purchase's day, and its USD rate with the rate's day, 1 and none for USD,
    /// looked up in `exchange_rates` for another currency as `LedgerColumns.latestRate` does (none without a rate), and
    /// none without a currency.
    static func values(_ e: LedgerEntry) -> SQLGroupExpression {
        // `LedgerColumns.latestRate` with its currency and day bound (the currency comes from Apple's signed data).
        func latest(_ column: String, _ currency: String) -> any SQLExpression {
            SQLQueryString(
                """
                COALESCE((SELECT r.\(unsafeRaw: column) FROM exchange_rates r WHERE r.currency = \(bind: currency) AND r.day <= \(bind: e.purchaseDay)
                ORDER BY r.day DESC LIMIT 1), (SELECT r.\(unsafeRaw: column) FROM exchange_rates r WHERE r.currency = \(bind: currency) ORDER BY r.day LIMIT 1))
                """)
        }
        let rate: [any SQLExpression] =
            switch e.currency {
            case nil: [SQLLiteral.null, SQLLiteral.null]
            case "USD": [SQLBind(1.0), SQLLiteral.null]
            case let currency?: [latest("usd_per_unit", currency), latest("day", currency)]
            }
        return SQLGroupExpression(e.written.map(bind) + rate)
    }
}

/// A value of a ledger column as written.
enum LedgerValue: Equatable {
    case text(String)
    case integer(Int64)
}

extension LedgerEntry {
    /// The day (since 1970) of its purchase, which the USD rate is looked up for.
    var purchaseDay: Int64 { CalendarDay(containing: start).daysSinceEpoch }

    /// What its row stores (`LedgerColumns.written`, in order; nil for NULL).
    var written: [LedgerValue?] {
        func flag(_ value: Bool?) -> LedgerValue? { value.map { .integer($0 ? 1 : 0) } }
        let texts: [LedgerValue?] = [appId, environment, transactionId, customerId, originalTransactionId, productId, group, kind.rawValue]
            .map { .text($0) }
        return texts + [
            .integer(start), end.map(LedgerValue.integer), activeUntil.map(LedgerValue.integer),
            renewalNumber.map { .integer(Int64($0)) }, price.map(LedgerValue.integer), currency.map(LedgerValue.text),
            storefront.map(LedgerValue.text), flag(familyShared), refundedAt.map(LedgerValue.integer),
            refundAmount.map(LedgerValue.integer), monthlyPrice.map(LedgerValue.integer), .integer(Int64(commissionPerMille)),
            taxPerMille.map { .integer(Int64($0)) }, flag(willRenew), graceUntil.map(LedgerValue.integer),
            acquisition.map { .text($0.rawValue) }, nextStart.map(LedgerValue.integer), nextMonthlyPrice.map(LedgerValue.integer),
            flag(nextRefunded), .integer(purchaseDay),
        ]
    }
}

/// What a recompute reads before it writes: the customer's original transactions and its ledger rows.
enum OriginalsAndLedger: FixedQuery {
    static let name = "storekeeper_originals_and_ledger"
    static let postgres = StorageSession.originalTransactionsQuery(.postgres, beside: LedgerColumns.customerRows(.postgres))
    static let sqlite: String? = StorageSession.originalTransactionsQuery(.sqlite, beside: LedgerColumns.customerRows(.sqlite))
}

/// A customer's ledger rows (`ledger`).
enum StoredLedgerRead: FixedQuery {
    static let name = "storekeeper_stored_ledger"
    static let postgres = "SELECT \(LedgerColumns.customerRows(.postgres)) AS ledger"
    static let sqlite: String? = "SELECT \(LedgerColumns.customerRows(.sqlite)) AS ledger"
}

/// PostgreSQL's upsert of ledger rows given as one JSON array of objects keyed by column (`json(_:)`), each with its
/// USD rate as `StorageSession.values(_:)` gives SQLite's.
enum LedgerUpsert: FixedQuery {
    static let name = "storekeeper_ledger_upsert"
    static let postgres = text(rows: "$1")
    static let sqlite: String? = nil

    /// The upsert of the rows in the parameter `rows` (`$n`).
    static func text(rows: String) -> String {
        let integers: Set = [
            "start_at", "end_at", "active_until", "renewal_number", "price", "family_shared", "refunded_at", "refund_amount",
            "monthly_price", "commission_per_mille", "tax_per_mille", "will_renew", "grace_until", "next_start",
            "next_monthly_price", "next_refunded", "purchase_day",
        ]
        let columns = LedgerColumns.written.map { "\($0) \(integers.contains($0) ? "bigint" : "text")" }.joined(separator: ", ")
        func latest(_ column: String) -> String { LedgerColumns.latestRate(column, currency: "v.currency", day: "v.purchase_day") }
        return """
            INSERT INTO ledger (\(LedgerColumns.insertList))
            SELECT \(LedgerColumns.written.map { "v.\($0)" }.joined(separator: ", ")),
                CASE WHEN v.currency = 'USD' THEN 1::double precision ELSE \(latest("usd_per_unit")) END,
                CASE WHEN v.currency = 'USD' THEN NULL ELSE \(latest("day")) END
            FROM json_to_recordset(\(rows)::json) AS v(\(columns))
            ON CONFLICT (app_id, environment, transaction_id) DO UPDATE SET \(LedgerColumns.upsertSet)
            """
    }

    /// The rows as the statement reads them: a JSON array of objects, a NULL column left out.
    static func json(_ entries: [LedgerEntry]) -> String {
        var json = "["
        for (index, entry) in entries.enumerated() {
            json += index == 0 ? "{" : ",{"
            var first = true
            for (column, value) in zip(LedgerColumns.written, entry.written) {
                guard let value else { continue }
                json += first ? "\"\(column)\":" : ",\"\(column)\":"
                first = false
                switch value {
                case .integer(let integer): json += String(integer)
                case .text(let text): appendString(text, to: &json)
                }
            }
            json += "}"
        }
        return json + "]"
    }

    /// A JSON string (RFC 8259): quotes, backslashes and control characters escaped.
    private static func appendString(_ text: String, to json: inout String) {
        json += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": json += "\\\""
            case "\\": json += "\\\\"
            case _ where scalar.value < 0x20: json += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            default: json.unicodeScalars.append(scalar)
            }
        }
        json += "\""
    }
}

/// PostgreSQL's write of a recomputed customer's state (`$1`…`$5`, `StorageSession.stateBinds`) and its changed ledger
/// rows (`$6`, as `LedgerUpsert` reads them) in one statement: the state's upsert as a data-modifying WITH.
enum StateAndLedgerUpsert: FixedQuery {
    static let name = "storekeeper_state_and_ledger_upsert"
    static let postgres = "WITH state AS (\(StorageSession.postgresStateUpsert)) " + LedgerUpsert.text(rows: "$6")
    static let sqlite: String? = nil
}

/// A ledger row as `LedgerColumns.customerRows` reads it back: an array of `LedgerColumns.stored`, in order.
struct StoredLedgerRow: Decodable {
    var entry: LedgerEntry

    init(from decoder: any Decoder) throws {
        var row = try decoder.unkeyedContainer()
        func text() throws -> String { try row.decode(String.self) }
        func optionalText() throws -> String? { try row.decodeIfPresent(String.self) }
        func int() throws -> Int64 { try row.decode(Int64.self) }
        func optionalInt() throws -> Int64? { try row.decodeIfPresent(Int64.self) }
        let (appId, environment, transactionId, customerId) = (try text(), try text(), try text(), try text())
        let (originalTransactionId, productId, group, kindName) = (try text(), try text(), try text(), try text())
        guard let kind = LedgerKind(rawValue: kindName) else {
            throw DecodingError.dataCorruptedError(in: row, debugDescription: "ledger.kind holds '\(kindName)'")
        }
        let (start, end, _, renewalNumber) = (try int(), try optionalInt(), try optionalInt(), try optionalInt())
        let (price, currency, storefront, familyShared) = (try optionalInt(), try optionalText(), try optionalText(), try int())
        let (refundedAt, refundAmount, monthlyPrice, commission) = (try optionalInt(), try optionalInt(), try optionalInt(), try int())
        let (tax, willRenew, graceUntil, acquisition) = (try optionalInt(), try optionalInt(), try optionalInt(), try optionalText())
        entry = LedgerEntry(
            appId: appId, environment: environment, customerId: customerId, originalTransactionId: originalTransactionId,
            transactionId: transactionId, productId: productId, group: group, kind: kind, start: start, end: end,
            renewalNumber: renewalNumber.map { Int($0) }, price: price, currency: currency, storefront: storefront,
            familyShared: familyShared != 0, refundedAt: refundedAt, refundAmount: refundAmount, monthlyPrice: monthlyPrice,
            commissionPerMille: Int(commission), taxPerMille: tax.map { Int($0) }, willRenew: willRenew.map { $0 != 0 },
            graceUntil: graceUntil)
        entry.acquisition = try acquisition.map {
            guard let value = LedgerEntry.Acquisition(rawValue: $0) else {
                throw DecodingError.dataCorruptedError(in: row, debugDescription: "ledger.acquisition holds '\($0)'")
            }
            return value
        }
        (entry.nextStart, entry.nextMonthlyPrice) = (try optionalInt(), try optionalInt())
        entry.nextRefunded = try optionalInt().map { $0 != 0 }
    }
}

enum LedgerColumns {
    /// What a ledger row stores of its entry (`activeUntil` included), in the order `StoredLedgerRow` reads them.
    static let stored = [
        "app_id", "environment", "transaction_id", "customer_id", "original_transaction_id", "product_id", "group_id", "kind",
        "start_at", "end_at", "active_until", "renewal_number", "price", "currency", "storefront", "family_shared",
        "refunded_at", "refund_amount", "monthly_price", "commission_per_mille", "tax_per_mille", "will_renew", "grace_until",
        "acquisition", "next_start", "next_monthly_price", "next_refunded",
    ]
    /// What a write takes of its entry (`LedgerEntry.written`): what it stores, and its purchase's day.
    static let written = stored + ["purchase_day"]
    /// What a write sets: the entry, its purchase's day, and its USD rate with the rate's day.
    static let insert = written + ["usd_rate", "rate_day"]

    // The statements' fixed text, made once.
    static let insertList = insert.joined(separator: ", ")
    /// An upsert's update: every column but the key (app, environment, transaction).
    static let upsertSet = insert.dropFirst(3).map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
    /// The columns a write can change without moving the hourly summary: the key's, the sums' (`LedgerSummary`'s
    /// `summedColumns`, which the summary's update trigger is limited to) and the USD rate's inputs (`currency`,
    /// `purchase_day`) excepted. Their places in `written`.
    static let outsideSumsIndices: [Int] = written.indices.filter { index in
        !(["app_id", "environment", "transaction_id", "currency", "purchase_day"] + LedgerSummary.summedColumns).contains(written[index])
    }
    private static let sumsIndices = Set(written.indices).subtracting(outsideSumsIndices)
    /// Whether a row written as `old` and now `new` (both `LedgerEntry.written`) differs only outside the sums.
    static func changesOutsideSums(from old: [LedgerValue?], to new: [LedgerValue?]) -> Bool {
        sumsIndices.allSatisfy { old[$0] == new[$0] }
    }
    /// A scalar expression: the `column` (`usd_per_unit` or `day`) of the rate a purchase of the day `day` in the
    /// currency `currency` (both SQL expressions) converts with: the latest stored on or before that day, else the
    /// currency's first stored rate (a purchase older than every rate); NULL for a currency without any.
    static func latestRate(_ column: String, currency: String, day: String) -> String {
        "COALESCE((SELECT r.\(column) FROM exchange_rates r WHERE r.currency = \(currency) AND r.day <= \(day) ORDER BY r.day DESC LIMIT 1), "
            + "(SELECT r.\(column) FROM exchange_rates r WHERE r.currency = \(currency) ORDER BY r.day LIMIT 1))"
    }
    /// A scalar subquery: the rows of the customer `$1` as one JSON array of arrays of `stored` (in order, read back by
    /// `StoredLedgerRow`), so that they come back as one value rather than a row each.
    static func customerRows(_ kind: StorageDatabase.Kind) -> String {
        let rows =
            kind == .postgres
            ? "COALESCE(json_agg(json_build_array(\(stored.joined(separator: ", ")))), '[]')::text"
            : "json_group_array(json_array(\(stored.joined(separator: ", "))))"
        return "(SELECT \(rows) FROM ledger WHERE customer_id = $1)"
    }
}
