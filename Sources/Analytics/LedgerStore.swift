import SQLKit
import Storage

extension StorageSession {
    /// Replaces a customer's ledger in one environment with `entries` (inside the transaction that recomputed the
    /// customer). USD rows are written with their rate (1); rows in other currencies are then converted at the stored
    /// rates, a statement run only when there are any. A transaction the ledger lists under another customer (it was
    /// transferred) moves to this one.
    ///
    /// The hourly summary moves by the difference (`maintainingLedgerSummary`), over the rows of this customer and of
    /// any customer a transaction is taken from.
    public func replaceLedger(customerId: String, environment: String, with entries: [LedgerEntry]) async throws {
        let customers = [customerId] + (try await customersHolding(entries, otherThan: customerId, environment: environment))
        var rows = SQLQueryString("environment = \(bind: environment) AND customer_id IN ")
        rows.appendInterpolation(SQLGroupExpression(customers.map { SQLBind($0) }))
        try await maintainingLedgerSummary(before: rows, after: rows) {
            try await writeLedger(customerId: customerId, environment: environment, with: entries)
        }
    }

    /// The other customers the ledger lists any of `entries`' transactions under.
    func customersHolding(_ entries: [LedgerEntry], otherThan customerId: String, environment: String) async throws -> [String] {
        var found: Set<String> = []
        for (appId, ofApp) in Dictionary(grouping: entries, by: \.appId) {
            var start = ofApp.startIndex
            while start < ofApp.endIndex {
                let slice = ofApp[start..<min(start + 500, ofApp.endIndex)]
                let rows = try await sql.raw(
                    """
                    SELECT DISTINCT customer_id FROM ledger WHERE app_id = \(bind: appId) AND environment = \(bind: environment)
                    AND customer_id <> \(bind: customerId) AND transaction_id IN \(SQLGroupExpression(slice.map { SQLBind($0.transactionId) }))
                    """
                ).all()
                for row in rows { found.insert(try row.decode(column: "customer_id", as: String.self)) }
                start = slice.endIndex
            }
        }
        return found.sorted()
    }

    private func writeLedger(customerId: String, environment: String, with entries: [LedgerEntry]) async throws {
        try await sql.delete(from: "ledger").where("customer_id", .equal, customerId).where("environment", .equal, environment)
            .run()
        guard !entries.isEmpty else { return }
        // SQLite binds at most 32,766 values per statement: 29 columns each, in slices of 500 rows.
        var start = entries.startIndex
        while start < entries.endIndex {
            let slice = entries[start..<min(start + 500, entries.endIndex)]
            try await sql.raw(
                """
                INSERT INTO ledger (\(unsafeRaw: LedgerColumns.insert.joined(separator: ", ")))
                VALUES \(SQLList(slice.map(Self.values)))
                ON CONFLICT (app_id, environment, transaction_id) DO UPDATE SET
                \(unsafeRaw: LedgerColumns.insert.dropFirst(3).map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
                """
            ).run()
            start = slice.endIndex
        }
        if entries.contains(where: { $0.currency != nil && $0.currency != "USD" }) {
            try await convertLedgerToUSD(customerId: customerId, environment: environment)
        }
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

    /// The same for one customer's rows, inside `replaceLedger` (which moves the summary).
    private func convertLedgerToUSD(customerId: String, environment: String) async throws {
        try await sql.raw(Self.usdConversion(where: "customer_id = \(bind: customerId) AND environment = \(bind: environment)")).run()
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

    static func values(_ e: LedgerEntry) -> SQLGroupExpression {
        let binds: [any SQLExpression] = [
            SQLBind(e.appId), SQLBind(e.environment), SQLBind(e.transactionId), SQLBind(e.customerId),
            SQLBind(e.originalTransactionId), SQLBind(e.productId), SQLBind(e.group), SQLBind(e.kind.rawValue),
            SQLBind(e.start), SQLBind(e.end), SQLBind(e.activeUntil), SQLBind(e.renewalNumber.map(Int64.init)),
            SQLBind(e.price), SQLBind(e.currency), SQLBind(e.storefront), SQLBind(e.familyShared ? Int64(1) : 0),
            SQLBind(e.refundedAt), SQLBind(e.refundAmount), SQLBind(e.monthlyPrice), SQLBind(Int64(e.commissionPerMille)),
            SQLBind(e.taxPerMille.map(Int64.init)), SQLBind(e.willRenew.map { $0 ? Int64(1) : 0 }), SQLBind(e.graceUntil),
            SQLBind(e.acquisition?.rawValue), SQLBind(e.nextStart), SQLBind(e.nextMonthlyPrice),
            SQLBind(e.nextRefunded.map { $0 ? Int64(1) : 0 }), SQLBind(CalendarDay(containing: e.start).daysSinceEpoch),
            SQLBind(e.currency == "USD" ? 1.0 : nil as Double?),
        ]
        return SQLGroupExpression(binds)
    }
}

enum LedgerColumns {
    static let insert = [
        "app_id", "environment", "transaction_id", "customer_id", "original_transaction_id", "product_id", "group_id", "kind",
        "start_at", "end_at", "active_until", "renewal_number", "price", "currency", "storefront", "family_shared",
        "refunded_at", "refund_amount", "monthly_price", "commission_per_mille", "tax_per_mille", "will_renew", "grace_until",
        "acquisition", "next_start", "next_monthly_price", "next_refunded", "purchase_day", "usd_rate",
    ]
}
