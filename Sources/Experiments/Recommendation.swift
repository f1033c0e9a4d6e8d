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
public struct Recommendation: Codable, Hashable, Sendable {
    public enum Action: String, Codable, Hashable, Sendable {
        case keepRunning, shipVariant, stop
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
        }
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
                if let interval = variant.metrics[metric]?.sequentialCi, interval.count == 2, interval[1] < 0 {
                    return Recommendation(
                        action: .stop, variant: variant.key, cause: .harm,
                        reason: "'\(variant.key)' lowers \(metric == "paid" ? "paying customers" : "revenue per exposed customer"): "
                            + "its always-valid interval of the lift is \(percent(interval[0])) to \(percent(interval[1]))")
                }
            }
        }
        let winners = treatments.filter { variant in
            guard !variant.isControlCheck, let metric = variant.metrics["revenue"], let interval = metric.sequentialCi, interval.count == 2,
                let adjusted = metric.pValueAdjusted
            else { return false }
            return interval[0] > 0 && adjusted < alpha
        }
        if let best = winners.max(by: { ($0.metrics["revenue"]?.lift ?? 0) < ($1.metrics["revenue"]?.lift ?? 0) }),
            let metric = best.metrics["revenue"], let lift = metric.lift, let interval = metric.sequentialCi
        {
            return Recommendation(
                action: .shipVariant, variant: best.key,
                reason: "'\(best.key)' raises revenue per exposed customer by \(percent(lift)) "
                    + "(always-valid interval \(percent(interval[0])) to \(percent(interval[1])), Holm-adjusted p = "
                    + "\(String(format: "%.2g", metric.pValueAdjusted ?? 1)))")
        }
        let exposed = result.variants.reduce(0) { $0 + $1.users }
        return Recommendation(
            action: .keepRunning,
            reason: exposed == 0
                ? "nobody has been exposed yet"
                : "no variant's revenue lift is clear yet (\(exposed) exposed customers): every always-valid interval still contains 0")
    }

    static func percent(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 10
        return (rounded >= 0 ? "+" : "") + "\(rounded)%"
    }
}
