import AppStore
import SQLKit
import Storage

/// Computes the metrics from the ledger, in SQL that SQLite and PostgreSQL run alike.
///
/// Rows are aggregated by the coarsest of day, hour and quarter hour that the intervals' boundaries are multiples of
/// (every time zone's offset is a multiple of 15 minutes), then the groups are gathered into the request's intervals
/// here: one scan per query whatever the interval or the time zone. Point-in-time metrics (MRR, actives) are a running
/// sum of what starts minus what ends. Where it can, the engine reads those sums from the ledger's hourly summary
/// instead of its rows (MetricsEngine+Summary.swift).
public struct MetricsEngine: Sendable {
    static let slot: Int64 = 900_000
    static let day: Int64 = 86_400_000

    /// The coarsest of a day, an hour and a quarter hour that every instant is a multiple of: rows are grouped by it
    /// (UTC days: a group per day; a zone with daylight saving: per hour; India's +5:30: per quarter hour).
    static func granularity(_ instants: [Int64]) -> Int64 {
        for size in [day, 3_600_000] where instants.allSatisfy({ $0 % size == 0 }) { return size }
        return slot
    }

    let database: StorageDatabase
    /// Whether sums come from the hourly summary where it can answer (`false`: always from the ledger's rows, which
    /// the tests compare it with).
    let usesSummary: Bool

    public init(database: StorageDatabase, usesSummary: Bool = true) {
        self.database = database
        self.usesSummary = usesSummary
    }

    // MARK: - Predicates (defined with the summary, which counts by them)

    static let paid = LedgerSummary.paid
    static let trial = LedgerSummary.trial
    static let revenue = LedgerSummary.revenue
    static func usd(_ column: String) -> String { LedgerSummary.usd(column) }
    static func proceeds(_ column: String) -> String { LedgerSummary.proceeds(column) }

    // MARK: - Series

    public func series(_ metric: Metric, _ request: MetricRequest, now: Int64) async throws -> MetricSeries {
        let (allDays, boundaries) = request.buckets
        // Intervals that have not begun yet have no point.
        let count = boundaries.dropLast().prefix { $0 <= now }.count
        let days = Array(allDays.prefix(count))
        let bounds = Array(boundaries.prefix(count + 1))
        let scope = Scope(request)
        var series = MetricSeries(
            metric: metric, interval: request.interval, environment: request.environment.rawValue,
            timeZone: request.timeZone.identifier, points: [], unconverted: [:], estimated: [], notes: [])
        guard count > 0 else {
            series.notes.append("the range begins after now: no interval has begun")
            return series
        }
        // The instant each point is read at: its end, or now for the interval under way.
        let frame = SeriesFrame(
            scope: scope, request: request, days: days, bounds: bounds, ends: bounds.dropFirst().map { min($0, now) }, now: now)
        if RunningMetrics.metrics.contains(metric) {
            try await RunningMetrics(engine: self).fill(&series, frame)
        } else if BookedMetrics.metrics.contains(metric) {
            try await BookedMetrics(engine: self).fill(&series, frame)
        } else {
            try await CohortMetrics(engine: self).fill(&series, frame)
        }
        if series.estimated.contains("proceeds") {
            series.notes.append(
                "proceeds are estimated: Apple's commission of 30%, 15% in the Small Business Program and from a subscriber's second year; before tax wherever the app gives no storefront tax rate"
            )
        }
        if !series.unconverted.isEmpty {
            series.notes.append("money in currencies without an exchange rate is left out of the USD figures and listed in unconverted")
        }
        return series
    }

    // MARK: - Overview

    public func overview(appId: String, environment: Environment, now: Int64) async throws -> MetricsOverview {
        let scope = Scope(appId: appId, environment: environment.rawValue)
        let monthAgo = now - 30 * Self.day
        let active = try await running(scope, [LedgerSummary.activeMRR, LedgerSummary.activePaid], at: [monthAgo, now], exact: true)
        let trials = try await running(scope, [LedgerSummary.activeTrials], at: [now], exact: true)
        let money = try await booked(scope, [LedgerSummary.gross, LedgerSummary.refunds], from: monthAgo, to: now)
        let ended = try await window(
            // Read through the index of trials by their end.
            scope, Self.trial + " AND end_at <= \(now)",
            sums: ["1", "CASE WHEN next_start IS NULL THEN 0 ELSE 1 END"], instant: "end_at", from: monthAgo, to: now)
        // One interval: [a month ago, now).
        let churned = try await expiriesPerInterval(scope, bounds: [monthAgo, now], now: now)[0]
        var unconverted: [String: [String: Double]] = [:]
        let mrrLeftOut = try await unconvertedActive(scope, column: "monthly_price", at: now, factor: 1)
        let revenueLeftOut = try await unconvertedBooked(scope, from: monthAgo, to: now)
        if !mrrLeftOut.isEmpty { unconverted["mrr"] = mrrLeftOut }
        if !revenueLeftOut.isEmpty { unconverted["revenueLast30Days"] = revenueLeftOut }
        let activesThen = active[0][1]
        return MetricsOverview(
            environment: environment.rawValue, mrr: cents(active[1][0]), arr: cents(active[1][0] * 12),
            activeSubscriptions: Int(active[1][1]), activeTrials: Int(trials[0][0]),
            revenueLast30Days: cents(money[0] - money[1]), refundsLast30Days: cents(money[1]),
            trialConversionLast30Days: ended[0] > 0 ? ended[1] / ended[0] : nil,
            churnLast30Days: activesThen > 0 ? (churned.expired - churned.cameBack) / activesThen : nil,
            unconverted: unconverted, estimated: [],
            notes: unconverted.isEmpty ? [] : ["money in currencies without an exchange rate is left out and listed in unconverted"])
    }

    // MARK: - Building blocks

    /// What a request filters on.
    struct Scope {
        var appId: String
        var environment: String
        var productId: String?
        var group: String?
        var storefront: String?

        init(appId: String, environment: String) {
            self.appId = appId
            self.environment = environment
        }

        init(_ request: MetricRequest) {
            self.init(appId: request.appId, environment: request.environment.rawValue)
            productId = request.productId
            group = request.group
            storefront = request.storefront
        }

        /// `WHERE` conditions, with binds.
        func condition(_ predicate: String) -> SQLQueryString {
            var query = SQLQueryString("app_id = ")
            query.appendInterpolation(bind: appId)
            query.appendInterpolation(unsafeRaw: " AND environment = ")
            query.appendInterpolation(bind: environment)
            for (column, value) in [("product_id", productId), ("group_id", group), ("storefront", storefront)] {
                guard let value else { continue }
                query.appendInterpolation(unsafeRaw: " AND \(column) = ")
                query.appendInterpolation(bind: value)
            }
            query.appendInterpolation(unsafeRaw: " AND (\(predicate))")
            return query
        }
    }

    /// Sums of `sums` over the rows active at each instant of `at` (started at or before it, ending after it).
    /// Instants on a quarter hour come from one running sum over groups (`granularity`); `exact` (or an instant off a
    /// quarter hour, such as now) reads the rows directly.
    func snapshots(_ scope: Scope, _ predicate: String, sums: [String], at instants: [Int64], exact: Bool = false)
        async throws -> [[Double]]
    {
        let aligned = instants.filter { !exact && $0 % Self.slot == 0 }
        let size = Self.granularity(aligned)
        var results: [Int64: [Double]] = [:]
        if let first = aligned.min(), let last = aligned.max() {
            // Active at the last instant before `t`: started before t, ends at or after t. What started before the
            // first instant is one group (-1).
            let starting = try await grouped(
                scope, predicate + " AND start_at < \(last) AND (active_until IS NULL OR active_until >= \(first))", sums: sums,
                key: "CASE WHEN start_at < \(first) THEN -1 ELSE start_at / \(size) END")
            let ending = try await grouped(
                scope, predicate + " AND start_at < \(last) AND active_until >= \(first) AND active_until < \(last)",
                sums: sums, key: "active_until / \(size)")
            // One sweep: the instants in order, each slot's starts added and ends taken away once.
            let starts = starting.sorted { $0.key < $1.key }
            let ends = ending.sorted { $0.key < $1.key }
            var (nextStart, nextEnd) = (0, 0)
            var values = Array(repeating: 0.0, count: sums.count)
            for instant in aligned.sorted() {
                let cut = instant / size
                while nextStart < starts.count, starts[nextStart].key < cut {
                    for i in values.indices { values[i] += starts[nextStart].value[i] }
                    nextStart += 1
                }
                while nextEnd < ends.count, ends[nextEnd].key < cut {
                    for i in values.indices { values[i] -= ends[nextEnd].value[i] }
                    nextEnd += 1
                }
                results[instant] = values
            }
        }
        for instant in instants where results[instant] == nil {
            results[instant] = try await totals(
                scope, predicate + " AND start_at <= \(instant) AND (active_until IS NULL OR active_until > \(instant))", sums: sums)
        }
        return instants.map { results[$0] ?? [] }
    }

    /// Sums of `sums` over the rows whose `instant` column falls in each interval `[bounds[i], bounds[i+1])`.
    func perInterval(_ scope: Scope, _ predicate: String, sums: [String], instant: String, bounds: [Int64]) async throws
        -> [[Double]]
    {
        guard let first = bounds.first, let last = bounds.last else { return [] }
        let size = Self.granularity(bounds)
        let rows = try await grouped(
            scope, predicate + " AND \(instant) >= \(first) AND \(instant) < \(last)", sums: sums, key: "\(instant) / \(size)")
        var values = Array(repeating: Array(repeating: 0.0, count: sums.count), count: bounds.count - 1)
        for (slot, row) in rows {
            guard let bucket = Self.bucket(of: slot * size, in: bounds) else { continue }
            for i in row.indices { values[bucket][i] += row[i] }
        }
        return values
    }

    /// Sums over the rows whose `instant` falls in `[from, to)`.
    func window(_ scope: Scope, _ predicate: String, sums: [String], instant: String, from: Int64, to: Int64) async throws
        -> [Double]
    {
        try await totals(scope, predicate + " AND \(instant) >= \(from) AND \(instant) < \(to)", sums: sums)
    }

    /// `SELECT keys…, SUM(…)… GROUP BY keys…` (no keys: one row of totals), every sum as a double (0 for none).
    func aggregate(_ scope: Scope, _ predicate: String, sums: [String], by keys: [String]) async throws
        -> [(keys: [Int64], sums: [Double])]
    {
        let selected =
            keys.enumerated().map { "\($0.element) AS k\($0.offset)" }
            + sums.enumerated().map { "CAST(SUM(\($0.element)) AS DOUBLE PRECISION) AS v\($0.offset)" }
        var query = SQLQueryString("SELECT \(unsafeRaw: selected.joined(separator: ", ")) FROM ledger WHERE ")
        query.appendInterpolation(scope.condition(predicate))
        if !keys.isEmpty { query.appendInterpolation(unsafeRaw: " GROUP BY \(keys.joined(separator: ", "))") }
        let rows = try await database.read { [query] sql in try await sql.raw(query).all() }
        return try rows.map { row in
            (
                try keys.indices.map { try row.decode(column: "k\($0)", as: Int64.self) },
                try sums.indices.map { try row.decode(column: "v\($0)", as: Double?.self) ?? 0 }
            )
        }
    }

    /// Sums per value of one key.
    func grouped(_ scope: Scope, _ predicate: String, sums: [String], key: String) async throws -> [(key: Int64, value: [Double])] {
        try await aggregate(scope, predicate, sums: sums, by: [key]).map { ($0.keys[0], $0.sums) }
    }

    /// Sums over every row that matches.
    func totals(_ scope: Scope, _ predicate: String, sums: [String]) async throws -> [Double] {
        try await aggregate(scope, predicate, sums: sums, by: []).first?.sums ?? Array(repeating: 0, count: sums.count)
    }

    /// The interval an instant falls in.
    static func bucket(of instant: Int64, in bounds: [Int64]) -> Int? {
        guard let first = bounds.first, let last = bounds.last, instant >= first, instant < last else { return nil }
        var low = 0
        var high = bounds.count - 1
        while high - low > 1 {
            let middle = (low + high) / 2
            if bounds[middle] <= instant { low = middle } else { high = middle }
        }
        return low
    }

    /// In each interval `[bounds[i], bounds[i+1])`: paid subscriptions whose access ended in it (by `now`) with no paid
    /// period right after, and of those the ones whose next paid period began in the same interval; with the MRR they
    /// took, and MRR lost to downgrades.
    func expiriesPerInterval(_ scope: Scope, bounds: [Int64], now: Int64) async throws
        -> [(expired: Double, cameBack: Double, lostMRR: Double, downgradeMRR: Double)]
    {
        guard let first = bounds.first, let last = bounds.last, bounds.count > 1 else { return [] }
        var result = Array(repeating: (expired: 0.0, cameBack: 0.0, lostMRR: 0.0, downgradeMRR: 0.0), count: bounds.count - 1)
        let ended = " AND active_until >= \(first) AND active_until < \(last) AND active_until <= \(now)"
        // Lapses, keyed by the end's and the next paid period's start's group (-1: none yet).
        let size = Self.granularity(bounds)
        let lapses = try await aggregate(
            scope, Self.paid + ended + " AND (next_start IS NULL OR next_start > active_until)",
            sums: ["1", Self.usd("monthly_price")], by: ["active_until / \(size)", "COALESCE(next_start / \(size), -1)"])
        for lapse in lapses {
            let (end, next) = (lapse.keys[0], lapse.keys[1])
            guard let bucket = Self.bucket(of: end * size, in: bounds) else { continue }
            result[bucket].expired += lapse.sums[0]
            if next >= 0 && Self.bucket(of: next * size, in: bounds) == bucket {
                result[bucket].cameBack += lapse.sums[0]
            } else {
                result[bucket].lostMRR += lapse.sums[1]
            }
        }
        let downgrades = try await perInterval(
            scope, Self.paid + ended + " AND next_start <= active_until AND next_monthly_price < monthly_price",
            sums: [Self.usd("(monthly_price - next_monthly_price)")], instant: "active_until", bounds: bounds)
        for (index, row) in downgrades.enumerated() { result[index].downgradeMRR = row[0] }
        return result
    }

    func churn(_ scope: Scope, days: [CalendarDay], bounds: [Int64], now: Int64) async throws -> [MetricPoint] {
        let starts = Array(bounds.dropLast())
        let actives = try await running(scope, [LedgerSummary.activePaid, LedgerSummary.activeMRR], at: starts)
        let lapses = try await expiriesPerInterval(scope, bounds: bounds, now: now)
        return days.indices.map { i in
            let net = lapses[i].expired - lapses[i].cameBack
            let rate = actives[i][0] > 0 ? net / actives[i][0] : 0
            let revenueRate = actives[i][1] > 0 ? (lapses[i].lostMRR + lapses[i].downgradeMRR) / actives[i][1] : 0
            return MetricPoint(
                start: days[i], value: rate,
                fields: [
                    ("activesAtStart", actives[i][0]), ("expired", lapses[i].expired), ("cameBack", lapses[i].cameBack),
                    ("revenueChurn", revenueRate), ("mrrAtStart", cents(actives[i][1])),
                    ("mrrLost", cents(lapses[i].lostMRR + lapses[i].downgradeMRR)),
                ])
        }
    }

    func trialConversion(_ scope: Scope, _ request: MetricRequest, days: [CalendarDay], bounds: [Int64], now: Int64) async throws
        -> [MetricPoint]
    {
        let counted = request.excludeRefunded ? "next_start IS NOT NULL AND COALESCE(next_refunded, 0) = 0" : "next_start IS NOT NULL"
        let window = request.conversionWindowDays * Self.day
        let values = try await perInterval(
            scope, Self.trial,
            sums: [
                "1", "CASE WHEN \(counted) THEN 1 ELSE 0 END",
                "CASE WHEN \(counted) AND next_start <= end_at + \(window) THEN 1 ELSE 0 END",
                "CASE WHEN next_start IS NULL AND COALESCE(will_renew, 1) = 1 AND active_until > \(now) THEN 1 ELSE 0 END",
            ], instant: "start_at", bounds: bounds)
        return zip(days, values).map { day, v in
            let (trials, converted, inWindow, pending) = (v[0], v[1], v[2], v[3])
            return MetricPoint(
                start: day, value: trials > 0 ? converted / trials : 0,
                fields: [
                    ("trials", trials), ("converted", converted), ("pending", pending), ("abandoned", trials - converted - pending),
                    ("convertedWithinWindow", inWindow), ("conversionWithinWindow", trials > 0 ? inWindow / trials : 0),
                ])
        }
    }

    /// Per currency without a rate: the price per month (× `factor`) of the rows active at `instant`, in its own units.
    func unconvertedActive(_ scope: Scope, column: String, at instant: Int64, factor: Double) async throws -> [String: Double] {
        try await unconverted(
            scope, Self.paid + " AND start_at <= \(instant) AND (active_until IS NULL OR active_until > \(instant))",
            column: column, factor: factor)
    }

    /// Per currency without a rate: gross minus refunds of the purchases in `[from, to)`, in its own units.
    func unconvertedBooked(_ scope: Scope, from: Int64, to: Int64) async throws -> [String: Double] {
        try await unconverted(
            scope, Self.revenue + " AND start_at >= \(from) AND start_at < \(to)", column: "price - COALESCE(refund_amount, 0)",
            factor: 1)
    }

    func unconverted(_ scope: Scope, _ predicate: String, column: String, factor: Double) async throws -> [String: Double] {
        var query = SQLQueryString(
            "SELECT currency, CAST(SUM(\(unsafeRaw: column)) AS DOUBLE PRECISION) AS amount FROM ledger WHERE usd_rate IS NULL AND currency IS NOT NULL AND "
        )
        query.appendInterpolation(scope.condition(predicate))
        query.appendInterpolation(unsafeRaw: " GROUP BY currency")
        let rows = try await database.read { [query] sql in try await sql.raw(query).all() }
        var result: [String: Double] = [:]
        for row in rows {
            let amount = (try row.decode(column: "amount", as: Double?.self) ?? 0) * factor / 1000
            if amount != 0 { result[try row.decode(column: "currency", as: String.self)] = cents(amount) }
        }
        return result
    }
}

/// Money rounded to cents.
func cents(_ value: Double) -> Double { (value * 100).rounded() / 100 }
