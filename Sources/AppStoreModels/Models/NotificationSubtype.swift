/// The subtype of an App Store Server Notification V2 (`subtype`).
///
/// Unknown values decode and are kept as they came; see ``AppleEnum``.
public struct NotificationSubtype: AppleEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let initialBuy = Self(rawValue: "INITIAL_BUY")
    public static let resubscribe = Self(rawValue: "RESUBSCRIBE")
    public static let downgrade = Self(rawValue: "DOWNGRADE")
    public static let upgrade = Self(rawValue: "UPGRADE")
    public static let autoRenewEnabled = Self(rawValue: "AUTO_RENEW_ENABLED")
    public static let autoRenewDisabled = Self(rawValue: "AUTO_RENEW_DISABLED")
    public static let voluntary = Self(rawValue: "VOLUNTARY")
    public static let billingRetry = Self(rawValue: "BILLING_RETRY")
    public static let priceIncrease = Self(rawValue: "PRICE_INCREASE")
    public static let gracePeriod = Self(rawValue: "GRACE_PERIOD")
    public static let pending = Self(rawValue: "PENDING")
    public static let accepted = Self(rawValue: "ACCEPTED")
    public static let billingRecovery = Self(rawValue: "BILLING_RECOVERY")
    public static let productNotForSale = Self(rawValue: "PRODUCT_NOT_FOR_SALE")
    public static let summary = Self(rawValue: "SUMMARY")
    public static let failure = Self(rawValue: "FAILURE")
    public static let unreported = Self(rawValue: "UNREPORTED")
    public static let activeTokenReminder = Self(rawValue: "ACTIVE_TOKEN_REMINDER")
    public static let created = Self(rawValue: "CREATED")

    public static let known: [Self] = [
        .initialBuy, .resubscribe, .downgrade, .upgrade, .autoRenewEnabled, .autoRenewDisabled, .voluntary, .billingRetry, .priceIncrease,
        .gracePeriod, .pending, .accepted, .billingRecovery, .productNotForSale, .summary, .failure, .unreported, .activeTokenReminder,
        .created,
    ]
}
