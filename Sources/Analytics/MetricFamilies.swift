import Storage

/// One interval's sums of the ledger (or its hourly summary), read by the sum they are of rather than by position.
struct SummedValues {
    private let values: [String: Double]

    init(_ sums: [LedgerSummary.Sum], _ row: [Double]) {
        values = Dictionary(zip(sums.map(\.name), row), uniquingKeysWith: { first, _ in first })
    }

    subscript(_ sum: LedgerSummary.Sum) -> Double { values[sum.name] ?? 0 }
}

/// What a series is computed over: its scope, the intervals that have begun (their first days and boundaries), the
/// instants its point-in-time values are read at (each interval's end, or now), and the request.
struct SeriesFrame {
    let scope: MetricsEngine.Scope
    let request: MetricRequest
    let days: [CalendarDay]
    let bounds: [Int64]
    let ends: [Int64]
    let now: Int64
}

/// The metrics read at an instant from running sums: MRR and ARR, active subscriptions, active trials.
struct RunningMetrics {
    static let metrics: Set<Metric> = [.mrr, .arr, .activeSubscriptions, .activeTrials]
    let engine: MetricsEngine

    func fill(_ series: inout MetricSeries, _ frame: SeriesFrame) async throws {
        switch series.metric {
        case .mrr, .arr:
            let factor: Double = series.metric == .arr ? 12 : 1
            let rows = try await values([LedgerSummary.activeMRR, LedgerSummary.activeMRRProceeds], frame)
            series.points = zip(frame.days, rows).map { day, row in
                let gross = cents(row[LedgerSummary.activeMRR] * factor)
                return MetricPoint(
                    start: day, value: gross,
                    fields: [("gross", gross), ("proceeds", cents(row[LedgerSummary.activeMRRProceeds] * factor))])
            }
            series.unconverted = try await engine.unconvertedActive(
                frame.scope, column: "monthly_price", at: frame.ends.last ?? frame.now, factor: factor)
            series.estimated = ["proceeds"]
        case .activeSubscriptions:
            let rows = try await values([LedgerSummary.activePaid, LedgerSummary.activePaidRenewOff], frame)
            series.points = zip(frame.days, rows).map { day, row in
                let active = row[LedgerSummary.activePaid]
                let renewOff = row[LedgerSummary.activePaidRenewOff]
                return MetricPoint(start: day, value: active, fields: [("autoRenewOn", active - renewOff), ("autoRenewOff", renewOff)])
            }
        default:
            let rows = try await values([LedgerSummary.activeTrials], frame)
            series.points = zip(frame.days, rows).map { MetricPoint(start: $0, value: $1[LedgerSummary.activeTrials]) }
        }
    }

    private func values(_ sums: [LedgerSummary.Sum], _ frame: SeriesFrame) async throws -> [SummedValues] {
        try await engine.running(frame.scope, sums, at: frame.ends).map { SummedValues(sums, $0) }
    }
}

/// The metrics summed over each interval, by the purchase's start: new trials, new paid subscriptions, revenue and
/// the refund rate.
struct BookedMetrics {
    static let metrics: Set<Metric> = [.newTrials, .newPaidSubscriptions, .revenue, .refundRate]
    let engine: MetricsEngine

    func fill(_ series: inout MetricSeries, _ frame: SeriesFrame) async throws {
        switch series.metric {
        case .newTrials:
            let rows = try await values([LedgerSummary.trialsStarted], frame)
            series.points = zip(frame.days, rows).map { MetricPoint(start: $0, value: $1[LedgerSummary.trialsStarted]) }
        case .newPaidSubscriptions:
            let rows = try await values([LedgerSummary.acquiredNew, LedgerSummary.acquiredByConversion, LedgerSummary.acquiredBack], frame)
            series.points = zip(frame.days, rows).map { day, row in
                let new = row[LedgerSummary.acquiredNew]
                let converted = row[LedgerSummary.acquiredByConversion]
                let back = row[LedgerSummary.acquiredBack]
                return MetricPoint(
                    start: day, value: new + converted + back,
                    fields: [("new", new), ("trialConversion", converted), ("resubscription", back)])
            }
        case .revenue:
            let sums = [
                LedgerSummary.gross, LedgerSummary.refunds, LedgerSummary.netProceeds, LedgerSummary.newGross, LedgerSummary.renewalGross,
            ]
            let rows = try await values(sums, frame)
            series.points = zip(frame.days, rows).map { day, row in
                let gross = row[LedgerSummary.gross]
                let refunds = row[LedgerSummary.refunds]
                return MetricPoint(
                    start: day, value: cents(gross - refunds),
                    fields: [
                        ("gross", cents(gross)), ("refunds", cents(refunds)), ("net", cents(gross - refunds)),
                        ("proceeds", cents(row[LedgerSummary.netProceeds])), ("newGross", cents(row[LedgerSummary.newGross])),
                        ("renewalGross", cents(row[LedgerSummary.renewalGross])),
                    ])
            }
            series.unconverted = try await engine.unconvertedBooked(
                frame.scope, from: frame.bounds[0], to: frame.bounds[frame.bounds.count - 1])
            series.estimated = ["proceeds"]
        default:
            let rows = try await values(
                [LedgerSummary.sales, LedgerSummary.salesRefunded, LedgerSummary.gross, LedgerSummary.refunds], frame)
            series.points = zip(frame.days, rows).map { day, row in
                let sales = row[LedgerSummary.sales]
                let gross = row[LedgerSummary.gross]
                return MetricPoint(
                    start: day, value: sales > 0 ? row[LedgerSummary.salesRefunded] / sales : 0,
                    fields: [
                        ("transactions", sales), ("refunded", row[LedgerSummary.salesRefunded]),
                        ("revenueRate", gross > 0 ? row[LedgerSummary.refunds] / gross : 0),
                    ])
            }
        }
    }

    private func values(_ sums: [LedgerSummary.Sum], _ frame: SeriesFrame) async throws -> [SummedValues] {
        try await engine.booked(frame.scope, sums, bounds: frame.bounds).map { SummedValues(sums, $0) }
    }
}

/// The metrics of cohorts followed over time: trial conversion, churn, free trials, retention, lifetime value,
/// billing issues and refund requests, each with the note that says how its cohorts are formed.
struct CohortMetrics {
    let engine: MetricsEngine

    func fill(_ series: inout MetricSeries, _ frame: SeriesFrame) async throws {
        let (scope, days, bounds, now) = (frame.scope, frame.days, frame.bounds, frame.now)
        switch series.metric {
        case .trialConversion:
            series.points = try await engine.trialConversion(scope, frame.request, days: days, bounds: bounds, now: now)
            series.notes.append(
                "cohorts by trial start: converted + pending + abandoned = trials; convertedWithinWindow counts conversions within \(frame.request.conversionWindowDays) days of the trial's end"
            )
        case .churn:
            series.points = try await engine.churn(scope, days: days, bounds: bounds, now: now)
        case .freeTrials:
            series.points = try await engine.freeTrials(scope, days: days, bounds: bounds, now: now)
            series.notes.append(
                "cohorts by trial start: converted on time + after a billing issue = converted; averageDaysToCancel is from the trial's start to auto-renew turned off"
            )
        case .retention:
            series.points = try await engine.retention(scope, days: days, bounds: bounds, now: now)
            series.notes.append(
                "cohorts by the start of paying (renewal 0); renewalN is the share that paid renewal n of the eligibleN whose period n−1 had ended by now"
            )
        case .ltv:
            (series.points, series.unconverted) = try await engine.lifetimeValue(scope, days: days, bounds: bounds, now: now)
            series.notes.append(
                "cohorts by the day customers were first seen; a window counts only the customers whose window has passed (customersDayN)"
            )
        case .billing:
            series.points = try await engine.billing(scope, days: days, bounds: bounds)
            series.notes.append(
                "cohorts by the start of a billing issue: recovered on time (within a day), within the grace period, or in billing retry; lost when the subscription expired first"
            )
        default:
            series.points = try await engine.refundRequests(scope, days: days, bounds: bounds)
            series.notes.append(
                "by the day Apple asked (CONSUMPTION_REQUEST); granted and declined are Apple's decisions so far; shareGrantedByOurAnswer is granted after our answer preferred a grant ÷ granted"
            )
            if scope.group != nil || scope.storefront != nil { series.notes.append("refund requests are filtered by product only") }
        }
    }
}
