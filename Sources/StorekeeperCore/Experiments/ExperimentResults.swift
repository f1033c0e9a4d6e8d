import AppStore
import Experiments
import Foundation
import Storage

/// An experiment's results: per variant, what its exposed customers did after their first exposure, the statistics,
/// and a recommendation.
public struct ExperimentResults: Sendable, Encodable {
    /// One variant's totals over its exposed customers (each person once).
    public struct Arm: Sendable, Encodable, Hashable {
        public var key: String
        public var exposed: Int
        public var trials: Int
        public var paid: Int
        public var refunded: Int
        public var grossUSD: Double
        public var refundsUSD: Double
        /// Estimated proceeds net of refunds (the ledger's commission and tax).
        public var proceedsUSD: Double
        /// Customers with revenue in a currency that has no rate: counted as payers, their revenue left out of the USD.
        public var unconvertedCustomers: Int
    }

    public var experiment: String
    public var phase: Int
    public var status: String
    public var environment: String
    /// Days after the first exposure that count; nil: no end.
    public var windowDays: Int?
    public var asOf: Int64
    public var arms: [Arm]
    /// Each treatment's lift over the control among the customers exposed up to each day (their outcomes as of now):
    /// how the estimate settled as exposures accrued.
    public var cumulative: [CumulativePoint]
    public var analysis: AnalysisResult
    public var recommendation: Recommendation
}

/// One day of ``ExperimentResults/cumulative``.
public struct CumulativePoint: Sendable, Encodable, Hashable {
    /// The UTC day's start, epoch ms.
    public var day: Int64
    public var variant: String
    public var exposed: Int
    /// Relative to the control's; nil while the control has none.
    public var paidLift: Double?
    public var revenueLift: Double?
}

/// Joins the exposures of an experiment's current phase with the money ledger and runs the engine's analysis.
public struct ExperimentResultsReader: Sendable {
    let database: StorageDatabase
    let clock: @Sendable () -> Date

    public static let defaultWindowDays = 14
    static let windowDays = 1...3650

    /// `window`: days (`14` by default) or `unbounded`.
    public static func window(_ text: String?) throws(CoreError) -> Int? {
        guard let text else { return defaultWindowDays }
        if text == "unbounded" { return nil }
        guard let days = Int(text), windowDays.contains(days) else {
            throw .invalidInput(field: "window", "window is a number of days from 1 to 3650, or 'unbounded'")
        }
        return days
    }

    public func results(_ key: String, app: AppRuntime, environment: Environment, windowDays: Int?) async throws -> ExperimentResults {
        let day: Int64 = 86_400_000
        let window = windowDays.map { Int64($0) * day }
        let (record, countRows, outcomes) = try await database.reading { session in
            guard let record = try await session.experiments(app: app.id, key: key).first else {
                throw CoreError.notFound("no experiment '\(key)'")
            }
            let counts = try await session.exposureCounts(
                app: app.id, experiment: key, phase: record.phase, environment: environment.rawValue)
            let outcomes = try await session.exposedOutcomes(
                app: app.id, experiment: key, phase: record.phase, environment: environment.rawValue, window: window)
            return (record, counts, outcomes)
        }
        let definition = try ServingCatalog.definition(record)
        let now = clock().millisecondsSince1970
        var counts: [String: Int] = [:]
        for row in countRows { counts[row.variant, default: 0] += row.count }
        let known = Set(definition.variants.map(\.key))
        var arms = Dictionary(
            uniqueKeysWithValues: definition.variants.map {
                (
                    $0.key,
                    ExperimentResults.Arm(
                        key: $0.key, exposed: counts[$0.key] ?? 0, trials: 0, paid: 0, refunded: 0, grossUSD: 0, refundsUSD: 0,
                        proceedsUSD: 0,
                        unconvertedCustomers: 0)
                )
            })
        var users: [ExposedUser] = []
        users.reserveCapacity(counts.values.reduce(0, +))
        var active: [String: Int] = [:]
        for outcome in outcomes where known.contains(outcome.variant) {
            active[outcome.variant, default: 0] += 1
            let net = outcome.grossUSD - outcome.refundsUSD
            users.append(
                ExposedUser(
                    userId: outcome.customerId, variant: outcome.variant, exposedAt: outcome.exposedAt, startedTrial: outcome.startedTrial,
                    paid: outcome.paid, revenue: net, refunded: outcome.refunded))
            arms[outcome.variant]?.trials += outcome.startedTrial ? 1 : 0
            arms[outcome.variant]?.paid += outcome.paid ? 1 : 0
            arms[outcome.variant]?.refunded += outcome.refunded ? 1 : 0
            arms[outcome.variant]?.grossUSD += outcome.grossUSD
            arms[outcome.variant]?.refundsUSD += outcome.refundsUSD
            arms[outcome.variant]?.proceedsUSD += outcome.proceedsUSD
            arms[outcome.variant]?.unconvertedCustomers += outcome.unconverted ? 1 : 0
        }
        // Everyone else was exposed and did nothing in the window: zero of everything (their exposure instant matters
        // only to trials, and they started none).
        for (variant, count) in counts where known.contains(variant) {
            let idle = max(count - (active[variant] ?? 0), 0)
            users.append(
                contentsOf: repeatElement(
                    ExposedUser(userId: "", variant: variant, exposedAt: 0, startedTrial: false, paid: false, revenue: 0), count: idle))
        }
        var options = Analysis.Options()
        options.asOf = now
        options.trialWindowMilliseconds = window ?? Int64(Self.defaultWindowDays) * day
        let analysis = Analysis.analyze(users, experiment: definition, options: options)
        let recommendation = Recommendation.make(
            analysis, controlKey: definition.control?.key ?? "", alpha: options.alpha, status: definition.status, winner: definition.winner)
        return ExperimentResults(
            experiment: key, phase: record.phase, status: record.status, environment: environment.rawValue, windowDays: windowDays,
            asOf: now, arms: definition.variants.compactMap { arms[$0.key] },
            cumulative: Self.cumulative(countRows, outcomes, definition: definition), analysis: analysis, recommendation: recommendation)
    }

    /// Per day of first exposure, each treatment's lift in paying customers and in net revenue per exposed customer,
    /// over the customers exposed up to that day.
    static func cumulative(
        _ counts: [(variant: String, day: Int64, count: Int)], _ outcomes: [ExposedOutcome], definition: ExperimentDefinition
    ) -> [CumulativePoint] {
        let day: Int64 = 86_400_000
        guard let control = definition.control?.key else { return [] }
        let days = Set(counts.map(\.day)).sorted()
        let sortedOutcomes = outcomes.sorted { $0.exposedAt < $1.exposedAt }
        var exposed: [String: Int] = [:]
        var paid: [String: Int] = [:]
        var revenue: [String: Double] = [:]
        var next = 0
        var points: [CumulativePoint] = []
        for current in days {
            for row in counts where row.day == current { exposed[row.variant, default: 0] += row.count }
            while next < sortedOutcomes.count, sortedOutcomes[next].exposedAt / day <= current {
                let outcome = sortedOutcomes[next]
                if outcome.paid { paid[outcome.variant, default: 0] += 1 }
                revenue[outcome.variant, default: 0] += outcome.grossUSD - outcome.refundsUSD
                next += 1
            }
            func lift(_ variant: String, _ value: (String) -> Double) -> Double? {
                guard let n = exposed[variant], n > 0, let c = exposed[control], c > 0 else { return nil }
                let base = value(control) / Double(c)
                return base > 0 ? value(variant) / Double(n) / base - 1 : nil
            }
            for variant in definition.variants where variant.key != control {
                points.append(
                    CumulativePoint(
                        day: current * day, variant: variant.key, exposed: exposed[variant.key] ?? 0,
                        paidLift: lift(variant.key) { Double(paid[$0] ?? 0) }, revenueLift: lift(variant.key) { revenue[$0] ?? 0 }))
            }
        }
        return points
    }
}
