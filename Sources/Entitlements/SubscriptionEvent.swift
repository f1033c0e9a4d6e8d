import AppStoreModels

/// What happened to a customer's purchases, derived from the facts. See `docs/events.md` for where each comes from.
public enum SubscriptionEventType: String, Codable, Hashable, Sendable, CaseIterable {
    case trialStarted = "trial_started"
    case trialConverted = "trial_converted"
    case trialCanceled = "trial_canceled"
    case trialExpired = "trial_expired"
    case introStarted = "intro_started"
    case introRenewed = "intro_renewed"
    case introConverted = "intro_converted"
    case introExpired = "intro_expired"
    case promoStarted = "promo_started"
    case promoConverted = "promo_converted"
    case promoExpired = "promo_expired"
    case subscriptionStarted = "subscription_started"
    case subscriptionRenewed = "subscription_renewed"
    case subscriptionResubscribed = "subscription_resubscribed"
    case subscriptionCanceled = "subscription_canceled"
    case autorenewEnabled = "autorenew_enabled"
    case billingIssue = "billing_issue"
    case gracePeriodStarted = "grace_period_started"
    case gracePeriodExpired = "grace_period_expired"
    case billingRecovered = "billing_recovered"
    case subscriptionExpired = "subscription_expired"
    case refunded
    case refundReversed = "refund_reversed"
    case productChanged = "product_changed"
    case nonRenewingPurchase = "non_renewing_purchase"
    case nonConsumablePurchase = "non_consumable_purchase"
    case consumablePurchase = "consumable_purchase"
    case familyAccessRevoked = "family_access_revoked"
    /// A new commitment began (``BillingCommitment``): the first billing period after the last one of the previous.
    case commitmentRenewed = "commitment_renewed"
    /// A commitment's last billing period ended and no new commitment followed: with the subscription's expiry.
    case commitmentEnded = "commitment_ended"
    /// A parent or guardian withdrew consent for the app (``ConsentRescission``): the purchase gives no access.
    case consentRescinded = "consent_rescinded"
}

/// How a product change moved inside its group, by the catalog's levels (1 is the highest service).
public enum ProductChange: String, Codable, Hashable, Sendable {
    case upgrade, downgrade, crossgrade
}

/// One subscription event.
///
/// `id` is deterministic: the event type, the environment, the original transaction and what the event is anchored to
/// (a transaction, a notification or an instant), so deriving the events again from the same facts, or from more of
/// them, gives the same ids.
public struct SubscriptionEvent: Codable, Hashable, Sendable {
    public var id: String
    public var type: SubscriptionEventType
    /// When it happened by Apple's dates (a purchase date, an expiry, a revocation date, a notification's signing
    /// date), never when it arrived.
    public var effectiveAt: Timestamp
    public var productId: String?
    public var originalTransactionId: String?
    public var transactionId: String?
    /// Milliunits of `currency`, as Apple sends prices.
    public var price: Int64?
    public var currency: String?
    public var storefront: String?
    public var periodType: PeriodType?
    public var environment: Environment?
    /// Why: an expiration reason, a refund reason (`appIssue`, `other`) or a product change (`upgrade` …).
    public var reason: String?
    /// The product before a `product_changed`.
    public var fromProductId: String?
    /// The notification the event came from, when it came from one.
    public var notificationUUID: String?
    /// The money the event moves, in milliunits of `currency`, as the ledger books it: a paid period's price on the one
    /// event that starts, renews or changes into it; minus what a refund gives back (its share, when prorated); plus it
    /// again when the refund is reversed; nil when none moves (a free trial, Family Sharing, a notice). Summed over a
    /// customer's events, it is the ledger's net revenue. Always written (null when none); events stored before it
    /// existed lack the key.
    public var revenue: Int64?

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(type, forKey: .type)
        try c.encode(effectiveAt, forKey: .effectiveAt)
        try c.encode(productId, forKey: .productId)
        try c.encode(originalTransactionId, forKey: .originalTransactionId)
        try c.encode(transactionId, forKey: .transactionId)
        try c.encode(price, forKey: .price)
        try c.encode(currency, forKey: .currency)
        try c.encode(storefront, forKey: .storefront)
        try c.encode(periodType, forKey: .periodType)
        try c.encode(environment, forKey: .environment)
        try c.encode(reason, forKey: .reason)
        try c.encodeIfPresent(fromProductId, forKey: .fromProductId)
        try c.encodeIfPresent(notificationUUID, forKey: .notificationUUID)
        try c.encode(revenue, forKey: .revenue)
    }
}
