/// An ISO 8601 duration such as `P1M`, `P1Y`, `P7D`, `P1W` or `PT12H`, as App Store Connect and the catalog write periods.
///
/// Years and months are calendar units: they are added on the proleptic Gregorian calendar in UTC, and a day that does
/// not exist in the target month is clamped to its last day (31 January + `P1M` = 28 or 29 February), the way the App
/// Store renews monthly subscriptions bought on the 31st.
public struct ISO8601Duration: Hashable, Sendable, Codable, CustomStringConvertible {
    public var months: Int64
    public var days: Int64
    public var milliseconds: Int64
    /// The text it was read from, kept so that it encodes back unchanged.
    public let text: String

    public init(_ text: String) throws(CatalogError) {
        guard let parsed = Self.parse(text) else {
            throw CatalogError("'\(text)' is not an ISO 8601 duration such as P1M, P1Y, P2W, P3D or PT12H")
        }
        self = parsed
    }

    private init(months: Int64, days: Int64, milliseconds: Int64, text: String) {
        self.months = months
        self.days = days
        self.milliseconds = milliseconds
        self.text = text
    }

    public var description: String { text }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let parsed = Self.parse(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(text)' is not an ISO 8601 duration such as P1M, P1Y, P2W, P3D or PT12H")
        }
        self = parsed
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }

    /// Whether the duration is longer than nothing.
    public var isPositive: Bool { months > 0 || days > 0 || milliseconds > 0 }

    static func parse(_ text: String) -> ISO8601Duration? {
        var bytes = Array(text.utf8)[...]
        guard bytes.count <= 40, bytes.popFirst() == UInt8(ascii: "P"), !bytes.isEmpty else { return nil }
        var months: Int64 = 0
        var days: Int64 = 0
        var milliseconds: Int64 = 0
        var inTime = false
        var sawUnit = false
        var usedUnits = Set<UInt8>()
        while let first = bytes.first {
            if first == UInt8(ascii: "T") {
                guard !inTime else { return nil }
                inTime = true
                bytes.removeFirst()
                guard !bytes.isEmpty else { return nil }
                continue
            }
            var number: Int64 = 0
            var digits = 0
            while let byte = bytes.first, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                number = number * 10 + Int64(byte - UInt8(ascii: "0"))
                digits += 1
                bytes.removeFirst()
                guard digits <= 6 else { return nil }
            }
            guard digits > 0, let unit = bytes.popFirst() else { return nil }
            let key = inTime ? unit &+ 128 : unit
            guard usedUnits.insert(key).inserted else { return nil }
            switch (inTime, unit) {
            case (false, UInt8(ascii: "Y")): months += number * 12
            case (false, UInt8(ascii: "M")): months += number
            case (false, UInt8(ascii: "W")): days += number * 7
            case (false, UInt8(ascii: "D")): days += number
            case (true, UInt8(ascii: "H")): milliseconds += number * 3_600_000
            case (true, UInt8(ascii: "M")): milliseconds += number * 60_000
            case (true, UInt8(ascii: "S")): milliseconds += number * 1000
            default: return nil
            }
            sawUnit = true
        }
        guard sawUnit else { return nil }
        return ISO8601Duration(months: months, days: days, milliseconds: milliseconds, text: text)
    }

    /// Instants further from 1970 than this (about the year 250,000) are no dates: calendar arithmetic stops there.
    static let calendarLimit: Int64 = 8_000_000_000_000_000

    /// The instant this duration after `start` (epoch ms, UTC). Beyond ±``calendarLimit`` the result saturates
    /// instead of overflowing.
    public func added(to start: Int64) -> Int64 {
        guard start > -Self.calendarLimit, start < Self.calendarLimit else { return start > 0 ? .max : start }
        var result = start
        if months != 0 {
            result = CivilCalendar.addingMonths(months, to: result)
        }
        let total = result.addingReportingOverflow(days &* CivilCalendar.millisecondsPerDay &+ milliseconds)
        return total.overflow ? .max : min(total.partialValue, .max)
    }
}

/// Proleptic Gregorian calendar arithmetic in UTC on epoch milliseconds, with no Foundation calendar (which is slow and
/// reads the process's locale). The day count follows from the 400-year cycle of 146,097 days. Public for the days
/// `Analytics` reads and writes.
public enum CivilCalendar {
    public static let millisecondsPerDay: Int64 = 86_400_000

    /// Days since 1970-01-01 of a civil date.
    public static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        // Count years from March, so that the leap day ends a year.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day count since 1970-01-01.
    public static func civil(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    public static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func addingMonths(_ months: Int64, to instant: Int64) -> Int64 {
        let dayNumber = instant >= 0 ? instant / millisecondsPerDay : (instant - millisecondsPerDay + 1) / millisecondsPerDay
        let timeOfDay = instant - dayNumber * millisecondsPerDay
        let date = civil(days: dayNumber)
        let monthIndex = date.year * 12 + (date.month - 1) + months
        let year = monthIndex >= 0 ? monthIndex / 12 : (monthIndex - 11) / 12
        let month = monthIndex - year * 12 + 1
        let day = min(date.day, daysInMonth(year: year, month: month))
        return days(year: year, month: month, day: day) * millisecondsPerDay + timeOfDay
    }
}
