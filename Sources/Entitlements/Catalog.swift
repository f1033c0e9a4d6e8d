import AppStoreModels

/// A catalog that cannot be used: a duplicate product, a subscription without a group, a pass without a duration.
public struct CatalogError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { "invalid catalog: \(message)" }
}

/// The kinds of in-app purchase, named as the catalog writes them.
public enum ProductKind: String, Codable, Hashable, Sendable, CaseIterable {
    case autoRenewable, nonConsumable, consumable, nonRenewing

    /// The kind of an App Store `type`, when it is one of the four documented values.
    public init?(_ type: ProductType) {
        switch type {
        case .autoRenewable: self = .autoRenewable
        case .nonConsumable: self = .nonConsumable
        case .consumable: self = .consumable
        case .nonRenewing: self = .nonRenewing
        default: return nil
        }
    }
}

/// One product of the app, as the app's team configures it.
public struct CatalogProduct: Codable, Hashable, Sendable {
    public var id: String
    public var type: ProductKind
    /// The subscription group (required for auto-renewable subscriptions).
    public var group: String?
    /// The billing period of an auto-renewable subscription (`P1M`). Used when a transaction carries no `expiresDate`.
    public var period: ISO8601Duration?
    /// How long a non-renewing subscription lasts: the app decides, the App Store does not know.
    public var duration: ISO8601Duration?
    /// The entitlements this product unlocks.
    public var entitlements: [String]
    /// The rank inside the group as App Store Connect orders it (StoreKit's `groupLevel`): 1 is the highest level of
    /// service. With levels, a product change is told apart as an upgrade, a downgrade or a crossgrade.
    public var level: Int?
    /// The free trial of the product's introductory offer, as App Store Connect sets it (`P3D`, `P1W`, `P2W`, `P1M`,
    /// `P2M`, `P3M`, `P6M` or `P1Y`): what the simulator sells as a free trial. The engine reads trials' lengths from
    /// the signed transactions, not from here.
    public var freeTrial: ISO8601Duration?

    public init(
        id: String, type: ProductKind, group: String? = nil, period: ISO8601Duration? = nil,
        duration: ISO8601Duration? = nil, entitlements: [String] = [], level: Int? = nil, freeTrial: ISO8601Duration? = nil
    ) {
        self.id = id
        self.type = type
        self.group = group
        self.period = period
        self.duration = duration
        self.entitlements = entitlements
        self.level = level
        self.freeTrial = freeTrial
    }

    public enum CodingKeys: String, CodingKey, CaseIterable { case id, type, group, period, duration, entitlements, level, freeTrial }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        type = try container.decode(ProductKind.self, forKey: .type)
        group = try container.decodeIfPresent(String.self, forKey: .group)
        period = try container.decodeIfPresent(ISO8601Duration.self, forKey: .period)
        duration = try container.decodeIfPresent(ISO8601Duration.self, forKey: .duration)
        entitlements = try container.decodeIfPresent([String].self, forKey: .entitlements) ?? []
        level = try container.decodeIfPresent(Int.self, forKey: .level)
        freeTrial = try container.decodeIfPresent(ISO8601Duration.self, forKey: .freeTrial)
    }
}

/// The app's products and the entitlements they unlock: `{"products": [{"id", "type", "group", "period", "duration",
/// "entitlements", "level", "freeTrial"}]}`.
public struct Catalog: Codable, Hashable, Sendable {
    public let products: [CatalogProduct]
    let byId: [String: CatalogProduct]
    /// Every entitlement id, sorted.
    public let entitlementIds: [String]
    /// Every subscription group of the catalog, sorted.
    public let groups: [String]

    public init(products: [CatalogProduct]) throws(CatalogError) {
        var byId: [String: CatalogProduct] = [:]
        var entitlements = Set<String>()
        var groups = Set<String>()
        for product in products {
            guard !product.id.isEmpty else { throw CatalogError("a product has an empty id") }
            guard byId.updateValue(product, forKey: product.id) == nil else {
                throw CatalogError("product '\(product.id)' is listed twice")
            }
            if product.entitlements.contains(where: \.isEmpty) {
                throw CatalogError("product '\(product.id)' has an empty entitlement id")
            }
            entitlements.formUnion(product.entitlements)
            if product.group?.isEmpty == true { throw CatalogError("product '\(product.id)' has an empty subscription group") }
            switch product.type {
            case .autoRenewable:
                guard let group = product.group else {
                    throw CatalogError("auto-renewable product '\(product.id)' needs its subscription group")
                }
                if let period = product.period, !period.isPositive {
                    throw CatalogError("product '\(product.id)' has an empty period")
                }
                if let trial = product.freeTrial {
                    // Apple's free trials: 3 days to a year.
                    let days = trial.months * 30 + trial.days + trial.milliseconds / 86_400_000
                    guard trial.isPositive, (3...366).contains(days) else {
                        throw CatalogError(
                            "product '\(product.id)' has a free trial of \(trial): Apple's last 3 days (P3D) to a year (P1Y)")
                    }
                }
                groups.insert(group)
            case .nonRenewing:
                guard let duration = product.duration, duration.isPositive else {
                    throw CatalogError("non-renewing product '\(product.id)' needs a positive duration, such as P1Y")
                }
            case .nonConsumable, .consumable:
                break
            }
            if product.type != .autoRenewable, product.freeTrial != nil {
                throw CatalogError("product '\(product.id)' is not an auto-renewable subscription: only those have free trials")
            }
        }
        self.products = products
        self.byId = byId
        self.entitlementIds = entitlements.sorted()
        self.groups = groups.sorted()
    }

    /// An empty catalog: states per product and group are still computed, and no entitlement exists.
    public static let empty: Catalog = Catalog(uncheckedProducts: [])

    private init(uncheckedProducts: [CatalogProduct]) {
        products = uncheckedProducts
        byId = [:]
        entitlementIds = []
        groups = []
    }

    public subscript(productId: String) -> CatalogProduct? { byId[productId] }

    public enum CodingKeys: String, CodingKey, CaseIterable { case products }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(decoded: try container.decode([CatalogProduct].self, forKey: .products))
    }

    /// `init(products:)` for decoders: what it refuses is a `DecodingError` at `products`.
    init(decoded products: [CatalogProduct]) throws {
        do {
            try self.init(products: products)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: [CodingKeys.products], debugDescription: error.message))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(products, forKey: .products)
    }

    public static func == (lhs: Catalog, rhs: Catalog) -> Bool { lhs.products == rhs.products }
    public func hash(into hasher: inout Hasher) { hasher.combine(products) }
}
