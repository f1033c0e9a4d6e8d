import Experiments
import Foundation
import Testing

/// The statistics against textbook values, to 1e-6. Where a reference is not an exact identity it was computed
/// with SciPy 1.17 (`scipy.stats`), from the same formula the comment names.
@Suite struct StatisticsTests {
    func close(_ a: Double, _ b: Double, _ tolerance: Double = 1e-6) -> Bool { abs(a - b) <= tolerance }

    @Test func normal() {
        // Φ(1.96) = 0.97500210485177952 (norm.cdf); Φ⁻¹(0.975) = 1.959963984540054; Φ⁻¹(0.8) = 0.8416212335729143.
        #expect(close(Distributions.normalCDF(1.96), 0.9750021048517795, 1e-12))
        #expect(close(Distributions.normalCDF(0), 0.5, 1e-15))
        #expect(close(Distributions.normalQuantile(0.975), 1.959963984540054, 1e-9))
        #expect(close(Distributions.normalQuantile(0.8), 0.8416212335729143, 1e-9))
        // The tail branch: Φ⁻¹(1e-6) = −4.753424308822899.
        #expect(close(Distributions.normalQuantile(1e-6), -4.753424308822899, 1e-7))
    }

    @Test func studentT() {
        // df = 1 is the Cauchy distribution: P(|T| ≥ t) = 1 − 2·atan(t)/π exactly.
        #expect(close(Distributions.studentTTwoSidedPValue(1, df: 1), 0.5, 1e-12))
        #expect(close(Distributions.studentTTwoSidedPValue(3, df: 1), 1 - 2 * atan(3) / Double.pi, 1e-12))
        // df = 2: P(|T| ≥ t) = 1 − t/√(2 + t²) exactly.
        #expect(close(Distributions.studentTTwoSidedPValue(1.5, df: 2), 1 - 1.5 / (2 + 2.25).squareRoot(), 1e-12))
        // The 97.5% quantile of t(10) is 2.228138851986274 (t.ppf), so its two-sided p-value is 0.05.
        #expect(close(Distributions.studentTTwoSidedPValue(2.228138851986274, df: 10), 0.05, 1e-9))
        #expect(close(Distributions.studentTQuantile(0.975, df: 10), 2.228138851986274, 1e-7))
        // A degenerate df returns (not a number) instead of spinning.
        _ = Distributions.studentTQuantile(0.975, df: 0)
        _ = Distributions.studentTQuantile(0.975, df: .nan)
        // A fractional df: 2·t.sf(1.5, 3.7) = 0.2135981692020135.
        #expect(close(Distributions.studentTTwoSidedPValue(1.5, df: 3.7), 0.2135981692020135))
        // The incomplete beta on its own: beta.cdf(0.3, 2.5, 4) = 0.3521975859067672.
        #expect(close(Distributions.regularizedIncompleteBeta(0.3, a: 2.5, b: 4), 0.3521975859067672, 1e-9))
    }

    @Test func chiSquare() {
        // df = 2 is exponential: P(X ≥ x) = e^(−x/2) exactly.
        #expect(close(Distributions.chiSquareSurvival(5, df: 2), exp(-2.5), 1e-12))
        // The 95% point of χ²(1) is 3.841458820694124 = 1.959963984540054².
        #expect(close(Distributions.chiSquareSurvival(3.841458820694124, df: 1), 0.05, 1e-9))
        // chi2.sf(12.5, 3) = 0.005852662593326735 (series branch); chi2.sf(40, 30) = 0.10486428110798468 (fraction).
        #expect(close(Distributions.chiSquareSurvival(12.5, df: 3), 0.005852662593326735, 1e-9))
        #expect(close(Distributions.chiSquareSurvival(40, df: 30), 0.10486428110798468, 1e-9))
    }

    /// 200/10,000 against 300/10,000 (2% → 3%): pooled p̄ = 0.025, se = √(p̄q̄·2/10,000) = 0.0022079,
    /// z = 0.01/se = 4.529108136578382, p = 2·norm.sf(z) = 5.923317990312188e-06. Lift 0.5; delta-method
    /// variance 1.5²·(0.97/300 + 0.98/200)... giving [0.2348609866151296, 0.7651390133848703].
    @Test func twoProportionZTest() {
        let result = HypothesisTests.twoProportion(
            control: ArmSummary(successes: 200, count: 10_000),
            treatment: ArmSummary(successes: 300, count: 10_000))
        #expect(close(result.statistic, 4.529108136578382))
        #expect(close(result.pValue, 5.923317990312188e-06, 1e-9))
        #expect(close(result.lift ?? .nan, 0.5, 1e-12))
        #expect(close(result.liftInterval?.lowerBound ?? .nan, 0.2348609866151296))
        #expect(close(result.liftInterval?.upperBound ?? .nan, 0.7651390133848703))
        // The difference 0.01 with the unpooled se √(0.02·0.98/10,000 + 0.03·0.97/10,000) = 0.0022068076490713907.
        #expect(close(result.difference, 0.01, 1e-12))
        #expect(close(result.differenceStandardError, 0.0022068076490713907, 1e-12))
        #expect(close(result.differenceInterval.lowerBound, 0.01 - 1.959963984540054 * 0.0022068076490713907, 1e-9))
    }

    /// Means 10 (var 25, n 400) and 11 (var 36, n 350): t = 1/√(25/400 + 36/350) = 2.4591698190048006,
    /// Welch–Satterthwaite df = 681.7999436582159, p = 2·t.sf(t, df) = 0.014173186947729484.
    @Test func welchTTest() {
        let control = ArmSummary(count: 400, mean: 10, variance: 25)
        let treatment = ArmSummary(count: 350, mean: 11, variance: 36)
        #expect(close(HypothesisTests.welchDegreesOfFreedom(control, treatment), 681.7999436582159, 1e-6))
        let result = HypothesisTests.welch(control: control, treatment: treatment)
        #expect(close(result.statistic, 2.4591698190048006))
        #expect(close(result.pValue, 0.014173186947729484))
        #expect(result.liftInterval?.contains(0.1) == true && result.liftInterval?.contains(0) == false)
    }

    /// The article's 2% → 3% (a 50% relative lift) at α = 0.05 and 80% power: 3825.15 → 3,826 users per arm.
    @Test func sampleSize() {
        #expect(HypothesisTests.sampleSizePerArm(baseline: 0.02, relativeMDE: 0.5) == 3826)
        #expect(HypothesisTests.sampleSizePerArm(baseline: 0.02, relativeMDE: 0) == nil)
        #expect(HypothesisTests.sampleSizePerArm(baseline: 0.8, relativeMDE: 0.5) == nil)
        #expect(HypothesisTests.sampleSizePerArm(baseline: 0.5, relativeMDE: 1e-12) == nil)
    }

    /// 52/48 of 20,000 against 50/50: χ² = (400² + 400²)/10,000 = 32, p = chi2.sf(32, 1) = 1.5417257900280013e-08.
    @Test func sampleRatioMismatch() {
        let skewed = HypothesisTests.sampleRatioMismatch(counts: [10_400, 9_600], weights: [0.5, 0.5])
        #expect(close(skewed.chiSquare, 32, 1e-9))
        #expect(close(skewed.pValue, 1.5417257900280013e-08, 1e-12))
        #expect(skewed.alarm)
        let fine = HypothesisTests.sampleRatioMismatch(counts: [10_040, 9_960], weights: [0.5, 0.5])
        #expect(!fine.alarm)
    }

    @Test func holm() {
        // m = 4: sorted 0.01·4, 0.02·3, 0.03·2, 0.5·1, made monotone.
        #expect(HypothesisTests.holm([0.03, 0.01, 0.5, 0.02]).map { ($0 * 1e9).rounded() / 1e9 } == [0.06, 0.04, 0.5, 0.06])
    }

    @Test func chanceToBeatControl() {
        let even = HypothesisTests.chanceToBeatControl(mean: 0, standardDeviation: 1)
        #expect(close(even.chance, 0.5, 1e-12))
        // E[max(0, −δ)] for δ ~ N(0, 1) is φ(0) = 1/√(2π).
        #expect(close(even.expectedLoss, 1 / (2 * Double.pi).squareRoot(), 1e-12))
        #expect(close(HypothesisTests.chanceToBeatControl(mean: 1.96, standardDeviation: 1).chance, 0.9750021048517795, 1e-12))
    }

    @Test func sequentialIntervalIsWiderThanTheFixedOne() {
        let standardError = 0.01
        let fixed = 1.959963984540054 * standardError
        for n in [1_000, 5_000, 20_000, 100_000] {
            #expect(HypothesisTests.sequentialHalfWidth(standardError: standardError, totalCount: n) > fixed)
        }
    }
}
