import AppStore
import Entitlements
import Foundation
import SQLKit
import Storage
import TestSupport
import Testing

@testable import Analytics

/// Every formula of docs/metrics.md on hand-built ledgers, with the answers worked out here.
@Suite("Analytics: formulas on hand-built ledgers")
struct LedgerFormulaTests {
    static let hour: Int64 = 3_600_000
    static let day: Int64 = 86_400_000

    static func ms(_ day: String, hours: Int64 = 0) throws -> Int64 {
        try #require(CalendarDay(day)).startMilliseconds + hours * hour
    }

    /// A fresh database migrated by `migrations` (all of them unless told) for `body`, closed after it whatever
    /// happens.
    static func withDatabase(
        _ kind: TestDatabase, migrations: [Migration] = Schema.migrations, _ body: (StorageDatabase) async throws -> Void
    ) async throws {
        let database = try await StorageDatabase.open(try await kind.fresh())
        do {
            _ = try await Migrator(database: database, migrations: migrations).migrate()
            try await body(database)
        } catch {
            await database.close()
            throw error
        }
        await database.close()
    }

    /// A paid period of `customer`'s subscription `chain`.
    static func period(
        _ id: String, chain: String? = nil, customer: String = "c1", kind: LedgerKind = .regular, start: Int64, end: Int64?,
        price: Int64 = 9990, currency: String = "USD", monthly: Int64? = nil, renewal: Int? = 0, product: String = "pro.monthly",
        storefront: String = "USA"
    ) -> LedgerEntry {
        LedgerEntry(
            appId: "app_1", environment: "Production", customerId: customer, originalTransactionId: chain ?? id, transactionId: id,
            productId: product, group: "pro", kind: kind, start: start, end: end, renewalNumber: kind == .trial ? nil : renewal,
            price: kind == .trial ? 0 : price, currency: currency, storefront: storefront,
            monthlyPrice: kind == .trial ? nil : (monthly ?? price))
    }

    static func store(_ entries: [LedgerEntry], in database: StorageDatabase) async throws {
        let byCustomer = Dictionary(grouping: entries, by: \.customerId)
        try await database.writing { session in
            for (customer, rows) in byCustomer {
                try await session.replaceLedger(customerId: customer, environment: "Production", with: rows)
            }
        }
    }

    /// Subscription events as the event stream stores them (only what the cohort metrics read).
    static func insertEvents(_ events: [(original: String, type: String, at: Int64)], in database: StorageDatabase) async throws {
        try await database.writing { session in
            for (index, event) in events.enumerated() {
                try await session.sql.raw(
                    """
                    INSERT INTO events (app_id, event_id, original_transaction_id, customer_id, environment, type,
                        effective_at, payload, recorded_at, tx_order)
                    VALUES ('app_1', \(bind: "e\(index)"), \(bind: event.original), \(bind: event.original), 'Production',
                        \(bind: event.type), \(bind: event.at), '{}', \(bind: event.at), 0)
                    """
                ).run()
            }
        }
    }

    static func request(_ from: String, _ to: String, interval: String = "day", tz: String? = nil) throws -> MetricRequest {
        try MetricRequest(appId: "app_1", from: from, to: to, interval: interval, timeZone: tz)
    }

    @Test(
        "MRR normalises each price to a month and leaves out trials, family sharing and currencies without a rate",
        arguments: TestDatabase.available)
    func mrr(_ kind: TestDatabase) async throws {
        try await Self.withDatabase(kind) { database in
            let start = try Self.ms("2026-01-01")
            var family = Self.period("fam", customer: "c6", start: start, end: start + 30 * Self.day)
            family.familyShared = true
            try await Self.store(
                [
                    // 59.99 a year: 4.999 a month (MonthlyNormalisation rounds to the milliunit: 4999).
                    Self.period(
                        "year", customer: "c1", start: start, end: start + 365 * Self.day, price: 59990,
                        monthly: MonthlyNormalisation(try ISO8601Duration("P1Y"))?.monthly(59990)),
                    // 2.99 a week: ×4.
                    Self.period(
                        "week", customer: "c2", start: start, end: start + 7 * Self.day, price: 2990,
                        monthly: MonthlyNormalisation(try ISO8601Duration("P1W"))?.monthly(2990)),
                    Self.period("month", customer: "c3", start: start, end: start + 31 * Self.day),
                    Self.period("trial", customer: "c4", kind: .trial, start: start, end: start + 7 * Self.day),
                    Self.period("yen", customer: "c5", start: start, end: start + 31 * Self.day, price: 1_500_000, currency: "JPY"),
                    family,
                ], in: database)
            let series = try await MetricsEngine(database: database).series(
                .mrr, try Self.request("2026-01-01", "2026-01-03"), now: start + 100 * Self.day)
            // Day 1 ends with all five subscriptions: 4.999 + 11.96 + 9.99 = 26.949 → 26.95 (the yen are apart).
            #expect(series.points.map(\.value) == [26.95, 26.95])
            #expect(series.unconverted == ["JPY": 1500])
            #expect(series.points[0]["gross"] == 26.95)
            // Proceeds: 70% of it (no tax rates).
            #expect(series.points[0]["proceeds"] == 18.86)
            // The week ends on day 8.
            let later = try await MetricsEngine(database: database).series(
                .mrr, try Self.request("2026-01-08", "2026-01-09"), now: start + 100 * Self.day)
            #expect(later.points.map(\.value) == [14.99])
            let arr = try await MetricsEngine(database: database).series(
                .arr, try Self.request("2026-01-08", "2026-01-09"), now: start + 100 * Self.day)
            // 14.989 × 12, rounded once at the end (not 14.99 × 12).
            #expect(arr.points.map(\.value) == [179.87])
            // Rates loaded afterwards convert what is already in the ledger; the yen leave `unconverted`.
            _ = try await database.writing {
                try await $0.importRates(try ExchangeRateCSV.parse("date,currency,usd_per_unit\n2025-12-31,JPY,0.0064\n"))
            }
            let converted = try await MetricsEngine(database: database).series(
                .mrr, try Self.request("2026-01-01", "2026-01-02"), now: start + 100 * Self.day)
            #expect(converted.points.map(\.value) == [36.55])
            #expect(converted.unconverted.isEmpty)
        }
    }

    @Test(
        "revenue is booked on the purchase date, and a refund (prorated too) goes to the purchase's interval",
        arguments: TestDatabase.available)
    func revenue(_ kind: TestDatabase) async throws {
        try await Self.withDatabase(kind) { database in
            var refunded = Self.period("jan", customer: "c1", start: try Self.ms("2026-01-10"), end: try Self.ms("2026-02-10"))
            refunded.refundedAt = try Self.ms("2026-03-05")
            refunded.refundAmount = 9990
            var prorated = Self.period(
                "feb", customer: "c2", start: try Self.ms("2026-02-03"), end: try Self.ms("2026-03-03"), price: 20000, renewal: 1)
            prorated.refundedAt = try Self.ms("2026-02-20")
            prorated.refundAmount = 10000  // a 50% prorated refund
            try await Self.store([refunded, prorated], in: database)
            let series = try await MetricsEngine(database: database).series(
                .revenue, try Self.request("2026-01-01", "2026-04-01", interval: "month"), now: try Self.ms("2026-05-01"))
            #expect(series.points.map(\.start.description) == ["2026-01-01", "2026-02-01", "2026-03-01"])
            #expect(series.points.map { $0["gross"] } == [9.99, 20, 0])
            #expect(series.points.map { $0["refunds"] } == [9.99, 10, 0])
            #expect(series.points.map(\.value) == [0, 10, 0])
            #expect(series.points.map { $0["newGross"] } == [9.99, 0, 0])
            #expect(series.points.map { $0["renewalGross"] } == [0, 20, 0])
            // Proceeds: 70% of what was kept.
            #expect(series.points.map { $0["proceeds"] } == [0, 7.0, 0])
            let rates = try await MetricsEngine(database: database).series(
                .refundRate, try Self.request("2026-01-01", "2026-03-01", interval: "month"), now: try Self.ms("2026-05-01"))
            #expect(rates.points.map(\.value) == [1, 1])
            #expect(rates.points.map { $0["revenueRate"] } == [1, 0.5])
            #expect(
                series.csv.hasPrefix("start,value,gross,refunds,net,proceeds,newGross,renewalGross\n2026-01-01,0,9.99,9.99,0,0,9.99,0\n"))
        }
    }

    @Test("a purchase half an hour before midnight UTC falls on the next day in Berlin", arguments: TestDatabase.available)
    func timeZoneBoundary(_ kind: TestDatabase) async throws {
        try await Self.withDatabase(kind) { database in
            try await Self.store(
                [Self.period("late", start: try Self.ms("2026-01-01", hours: 23) + 1_800_000, end: try Self.ms("2026-02-01"))], in: database
            )
            let engine = MetricsEngine(database: database)
            let now = try Self.ms("2026-03-01")
            let utc = try await engine.series(.revenue, try Self.request("2026-01-01", "2026-01-03"), now: now)
            #expect(utc.points.map { $0["gross"] } == [9.99, 0])
            let berlin = try await engine.series(.revenue, try Self.request("2026-01-01", "2026-01-03", tz: "Europe/Berlin"), now: now)
            #expect(berlin.points.map { $0["gross"] } == [0, 9.99])
            // India is 5:30 ahead: still a quarter-hour boundary.
            let kolkata = try await engine.series(
                .newPaidSubscriptions, try Self.request("2026-01-01", "2026-01-03", tz: "Asia/Kolkata"), now: now)
            #expect(kolkata.points.map(\.value) == [0, 0])
        }
    }

    @Test(
        "churn: expired less came back over actives at the start; trials: converted + pending + abandoned",
        arguments: TestDatabase.available)
    func churnAndTrials(_ kind: TestDatabase) async throws {
        try await Self.withDatabase(kind) { database in
            let jan = try Self.ms("2026-01-01")
            let feb = try Self.ms("2026-02-01")
            var lapsing = Self.period("a1", chain: "a", customer: "c1", start: jan - 10 * Self.day, end: jan + 5 * Self.day)
            lapsing.nextStart = nil
            var back = Self.period("b1", chain: "b", customer: "c2", start: jan - 10 * Self.day, end: jan + 3 * Self.day)
            back.nextStart = jan + 20 * Self.day
            let backAgain = Self.period("b2", chain: "b", customer: "c2", start: jan + 20 * Self.day, end: feb + 20 * Self.day, renewal: 1)
            var renewing = Self.period("c1", chain: "c", customer: "c3", start: jan - 10 * Self.day, end: jan + 20 * Self.day)
            renewing.nextStart = jan + 20 * Self.day
            let renewed = Self.period("c2", chain: "c", customer: "c3", start: jan + 20 * Self.day, end: feb + 20 * Self.day, renewal: 1)
            var staying = Self.period("d1", chain: "d", customer: "c4", start: jan - 10 * Self.day, end: feb + 20 * Self.day)
            staying.willRenew = false
            // Trials started in January: converted, pending (auto-renew on, not over), abandoned.
            var converted = Self.period("t1", chain: "t1", customer: "c5", kind: .trial, start: jan + 1 * Self.day, end: jan + 8 * Self.day)
            converted.nextStart = jan + 8 * Self.day
            var pending = Self.period("t2", chain: "t2", customer: "c6", kind: .trial, start: jan + 25 * Self.day, end: feb + 1 * Self.day)
            pending.willRenew = true
            var abandoned = Self.period("t3", chain: "t3", customer: "c7", kind: .trial, start: jan + 2 * Self.day, end: jan + 9 * Self.day)
            abandoned.willRenew = false
            try await Self.store([lapsing, back, backAgain, renewing, renewed, staying, converted, pending, abandoned], in: database)
            let engine = MetricsEngine(database: database)
            let now = jan + 30 * Self.day
            let churn = try await engine.series(.churn, try Self.request("2026-01-01", "2026-02-01", interval: "month"), now: now)
            // Four paid subscriptions at the start; a and b expired, b came back within the month: (2 - 1) / 4.
            #expect(churn.points.map(\.value) == [0.25])
            #expect(churn.points[0]["expired"] == 2)
            #expect(churn.points[0]["cameBack"] == 1)
            #expect(churn.points[0]["revenueChurn"] == 0.25)
            let trials = try await engine.series(
                .trialConversion, try Self.request("2026-01-01", "2026-02-01", interval: "month"), now: now)
            #expect(trials.points[0]["trials"] == 3)
            #expect(trials.points[0]["converted"] == 1)
            #expect(trials.points[0]["pending"] == 1)
            #expect(trials.points[0]["abandoned"] == 1)
            let active = try await engine.series(.activeSubscriptions, try Self.request("2026-01-25", "2026-01-26"), now: now)
            // b2, c2 and d1 (auto-renew off) at the end of 25 January.
            #expect(active.points.map(\.value) == [3])
            #expect(active.points[0]["autoRenewOff"] == 1)
            let overview = try await engine.overview(appId: "app_1", environment: .production, now: now)
            #expect(overview.activeSubscriptions == 3)
            #expect(overview.activeTrials == 1)
            #expect(overview.mrr == 29.97)
            #expect(overview.arr == 359.64)
        }
    }

    @Test(
        "cohorts: retention counts only subscriptions that could renew; LTV counts windows that have passed; the free-trials report",
        arguments: TestDatabase.available)
    func cohorts(_ kind: TestDatabase) async throws {
        try await Self.withDatabase(kind) { database in
            let jan = try Self.ms("2026-01-01")
            let now = try Self.ms("2026-04-15")
            func chain(_ name: String, customer: String, _ bounds: [Int64]) -> [LedgerEntry] {
                bounds.indices.dropLast().map { k in
                    var entry = Self.period(
                        "\(name)\(k)", chain: name, customer: customer, start: bounds[k], end: bounds[k + 1], renewal: k)
                    entry.nextStart = k + 2 < bounds.count ? bounds[k + 1] : nil
                    return entry
                }
            }
            // Retention, January's cohort: a renewed twice (and its third period ended), b never, c once.
            let a = chain("a", customer: "r1", [jan, try Self.ms("2026-02-01"), try Self.ms("2026-03-01"), try Self.ms("2026-04-01")])
            let b = chain("b", customer: "r2", [jan + 4 * Self.day, try Self.ms("2026-02-05")])
            let c = chain("c", customer: "r3", [jan + 19 * Self.day, try Self.ms("2026-02-20"), try Self.ms("2026-03-20")])
            let february = chain("d", customer: "r4", [try Self.ms("2026-02-03"), try Self.ms("2026-03-03")])
            // LTV: l1 paid on its first day and 31 days later; l2 never paid; l3's purchase was refunded in full.
            let l1 = [
                Self.period("l1a", chain: "l1", customer: "l1", start: jan + Self.hour, end: jan + 31 * Self.day),
                Self.period("l1b", chain: "l1", customer: "l1", start: jan + 31 * Self.day, end: jan + 59 * Self.day, renewal: 1),
            ]
            var l3 = Self.period("l3a", customer: "l3", start: jan + 20 * Self.day, end: jan + 50 * Self.day, price: 19990)
            l3.refundedAt = jan + 24 * Self.day
            l3.refundAmount = 19990
            // Free trials: t1 converted on time to another product (then refunded); t2 converted after a billing
            // issue; t3 was canceled two days in and abandoned.
            var t1 = Self.period("t1", chain: "t1", customer: "f1", kind: .trial, start: jan, end: jan + 7 * Self.day)
            t1.nextStart = jan + 7 * Self.day
            t1.nextRefunded = true
            let t1Paid = Self.period(
                "t1p", chain: "t1", customer: "f1", start: jan + 7 * Self.day, end: jan + 372 * Self.day, product: "pro.yearly")
            var t2 = Self.period("t2", chain: "t2", customer: "f2", kind: .trial, start: jan + Self.day, end: jan + 8 * Self.day)
            t2.nextStart = jan + 11 * Self.day
            let t2Paid = Self.period("t2p", chain: "t2", customer: "f2", start: jan + 11 * Self.day, end: jan + 42 * Self.day)
            var t3 = Self.period("t3", chain: "t3", customer: "f3", kind: .trial, start: jan + 2 * Self.day, end: jan + 9 * Self.day)
            t3.willRenew = false
            try await Self.store(a + b + c + february + l1 + [l3, t1, t1Paid, t2, t2Paid, t3], in: database)
            try await database.writing { session in
                try await session.insertApp(AppRecord(id: "app_1", bundleId: "com.example", config: "{}", createdAt: 0, updatedAt: 0))
                for (id, seen) in [("l1", jan), ("l2", jan + 9 * Self.day), ("l3", jan + 19 * Self.day), ("l4", try Self.ms("2026-02-02"))]
                {
                    try await session.sql.raw(
                        "INSERT INTO customers (id, app_id, anonymous, created_at) VALUES (\(bind: id), 'app_1', 0, \(bind: seen))"
                    ).run()
                }
            }
            try await Self.insertEvents(
                [("t2", "billing_issue", jan + 8 * Self.day), ("t3", "trial_canceled", jan + 4 * Self.day)], in: database)
            let engine = MetricsEngine(database: database)
            let months = try Self.request("2026-01-01", "2026-03-01", interval: "month")

            let retention = try await engine.series(.retention, months, now: now)
            // January: a, b, c (and l1, l3, t1p, t2p, whose paying began then too: single periods, l1 renewed once).
            let jan0 = retention.points[0]
            #expect(jan0.value == 7)
            // Renewal 1: every one had the chance (its first period ended); a, c and l1 paid it.
            #expect(jan0["eligible1"] == 6)  // t1p's year has not ended: no chance yet
            #expect(jan0["renewal1"] == 3.0 / 6.0)
            // Renewal 2: a (paid it), c and l1 (their second periods ended): 1 of 3.
            #expect(jan0["eligible2"] == 3)
            #expect(jan0["renewal2"] == 1.0 / 3.0)
            // Renewal 3: only a had a third period, which ended unrenewed.
            #expect(jan0["eligible3"] == 1)
            #expect(jan0["renewal3"] == 0)
            #expect(jan0["eligible4"] == 0)
            #expect(retention.points[1].value == 1)

            let ltv = try await engine.series(.ltv, months, now: now)
            let cohort = ltv.points[0]
            // l1, l2, l3: 19.98 in all, from one paying customer.
            #expect(cohort["customers"] == 3)
            #expect(cohort["payingCustomers"] == 1)
            #expect(cohort.value == 6.66)
            #expect(cohort["perPayingCustomer"] == 19.98)
            #expect(cohort["customersDay0"] == 3)
            #expect(cohort["perCustomerDay0"] == 3.33)
            #expect(cohort["perPayingCustomerDay0"] == 9.99)
            // The second payment came 31 days after l1 was first seen: outside day 30, inside day 90 (which l3, first
            // seen on 20 January, has not finished by 15 April).
            #expect(cohort["perCustomerDay30"] == 3.33)
            #expect(cohort["customersDay90"] == 2)
            #expect(cohort["perCustomerDay90"] == 9.99)
            #expect(cohort["customersDay180"] == 0)
            #expect(ltv.points[1]["customers"] == 1)

            let trials = try await engine.series(.freeTrials, months, now: now)
            let report = trials.points[0]
            #expect(report.value == 3)
            #expect(report["converted"] == 2)
            #expect(report["convertedOnTime"] == 1)
            #expect(report["convertedAfterBillingIssue"] == 1)
            #expect(report["canceledDuringTrial"] == 1)
            #expect(report["averageDaysToCancel"] == 2)
            #expect(report["convertedToOtherProduct"] == 1)
            #expect(report["refundedAfterConversion"] == 1)
            #expect(report["pending"] == 0)
        }
    }

    @Test(
        "billing: issues by start, recovered on time, within grace or in billing retry, lost, unresolved", arguments: TestDatabase.available
    )
    func billing(_ kind: TestDatabase) async throws {
        try await Self.withDatabase(kind) { database in
            let feb = try Self.ms("2026-02-01")
            let mar = try Self.ms("2026-03-01")
            let hour = Self.hour
            let day = Self.day
            // Each subscription paid from January; the renewal that recovered starts at or after its issue.
            var entries: [LedgerEntry] = []
            for (name, renewal) in [("o1", feb), ("o2", feb + 2 * day), ("o3", feb + 19 * day), ("o4", nil), ("o5", nil), ("o6", nil)]
                as [(String, Int64?)]
            {
                entries.append(Self.period("\(name)a", chain: name, customer: name, start: feb - 31 * day, end: feb))
                if let renewal {
                    entries.append(
                        Self.period("\(name)b", chain: name, customer: name, start: renewal, end: renewal + 30 * day, renewal: 1))
                }
            }
            try await Self.store(entries, in: database)
            let events: [(original: String, type: String, at: Int64)] = [
                ("o1", "billing_issue", feb), ("o1", "billing_recovered", feb + 2 * hour),
                ("o2", "billing_issue", feb + 2 * day), ("o2", "grace_period_started", feb + 2 * day),
                ("o2", "billing_recovered", feb + 9 * day),
                ("o3", "billing_issue", feb + 4 * day), ("o3", "grace_period_started", feb + 4 * day),
                ("o3", "grace_period_expired", feb + 10 * day), ("o3", "billing_recovered", feb + 19 * day),
                ("o4", "billing_issue", feb + 6 * day), ("o4", "subscription_expired", mar + 19 * day),
                ("o5", "billing_issue", feb + 8 * day),
                ("o6", "billing_issue", mar + day),
            ]
            try await Self.insertEvents(events, in: database)
            let engine = MetricsEngine(database: database)
            let series = try await engine.series(
                .billing, try Self.request("2026-02-01", "2026-04-01", interval: "month"), now: try Self.ms("2026-04-15"))
            let february = series.points[0]
            #expect(february.value == 5)
            #expect(february["recoveredOnTime"] == 1)
            #expect(february["recoveredWithinGrace"] == 1)
            #expect(february["recoveredInBillingRetry"] == 1)
            #expect(february["recovered"] == 3)
            #expect(february["lost"] == 1)
            #expect(february["unresolved"] == 1)
            #expect(february["recoveryRate"] == 0.6)
            #expect(february["recoveredRevenue"] == 29.97)
            #expect(series.points[1].value == 1)
            #expect(series.points[1]["unresolved"] == 1)
        }
    }

    @Test("Apple's commission: 30%, 15% from a subscriber's second year (a lapse over 60 days resets it) and in the Small Business Program")
    func commission() throws {
        let catalog = try Catalog(products: [
            CatalogProduct(id: "pro.monthly", type: .autoRenewable, group: "pro", period: try ISO8601Duration("P1M"))
        ])
        let builder = LedgerBuilder(appId: "app_1", catalog: catalog, proceeds: ProceedsSettings())
        let start = try Self.ms("2025-01-01")
        func months(_ count: Int, from: Int64, chain: String) -> [LedgerEntry] {
            (0..<count).map { i in
                Self.period("\(chain)\(i)", chain: chain, start: from + Int64(i) * 31 * Self.day, end: from + Int64(i + 1) * 31 * Self.day)
            }
        }
        var entries = months(13, from: start, chain: "a")
        builder.applyCommission(&entries)
        // 12 × 31 days = 372 days ≥ a year before the 13th period begins; the 12th began after 341 days.
        #expect(entries.map(\.commissionPerMille) == Array(repeating: 300, count: 12) + [150])
        var lapsed = months(12, from: start, chain: "b") + months(2, from: start + 12 * 31 * Self.day + 61 * Self.day, chain: "c")
        builder.applyCommission(&lapsed)
        #expect(lapsed.map(\.commissionPerMille) == Array(repeating: 300, count: 14))
        let program = LedgerBuilder(appId: "app_1", catalog: catalog, proceeds: ProceedsSettings(smallBusinessProgramSince: "2025-03-01"))
        var early = months(3, from: start, chain: "d")
        program.applyCommission(&early)
        #expect(early.map(\.commissionPerMille) == [300, 300, 150])
    }

    @Test("a period learns the next paid one; one that renewed into it (a renewal, a trial's conversion) says auto-renew was on")
    func linkedPeriods() throws {
        let catalog = try Catalog(products: [CatalogProduct(id: "pro.monthly", type: .autoRenewable, group: "pro")])
        let builder = LedgerBuilder(appId: "app_1", catalog: catalog, proceeds: ProceedsSettings())
        let start = try Self.ms("2025-01-01")
        let month = 31 * Self.day
        // A trial, its conversion, a renewal, a lapse, and a resubscription, in one subscription.
        let trial = Self.period("t0", chain: "o", kind: .trial, start: start, end: start + 7 * Self.day)
        var converted = Self.period("t1", chain: "o", start: start + 7 * Self.day, end: start + 7 * Self.day + month)
        converted.acquisition = .trialConversion
        let renewed = Self.period("t2", chain: "o", start: converted.end ?? 0, end: (converted.end ?? 0) + month, renewal: 1)
        var back = Self.period("t3", chain: "o", start: (renewed.end ?? 0) + 90 * Self.day, end: (renewed.end ?? 0) + 90 * Self.day + month)
        back.acquisition = .resubscription
        var entries = [trial, converted, renewed, back]
        builder.linkPeriods(&entries)
        #expect(entries.map(\.nextStart) == [converted.start, renewed.start, back.start, nil])
        #expect(entries.map(\.nextMonthlyPrice) == [9990, 9990, 9990, nil])
        #expect(entries.map(\.willRenew) == [true, true, nil, nil], "the lapsed period did not renew; the latest's comes from the state")
    }

    @Test("a signed transaction with extreme instants, price and refund share is bounded in the ledger, not a crash")
    func extremeInput() throws {
        let catalog = try Catalog(products: [CatalogProduct(id: "pro.monthly", type: .autoRenewable, group: "pro")])
        var transaction = JWSTransactionDecodedPayload()
        transaction.transactionId = "t1"
        transaction.originalTransactionId = "t1"
        transaction.productId = "pro.monthly"
        transaction.type = .autoRenewable
        transaction.purchaseDate = Timestamp(millisecondsSince1970: .min + 1)
        transaction.expiresDate = Timestamp(millisecondsSince1970: .max - 1)  // .max itself is "never ends"
        transaction.price = .max
        transaction.currency = "USD"
        transaction.revocationDate = Timestamp(millisecondsSince1970: .max - 1)
        transaction.revocationType = .refundProrated
        transaction.revocationPercentage = 250_000
        let prepared = PreparedCustomer(catalog: catalog, facts: [.transaction(transaction)])
        let now = Timestamp(millisecondsSince1970: 0)
        let entries = LedgerBuilder(appId: "app_1", catalog: catalog, proceeds: ProceedsSettings()).entries(
            customerId: "c1", environment: .production, purchases: prepared.purchases, state: prepared.state(at: now),
            events: prepared.events(upTo: now))
        let entry = try #require(entries.first)
        #expect(entry.start == -LedgerBuilder.instantLimit)
        #expect(entry.end == LedgerBuilder.instantLimit)
        #expect(entry.price == LedgerBuilder.moneyLimit)
        // A share above 100% is read as 100%: never more refunded than paid.
        #expect(entry.refundAmount == LedgerBuilder.moneyLimit)
        #expect(entry.monthlyPrice == LedgerBuilder.moneyLimit / 12)
        #expect(MonthlyNormalisation(lengthMilliseconds: 86_400_000)?.monthly(.max) == .max)
    }

    @Test("exchange rates: both CSV layouts; the ECB's per-euro values become USD per unit; bad lines are named")
    func rates() throws {
        let own = try ExchangeRateCSV.parse("date,currency,usd_per_unit\n2026-01-02,EUR,1.0921\n")
        #expect(own == [ExchangeRate(day: try #require(CalendarDay("2026-01-02")), currency: "EUR", usdPerUnit: 1.0921)])
        let ecb = try ExchangeRateCSV.parse("Date,USD,JPY,CYP,\n2026-01-02,1.1,160,N/A,\n")
        #expect(ecb.map(\.currency) == ["EUR", "JPY"])
        #expect(ecb[1].usdPerUnit == 1.1 / 160)
        #expect(throws: AnalyticsError.invalidRates(line: 3, "'x' is not a positive number")) {
            try ExchangeRateCSV.parse("date,currency,usd_per_unit\n2026-01-02,EUR,1.09\n2026-01-03,EUR,x\n")
        }
        // The same currency and day twice would also make PostgreSQL's upsert fail: a named 400 instead.
        #expect(throws: AnalyticsError.invalidRates(line: 3, "a second rate for EUR on 2026-01-02 (the first is on line 2)")) {
            try ExchangeRateCSV.parse("date,currency,usd_per_unit\n2026-01-02,EUR,1.09\n2026-01-02,EUR,1.10\n")
        }
        #expect(throws: AnalyticsError.invalidRates(line: 2, "a second rate for JPY on 2026-01-02 (the first is on line 2)")) {
            try ExchangeRateCSV.parse("Date,USD,JPY,JPY\n2026-01-02,1.1,160,161\n")
        }
        #expect(throws: AnalyticsError.invalidRates(line: 2, "USD is the reporting currency: its rate is 1")) {
            try ExchangeRateCSV.parse("date,currency,usd_per_unit\n2026-01-02,USD,0.9\n")
        }
    }

    @Test("bad requests name their parameter")
    func badRequests() throws {
        #expect(
            throws: AnalyticsError.invalidParameter("from", "from (2026-02-01) must be before to (2026-01-01): the range is [from, to)")
        ) {
            try Self.request("2026-02-01", "2026-01-01")
        }
        #expect(throws: AnalyticsError.self) { try Self.request("2020-01-01", "2026-01-01") }
        #expect(throws: AnalyticsError.invalidParameter("tz", "'Mars/Olympus' is not an IANA time zone such as Europe/Berlin")) {
            try Self.request("2026-01-01", "2026-01-02", tz: "Mars/Olympus")
        }
        #expect(throws: AnalyticsError.unknownMetric("mmr")) { try Metric(named: "mmr") }
        #expect(AnalyticsError.unknownMetric("mmr").description == "unknown metric 'mmr': did you mean 'mrr'?")
        #expect(AnalyticsError.unknownMetric("churnn").reason == "unknown metric 'churnn': did you mean 'churn'?")
        #expect(AnalyticsError.unknownMetric("zzzzzzzz").description.hasPrefix("unknown metric 'zzzzzzzz': one of mrr"))
        // Names outside the time zone database, including paths Foundation would read as files.
        for name in ["../../../etc/passwd", "GMT+5", "", "Europe/../Europe/Berlin"] {
            #expect(throws: AnalyticsError.invalidParameter("tz", "'\(name)' is not an IANA time zone such as Europe/Berlin")) {
                try Self.request("2026-01-01", "2026-01-02", tz: name)
            }
        }
        #expect(try Self.request("2026-01-01", "2026-01-02", tz: "Asia/Kolkata").timeZone.identifier == "Asia/Kolkata")
        #expect(try Self.request("2026-01-01", "2026-01-02", tz: "UTC").timeZone.secondsFromGMT() == 0)
        #expect(throws: AnalyticsError.invalidParameter("storefront", "is empty: leave it out to take every storefront")) {
            try MetricRequest(appId: "app_1", from: "2026-01-01", to: "2026-01-02", storefront: "")
        }
    }

    @Test("weeks begin on Monday and months on the 1st; the first point begins at from")
    func buckets() throws {
        let weeks = try Self.request("2026-01-01", "2026-01-20", interval: "week").buckets.days.map(\.description)
        #expect(weeks == ["2026-01-01", "2026-01-05", "2026-01-12", "2026-01-19"])
        let months = try Self.request("2025-12-15", "2026-03-01", interval: "month").buckets.days.map(\.description)
        #expect(months == ["2025-12-15", "2026-01-01", "2026-02-01"])
    }
}
