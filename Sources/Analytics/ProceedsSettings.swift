/// What an app tells about its proceeds: its Small Business Program membership and its storefronts' tax rates.
///
/// Without tax rates, proceeds are estimated before tax, and every answer says so.
public struct ProceedsSettings: Codable, Hashable, Sendable {
    /// The day (`YYYY-MM-DD`, UTC) the app joined Apple's Small Business Program: from then on the commission is 15%.
    public var smallBusinessProgramSince: String?
    /// Storefront (alpha-3, as Apple's `storefront`) → tax rate included in the customer's price (`0.19` for 19%).
    public var storefrontTaxRates: [String: Double]?

    /// Its fields as JSON names them (listed, so that a request body's unknown ones can be refused).
    public enum CodingKeys: String, CodingKey, CaseIterable { case smallBusinessProgramSince, storefrontTaxRates }

    public init(smallBusinessProgramSince: String? = nil, storefrontTaxRates: [String: Double]? = nil) {
        self.smallBusinessProgramSince = smallBusinessProgramSince
        self.storefrontTaxRates = storefrontTaxRates
    }

    /// Checks the day and the rates; the error names the field.
    public func validate() throws(AnalyticsError) {
        if let day = smallBusinessProgramSince, CalendarDay(day) == nil {
            throw .invalidParameter("smallBusinessProgramSince", "'\(day)' is not a day written YYYY-MM-DD")
        }
        for (storefront, rate) in storefrontTaxRates ?? [:] {
            guard storefront.utf8.count == 3, storefront.allSatisfy({ $0.isASCII && $0.isUppercase }) else {
                throw .invalidParameter("storefrontTaxRates", "'\(storefront)' is not an alpha-3 storefront code such as DEU")
            }
            guard rate.isFinite, rate >= 0, rate < 1 else {
                throw .invalidParameter("storefrontTaxRates", "the rate of \(storefront) must be at least 0 and below 1")
            }
        }
    }

    /// The instant the program applies from, if the app is in it.
    var smallBusinessProgramStart: Int64? { smallBusinessProgramSince.flatMap(CalendarDay.init).map(\.startMilliseconds) }

    /// The storefront's tax rate in per mille.
    func taxPerMille(storefront: String?) -> Int? {
        guard let storefront, let rate = storefrontTaxRates?[storefront] else { return nil }
        return Int((rate * 1000).rounded())
    }
}
