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

extension StorageSession {
    /// Stores rates (a rate already stored for a currency and day is replaced), then converts the ledger rows of those
    /// currencies again. Returns how many rates were stored.
    @discardableResult
    public func importRates(_ rates: [ExchangeRate]) async throws -> Int {
        var start = rates.startIndex
        while start < rates.endIndex {
            let slice = rates[start..<min(start + 5000, rates.endIndex)]
            try await sql.raw(
                """
                INSERT INTO exchange_rates (currency, day, usd_per_unit)
                VALUES \(SQLList(slice.map { SQLGroupExpression([SQLBind($0.currency), SQLBind($0.day.daysSinceEpoch), SQLBind($0.usdPerUnit)]) }))
                ON CONFLICT (currency, day) DO UPDATE SET usd_per_unit = excluded.usd_per_unit
                """
            ).run()
            start = slice.endIndex
        }
        try await convertLedgerToUSD(currencies: Array(Set(rates.map(\.currency))).sorted())
        return rates.count
    }

    /// How many rates are stored per currency, with the first and last day.
    public func rateCoverage() async throws -> [(currency: String, count: Int, first: CalendarDay, last: CalendarDay)] {
        try await sql.raw(
            "SELECT currency, COUNT(*) AS n, MIN(day) AS first, MAX(day) AS last FROM exchange_rates GROUP BY currency ORDER BY currency"
        ).all().map { row in
            (
                try row.decode(column: "currency", as: String.self), try row.decode(column: "n", as: Int.self),
                CalendarDay(daysSinceEpoch: try row.decode(column: "first", as: Int64.self)),
                CalendarDay(daysSinceEpoch: try row.decode(column: "last", as: Int64.self))
            )
        }
    }
}
