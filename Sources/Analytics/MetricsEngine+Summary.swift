import SQLKit
import Storage

/// Sums read from the hourly summary (`LedgerSummary`) where it can answer, from the ledger's rows where it cannot:
/// a storefront filter (the summary is not kept per storefront), an instant or a boundary off the hour (a zone such as
/// India's +5:30), or an engine made with `usesSummary: false`. Both give the same numbers (tests compare them).
extension MetricsEngine {
    typealias Sum = LedgerSummary.Sum

    func summarised(_ scope: Scope) -> Bool { usesSummary && scope.storefront == nil }

    static func isHour(_ instant: Int64) -> Bool { instant % LedgerSummary.hour == 0 }

    static func hourStart(_ instant: Int64) -> Int64 {
        let hour = LedgerSummary.hour
        return instant - ((instant % hour) + hour) % hour
    }

    /// What a sum adds for a ledger row (nothing for a row it does not count), and the rows any of `sums` count.
    static func cell(_ sum: Sum) -> String { "CASE WHEN \(sum.predicate) THEN \(sum.expression) END" }
    static func anyOf(_ sums: [Sum]) -> String {
        var seen: Set<String> = []
        let predicates = sums.map(\.predicate).filter { seen.insert($0).inserted }
        return predicates.map { "(\($0))" }.joined(separator: " OR ")
    }

    // MARK: - Running sums: what is active at an instant

    /// The running `sums` over the rows active at each instant: at an instant on the hour (unless `exact`), started
    /// before it and ending at or after it; otherwise (`exact`, such as now) started at or before it and ending after it.
    func running(_ scope: Scope, _ sums: [Sum], at instants: [Int64], exact: Bool = false) async throws -> [[Double]] {
        let cells = sums.map(Self.cell)
        let rows = Self.anyOf(sums)
        guard summarised(scope) else { return try await snapshots(scope, rows, sums: cells, at: instants, exact: exact) }
        let hours = instants.map(Self.hourStart)
        let atHours = try await summedRunning(scope, sums, at: Array(Set(hours)).sorted())
        var result: [[Double]] = []
        for (instant, hour) in zip(instants, hours) {
            var values = atHours[hour] ?? Array(repeating: 0, count: sums.count)
            if exact || instant != hour {
                // From the hour's start to the instant, from the ledger's rows: what started since and is active at the
                // instant is added; what was active at the hour's start and ended by the instant is taken away.
                let since = try await totals(
                    scope,
                    "(\(rows)) AND start_at >= \(hour) AND start_at <= \(instant) AND (active_until IS NULL OR active_until > \(instant))",
                    sums: cells)
                let gone = try await totals(
                    scope, "(\(rows)) AND start_at < \(hour) AND active_until >= \(hour) AND active_until <= \(instant)", sums: cells)
                for i in values.indices { values[i] += since[i] - gone[i] }
            }
            result.append(values)
        }
        return result
    }

    /// From the summary: the running sums at instants on the hour, in one pass over the hours before the last.
    func summedRunning(_ scope: Scope, _ sums: [Sum], at instants: [Int64]) async throws -> [Int64: [Double]] {
        guard let first = instants.first, let last = instants.last else { return [:] }
        let size = Self.granularity(instants)
        let hoursPerGroup = size / LedgerSummary.hour
        let columns = sums.flatMap { ["\($0.name)_started", "\($0.name)_ended"] }
        // Everything before the first instant is one group (-1).
        let groups = try await summed(
            scope, columns,
            key: "CASE WHEN hour < \(first / LedgerSummary.hour) THEN -1 ELSE hour / \(hoursPerGroup) END",
            hours: nil, last / LedgerSummary.hour)
        var values = Array(repeating: 0.0, count: sums.count)
        var next = 0
        var result: [Int64: [Double]] = [:]
        for instant in instants {
            while next < groups.count, groups[next].key < instant / size {
                for i in values.indices { values[i] += groups[next].value[2 * i] - groups[next].value[2 * i + 1] }
                next += 1
            }
            result[instant] = values
        }
        return result
    }

    // MARK: - Booked sums: what started in an interval

    /// The booked `sums` over the rows that started in each interval `[bounds[i], bounds[i+1])`.
    func booked(_ scope: Scope, _ sums: [Sum], bounds: [Int64]) async throws -> [[Double]] {
        guard summarised(scope), bounds.allSatisfy(Self.isHour), let first = bounds.first, let last = bounds.last else {
            return try await perInterval(scope, Self.anyOf(sums), sums: sums.map(Self.cell), instant: "start_at", bounds: bounds)
        }
        let size = Self.granularity(bounds)
        let groups = try await summed(
            scope, sums.map(\.name), key: "hour / \(size / LedgerSummary.hour)", hours: first / LedgerSummary.hour,
            last / LedgerSummary.hour)
        var values = Array(repeating: Array(repeating: 0.0, count: sums.count), count: bounds.count - 1)
        for (group, row) in groups {
            guard let bucket = Self.bucket(of: group * size, in: bounds) else { continue }
            for i in row.indices { values[bucket][i] += row[i] }
        }
        return values
    }

    /// The booked `sums` over the rows that started in `[from, to)`: the whole hours from the summary, the hours' parts
    /// at either end from the ledger.
    func booked(_ scope: Scope, _ sums: [Sum], from: Int64, to: Int64) async throws -> [Double] {
        let (inner, outer) = (Self.hourStart(from + LedgerSummary.hour - 1), Self.hourStart(to))
        guard summarised(scope), inner < outer else {
            return try await window(scope, Self.anyOf(sums), sums: sums.map(Self.cell), instant: "start_at", from: from, to: to)
        }
        var values = try await booked(scope, sums, bounds: [inner, outer])[0]
        for (start, end) in [(from, inner), (outer, to)] where start < end {
            let part = try await window(scope, Self.anyOf(sums), sums: sums.map(Self.cell), instant: "start_at", from: start, to: end)
            for i in values.indices { values[i] += part[i] }
        }
        return values
    }

    // MARK: - The summary's rows

    /// `SELECT key, SUM(column)…` over the summary's rows of the scope with `firstHour <= hour < lastHour` (its
    /// unfolded differences included), by key in order.
    func summed(_ scope: Scope, _ columns: [String], key: String, hours firstHour: Int64?, _ lastHour: Int64) async throws
        -> [(key: Int64, value: [Double])]
    {
        func sums(_ name: (Int) -> String) -> String {
            columns.indices.map { "CAST(SUM(\(name($0))) AS DOUBLE PRECISION) AS v\($0)" }.joined(separator: ", ")
        }
        var filter = SQLQueryString("app_id = ")
        filter.appendInterpolation(bind: scope.appId)
        filter.appendInterpolation(unsafeRaw: " AND environment = ")
        filter.appendInterpolation(bind: scope.environment)
        for (column, value) in [("product_id", scope.productId), ("group_id", scope.group)] {
            guard let value else { continue }
            filter.appendInterpolation(unsafeRaw: " AND \(column) = ")
            filter.appendInterpolation(bind: value)
        }
        if let firstHour { filter.appendInterpolation(unsafeRaw: " AND hour >= \(firstHour)") }
        filter.appendInterpolation(unsafeRaw: " AND hour < \(lastHour)")
        var query = SQLQueryString("SELECT k, \(unsafeRaw: sums { "v\($0)" }) FROM (")
        query.appendInterpolation(LedgerSummary.summing(select: "\(key) AS k, \(sums { columns[$0] })", where: filter, groupBy: key))
        query.appendInterpolation(unsafeRaw: ") AS summary GROUP BY k ORDER BY k")
        let rows = try await database.read { [query] sql in try await sql.raw(query).all() }
        return try rows.map { row in
            (
                try row.decode(column: "k", as: Int64.self),
                try columns.indices.map { try row.decode(column: "v\($0)", as: Double?.self) ?? 0 }
            )
        }
    }
}
