import Foundation
import SQLKit
import Storage

/// USD per unit of a currency on a day.
public struct ExchangeRate: Hashable, Sendable {
    public var day: CalendarDay
    public var currency: String
    public var usdPerUnit: Double

    struct Key: Hashable {
        var currency: String
        var day: CalendarDay
    }
    var key: Key { Key(currency: currency, day: day) }

    public init(day: CalendarDay, currency: String, usdPerUnit: Double) {
        self.day = day
        self.currency = currency
        self.usdPerUnit = usdPerUnit
    }
}

/// Reads exchange rates from CSV, in either of two layouts:
/// - `date,currency,usd_per_unit` (one rate per line), or
/// - the ECB's reference rates, `Date,USD,JPY,…` with each value in units per euro: the USD rate of a currency is
///   `USD ÷ value`, and of the euro `USD` itself. Empty and `N/A` cells (a currency not quoted that day) are skipped.
///
/// A currency quoted twice for one day is refused (which of the two would be meant?), naming both lines.
public enum ExchangeRateCSV {
    public static func parse(_ text: String) throws(AnalyticsError) -> [ExchangeRate] {
        let rates = try parseLines(text)
        var seen: [ExchangeRate.Key: Int] = [:]
        for (rate, line) in rates {
            if let first = seen.updateValue(line, forKey: rate.key) {
                throw .invalidRates(line: line, "a second rate for \(rate.currency) on \(rate.day) (the first is on line \(first))")
            }
        }
        return rates.map(\.rate)
    }

    /// Every rate with the line it came from.
    static func parseLines(_ text: String) throws(AnalyticsError) -> [(rate: ExchangeRate, line: Int)] {
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated()
            .map { (number: $0.offset + 1, cells: $0.element.split(separator: ",", omittingEmptySubsequences: false).map(Self.trim)) }
            .filter { !($0.cells.count == 1 && $0.cells[0].isEmpty) }
        guard !lines.isEmpty else { throw .invalidRates(line: 1, "the file is empty") }
        let header = lines.removeFirst()
        let names = header.cells.map { $0.lowercased() }
        if names == ["date", "currency", "usd_per_unit"] {
            return try lines.map { line throws(AnalyticsError) in (try perCurrency(line.cells, line: line.number), line.number) }
        }
        guard names.first == "date" else {
            throw .invalidRates(
                line: header.number, "the header must be 'date,currency,usd_per_unit' or the ECB's 'Date,USD,JPY,…'")
        }
        let currencies = try header.cells.dropFirst().map { name throws(AnalyticsError) -> String? in
            if name.isEmpty { return nil }  // the ECB's files end each line with a comma
            guard isCurrency(name) else { throw .invalidRates(line: header.number, "'\(name)' is not a currency code") }
            return name
        }
        guard let usdColumn = currencies.firstIndex(of: "USD") else {
            throw .invalidRates(line: header.number, "an ECB layout needs a USD column to convert from euros")
        }
        var rates: [(rate: ExchangeRate, line: Int)] = []
        for line in lines {
            guard let day = CalendarDay(line.cells[0]) else {
                throw .invalidRates(line: line.number, "'\(line.cells[0])' is not a day written YYYY-MM-DD")
            }
            let values = Array(line.cells.dropFirst())
            guard values.count <= currencies.count else {
                throw .invalidRates(line: line.number, "has \(values.count) values for \(currencies.count) columns")
            }
            guard usdColumn < values.count, let usdPerEuro = try value(values[usdColumn], line: line.number) else { continue }
            rates.append((ExchangeRate(day: day, currency: "EUR", usdPerUnit: usdPerEuro), line.number))
            for (column, currency) in currencies.enumerated() {
                guard let currency, currency != "USD", column < values.count,
                    let perEuro = try value(values[column], line: line.number)
                else { continue }
                rates.append((ExchangeRate(day: day, currency: currency, usdPerUnit: usdPerEuro / perEuro), line.number))
            }
        }
        return rates
    }

    static func perCurrency(_ cells: [String], line: Int) throws(AnalyticsError) -> ExchangeRate {
        guard cells.count == 3 else { throw .invalidRates(line: line, "expected date,currency,usd_per_unit") }
        guard let day = CalendarDay(cells[0]) else {
            throw .invalidRates(line: line, "'\(cells[0])' is not a day written YYYY-MM-DD")
        }
        guard isCurrency(cells[1]) else { throw .invalidRates(line: line, "'\(cells[1])' is not a currency code such as EUR") }
        guard let rate = try value(cells[2], line: line) else { throw .invalidRates(line: line, "the rate is missing") }
        if cells[1] == "USD", rate != 1 { throw .invalidRates(line: line, "USD is the reporting currency: its rate is 1") }
        return ExchangeRate(day: day, currency: cells[1], usdPerUnit: rate)
    }

    /// A positive number; `nil` for an empty or `N/A` cell.
    static func value(_ cell: String, line: Int) throws(AnalyticsError) -> Double? {
        if cell.isEmpty || cell == "N/A" { return nil }
        guard let number = Double(cell), number.isFinite, number > 0 else {
            throw .invalidRates(line: line, "'\(cell)' is not a positive number")
        }
        return number
    }

    static func isCurrency(_ text: String) -> Bool {
        text.utf8.count == 3 && text.utf8.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
    }

    static func trim(_ cell: Substring) -> String { cell.trimmingCharacters(in: .whitespaces) }
}

/// Where a stored rate came from.
public enum RateSource: String, Sendable, Codable {
    /// A file or the API (`storekeeper rates import`, `PUT /v1/rates`).
    case `import`
    /// The built-in daily fetch (`STOREKEEPER_RATES_URL`).
    case feed
    /// The bundled table (`FallbackRates`): any other source of a currency replaces it.
    case fallback
}

/// The rates feed's last attempts.
public struct RateFeedRecord: Sendable, Hashable {
    public var url: String
    public var attemptedAt: Int64
    public var succeededAt: Int64?
    public var latestDay: CalendarDay?
    public var error: String?

    public init(url: String, attemptedAt: Int64, succeededAt: Int64?, latestDay: CalendarDay?, error: String?) {
        self.url = url
        self.attemptedAt = attemptedAt
        self.succeededAt = succeededAt
        self.latestDay = latestDay
        self.error = error
    }
}

/// What the stored rates are, for people reading the numbers: the newest day, and whether the newest rates are the
/// bundled fallback's.
public struct RatesStanding: Sendable, Hashable, Codable {
    public var latestDay: String?
    /// How many currencies are converted at the bundled fallback (no other source gave them a rate).
    public var fallbackCurrencies: Int
    public var currencies: Int
}

extension StorageSession {
    /// Stores rates (a rate already stored for a currency and day is replaced; a currency's fallback rates go once any
    /// other source gives it one), then converts the ledger rows of those currencies again. Returns how many rates
    /// were stored.
    @discardableResult
    public func importRates(_ rates: [ExchangeRate], source: RateSource = .import) async throws -> Int {
        let currencies = Array(Set(rates.map(\.currency))).sorted()
        if source != .fallback, !currencies.isEmpty {
            try await sql.raw(
                "DELETE FROM exchange_rates WHERE source = 'fallback' AND currency IN \(SQLGroupExpression(currencies.map { SQLBind($0) }))"
            ).run()
        }
        var start = rates.startIndex
        while start < rates.endIndex {
            let slice = rates[start..<min(start + 2000, rates.endIndex)]
            let values = slice.map {
                SQLGroupExpression([SQLBind($0.currency), SQLBind($0.day.daysSinceEpoch), SQLBind($0.usdPerUnit), SQLBind(source.rawValue)])
            }
            try await sql.raw(
                """
                INSERT INTO exchange_rates (currency, day, usd_per_unit, source)
                VALUES \(SQLList(values))
                ON CONFLICT (currency, day) DO UPDATE SET usd_per_unit = excluded.usd_per_unit, source = excluded.source
                """
            ).run()
            start = slice.endIndex
        }
        try await convertLedgerToUSD(currencies: currencies)
        return rates.count
    }

    /// Stores the bundled fallback's rates of the currencies that have none at all. Returns how many.
    @discardableResult
    public func loadFallbackRates(_ rates: [ExchangeRate] = FallbackRates.rates) async throws -> Int {
        let known = Set(
            try await sql.raw("SELECT DISTINCT currency FROM exchange_rates").all().map {
                try $0.decode(column: "currency", as: String.self)
            })
        let missing = rates.filter { !known.contains($0.currency) }
        guard !missing.isEmpty else { return 0 }
        return try await importRates(missing, source: .fallback)
    }

    /// Of `rates`, those not stored already with the same value from a source other than the fallback: what a feed
    /// brings that is new, so that a day's fetch converts nothing again when nothing changed.
    public func newRates(_ rates: [ExchangeRate]) async throws -> [ExchangeRate] {
        guard let first = rates.map(\.day.daysSinceEpoch).min(), let last = rates.map(\.day.daysSinceEpoch).max() else { return [] }
        var stored: [ExchangeRate.Key: Double] = [:]
        for row in try await sql.raw(
            """
            SELECT currency, day, usd_per_unit FROM exchange_rates
            WHERE day >= \(bind: first) AND day <= \(bind: last) AND source <> 'fallback'
            """
        ).all() {
            let key = ExchangeRate.Key(
                currency: try row.decode(column: "currency", as: String.self),
                day: CalendarDay(daysSinceEpoch: try row.decode(column: "day", as: Int64.self)))
            stored[key] = try row.decode(column: "usd_per_unit", as: Double.self)
        }
        return rates.filter { stored[$0.key] != $0.usdPerUnit }
    }

    /// The newest day of a stored rate, and how many currencies only the fallback converts.
    public func ratesStanding() async throws -> RatesStanding {
        let row = try await sql.raw(
            """
            SELECT MAX(day) AS latest, COUNT(DISTINCT currency) AS currencies,
                COUNT(DISTINCT CASE WHEN source = 'fallback' THEN currency END) AS fallback
            FROM exchange_rates
            """
        ).first()
        let latest = try row?.decode(column: "latest", as: Int64?.self)
        return RatesStanding(
            latestDay: latest.map { CalendarDay(daysSinceEpoch: $0).description },
            fallbackCurrencies: try row?.decode(column: "fallback", as: Int.self) ?? 0,
            currencies: try row?.decode(column: "currencies", as: Int.self) ?? 0)
    }

    public func recordRateFeed(_ record: RateFeedRecord) async throws {
        try await sql.raw(
            """
            INSERT INTO rate_feed (url, attempted_at, succeeded_at, latest_day, error)
            VALUES (\(bind: record.url), \(bind: record.attemptedAt), \(bind: record.succeededAt),
                \(bind: record.latestDay?.daysSinceEpoch), \(bind: record.error))
            ON CONFLICT (url) DO UPDATE SET attempted_at = excluded.attempted_at,
                succeeded_at = COALESCE(excluded.succeeded_at, rate_feed.succeeded_at),
                latest_day = COALESCE(excluded.latest_day, rate_feed.latest_day), error = excluded.error
            """
        ).run()
    }

    public func rateFeed(url: String) async throws -> RateFeedRecord? {
        try await sql.raw("SELECT * FROM rate_feed WHERE url = \(bind: url)").first().map { row in
            RateFeedRecord(
                url: try row.decode(column: "url", as: String.self), attemptedAt: try row.decode(column: "attempted_at", as: Int64.self),
                succeededAt: try row.decode(column: "succeeded_at", as: Int64?.self),
                latestDay: try row.decode(column: "latest_day", as: Int64?.self).map(CalendarDay.init(daysSinceEpoch:)),
                error: try row.decode(column: "error", as: String?.self))
        }
    }

    /// How many rates are stored per currency, with the first and last day.
    public func rateCoverage() async throws -> [StoredRateCoverage] {
        try await sql.raw(
            "SELECT currency, COUNT(*) AS n, MIN(day) AS first, MAX(day) AS last FROM exchange_rates GROUP BY currency ORDER BY currency"
        ).all().map { row in
            StoredRateCoverage(
                currency: try row.decode(column: "currency", as: String.self), count: try row.decode(column: "n", as: Int.self),
                first: CalendarDay(daysSinceEpoch: try row.decode(column: "first", as: Int64.self)),
                last: CalendarDay(daysSinceEpoch: try row.decode(column: "last", as: Int64.self)))
        }
    }
}

/// How many rates a currency has stored, from which day to which.
public struct StoredRateCoverage: Sendable, Hashable {
    public var currency: String
    public var count: Int
    public var first: CalendarDay
    public var last: CalendarDay
}
