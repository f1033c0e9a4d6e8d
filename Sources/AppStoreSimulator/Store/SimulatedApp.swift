import AppStore
import Entitlements

/// The app the simulator sells for: its identity, its catalog (the Entitlements format, so the simulator and the
/// server read the same file), its prices and its billing grace period.
public struct SimulatedApp: Codable, Hashable, Sendable {
    public var bundleId: String
    /// Required by Apple in production notifications; optional in the sandbox.
    public var appAppleId: Int64?
    public var environment: Environment
    public var catalog: Catalog
    /// Prices in milliunits of USD by product id; a product without one gets a price by its kind and period.
    public var prices: [String: Int64]
    /// The billing grace period the app turned on in App Store Connect (Apple offers 3, 16 or 28 days); nil: none.
    public var gracePeriodDays: Int?

    public init(
        bundleId: String, appAppleId: Int64? = nil, environment: Environment = .sandbox, catalog: Catalog,
        prices: [String: Int64] = [:], gracePeriodDays: Int? = 16
    ) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.catalog = catalog
        self.prices = prices
        self.gracePeriodDays = gracePeriodDays
    }

    /// The catalog every library scenario uses: two subscription groups with levels, and one product of each
    /// one-time kind.
    public static let defaultCatalog: Catalog = {
        func period(_ text: String) -> ISO8601Duration? { try? ISO8601Duration(text) }
        let products = [
            CatalogProduct(
                id: "pro.weekly", type: .autoRenewable, group: "pro", period: period("P1W"), entitlements: ["pro"], level: 3,
                freeTrial: period("P3D")),
            CatalogProduct(
                id: "pro.monthly", type: .autoRenewable, group: "pro", period: period("P1M"), entitlements: ["pro"], level: 2,
                freeTrial: period("P1W")),
            CatalogProduct(
                id: "pro.monthly.plus", type: .autoRenewable, group: "pro", period: period("P1M"), entitlements: ["pro", "plus"], level: 1,
                freeTrial: period("P1W")),
            CatalogProduct(
                id: "pro.yearly", type: .autoRenewable, group: "pro", period: period("P1Y"), entitlements: ["pro"], level: 2,
                freeTrial: period("P1M")),
            CatalogProduct(
                id: "news.monthly", type: .autoRenewable, group: "news", period: period("P1M"), entitlements: ["news"], level: 1,
                freeTrial: period("P2W")),
            CatalogProduct(id: "lifetime", type: .nonConsumable, entitlements: ["pro"]),
            CatalogProduct(id: "coins.100", type: .consumable),
            CatalogProduct(id: "season.pass", type: .nonRenewing, duration: period("P3M"), entitlements: ["season"]),
        ]
        // The literal above is a valid catalog; an empty one is the only other outcome, and tests would catch it.
        return (try? Catalog(products: products)) ?? .empty
    }()

    /// The base price of a product in milliunits of USD.
    public func basePrice(_ productId: String) -> Int64 {
        if let price = prices[productId] { return price }
        guard let product = catalog[productId] else { return 990 }
        switch product.type {
        case .consumable: return 990
        case .nonConsumable: return 49_990
        case .nonRenewing: return 19_990
        case .autoRenewable:
            guard let period = product.period else { return 9_990 }
            if period.months >= 12 { return 59_990 }
            if period.months >= 6 { return 34_990 }
            if period.months >= 1 { return 9_990 * period.months - (period.months > 1 ? 1_000 : 0) }
            return 2_990
        }
    }
}

/// An App Store storefront and the currency its prices are in.
public struct Storefront: Codable, Hashable, Sendable {
    /// ISO 3166-1 alpha-3, as Apple's `storefront`.
    public var code: String
    /// Apple's numeric `storefrontId`.
    public var id: String
    public var currency: String
    /// The price of one USD in this currency, in Apple's price tiers' spirit (rounded to the currency's unit).
    public var perUSD: Double

    public static let all: [Storefront] = [
        Storefront(code: "USA", id: "143441", currency: "USD", perUSD: 1),
        Storefront(code: "DEU", id: "143443", currency: "EUR", perUSD: 1),
        Storefront(code: "GBR", id: "143444", currency: "GBP", perUSD: 0.9),
        Storefront(code: "JPN", id: "143462", currency: "JPY", perUSD: 150),
        Storefront(code: "BRA", id: "143503", currency: "BRL", perUSD: 5),
        Storefront(code: "IND", id: "143467", currency: "INR", perUSD: 80),
    ]

    public static func named(_ code: String) -> Storefront? { all.first { $0.code == code.uppercased() } }

    /// A USD price in this storefront, ending in .99 of the local unit (whole units for JPY and INR).
    public func price(usd milliunits: Int64) -> Int64 {
        guard milliunits > 0 else { return 0 }
        let local = Double(milliunits) * perUSD / 1000
        if currency == "JPY" || currency == "INR" { return Int64((local / 10).rounded()) * 10 * 1000 }
        return Int64(local.rounded(.up)) * 1000 - 10
    }
}
