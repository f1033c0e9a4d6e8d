import Foundation

/// One treatment against the control on one metric.
public struct Comparison: Codable, Hashable, Sendable {
    /// The control's and the treatment's rate or mean.
    public var control: Double
    public var treatment: Double
    /// Relative lift, treatment / control − 1; nil when the control's value is 0, where a relative change is undefined
    /// (`difference` still says how far apart the arms are).
    public var lift: Double?
    /// The lift's confidence interval at 1 − α, by the delta method; nil with the lift.
    public var liftInterval: ClosedRange<Double>?
    /// The absolute difference, treatment − control, defined whatever the control's value.
    public var difference: Double
    /// The difference's confidence interval at 1 − α (unpooled standard error).
    public var differenceInterval: ClosedRange<Double>
    /// The difference's standard error (unpooled), what the chance to beat the control is computed from.
    public var differenceStandardError: Double
    /// The two-sided p-value: the two-proportion z-test, or Welch's t-test for means.
    public var pValue: Double
    /// The test statistic (z or t).
    public var statistic: Double
}

/// A metric's summary in one arm: count, mean and (sample) variance of the per-user values.
public struct ArmSummary: Hashable, Sendable {
    public var count: Int
    public var mean: Double
    public var variance: Double

    public init(count: Int, mean: Double, variance: Double) {
        self.count = count
        self.mean = mean
        self.variance = variance
    }

    /// Bernoulli data: `successes` of `count`.
    public init(successes: Int, count: Int) {
        self.count = count
        mean = count > 0 ? Double(successes) / Double(count) : 0
        variance = mean * (1 - mean)
    }
}

public enum HypothesisTests {
    /// The two-proportion z-test (pooled standard error under H₀) with the delta-method interval of the lift.
    public static func twoProportion(control: ArmSummary, treatment: ArmSummary, alpha: Double = 0.05) -> Comparison {
        let pooled =
            (control.mean * Double(control.count) + treatment.mean * Double(treatment.count)) / Double(control.count + treatment.count)
        let standardError = (pooled * (1 - pooled) * (1 / Double(control.count) + 1 / Double(treatment.count))).squareRoot()
        let z = standardError > 0 ? (treatment.mean - control.mean) / standardError : 0
        let p = 2 * (1 - Distributions.normalCDF(abs(z)))
        let critical = Distributions.normalQuantile(1 - alpha / 2)
        let unpooled = differenceStandardError(control, treatment)
        let difference = treatment.mean - control.mean
        return Comparison(
            control: control.mean, treatment: treatment.mean, lift: relativeLift(control, treatment),
            liftInterval: liftInterval(control, treatment, critical: critical), difference: difference,
            differenceInterval: (difference - critical * unpooled)...(difference + critical * unpooled), differenceStandardError: unpooled,
            pValue: p, statistic: z)
    }

    /// Welch's t-test for a difference in means with unequal variances, and the delta-method interval of the lift
    /// using the Welch–Satterthwaite degrees of freedom.
    public static func welch(control: ArmSummary, treatment: ArmSummary, alpha: Double = 0.05) -> Comparison {
        let vc = control.variance / Double(control.count)
        let vt = treatment.variance / Double(treatment.count)
        let standardError = (vc + vt).squareRoot()
        let t = standardError > 0 ? (treatment.mean - control.mean) / standardError : 0
        let df = welchDegreesOfFreedom(control, treatment)
        let p = standardError > 0 ? Distributions.studentTTwoSidedPValue(t, df: df) : 1
        let critical = Distributions.studentTQuantile(1 - alpha / 2, df: df)
        let difference = treatment.mean - control.mean
        return Comparison(
            control: control.mean, treatment: treatment.mean, lift: relativeLift(control, treatment),
            liftInterval: liftInterval(control, treatment, critical: critical), difference: difference,
            differenceInterval: (difference - critical * standardError)...(difference + critical * standardError),
            differenceStandardError: standardError, pValue: p, statistic: t)
    }

    /// (vc/nc + vt/nt)² / ((vc/nc)²/(nc − 1) + (vt/nt)²/(nt − 1)).
    public static func welchDegreesOfFreedom(_ control: ArmSummary, _ treatment: ArmSummary) -> Double {
        let vc = control.variance / Double(control.count)
        let vt = treatment.variance / Double(treatment.count)
        let denominator = vc * vc / Double(max(control.count - 1, 1)) + vt * vt / Double(max(treatment.count - 1, 1))
        return denominator > 0 ? (vc + vt) * (vc + vt) / denominator : Double(control.count + treatment.count - 2)
    }

    /// treatment / control − 1; nil when the control's value is 0.
    static func relativeLift(_ control: ArmSummary, _ treatment: ArmSummary) -> Double? {
        control.mean != 0 ? treatment.mean / control.mean - 1 : nil
    }

    /// √(vc/nc + vt/nt): the standard error of the difference in means (for proportions, of rates), without pooling.
    static func differenceStandardError(_ control: ArmSummary, _ treatment: ArmSummary) -> Double {
        (control.variance / Double(max(control.count, 1)) + treatment.variance / Double(max(treatment.count, 1))).squareRoot()
    }

    /// Var(mt/mc) ≈ vt/(nt·mc²) + mt²·vc/(nc·mc⁴), the delta method for a ratio of independent means (written so
    /// that a treatment at 0 keeps its interval); nil when the control's value is 0.
    static func liftInterval(_ control: ArmSummary, _ treatment: ArmSummary, critical: Double) -> ClosedRange<Double>? {
        guard control.mean != 0 else { return nil }
        let mc2 = control.mean * control.mean
        let variance =
            treatment.variance / (Double(treatment.count) * mc2)
            + treatment.mean * treatment.mean * control.variance / (Double(control.count) * mc2 * mc2)
        let half = critical * variance.squareRoot()
        let lift = treatment.mean / control.mean - 1
        return (lift - half)...(lift + half)
    }

    /// Users per arm for a two-sided two-proportion test to detect a relative change `relativeMDE` from `baseline`:
    /// n = (z₁₋α/₂·√(2·p̄·q̄) + z₁₋β·√(p₁q₁ + p₂q₂))² / (p₂ − p₁)², rounded up.
    public static func sampleSizePerArm(baseline: Double, relativeMDE: Double, alpha: Double = 0.05, power: Double = 0.8) -> Int? {
        let p1 = baseline
        let p2 = baseline * (1 + relativeMDE)
        guard p1 > 0, p1 < 1, p2 > 0, p2 < 1, p1 != p2, alpha > 0, alpha < 1, power > 0, power < 1 else { return nil }
        let mean = (p1 + p2) / 2
        let a = Distributions.normalQuantile(1 - alpha / 2) * (2 * mean * (1 - mean)).squareRoot()
        let b = Distributions.normalQuantile(power) * (p1 * (1 - p1) + p2 * (1 - p2)).squareRoot()
        let users = ((a + b) * (a + b) / ((p2 - p1) * (p2 - p1))).rounded(.up)
        // A vanishing effect needs more users than exist; say so instead of overflowing.
        guard users.isFinite, users < 1e15 else { return nil }
        return Int(users)
    }

    /// Sample-ratio mismatch: the chi-square goodness-of-fit test of exposure counts against the weights.
    /// `alarm` is p < 0.001.
    public static func sampleRatioMismatch(counts: [Int], weights: [Double]) -> SampleRatioCheck {
        let total = Double(counts.reduce(0, +))
        let weightSum = weights.reduce(0, +)
        guard counts.count == weights.count, counts.count > 1, total > 0, weightSum > 0 else {
            return SampleRatioCheck(chiSquare: 0, pValue: 1, alarm: false)
        }
        var chiSquare = 0.0
        for (count, weight) in zip(counts, weights) {
            let expected = total * weight / weightSum
            guard expected > 0 else { continue }
            chiSquare += (Double(count) - expected) * (Double(count) - expected) / expected
        }
        let p = Distributions.chiSquareSurvival(chiSquare, df: Double(counts.count - 1))
        return SampleRatioCheck(chiSquare: chiSquare, pValue: p, alarm: p < 0.001)
    }

    /// Holm's step-down adjustment: the i-th smallest p-value is multiplied by (m − i + 1), made monotone, capped at 1.
    public static func holm(_ pValues: [Double]) -> [Double] {
        let order = pValues.indices.sorted { pValues[$0] < pValues[$1] }
        var adjusted = [Double](repeating: 1, count: pValues.count)
        var running = 0.0
        for (rank, index) in order.enumerated() {
            running = max(running, min(1, pValues[index] * Double(pValues.count - rank)))
            adjusted[index] = running
        }
        return adjusted
    }

    /// With a flat prior and a normal posterior δ ~ N(μ, σ²) of the difference (treatment − control): the chance
    /// that the treatment beats the control, Φ(μ/σ), and the expected loss of choosing it, E[max(0, −δ)] =
    /// σ·φ(μ/σ) − μ·Φ(−μ/σ).
    public static func chanceToBeatControl(mean: Double, standardDeviation: Double) -> ChanceToBeatControl {
        guard standardDeviation > 0 else {
            return ChanceToBeatControl(chance: mean > 0 ? 1 : mean < 0 ? 0 : 0.5, expectedLoss: max(0, -mean))
        }
        let z = mean / standardDeviation
        return ChanceToBeatControl(
            chance: Distributions.normalCDF(z),
            expectedLoss: standardDeviation * Distributions.normalPDF(z) - mean * Distributions.normalCDF(-z))
    }

    /// The half-width of an asymptotic confidence sequence (Waudby-Smith et al., the conjugate-mixture boundary
    /// GrowthBook documents for its sequential testing), valid however often the result is looked at:
    /// se · √N · √(2(Nρ² + 1)/(N²ρ²) · ln(√(Nρ² + 1)/α)), with ρ² = (−2 ln α + ln(−2 ln α + 1)) / N*, where N is the
    /// total sample size, `se` the fixed-horizon standard error and N* the sample size it is tuned to be tightest at.
    public static func sequentialHalfWidth(standardError: Double, totalCount: Int, alpha: Double = 0.05, tuning: Double = 5000) -> Double {
        let n = Double(totalCount)
        guard n > 0, standardError.isFinite else { return .infinity }
        let rho2 = (-2 * log(alpha) + log(-2 * log(alpha) + 1)) / tuning
        let margin = (2 * (n * rho2 + 1) / (n * n * rho2) * log((n * rho2 + 1).squareRoot() / alpha)).squareRoot()
        return standardError * n.squareRoot() * margin
    }
}

/// The sample-ratio-mismatch test's outcome: χ², its p-value, and whether it alarms (p < 0.001).
public struct SampleRatioCheck: Sendable, Hashable {
    public var chiSquare: Double
    public var pValue: Double
    public var alarm: Bool
}

/// The chance a treatment beats the control, and the expected loss of choosing it.
public struct ChanceToBeatControl: Sendable, Hashable {
    public var chance: Double
    public var expectedLoss: Double
}
