import Foundation

/// What to do with a running test, from its analysis, in plain words: keep running, ship a variant, or stop it.
///
/// The rules, in order:
/// 1. **stop: SRM** when the exposure counts do not match the weights (p < 0.001): the delivery is broken and no
///    comparison can be trusted.
/// 2. **stop: harm** when a treatment's *always-valid* (sequential) interval of the lift lies wholly below zero on
///    paying customers or on revenue per exposed customer: it hurts, and looking every day does not make that a false
///    alarm.
/// 3. **shipVariant** when a treatment's sequential interval of the revenue lift lies wholly above zero and its
///    Holm-adjusted p-value is below α; among several, the one with the largest lift. The A/A arm is never shipped.
/// 4. **keepRunning** otherwise.
///
/// A metric whose lift is undefined (the control at 0) is judged by the always-valid interval of its absolute
/// difference instead: only the sign matters to these rules. A test that is no longer running is not judged at all:
/// its recommendation is **stopped**, naming what everyone gets now (the winner shipped, or the control after a roll
/// back).
public struct Recommendation: Codable, Hashable, Sendable {
    public enum Action: String, Codable, Hashable, Sendable {
        case keepRunning, shipVariant, stop
        /// The test is over: `variant` is what everyone is served (the shipped winner, or the control after a roll back).
        case stopped
    }

    public enum StopCause: String, Codable, Hashable, Sendable {
        case srm = "SRM"
        case harm
    }

    public var action: Action
    public var variant: String?
    public var cause: StopCause?
    public var reason: String

    /// `keepRunning`, `shipVariant b`, `stop: SRM`, `stop: harm`.
    public var summary: String {
        switch action {
        case .keepRunning: "keepRunning"
        case .shipVariant: "shipVariant \(variant ?? "")"
        case .stop: "stop: \(cause?.rawValue ?? "")"
        case .stopped: "stopped: \(variant ?? "")"
        }
    }

    /// The recommendation for a test in `status`: a stopped or rolled-back test says so and what everyone gets;
    /// otherwise the analysis decides (`make(_:controlKey:alpha:)`).
    public static func make(
        _ result: AnalysisResult, controlKey: String, alpha: Double = 0.05, status: ExperimentDefinition.Status, winner: String?
    ) -> Recommendation {
        switch status {
        case .stopped:
            let shipped = winner ?? controlKey
            return Recommendation(
                action: .stopped, variant: shipped,
                reason: "the test is stopped and '\(shipped)' is served to everyone; the results keep updating")
        case .rolledBack:
            return Recommendation(
                action: .stopped, variant: controlKey,
                reason: "the test was rolled back and everyone is served the control ('\(controlKey)'); the results keep updating")
        case .draft, .running, .paused:
            return make(result, controlKey: controlKey, alpha: alpha)
        }
    }

    /// A metric's always-valid interval that decides: the lift's, or the absolute difference's when the lift is
    /// undefined (the control at 0).
    static func decidingInterval(_ metric: MetricResult?) -> [Double]? {
        guard let metric else { return nil }
        let interval = metric.sequentialCi ?? metric.sequentialDifferenceCi
        return interval?.count == 2 ? interval : nil
    }

    public static func make(_ result: AnalysisResult, controlKey: String, alpha: Double = 0.05) -> Recommendation {
        if result.srm.alarm {
            return Recommendation(
                action: .stop, cause: .srm,
                reason: String(
                    format: "the exposure counts do not match the weights (χ² = %.2f, p = %.2g): fix the delivery, then restart",
                    result.srm.chiSquare, result.srm.pValue))
        }
        let treatments = result.variants.filter { $0.key != controlKey }
        for variant in treatments {
            for metric in ["paid", "revenue"] {
                if let interval = decidingInterval(variant.metrics[metric]), interval[1] < 0 {
                    let what = variant.metrics[metric]?.sequentialCi == nil ? "difference" : "lift"
                    return Recommendation(
                        action: .stop, variant: variant.key, cause: .harm,
                        reason: "'\(variant.key)' lowers \(metric == "paid" ? "paying customers" : "revenue per exposed customer"): "
                            + "its always-valid interval of the \(what) is \(format(interval[0], what)) to \(format(interval[1], what))")
                }
            }
        }
        let winners = treatments.filter { variant in
            guard !variant.isControlCheck, let metric = variant.metrics["revenue"], let interval = decidingInterval(metric),
                let adjusted = metric.pValueAdjusted
            else { return false }
            return interval[0] > 0 && adjusted < alpha
        }
        if let best = winners.max(by: {
            ($0.metrics["revenue"]?.lift ?? $0.metrics["revenue"]?.difference ?? 0)
                < ($1.metrics["revenue"]?.lift ?? $1.metrics["revenue"]?.difference ?? 0)
        }), let metric = best.metrics["revenue"], let interval = decidingInterval(metric) {
            let what = metric.lift == nil ? "difference" : "lift"
            let change = metric.lift.map(percent) ?? format(metric.difference ?? 0, what)
            return Recommendation(
                action: .shipVariant, variant: best.key,
                reason: "'\(best.key)' raises revenue per exposed customer by \(change) "
                    + "(always-valid interval \(format(interval[0], what)) to \(format(interval[1], what)), Holm-adjusted p = "
                    + "\(String(format: "%.2g", metric.pValueAdjusted ?? 1)))")
        }
        let exposed = result.variants.reduce(0) { $0 + $1.users }
        return Recommendation(
            action: .keepRunning,
            reason: exposed == 0
                ? "nobody has been exposed yet"
                : "no variant's revenue lift is clear yet (\(exposed) exposed customers): every always-valid interval still contains 0")
    }

    /// A lift as a percentage; an absolute difference (revenue per exposed customer, or a rate) as a plain number.
    static func format(_ value: Double, _ what: String) -> String {
        what == "lift" ? percent(value) : (value >= 0 ? "+" : "") + String(format: "%.4g", value)
    }

    static func percent(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 10
        return (rounded >= 0 ? "+" : "") + "\(rounded)%"
    }
}
