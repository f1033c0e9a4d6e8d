import Foundation
import SQLKit
import TestSupport
import Testing

@testable import Analytics
@testable import Storage

/// The hourly summary against the ledger it sums: kept right through every kind of ledger change, and giving the same
/// numbers as the ledger's rows for every metric it serves.
@Suite("Analytics: the hourly summary")
struct LedgerSummaryTests {
    static let hour: Int64 = 3_600_000
    static let day: Int64 = 86_400_000
    static let origin: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z

    /// A random customer's ledger: every kind, instants off the hour, open and closed ends, ends before starts,
    /// refunds, grace, family sharing, three currencies, two products in two groups, two storefronts.
    static func ledger(customer: String, transactions: Range<Int>, using random: inout SeededGenerator) -> [LedgerEntry] {
        transactions.map { n in
            let kind = LedgerKind.allCases.randomElement(using: &random) ?? .regular
            let start = origin + Int64.random(in: 0..<(120 * day), using: &random)
            let length = Int64.random(in: -2 * hour..<(40 * day), using: &random)
            let product = Bool.random(using: &random) ? ("pro.monthly", "pro") : ("max.yearly", "max")
            let price: Int64? = kind == .trial ? 0 : [nil, 0, 990, 9990, 49_990].randomElement(using: &random) ?? 990
            var entry = LedgerEntry(
                appId: "app_1", environment: "Production", customerId: customer, originalTransactionId: "o\(n % 7)",
                transactionId: "t\(n)", productId: product.0, group: product.1, kind: kind, start: start,
                end: Int.random(in: 0..<8, using: &random) == 0 ? nil : start + length,
                renewalNumber: kind == .trial ? nil : Int.random(in: 0..<4, using: &random), price: price,
                currency: ["USD", "EUR", "JPY"].randomElement(using: &random), storefront: Bool.random(using: &random) ? "USA" : "DEU",
                familyShared: Int.random(in: 0..<6, using: &random) == 0,
                monthlyPrice: kind == .trial ? nil : price.map { $0 * Int64.random(in: 1...3, using: &random) / 2 },
                commissionPerMille: Bool.random(using: &random) ? 300 : 150,
                taxPerMille: Bool.random(using: &random) ? nil : 190,
                willRenew: [nil, true, false].randomElement(using: &random) ?? nil,
                graceUntil: Int.random(in: 0..<5, using: &random) == 0 ? start + length + 3 * day : nil)
            if Int.random(in: 0..<5, using: &random) == 0, let price {
                entry.refundedAt = start + length / 2
                entry.refundAmount = price / 2
            }
            entry.acquisition = [nil, .new, .trialConversion, .resubscription].randomElement(using: &random) ?? nil
            if Bool.random(using: &random) { entry.nextStart = start + length + Int64.random(in: 0..<(5 * day), using: &random) }
            return entry
        }
    }

    /// A key of the summary: app, environment, hour, product and group.
    struct SummaryKey: Hashable {
        var appId: String
        var environment: String
        var hour: Int64
        var productId: String
        var groupId: String
    }

    /// The rows of a query over the summary's keys and columns (`contributions`, or the summary table), by key.
    static func read(_ db: any SQLDatabase, _ query: SQLQueryString) async throws -> [SummaryKey: [Double]] {
        var result: [SummaryKey: [Double]] = [:]
        for row in try await db.raw(query).all() {
            let (key, values) = try decode(row)
            result[key] = zip(result[key] ?? Array(repeating: 0, count: values.count), values).map { $0 + $1 }
        }
        return result
    }

    static func decode(_ row: any SQLRow) throws -> (key: SummaryKey, values: [Double]) {
        let key = SummaryKey(
            appId: try row.decode(column: "app_id", as: String.self),
            environment: try row.decode(column: "environment", as: String.self),
            hour: try row.decode(column: "hour", as: Int64.self),
            productId: try row.decode(column: "product_id", as: String.self),
            groupId: try row.decode(column: "group_id", as: String.self))
        return (key, try LedgerSummary.columns.map { try row.decode(column: $0, as: Double?.self) ?? 0 })
    }

    /// The stored summary (its rows plus the moves not folded in yet), and the summary computed afresh from the
    /// ledger, keyed alike.
    static func summaries(_ database: StorageDatabase) async throws -> (
        stored: [SummaryKey: [Double]], fresh: [SummaryKey: [Double]]
    ) {
        try await database.reading { session in
            var all = LedgerSummary.pending
            all.appendInterpolation(unsafeRaw: " UNION ALL SELECT * FROM \(LedgerSummary.table)")
            var stored = try await Self.read(session.sql, all)
            // Rows whose sums all went back to zero (what they counted moved away) stand for nothing.
            stored = stored.filter { $0.value.contains { abs($0) > 1e-9 } }
            let fresh = try await Self.read(session.sql, LedgerSummary.contributions(where: "true")).filter {
                $0.value.contains { abs($0) > 1e-9 }
            }
            return (stored, fresh)
        }
    }

    /// How many moves wait to be folded in.
    static func unfolded(_ database: StorageDatabase) async throws -> Int64 {
        try await database.reading {
            try await $0.sql.raw("SELECT COUNT(*) AS n FROM \(unsafeRaw: LedgerSummary.movesTable)").first()?.decode(
                column: "n", as: Int64.self) ?? -1
        }
    }

    /// Folds every difference in, in small batches; answers how many batches it took.
    static func foldAll(_ database: StorageDatabase) async throws -> Int {
        var batches = 0
        while try await database.writing({ try await $0.foldLedgerSummaryChanges(limit: 7) }) > 0 { batches += 1 }
        return batches
    }

    static func expectSame(_ a: [SummaryKey: [Double]], _ b: [SummaryKey: [Double]], _ when: String) {
        #expect(Set(a.keys) == Set(b.keys), "\(when): the summary's keys differ from the ledger's")
        for (key, values) in a {
            guard let other = b[key] else { continue }
            for (index, (x, y)) in zip(values, other).enumerated() where abs(x - y) > 1e-6 {
                Issue.record("\(when): \(LedgerSummary.columns[index]) at \(key) is \(x) in the summary, \(y) from the ledger")
            }
        }
    }

    @Test(
        "the summary follows every ledger change: customers rewritten and emptied, a transaction moving to another customer, rates imported later",
        arguments: TestDatabase.available)
    func maintained(_ kind: TestDatabase) async throws {
        try await LedgerFormulaTests.withDatabase(kind) { database in
            var random = SeededGenerator(state: 2026)
            var ledgers: [String: [LedgerEntry]] = [:]
            for c in 0..<12 { ledgers["c\(c)"] = Self.ledger(customer: "c\(c)", transactions: (c * 20)..<(c * 20 + 12), using: &random) }
            // c2's t40 (later taken by c3) made to count everywhere: a paid, active, refunded USD period, so that
            // leaving its first version in the summary would show.
            let t40 = try #require(ledgers["c2"]?.firstIndex { $0.transactionId == "t40" })
            if var counted = ledgers["c2"]?[t40] {
                (counted.kind, counted.familyShared, counted.price, counted.monthlyPrice, counted.currency) = (
                    .regular, false, 9990, 9990, "USD"
                )
                (counted.end, counted.refundedAt, counted.refundAmount) = (counted.start + 10 * Self.day, counted.start + Self.day, 100)
                ledgers["c2"]?[t40] = counted
            }
            try await LedgerFormulaTests.store(ledgers.values.flatMap { $0 }, in: database)
            var (stored, fresh) = try await Self.summaries(database)
            #expect(!fresh.isEmpty)
            Self.expectSame(stored, fresh, "after the first writes")
            // Rows read back equal what was written, so that writing a customer again writes only what changed.
            let readBack = try await database.reading { try await $0.storedLedger(customerId: "c5").rows(in: "Production") }
            #expect(Set(readBack.values) == Set(ledgers["c5"] ?? []) && readBack.count == 12)
            let read = try await database.reading { try await $0.originalTransactionIdsAndLedger(customer: "c5") }
            #expect(read.originals.isEmpty && read.ledger.rows(in: "Production") == readBack && read.ledger.rows(in: "Sandbox").isEmpty)

            // Rewritten with other periods, emptied, and one transaction (t40, c2's) now listed under c3.
            ledgers["c0"] = Self.ledger(customer: "c0", transactions: 0..<15, using: &random)
            ledgers["c1"] = []
            var moved = try #require(ledgers["c2"]?.first { $0.transactionId == "t40" })
            (moved.customerId, moved.price, moved.monthlyPrice) = ("c3", 4990, 4990)
            ledgers["c3", default: []].append(moved)
            let rewritten = ledgers
            try await database.writing { session in
                for customer in ["c0", "c1", "c3"] {
                    try await session.replaceLedger(customerId: customer, environment: "Production", with: rewritten[customer] ?? [])
                }
            }
            (stored, fresh) = try await Self.summaries(database)
            Self.expectSame(stored, fresh, "after rewrites and a move")
            let owner = try await database.reading {
                try await $0.sql.raw("SELECT customer_id FROM ledger WHERE transaction_id = 't40'").first()?.decode(
                    column: "customer_id", as: String.self)
            }
            #expect(owner == "c3")

            // Rates for EUR arrive: every EUR row gets a USD value, and the summary's USD sums move with them.
            let before = try await MetricsEngine(database: database).overview(
                appId: "app_1", environment: .production, now: Self.origin + 60 * Self.day + 1234)
            _ = try await database.writing {
                try await $0.importRates(try ExchangeRateCSV.parse("date,currency,usd_per_unit\n2025-12-01,EUR,1.08\n"))
            }
            (stored, fresh) = try await Self.summaries(database)
            Self.expectSame(stored, fresh, "after a rates import")

            // Folded in, batch by batch: the same sums, and nothing left apart.
            #expect(try await Self.unfolded(database) > 7)
            #expect(try await Self.foldAll(database) > 1)
            #expect(try await Self.unfolded(database) == 0)
            let folded = try await Self.summaries(database)
            Self.expectSame(folded.stored, fresh, "after folding")
            let after = try await MetricsEngine(database: database).overview(
                appId: "app_1", environment: .production, now: Self.origin + 60 * Self.day + 1234)
            #expect(after.mrr > before.mrr, "EUR subscriptions count in MRR once EUR has a rate")
            #expect(after.unconverted["mrr"]?["EUR"] == nil && before.unconverted["mrr"]?["EUR"] != nil)

            // Rebuilt from the ledger, it is what it was.
            try await database.writing { try await $0.rebuildLedgerSummary(appId: "app_1") }
            let rebuilt = try await Self.summaries(database)
            Self.expectSame(rebuilt.stored, stored, "rebuilt")

            // A renewal alters its predecessor's `next_…` columns only, a late change moves a row to another day:
            // each row reads back as written, at the rate of its own day (the first kept, the second looked up).
            _ = try await database.writing {
                try await $0.importRates(try ExchangeRateCSV.parse("date,currency,usd_per_unit\n2026-03-01,EUR,1.25\n"))
            }
            let march = Self.origin + 59 * Self.day
            var c4 = try #require(ledgers["c4"])
            let euro = c4.indices.filter { c4[$0].currency == "EUR" }
            try #require(euro.count >= 2)
            (c4[euro[0]].nextStart, c4[euro[0]].nextMonthlyPrice) = ((c4[euro[0]].end ?? c4[euro[0]].start) + Self.day, 1234)
            c4[euro[1]].start = c4[euro[1]].start < march ? Self.origin + 70 * Self.day + 5 : Self.origin + 10 * Self.day + 5
            let renewed = c4
            try await database.writing { try await $0.replaceLedger(customerId: "c4", environment: "Production", with: renewed) }
            let rows = try await database.reading { try await $0.storedLedger(customerId: "c4").rows(in: "Production") }
            #expect(Set(rows.values) == Set(renewed))
            for index in euro.prefix(2) {
                let id = renewed[index].transactionId
                let rate = try await database.reading {
                    try await $0.sql.raw("SELECT usd_rate FROM ledger WHERE transaction_id = \(bind: id)").first()?.decode(
                        column: "usd_rate", as: Double?.self)
                }
                #expect(rate == (renewed[index].start < march ? 1.08 : 1.25), "\(id)")
            }
            (stored, fresh) = try await Self.summaries(database)
            Self.expectSame(stored, fresh, "after a renewal and a move to another day")
        }
    }

    @Test(
        "migration 9 folds the differences an earlier server left apart into the summary, then the ledger's triggers keep it",
        arguments: TestDatabase.available)
    func migratedToTriggers(_ kind: TestDatabase) async throws {
        try await LedgerFormulaTests.withDatabase(kind, migrations: Schema.migrations.filter { $0.version < 9 }) { database in
            var random = SeededGenerator(state: 9)
            var entries: [LedgerEntry] = []
            for c in 0..<6 { entries += Self.ledger(customer: "c\(c)", transactions: (c * 20)..<(c * 20 + 10), using: &random) }
            // What an earlier server left: ledger rows (written here before the triggers exist), and what they move the
            // summary by still apart, in the differences table.
            try await LedgerFormulaTests.store(entries, in: database)
            try await database.writing {
                try await $0.sql.raw(LedgerSummary.inserting(into: LedgerSummary.changesTable, LedgerSummary.contributions(where: "true")))
                    .run()
            }
            let migrated = try await Migrator(database: database, migrations: Schema.migrations.filter { $0.version <= 9 }).migrate()
            #expect(migrated.map(\.version) == [9])
            #expect(try await Self.unfolded(database) == 0)
            var (stored, fresh) = try await Self.summaries(database)
            #expect(!fresh.isEmpty)
            Self.expectSame(stored, fresh, "after the migration")
            let tables = try await database.reading { session in
                try await session.sql.raw(
                    session.kind == .postgres
                        ? "SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_name = 'ledger_hourly_changes' AND table_schema = current_schema()"
                        : "SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'ledger_hourly_changes'"
                ).first()?.decode(column: "n", as: Int64.self)
            }
            #expect(tables == 0, "the differences table is gone")
            // From now on the triggers move it: a customer emptied.
            try await database.writing { try await $0.replaceLedger(customerId: "c1", environment: "Production", with: []) }
            #expect(try await Self.unfolded(database) > 0)
            (stored, fresh) = try await Self.summaries(database)
            Self.expectSame(stored, fresh, "after a write through the triggers")
        }
    }

    @Test(
        "a change of columns the sums do not read moves nothing; one of columns they read moves the row out and back in; migration 11 limits SQLite's update trigger to the first",
        arguments: TestDatabase.available)
    func changesOutsideTheSums(_ kind: TestDatabase) async throws {
        try await LedgerFormulaTests.withDatabase(kind, migrations: Schema.migrations.filter { $0.version < 11 }) { database in
            let migrated = try await Migrator(database: database, migrations: Schema.migrations.filter { $0.version <= 11 }).migrate()
            #expect(migrated.map(\.version) == [11])
            if kind == .sqlite {
                let trigger = try await database.reading {
                    try await $0.sql.raw("SELECT sql FROM sqlite_master WHERE name = 'ledger_summary_update'").first()?.decode(
                        column: "sql", as: String.self)
                }
                #expect(trigger?.contains("AFTER UPDATE OF app_id, environment, product_id") == true)
            }
            var random = SeededGenerator(state: 11)
            var rows = Self.ledger(customer: "c1", transactions: 0..<8, using: &random)
            try await LedgerFormulaTests.store(rows, in: database)
            #expect(try await Self.foldAll(database) > 0)
            #expect(try await Self.unfolded(database) == 0)

            // A renewal's predecessor learns its successor; another row's storefront and original transaction change.
            // (On SQLite, writing them whole would move each out and back in: four moves.)
            rows[0].nextStart = (rows[0].end ?? rows[0].start) + Self.day
            (rows[0].nextMonthlyPrice, rows[0].nextRefunded) = (4990, false)
            (rows[1].storefront, rows[1].originalTransactionId) = (rows[1].storefront == "USA" ? "FRA" : "USA", "o99")
            let outside = rows
            try await database.writing { try await $0.replaceLedger(customerId: "c1", environment: "Production", with: outside) }
            #expect(try await Self.unfolded(database) == 0, "nothing the sums read changed")
            var stored = try await database.reading { try await $0.storedLedger(customerId: "c1").rows(in: "Production") }
            #expect(Set(stored.values) == Set(outside) && stored.count == 8)

            // A refund, and a row changed both outside and inside the sums.
            (rows[2].refundedAt, rows[2].refundAmount) = (rows[2].start + Self.hour, 100)
            rows[3].nextStart = (rows[3].end ?? rows[3].start) + 2 * Self.day
            rows[3].commissionPerMille = rows[3].commissionPerMille == 300 ? 150 : 300
            let inside = rows
            try await database.writing { try await $0.replaceLedger(customerId: "c1", environment: "Production", with: inside) }
            #expect(try await Self.unfolded(database) == 4, "each changed row out (-1) and back in (+1)")
            stored = try await database.reading { try await $0.storedLedger(customerId: "c1").rows(in: "Production") }
            #expect(Set(stored.values) == Set(inside))
            let (summary, fresh) = try await Self.summaries(database)
            #expect(!fresh.isEmpty)
            Self.expectSame(summary, fresh, "after changes outside and inside the sums")
        }
    }

    @Test(
        "every metric from the summary equals the same metric from the ledger's rows: day, week and month, UTC, Berlin and Kolkata (off the hour), product and group filters",
        arguments: TestDatabase.available)
    func sameNumbers(_ kind: TestDatabase) async throws {
        try await LedgerFormulaTests.withDatabase(kind) { database in
            var random = SeededGenerator(state: 7)
            var entries: [LedgerEntry] = []
            for c in 0..<20 { entries += Self.ledger(customer: "c\(c)", transactions: (c * 20)..<(c * 20 + 15), using: &random) }
            try await LedgerFormulaTests.store(entries, in: database)
            // Readers add the summary's rows and its unfolded differences: here the ledger's first writes folded in,
            // the rates import's differences not.
            _ = try await Self.foldAll(database)
            _ = try await database.writing {
                try await $0.importRates(try ExchangeRateCSV.parse("date,currency,usd_per_unit\n2025-12-01,EUR,1.08\n"))
            }
            #expect(try await Self.unfolded(database) > 0)
            let summary = MetricsEngine(database: database)
            let ledger = MetricsEngine(database: database, usesSummary: false)
            let now = Self.origin + 100 * Self.day + 1_234_567
            var compared = 0
            for (interval, zone, product, group) in [
                ("day", nil, nil, nil), ("week", "Europe/Berlin", nil, nil), ("month", nil, "pro.monthly", nil),
                ("day", "Asia/Kolkata", nil, "max"), ("day", "America/New_York", nil, "pro"),
            ] as [(String, String?, String?, String?)] {
                let request = try MetricRequest(
                    appId: "app_1", from: "2025-12-20", to: "2026-05-01", interval: interval, timeZone: zone, productId: product,
                    group: group)
                for metric in [
                    Metric.mrr, .arr, .activeSubscriptions, .activeTrials, .newTrials, .newPaidSubscriptions, .churn, .revenue, .refundRate,
                ] {
                    let a = try await summary.series(metric, request, now: now)
                    let b = try await ledger.series(metric, request, now: now)
                    #expect(a.points.count == b.points.count)
                    #expect(a.unconverted == b.unconverted)
                    for (p, q) in zip(a.points, b.points) {
                        #expect(p.start == q.start)
                        for name in ["value"] + q.fields.map(\.name) {
                            let (x, y) = (p[name] ?? .nan, q[name] ?? .nan)
                            if !(abs(x - y) <= 0.0100001) {
                                Issue.record(
                                    "\(metric) \(interval) \(zone ?? "UTC") on \(p.start): \(name) is \(x) from the summary, \(y) from the ledger"
                                )
                            }
                            compared += 1
                        }
                    }
                }
            }
            #expect(compared > 5000)
            // Hand-picked totals are non-trivial: the comparison is not of zeros.
            let mrr = try await summary.series(.mrr, try MetricRequest(appId: "app_1", from: "2026-01-01", to: "2026-03-01"), now: now)
            #expect(mrr.points.contains { $0.value > 0 })
            for instant in [now, Self.origin + 50 * Self.day, Self.origin + 50 * Self.day + 1] {
                let a = try await summary.overview(appId: "app_1", environment: .production, now: instant)
                let b = try await ledger.overview(appId: "app_1", environment: .production, now: instant)
                #expect(abs(a.mrr - b.mrr) <= 0.0100001 && abs(a.revenueLast30Days - b.revenueLast30Days) <= 0.0100001)
                #expect(a.activeSubscriptions == b.activeSubscriptions && a.activeTrials == b.activeTrials)
                #expect(a.churnLast30Days == b.churnLast30Days && a.unconverted == b.unconverted)
            }
            let overview = try await summary.overview(appId: "app_1", environment: .production, now: Self.origin + 50 * Self.day)
            #expect(overview.activeSubscriptions > 0 && overview.revenueLast30Days > 0)
        }
    }
}
