import Foundation

/// The distribution functions the analysis needs, written from their textbook definitions: the standard normal
/// (through `erfc`), Student's t (through the regularised incomplete beta function) and chi-square (through the
/// regularised incomplete gamma function).
public enum Distributions {
    /// Φ(x), the standard normal CDF.
    public static func normalCDF(_ x: Double) -> Double {
        0.5 * erfc(-x / 2.0.squareRoot())
    }

    /// φ(x), the standard normal density.
    public static func normalPDF(_ x: Double) -> Double {
        exp(-0.5 * x * x) / (2 * Double.pi).squareRoot()
    }

    /// Φ⁻¹(p) for p in (0, 1): Acklam's rational approximation, polished by two Newton steps on Φ.
    public static func normalQuantile(_ p: Double) -> Double {
        guard p > 0 else { return -.infinity }
        guard p < 1 else { return .infinity }
        let a = [
            -3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02,
            -3.066479806614716e+01, 2.506628277459239e+00,
        ]
        let b = [
            -5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
            -1.328068155288572e+01,
        ]
        let c = [
            -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00,
            4.374664141464968e+00, 2.938163982698783e+00,
        ]
        let d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00]
        let low = 0.02425
        var x: Double
        if p < low {
            let q = (-2 * log(p)).squareRoot()
            x =
                (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
        } else if p <= 1 - low {
            let q = p - 0.5
            let r = q * q
            x =
                (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
                / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
        } else {
            let q = (-2 * log(1 - p)).squareRoot()
            x =
                -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
        }
        for _ in 0..<2 {
            let density = normalPDF(x)
            guard density > 0 else { break }
            x -= (normalCDF(x) - p) / density
        }
        return x
    }

    /// Iₓ(a, b), the regularised incomplete beta function, by its continued fraction (modified Lentz).
    public static func regularizedIncompleteBeta(_ x: Double, a: Double, b: Double) -> Double {
        guard x > 0 else { return 0 }
        guard x < 1 else { return 1 }
        let logBeta: Double = lgamma(a + b) - lgamma(a) - lgamma(b)
        let logPowers: Double = a * log(x) + b * log(1 - x)
        let logFront = logBeta + logPowers
        // The continued fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry otherwise.
        if x > (a + 1) / (a + b + 2) {
            return 1 - regularizedIncompleteBeta(1 - x, a: b, b: a)
        }
        let tiny = 1e-300
        var c = 1.0
        var d = 1 - (a + b) * x / (a + 1)
        if abs(d) < tiny { d = tiny }
        d = 1 / d
        var result = d
        for m in 1...500 {
            let m = Double(m)
            var numerator = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
            d = 1 + numerator * d
            if abs(d) < tiny { d = tiny }
            c = 1 + numerator / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            result *= d * c
            numerator = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
            d = 1 + numerator * d
            if abs(d) < tiny { d = tiny }
            c = 1 + numerator / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            result *= delta
            if abs(delta - 1) < 1e-15 { break }
        }
        return exp(logFront) * result / a
    }

    /// P(|T| ≥ |t|) for Student's t with `df` degrees of freedom: I_{df/(df+t²)}(df/2, 1/2).
    public static func studentTTwoSidedPValue(_ t: Double, df: Double) -> Double {
        guard t.isFinite else { return 0 }
        return regularizedIncompleteBeta(df / (df + t * t), a: df / 2, b: 0.5)
    }

    /// The t quantile: the t with P(T ≤ t) = p, by bisection on the CDF (ample for confidence intervals).
    public static func studentTQuantile(_ p: Double, df: Double) -> Double {
        guard p > 0, p < 1 else { return p <= 0 ? -.infinity : .infinity }
        if p < 0.5 { return -studentTQuantile(1 - p, df: df) }
        var low = 0.0
        var high = max(10.0, normalQuantile(p) * 4)
        // Bounded: a degenerate df (0, NaN) must not spin.
        for _ in 0..<64 {
            guard 1 - studentTTwoSidedPValue(high, df: df) / 2 < p else { break }
            high *= 2
        }
        for _ in 0..<200 {
            let middle = (low + high) / 2
            if 1 - studentTTwoSidedPValue(middle, df: df) / 2 < p { low = middle } else { high = middle }
            if high - low < 1e-12 { break }
        }
        return (low + high) / 2
    }

    /// Q(s, x), the upper regularised incomplete gamma function: a series for x < s + 1, a continued fraction above.
    public static func regularizedGammaQ(_ s: Double, _ x: Double) -> Double {
        guard x > 0 else { return 1 }
        let logFront: Double = -x + s * log(x) - lgamma(s)
        if x < s + 1 {
            var sum = 1 / s
            var term = 1 / s
            var n = s
            for _ in 0..<1000 {
                n += 1
                term *= x / n
                sum += term
                if abs(term) < abs(sum) * 1e-16 { break }
            }
            return max(0, 1 - sum * exp(logFront))
        }
        let tiny = 1e-300
        var b = x + 1 - s
        var c = 1 / tiny
        var d = 1 / b
        var result = d
        for i in 1...1000 {
            let an = -Double(i) * (Double(i) - s)
            b += 2
            d = an * d + b
            if abs(d) < tiny { d = tiny }
            c = b + an / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            result *= delta
            if abs(delta - 1) < 1e-15 { break }
        }
        return exp(logFront) * result
    }

    /// P(X ≥ x) for chi-square with `df` degrees of freedom.
    public static func chiSquareSurvival(_ x: Double, df: Double) -> Double {
        regularizedGammaQ(df / 2, x / 2)
    }
}
