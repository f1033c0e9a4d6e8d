import SQLKit
import Storage

extension StorageSession {
    /// Replaces a customer's ledger in one environment with `entries` (inside the transaction that recomputed the
    /// customer), writing only what changed: rows no longer there are deleted, new and altered rows written (a
    /// transaction the ledger lists under another customer, transferred, moves to this one). A row in a currency other
    /// than USD is written with the latest stored rate on or before its purchase's day; without one it stays
    /// unconverted (NULL). The hourly summary moves by the same difference, counted here from the rows in hand.
    public func replaceLedger(customerId: String, environment: String, with entries: [LedgerEntry]) async throws {
        let stored = try await storedLedger(customerId: customerId, environment: environment, transactions: entries)
        let ids = Set(entries.map(\.transactionId))
        let removed = stored.values.filter { $0.entry.customerId == customerId && !ids.contains($0.entry.transactionId) }
        let changed = entries.filter { stored[$0.transactionId]?.entry != $0 }
        guard !removed.isEmpty || !changed.isEmpty else { return }
        for slice in removed.map(\.entry.transactionId).sorted().chunks(of: 500) {
            try await sql.raw(
                """
                DELETE FROM ledger WHERE customer_id = \(bind: customerId) AND environment = \(bind: environment)
                AND transaction_id IN \(SQLGroupExpression(slice.map { SQLBind($0) }))
                """
            ).run()
        }
        let rates = try await usdRates(for: changed)
        // SQLite binds at most 32,766 values per statement: 30 columns each, in slices of 500 rows.
        for slice in changed.chunks(of: 500) {
            try await sql.raw(
                """
                INSERT INTO ledger (\(unsafeRaw: LedgerColumns.insert.joined(separator: ", ")))
                VALUES \(SQLList(slice.map { Self.values($0, rate: Self.rate(of: $0, in: rates)) }))
                ON CONFLICT (app_id, environment, transaction_id) DO UPDATE SET
                \(unsafeRaw: LedgerColumns.insert.dropFirst(3).map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
                """
            ).run()
        }
        moveLedgerSummary(
            removing: (removed + changed.compactMap { stored[$0.transactionId] }).map { $0.entry.figures(usdRate: $0.usdRate) },
            adding: changed.map { $0.figures(usdRate: Self.rate(of: $0, in: rates)?.rate) })
    }

    /// A ledger row as stored, with its USD rate.
    struct StoredLedgerRow {
        var entry: LedgerEntry
        var usdRate: Double?
    }

    /// The customer's rows in the environment, and any of `transactions` listed under another customer, by
    /// transaction id.
    func storedLedger(customerId: String, environment: String, transactions: [LedgerEntry]) async throws -> [String: StoredLedgerRow] {
        var found: [String: StoredLedgerRow] = [:]
        let columns = LedgerColumns.insert.joined(separator: ", ")
        let slices = transactions.chunks(of: 500)
        // The first query also takes the customer's own rows; usually it is the only one.
        for (index, slice) in (slices.isEmpty ? [[]] : slices).enumerated() {
            var query = SQLQueryString("SELECT \(unsafeRaw: columns) FROM ledger WHERE ")
            if index == 0 {
                query.appendInterpolation(unsafeRaw: "(customer_id = ")
                query.appendInterpolation(bind: customerId)
                query.appendInterpolation(unsafeRaw: " AND environment = ")
                query.appendInterpolation(bind: environment)
                query.appendInterpolation(unsafeRaw: ")")
                if !slice.isEmpty { query.appendInterpolation(unsafeRaw: " OR ") }
            }
            if let first = slice.first {
                query.appendInterpolation(unsafeRaw: "(app_id = ")
                query.appendInterpolation(bind: first.appId)
                query.appendInterpolation(unsafeRaw: " AND environment = ")
                query.appendInterpolation(bind: environment)
                query.appendInterpolation(unsafeRaw: " AND transaction_id IN ")
                query.appendInterpolation(SQLGroupExpression(slice.map { SQLBind($0.transactionId) }))
                query.appendInterpolation(unsafeRaw: ")")
            }
            for row in try await sql.raw(query).all() {
                let stored = try Self.storedRow(row)
                found[stored.entry.transactionId] = stored
            }
        }
        return found
    }

    /// The latest stored rate on or before each purchase's day, for the entries in currencies other than USD (a
    /// query per currency and day).
    func usdRates(for entries: [LedgerEntry]) async throws -> [String: (rate: Double, day: Int64)] {
        var rates: [String: (rate: Double, day: Int64)] = [:]
        for entry in entries {
            guard let currency = entry.currency, currency != "USD" else { continue }
            let day = CalendarDay(containing: entry.start).daysSinceEpoch
            let key = Self.rateKey(currency, day)
            guard rates[key] == nil else { continue }
            if let found = try await usdRate(currency: currency, onOrBefore: day) { rates[key] = found }
        }
        return rates
    }

    static func rateKey(_ currency: String, _ day: Int64) -> String { "\(currency) \(day)" }

    /// An entry's USD rate and its day: 1 for USD (no day), the stored rate for another currency, none without one.
    static func rate(of entry: LedgerEntry, in rates: [String: (rate: Double, day: Int64)]) -> (rate: Double, day: Int64?)? {
        guard let currency = entry.currency else { return nil }
        if currency == "USD" { return (1, nil) }
        return rates[rateKey(currency, CalendarDay(containing: entry.start).daysSinceEpoch)].map { ($0.rate, $0.day) }
    }

    /// Sets the USD rate of the ledger rows in `currencies` (every customer's) to the latest stored rate on or before
    /// each purchase's day; a currency without a rate stays unconverted (NULL). USD rows carry their rate (1) from the
    /// insert. The hourly summary moves by the difference.
    public func convertLedgerToUSD(currencies: [String]) async throws {
        guard !currencies.isEmpty else { return }
        try await lockLedgerForWriting()
        var rows = SQLQueryString("currency IN ")
        rows.appendInterpolation(SQLGroupExpression(currencies.map { SQLBind($0) }))
        try await maintainingLedgerSummary(before: rows, after: rows) { try await sql.raw(Self.usdConversion(where: rows)).run() }
    }

    private static func usdConversion(where filter: SQLQueryString) -> SQLQueryString {
        var query = SQLQueryString(
            """
            UPDATE ledger SET
                usd_rate = (SELECT r.usd_per_unit FROM exchange_rates r
                    WHERE r.currency = ledger.currency AND r.day <= ledger.purchase_day ORDER BY r.day DESC LIMIT 1),
                rate_day = (SELECT r.day FROM exchange_rates r
                    WHERE r.currency = ledger.currency AND r.day <= ledger.purchase_day ORDER BY r.day DESC LIMIT 1)
            WHERE currency IS NOT NULL AND currency <> 'USD' AND\u{20}
            """)
        query.appendInterpolation(filter)
        return query
    }

    static func values(_ e: LedgerEntry, rate: (rate: Double, day: Int64?)?) -> SQLGroupExpression {
        let binds: [any SQLExpression] = [
            SQLBind(e.appId), SQLBind(e.environment), SQLBind(e.transactionId), SQLBind(e.customerId),
            SQLBind(e.originalTransactionId), SQLBind(e.productId), SQLBind(e.group), SQLBind(e.kind.rawValue),
            SQLBind(e.start), SQLBind(e.end), SQLBind(e.activeUntil), SQLBind(e.renewalNumber.map(Int64.init)),
            SQLBind(e.price), SQLBind(e.currency), SQLBind(e.storefront), SQLBind(e.familyShared ? Int64(1) : 0),
            SQLBind(e.refundedAt), SQLBind(e.refundAmount), SQLBind(e.monthlyPrice), SQLBind(Int64(e.commissionPerMille)),
            SQLBind(e.taxPerMille.map(Int64.init)), SQLBind(e.willRenew.map { $0 ? Int64(1) : 0 }), SQLBind(e.graceUntil),
            SQLBind(e.acquisition?.rawValue), SQLBind(e.nextStart), SQLBind(e.nextMonthlyPrice),
            SQLBind(e.nextRefunded.map { $0 ? Int64(1) : 0 }), SQLBind(CalendarDay(containing: e.start).daysSinceEpoch),
            SQLBind(rate?.rate), SQLBind(rate?.day),
        ]
        return SQLGroupExpression(binds)
    }

    /// A stored row read back (`LedgerColumns.insert` and `rate_day`).
    static func storedRow(_ row: any SQLRow) throws -> StoredLedgerRow {
        func int(_ column: String) throws -> Int64? { try row.decode(column: column, as: Int64?.self) }
        func text(_ column: String) throws -> String? { try row.decode(column: column, as: String?.self) }
        let kindName = try row.decode(column: "kind", as: String.self)
        guard let kind = LedgerKind(rawValue: kindName) else {
            throw StorageError(.corrupt, "ledger.kind holds '\(kindName)'")
        }
        var entry = LedgerEntry(
            appId: try row.decode(column: "app_id", as: String.self), environment: try row.decode(column: "environment", as: String.self),
            customerId: try row.decode(column: "customer_id", as: String.self),
            originalTransactionId: try row.decode(column: "original_transaction_id", as: String.self),
            transactionId: try row.decode(column: "transaction_id", as: String.self),
            productId: try row.decode(column: "product_id", as: String.self), group: try row.decode(column: "group_id", as: String.self),
            kind: kind, start: try row.decode(column: "start_at", as: Int64.self), end: try int("end_at"),
            renewalNumber: try int("renewal_number").map { Int($0) }, price: try int("price"), currency: try text("currency"),
            storefront: try text("storefront"), familyShared: try row.decode(column: "family_shared", as: Int64.self) != 0,
            refundedAt: try int("refunded_at"), refundAmount: try int("refund_amount"), monthlyPrice: try int("monthly_price"),
            commissionPerMille: Int(try row.decode(column: "commission_per_mille", as: Int64.self)),
            taxPerMille: try int("tax_per_mille").map { Int($0) }, willRenew: try int("will_renew").map { $0 != 0 },
            graceUntil: try int("grace_until"))
        entry.acquisition = try text("acquisition").flatMap(LedgerEntry.Acquisition.init(rawValue:))
        entry.nextStart = try int("next_start")
        entry.nextMonthlyPrice = try int("next_monthly_price")
        entry.nextRefunded = try int("next_refunded").map { $0 != 0 }
        return StoredLedgerRow(entry: entry, usdRate: try row.decode(column: "usd_rate", as: Double?.self))
    }
}

extension LedgerEntry {
    /// What the hourly summary reads of this row, at a USD rate.
    func figures(usdRate: Double?) -> LedgerFigures {
        LedgerFigures(
            appId: appId, environment: environment, productId: productId, groupId: group, kind: kind.rawValue, start: start,
            activeUntil: activeUntil, renewalNumber: renewalNumber.map(Int64.init), price: price, familyShared: familyShared,
            refundedAt: refundedAt, refundAmount: refundAmount, monthlyPrice: monthlyPrice,
            commissionPerMille: Int64(commissionPerMille), taxPerMille: taxPerMille.map(Int64.init), willRenew: willRenew,
            acquisition: acquisition?.rawValue, usdRate: usdRate)
    }
}

enum LedgerColumns {
    static let insert = [
        "app_id", "environment", "transaction_id", "customer_id", "original_transaction_id", "product_id", "group_id", "kind",
        "start_at", "end_at", "active_until", "renewal_number", "price", "currency", "storefront", "family_shared",
        "refunded_at", "refund_amount", "monthly_price", "commission_per_mille", "tax_per_mille", "will_renew", "grace_until",
        "acquisition", "next_start", "next_monthly_price", "next_refunded", "purchase_day", "usd_rate", "rate_day",
    ]
}
