/// The kind of in-app product a transaction is for (`type`).
///
/// Unknown values decode and are kept as they came; see ``AppleEnum``.
public struct ProductType: AppleEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let autoRenewable = Self(rawValue: "Auto-Renewable Subscription")
    public static let nonConsumable = Self(rawValue: "Non-Consumable")
    public static let consumable = Self(rawValue: "Consumable")
    public static let nonRenewing = Self(rawValue: "Non-Renewing Subscription")

    public static let known: [Self] = [.autoRenewable, .nonConsumable, .consumable, .nonRenewing]
}
