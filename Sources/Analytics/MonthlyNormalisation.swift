import Entitlements

/// A subscription period's price normalised to a month, as RevenueCat defines MRR: 1 day ×30, 1 week ×4, 2 weeks ×2,
/// 1 month ×1, 2 months ×½, 3 months ×⅓, 6 months ×⅙, 1 year ×1/12 (and in general 30 per day, 4 per week, 1 per
/// month).
public struct MonthlyNormalisation: Hashable, Sendable {
    /// The share of the period's price that one month carries: `numerator / denominator`.
    public let numerator: Int64
    public let denominator: Int64

    /// The factor of a billing period written as ISO 8601 (`P1M`, `P1Y`, `P1W`, `P3D`); `nil` for a period shorter
    /// than a day or mixing months and days.
    public init?(_ period: ISO8601Duration) {
        switch (period.months, period.days, period.milliseconds) {
        case (let months, 0, 0) where months > 0: (numerator, denominator) = (1, months)
        case (0, let days, 0) where days > 0 && days % 7 == 0: (numerator, denominator) = (4, days / 7)
        case (0, let days, 0) where days > 0: (numerator, denominator) = (30, days)
        default: return nil
        }
    }

    /// The factor of a period known only by its length: the nearest of the standard periods.
    public init?(lengthMilliseconds length: Int64) {
        guard length > 0 else { return nil }
        let days = Double(length) / 86_400_000
        switch days {
        case ..<1.5: (numerator, denominator) = (30, 1)
        case ..<10: (numerator, denominator) = (4, 1)
        case ..<21: (numerator, denominator) = (2, 1)
        case ..<45: (numerator, denominator) = (1, 1)
        case ..<75: (numerator, denominator) = (1, 2)
        case ..<135: (numerator, denominator) = (1, 3)
        case ..<270: (numerator, denominator) = (1, 6)
        default: (numerator, denominator) = (1, 12)
        }
    }

    /// A period of one month: its price is the month's.
    public static let month = MonthlyNormalisation(numerator: 1, denominator: 1)

    private init(numerator: Int64, denominator: Int64) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// `price` per month, rounded half away from zero to the milliunit; a price too large to scale saturates.
    public func monthly(_ price: Int64) -> Int64 {
        let (scaled, overflow) = price.multipliedReportingOverflow(by: numerator)
        guard !overflow else { return price < 0 ? .min : .max }
        let (quotient, remainder) = scaled.quotientAndRemainder(dividingBy: denominator)
        return quotient + (remainder.magnitude * 2 >= denominator.magnitude ? (scaled < 0 ? -1 : 1) : 0)
    }
}
