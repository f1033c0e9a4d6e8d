import Foundation

/// The European Central Bank's euro foreign exchange reference rates in its XML layout (`eurofxref-daily.xml`,
/// `eurofxref-hist-90d.xml`): `<Cube time='YYYY-MM-DD'>` per day, holding `<Cube currency='JPY' rate='175.68'/>` per
/// currency in units per euro. The USD rate of a currency is `USD ÷ rate`, of the euro `USD` itself.
public enum ECBReferenceRates {
    /// What a feed held.
    public struct Feed: Sendable, Hashable {
        public var rates: [ExchangeRate]
        /// The days it quoted.
        public var days: [CalendarDay]
        /// Days quoted without a USD rate: nothing of theirs converts to USD, so they are left out.
        public var daysWithoutUSD: [CalendarDay]
    }

    public static func parse(_ xml: String) throws(AnalyticsError) -> Feed {
        var feed = Feed(rates: [], days: [], daysWithoutUSD: [])
        var day: CalendarDay?
        var quotes: [(currency: String, perEuro: Double)] = []
        var line = 1
        func endDay() {
            guard let current = day else { return }
            feed.days.append(current)
            if let usd = quotes.first(where: { $0.currency == "USD" })?.perEuro {
                feed.rates.append(ExchangeRate(day: current, currency: "EUR", usdPerUnit: usd))
                for quote in quotes where quote.currency != "USD" {
                    feed.rates.append(ExchangeRate(day: current, currency: quote.currency, usdPerUnit: usd / quote.perEuro))
                }
            } else {
                feed.daysWithoutUSD.append(current)
            }
            quotes = []
        }
        guard xml.contains("eurofxref") || xml.contains("gesmes") else {
            throw .invalidRates(line: 1, "not the ECB's reference rates (no gesmes envelope or eurofxref namespace)")
        }
        var rest = xml[...]
        while let start = rest.range(of: "<Cube") {
            line += rest[rest.startIndex..<start.lowerBound].count { $0 == "\n" }
            guard let end = rest[start.upperBound...].firstIndex(of: ">") else {
                throw .invalidRates(line: line, "a Cube element never ends")
            }
            let attributes = try Self.attributes(rest[start.upperBound..<end], line: line)
            line += rest[start.lowerBound..<end].count { $0 == "\n" }
            rest = rest[rest.index(after: end)...]
            if let time = attributes["time"] {
                endDay()
                guard let parsed = CalendarDay(time) else { throw .invalidRates(line: line, "'\(time)' is not a day written YYYY-MM-DD") }
                day = parsed
            } else if let currency = attributes["currency"] {
                guard day != nil else { throw .invalidRates(line: line, "a rate outside a day's Cube") }
                guard ExchangeRateCSV.isCurrency(currency) else { throw .invalidRates(line: line, "'\(currency)' is not a currency code") }
                guard let text = attributes["rate"], let rate = Double(text), rate.isFinite, rate > 0 else {
                    throw .invalidRates(line: line, "the rate of \(currency) is not a positive number")
                }
                quotes.append((currency, rate))
            }
        }
        endDay()
        guard !feed.days.isEmpty else { throw .invalidRates(line: line, "the feed quotes no day") }
        return feed
    }

    /// `name='value'` and `name="value"` pairs.
    static func attributes(_ text: Substring, line: Int) throws(AnalyticsError) -> [String: String] {
        var found: [String: String] = [:]
        var rest = text
        while true {
            rest = rest.drop { $0.isWhitespace || $0 == "/" }
            guard !rest.isEmpty else { return found }
            guard let equals = rest.firstIndex(of: "=") else { throw .invalidRates(line: line, "an attribute without a value") }
            let name = rest[rest.startIndex..<equals].trimmingCharacters(in: .whitespaces)
            rest = rest[rest.index(after: equals)...].drop { $0.isWhitespace }
            guard let quote = rest.first, quote == "'" || quote == "\"",
                let close = rest.dropFirst().firstIndex(of: quote)
            else { throw .invalidRates(line: line, "the attribute \(name) is not quoted") }
            found[name] = String(rest[rest.index(after: rest.startIndex)..<close])
            rest = rest[rest.index(after: close)...]
        }
    }
}
