import Foundation

/// One exposed user, as `experiment analyze` reads them: `user_id,variant,exposed_at,trial,paid,revenue`.
public struct ExposedUser: Hashable, Sendable {
    public var userId: String
    public var variant: String
    /// Epoch ms of the first exposure.
    public var exposedAt: Int64
    public var startedTrial: Bool
    public var paid: Bool
    /// Net revenue in USD. Negative only for a refunded payer.
    public var revenue: Double
    /// Whether a payment was refunded, when the caller knows (the ledger does).
    private var knownRefund: Bool?

    public init(
        userId: String, variant: String, exposedAt: Int64, startedTrial: Bool, paid: Bool, revenue: Double, refunded: Bool? = nil
    ) {
        self.userId = userId
        self.variant = variant
        self.exposedAt = exposedAt
        self.startedTrial = startedTrial
        self.paid = paid
        self.revenue = revenue
        self.knownRefund = refunded
    }

    /// Whether a payment was refunded: as the caller said, or else a payer whose net revenue is zero or less.
    public var refunded: Bool { knownRefund ?? (paid && revenue <= 0) }
}

/// The result of one metric in one variant. For the control only `value` is set.
public struct MetricResult: Codable, Hashable, Sendable {
    public var value: Double
    /// Users in the metric's denominator.
    public var count: Int
    /// The relative lift over the control; nil for the control, and when the control's value is 0 (then
    /// `liftUndefinedReason` says so, and `difference` is the comparison).
    public var lift: Double?
    public var ci: [Double]?
    /// Why `lift` is nil although the arms were compared: a relative change from 0 is undefined.
    public var liftUndefinedReason: String?
    /// The absolute difference from the control (treatment − control), in the metric's own unit, and its interval.
    public var difference: Double?
    public var differenceCi: [Double]?
    /// The difference's always-valid interval (what the recommendation reads when the lift is undefined).
    public var sequentialDifferenceCi: [Double]?
    public var pValue: Double?
    /// Holm-adjusted across the treatment variants × the goal metrics (trial, paid, revenue).
    public var pValueAdjusted: Double?
    /// The lift's always-valid interval, for results looked at every day.
    public var sequentialCi: [Double]?
    /// The chance the treatment's value is above the control's: Φ(difference / its standard error).
    public var chanceToBeatControl: Double?
    /// The expected loss of choosing the treatment, in the lift's units (nil when the lift is undefined).
    public var expectedLoss: Double?
}

extension MetricResult {
    /// What `liftUndefinedReason` says when the control's value is 0.
    public static let zeroControlReason = "the control's value is 0: a relative lift is undefined (see difference)"
}

public struct VariantResult: Codable, Hashable, Sendable {
    public var key: String
    public var users: Int
    /// The A/A diagnostic arm: reported, never a winner.
    public var isControlCheck: Bool
    public var metrics: [String: MetricResult]
}

public struct AnalysisResult: Codable, Hashable, Sendable {
    public struct SRM: Codable, Hashable, Sendable {
        public var chiSquare: Double
        public var pValue: Double
        public var alarm: Bool
    }

    public var srm: SRM
    public var variants: [VariantResult]
}

public enum Analysis {
    public struct Options: Sendable {
        public var alpha: Double = 0.05
        /// How long a trial lasts: trial → paid counts only trials that started at least this long before `asOf`.
        public var trialWindowMilliseconds: Int64 = 7 * 86_400_000
        /// When the analysis is made (epoch ms); by default the latest exposure.
        public var asOf: Int64?
        /// Revenue is capped at this percentile of the pooled payers' revenue, so that one whale decides nothing.
        public var revenueCapPercentile: Double = 0.99
        /// The sample size the sequential interval is tuned to be tightest at.
        public var sequentialTuning: Double = 5000

        public init() {}
    }

    /// Goal metrics, corrected together with Holm.
    public static let goalMetrics = ["trial", "paid", "revenue"]

    /// Analyses exposed users per variant against the control. Users of unknown variants are an error the reader
    /// reports; here every user's variant is one of the definition's.
    public static func analyze(_ users: [ExposedUser], experiment: ExperimentDefinition, options: Options = Options()) -> AnalysisResult {
        let keys = experiment.variants.map(\.key)
        var groups: [String: [ExposedUser]] = Dictionary(uniqueKeysWithValues: keys.map { ($0, []) })
        for user in users { groups[user.variant, default: []].append(user) }

        let counts = keys.map { groups[$0]?.count ?? 0 }
        let srm = HypothesisTests.sampleRatioMismatch(counts: counts, weights: experiment.normalisedWeights)
        let asOf = options.asOf ?? users.map(\.exposedAt).max() ?? 0
        let cap = revenueCap(users, percentile: options.revenueCapPercentile)
        let controlKey = experiment.control?.key ?? keys.first ?? ""
        let summaries = Dictionary(
            uniqueKeysWithValues: keys.map {
                ($0, summarise(groups[$0] ?? [], cap: cap, asOf: asOf, window: options.trialWindowMilliseconds))
            })

        var variants: [VariantResult] = []
        for key in keys {
            guard let summary = summaries[key], let control = summaries[controlKey] else { continue }
            var metrics: [String: MetricResult] = [:]
            for (name, arm) in summary {
                guard let base = control[name] else { continue }
                var result = MetricResult(value: arm.summary.mean, count: arm.summary.count)
                if key != controlKey, arm.summary.count > 1, base.summary.count > 1 {
                    let comparison =
                        arm.isProportion
                        ? HypothesisTests.twoProportion(control: base.summary, treatment: arm.summary, alpha: options.alpha)
                        : HypothesisTests.welch(control: base.summary, treatment: arm.summary, alpha: options.alpha)
                    let critical = Distributions.normalQuantile(1 - options.alpha / 2)
                    let totalCount = arm.summary.count + base.summary.count
                    func sequential(_ center: Double, _ standardError: Double) -> [Double] {
                        let half = HypothesisTests.sequentialHalfWidth(
                            standardError: standardError, totalCount: totalCount, alpha: options.alpha, tuning: options.sequentialTuning)
                        return [center - half, center + half]
                    }
                    result.pValue = comparison.pValue
                    result.difference = comparison.difference
                    result.differenceCi = [comparison.differenceInterval.lowerBound, comparison.differenceInterval.upperBound]
                    result.sequentialDifferenceCi = sequential(comparison.difference, comparison.differenceStandardError)
                    result.chanceToBeatControl =
                        HypothesisTests.chanceToBeatControl(
                            mean: comparison.difference, standardDeviation: comparison.differenceStandardError
                        )
                        .chance
                    if let lift = comparison.lift, let interval = comparison.liftInterval {
                        let standardError = (interval.upperBound - lift) / critical
                        result.lift = lift
                        result.ci = [interval.lowerBound, interval.upperBound]
                        result.sequentialCi = sequential(lift, standardError)
                        result.expectedLoss = HypothesisTests.chanceToBeatControl(mean: lift, standardDeviation: standardError).expectedLoss
                    } else {
                        result.liftUndefinedReason = MetricResult.zeroControlReason
                    }
                }
                metrics[name] = result
            }
            variants.append(
                VariantResult(
                    key: key, users: groups[key]?.count ?? 0,
                    isControlCheck: key == ExperimentDefinition.controlCheckKey, metrics: metrics))
        }

        // Holm across treatment variants × goal metrics.
        var slots: [(Int, String)] = []
        var pValues: [Double] = []
        for (index, variant) in variants.enumerated() where variant.key != controlKey {
            for name in goalMetrics {
                if let p = variant.metrics[name]?.pValue {
                    slots.append((index, name))
                    pValues.append(p)
                }
            }
        }
        for ((index, name), adjusted) in zip(slots, HypothesisTests.holm(pValues)) {
            variants[index].metrics[name]?.pValueAdjusted = adjusted
        }
        return AnalysisResult(srm: .init(chiSquare: srm.chiSquare, pValue: srm.pValue, alarm: srm.alarm), variants: variants)
    }

    struct Arm {
        var summary: ArmSummary
        var isProportion: Bool
    }

    /// Every metric of one variant: trial, paid, trialToPaid, refundRate (proportions), revenue and arppu (means).
    static func summarise(_ users: [ExposedUser], cap: Double, asOf: Int64, window: Int64) -> [String: Arm] {
        var trials = 0
        var paid = 0
        var closedTrials = 0
        var closedConversions = 0
        var refunded = 0
        var revenue = Welford()
        var arppu = Welford()
        for user in users {
            if user.startedTrial { trials += 1 }
            if user.paid { paid += 1 }
            if user.refunded { refunded += 1 }
            if user.startedTrial, user.exposedAt + window <= asOf {
                closedTrials += 1
                if user.paid { closedConversions += 1 }
            }
            let capped = min(max(user.revenue, -cap), cap)
            revenue.add(capped)
            if user.paid { arppu.add(capped) }
        }
        return [
            "trial": Arm(summary: ArmSummary(successes: trials, count: users.count), isProportion: true),
            "paid": Arm(summary: ArmSummary(successes: paid, count: users.count), isProportion: true),
            "trialToPaid": Arm(summary: ArmSummary(successes: closedConversions, count: closedTrials), isProportion: true),
            "refundRate": Arm(summary: ArmSummary(successes: refunded, count: paid), isProportion: true),
            "revenue": Arm(summary: revenue.summary, isProportion: false),
            "arppu": Arm(summary: arppu.summary, isProportion: false),
        ]
    }

    /// The pooled percentile of the payers' revenue (nearest rank); infinity when nobody paid.
    static func revenueCap(_ users: [ExposedUser], percentile: Double) -> Double {
        let revenues = users.lazy.filter { $0.revenue > 0 }.map(\.revenue).sorted()
        guard !revenues.isEmpty, percentile < 1 else { return .infinity }
        let rank = Int((percentile * Double(revenues.count)).rounded(.up)) - 1
        return revenues[min(max(rank, 0), revenues.count - 1)]
    }

    /// Mean and sample variance in one pass.
    struct Welford {
        var count = 0
        var mean = 0.0
        var m2 = 0.0

        mutating func add(_ value: Double) {
            count += 1
            let delta = value - mean
            mean += delta / Double(count)
            m2 += delta * (value - mean)
        }

        var summary: ArmSummary {
            ArmSummary(count: count, mean: mean, variance: count > 1 ? m2 / Double(count - 1) : 0)
        }
    }
}
