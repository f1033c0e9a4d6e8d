import AppStore
import Entitlements
import Foundation

/// How a series is cut into points.
public enum MetricInterval: String, Codable, Hashable, Sendable, CaseIterable {
    case day, week, month
}

/// What a metric series is asked for: the app, one environment, a range of days `[from, to)` in a time zone, the
/// interval, and filters.
public struct MetricRequest: Hashable, Sendable {
    /// The longest range: five years of days.
    public static let maxDays: Int64 = 5 * 366

    /// Whether a name is shaped like a name of the time zone database (`Area/Location`, `Etc/GMT+5`, or one Foundation
    /// lists, such as `UTC`). Foundation would otherwise read whatever file a name points at (`../../etc/…`) or take an
    /// offset such as `GMT+5` as a zone. (Foundation's own list lags the database: it lacks `Asia/Kolkata`.)
    static func isZoneName(_ name: String) -> Bool {
        let components = name.split(separator: "/", omittingEmptySubsequences: false)
        let shaped = components.allSatisfy { component in
            guard let first = component.unicodeScalars.first, first.properties.isAlphabetic, first.isASCII else { return false }
            return component.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "_+-".unicodeScalars.contains($0))
            }
        }
        return shaped && (components.count > 1 || name == "UTC" || knownSingleNames.contains(name))
    }

    static let knownSingleNames = Set(TimeZone.knownTimeZoneIdentifiers.filter { !$0.contains("/") })

    public var appId: String
    public var environment: Environment
    public var from: CalendarDay
    public var to: CalendarDay
    public var interval: MetricInterval
    public var timeZone: TimeZone
    public var productId: String?
    public var group: String?
    public var storefront: String?
    /// Trial conversion: days after a trial's end within which a conversion counts in `convertedWithinWindow`.
    public var conversionWindowDays: Int64
    /// Trial conversion: leave out conversions whose first paid period was refunded.
    public var excludeRefunded: Bool

    /// Checks the range and the time zone; the error names the parameter.
    public init(
        appId: String, environment: Environment = .production, from: String, to: String, interval: String = "day",
        timeZone: String? = nil, productId: String? = nil, group: String? = nil, storefront: String? = nil,
        conversionWindowDays: Int64 = 3, excludeRefunded: Bool = false
    ) throws(AnalyticsError) {
        guard let fromDay = CalendarDay(from) else { throw .invalidParameter("from", "'\(from)' is not a day written YYYY-MM-DD") }
        guard let toDay = CalendarDay(to) else { throw .invalidParameter("to", "'\(to)' is not a day written YYYY-MM-DD") }
        guard fromDay < toDay else { throw .invalidParameter("from", "from (\(from)) must be before to (\(to)): the range is [from, to)") }
        guard toDay.daysSinceEpoch - fromDay.daysSinceEpoch <= Self.maxDays else {
            throw .invalidParameter("to", "the range is longer than five years (\(Self.maxDays) days)")
        }
        guard let interval = MetricInterval(rawValue: interval) else {
            throw .invalidParameter("interval", "'\(interval)' is not one of day, week, month")
        }
        guard Environment.known.contains(environment) else {
            throw .invalidParameter("environment", "unknown environment '\(environment.rawValue)'")
        }
        var zone = TimeZone(identifier: "UTC") ?? TimeZone.current
        if let timeZone {
            guard Self.isZoneName(timeZone), let named = TimeZone(identifier: timeZone) else {
                throw .invalidParameter("tz", "'\(timeZone)' is not an IANA time zone such as Europe/Berlin")
            }
            zone = named
        }
        for (name, value) in [("product", productId), ("group", group), ("storefront", storefront)] where value?.isEmpty == true {
            throw .invalidParameter(name, "is empty: leave it out to take every \(name)")
        }
        guard conversionWindowDays >= 0, conversionWindowDays <= 366 else {
            throw .invalidParameter("window", "the conversion window is 0 to 366 days")
        }
        self.appId = appId
        self.environment = environment
        self.from = fromDay
        self.to = toDay
        self.interval = interval
        self.timeZone = zone
        self.productId = productId
        self.group = group
        self.storefront = storefront
        self.conversionWindowDays = conversionWindowDays
        self.excludeRefunded = excludeRefunded
    }

    /// The points' first days, and the instants where each point begins, with the range's end last (`days.count + 1`
    /// instants). Weeks begin on Monday and months on the 1st; the first point begins at `from` and the last ends at
    /// `to`.
    public var buckets: (days: [CalendarDay], boundaries: [Int64]) {
        var days: [CalendarDay] = [from]
        var day = from
        while true {
            switch interval {
            case .day: day = day.adding(days: 1)
            case .week:
                // 1970-01-01 was a Thursday: Monday is (days + 3) mod 7 == 0.
                let weekday = ((day.daysSinceEpoch + 3) % 7 + 7) % 7
                day = day.adding(days: 7 - weekday)
            case .month:
                let (year, month, _) = day.components
                day = CalendarDay(
                    daysSinceEpoch: CivilCalendar.days(year: month == 12 ? year + 1 : year, month: month == 12 ? 1 : month + 1, day: 1))
            }
            guard day < to else { break }
            days.append(day)
        }
        return (days, (days + [to]).map(startInstant))
    }

    /// The instant a day begins in the request's time zone.
    public func startInstant(_ day: CalendarDay) -> Int64 {
        let local = day.startMilliseconds
        var guess = local - Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(local) / 1000))) * 1000
        guess = local - Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(guess) / 1000))) * 1000
        return guess
    }
}
