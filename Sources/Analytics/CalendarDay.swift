import Entitlements

/// A day of the proleptic Gregorian calendar, written `YYYY-MM-DD`: how rates are dated and metric ranges given.
public struct CalendarDay: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Days since 1970-01-01.
    public let daysSinceEpoch: Int64

    public init(daysSinceEpoch: Int64) { self.daysSinceEpoch = daysSinceEpoch }

    /// Reads exactly `YYYY-MM-DD` (years 1000–9999); `nil` for anything else, or a day the month does not have.
    public init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), year >= 1000,
            (1...12).contains(month), day >= 1, day <= CivilCalendar.daysInMonth(year: year, month: month)
        else { return nil }
        daysSinceEpoch = CivilCalendar.days(year: year, month: month, day: day)
    }

    /// The UTC day an instant falls on.
    public init(containing milliseconds: Int64) {
        let (quotient, remainder) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
        daysSinceEpoch = remainder < 0 ? quotient - 1 : quotient
    }

    public var startMilliseconds: Int64 { daysSinceEpoch * 86_400_000 }

    public func adding(days: Int64) -> CalendarDay { CalendarDay(daysSinceEpoch: daysSinceEpoch + days) }

    /// The first day of this day's month, `months` months later (earlier when negative).
    public func startOfMonth(addingMonths months: Int64 = 0) -> CalendarDay {
        let (year, month, _) = components
        let (years, monthIndex) = (year * 12 + month - 1 + months).quotientAndRemainder(dividingBy: 12)
        let (y, m) = monthIndex < 0 ? (years - 1, monthIndex + 12) : (years, monthIndex)
        return CalendarDay(daysSinceEpoch: CivilCalendar.days(year: y, month: m + 1, day: 1))
    }

    public var components: (year: Int64, month: Int64, day: Int64) { CivilCalendar.civil(days: daysSinceEpoch) }

    public var description: String {
        let (year, month, day) = components
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day))"
    }

    public static func < (a: CalendarDay, b: CalendarDay) -> Bool { a.daysSinceEpoch < b.daysSinceEpoch }
}
