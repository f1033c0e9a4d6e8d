import AppStoreModels

/// The three customer states of WWDC22's proactive in-app purchase restore.
public enum CustomerStatus: String, Codable, Hashable, Sendable {
    /// No purchase that unlocks anything: no subscription, non-consumable or non-renewing subscription, ever.
    case new
    /// A subscription that is active, in its grace period or in billing retry, an owned non-consumable or a current
    /// non-renewing subscription.
    case active
    /// Had one of those, and none is current: expired, revoked or refunded.
    case inactive
}

/// Where one subscription stands: StoreKit 2's renewal states (`Product.SubscriptionInfo.RenewalState`).
public enum RenewalState: String, Codable, Hashable, Sendable {
    case active, gracePeriod, billingRetry, expired, revoked

    /// Whether the status gives access: active, and the grace period (Apple keeps the service on while it retries).
    public var grantsAccess: Bool { self == .active || self == .gracePeriod }
}

/// The kind of price a subscription period was bought at.
public enum PeriodType: String, Codable, Hashable, Sendable {
    case trial, intro, promo, offerCode, winBack, regular

    /// The period type of a transaction: its `offerType`, and for an introductory offer its `offerDiscountType`
    /// (a free trial; older data without it: a price of zero).
    public init(_ transaction: borrowing JWSTransactionDecodedPayload) {
        switch transaction.offerType {
        case .some(.introductoryOffer):
            let free = transaction.offerDiscountType.map { $0 == .freeTrial } ?? (transaction.price == 0)
            self = free ? .trial : .intro
        case .some(.promotionalOffer): self = .promo
        case .some(.offerCode): self = .offerCode
        case .some(.winBackOffer): self = .winBack
        default: self = .regular
        }
    }
}

/// Why a subscription ended.
public enum ExpirationReason: String, Codable, Hashable, Sendable {
    case voluntary, billingError, priceIncrease, productUnavailable, other

    init(_ intent: ExpirationIntent) {
        switch intent {
        case .customerCancelled: self = .voluntary
        case .billingError: self = .billingError
        case .customerDidNotConsentToPriceIncrease: self = .priceIncrease
        case .productNotAvailable: self = .productUnavailable
        default: self = .other
        }
    }

    init?(expiredSubtype subtype: NotificationSubtype?) {
        switch subtype {
        case .some(.voluntary): self = .voluntary
        case .some(.billingRetry): self = .billingError
        case .some(.priceIncrease): self = .priceIncrease
        case .some(.productNotForSale): self = .productUnavailable
        case .none: return nil
        default: self = .other
        }
    }
}

/// Who paid: the customer, or a family member sharing it.
public enum Ownership: String, Codable, Hashable, Sendable {
    case purchased, familyShared
}

/// A refund or a loss of Family Sharing.
public struct Revocation: Codable, Hashable, Sendable {
    public enum Reason: String, Codable, Hashable, Sendable { case appIssue, other }
    public enum Kind: String, Codable, Hashable, Sendable { case full, prorated, familyRevoke }

    public var date: Timestamp
    public var reason: Reason
    /// `nil` when the source does not say (legacy receipts).
    public var type: Kind?
    /// The refunded share in milli-percent (`50000` is 50%), for prorated refunds.
    public var percentage: Int32?

    public init(date: Timestamp, reason: Reason, type: Kind?, percentage: Int32? = nil) {
        self.date = date
        self.reason = reason
        self.type = type
        self.percentage = percentage
    }

    /// What the refund gives back of `price` (milliunits): the price, or its refunded share when prorated (Apple's
    /// milli-percent, rounded half up, computed so that the product cannot overflow); nothing for a loss of Family
    /// Sharing. The ledger and the events both take refunds from here.
    public func refundedAmount(of price: Int64) -> Int64 {
        switch type {
        case .familyRevoke: return 0
        case .prorated:
            guard let percentage else { return price }
            let share = Int64(min(max(percentage, 0), 100_000))
            return price / 100_000 * share + (price % 100_000 * share + 50_000) / 100_000
        case .full, nil: return price
        }
    }
}

/// One auto-renewable subscription: the transactions that share one original transaction id.
public struct SubscriptionState: Codable, Hashable, Sendable {
    public var originalTransactionId: String
    /// The transaction of the current period, or of the last one.
    public var transactionId: String
    public var productId: String
    public var group: String
    public var environment: Environment?
    public var ownership: Ownership
    public var status: RenewalState
    public var periodType: PeriodType
    public var purchaseDate: Timestamp
    public var originalPurchaseDate: Timestamp?
    /// The latest expiry known for the subscription.
    public var expiresDate: Timestamp?
    /// Whether it will renew: `nil` when no renewal information or notification has told.
    public var willRenew: Bool?
    /// The product it renews into, when that differs from the current one (a pending downgrade or crossgrade).
    public var autoRenewProductId: String?
    public var gracePeriodExpiresDate: Timestamp?
    /// When Apple stops retrying the payment: `expiresDate` plus 60 days, Apple's documented longest retry.
    public var billingRetryEndsAt: Timestamp?
    public var expirationReason: ExpirationReason?
    public var revocation: Revocation?
    /// The subscription was upgraded away from: it grants nothing any more.
    public var isUpgraded: Bool
    /// Billed monthly under a commitment: the current billing period, the commitment's end, and whether a new
    /// commitment follows. Absent otherwise.
    public var commitment: BillingCommitment? = nil
    /// What the next renewal will charge, as the latest renewal info says (`renewalPrice` in milliunits of
    /// `renewalCurrency`): while it will renew, and Apple told.
    public var renewalPrice: Int64? = nil
    public var renewalCurrency: String? = nil
    public var grantsAccess: Bool { status.grantsAccess }

    /// Written beside the stored fields; derived, so not read back.
    private enum DerivedKeys: String, CodingKey { case grantsAccess }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(originalTransactionId, forKey: .originalTransactionId)
        try c.encode(transactionId, forKey: .transactionId)
        try c.encode(productId, forKey: .productId)
        try c.encode(group, forKey: .group)
        try c.encodeIfPresent(environment, forKey: .environment)
        try c.encode(ownership, forKey: .ownership)
        try c.encode(status, forKey: .status)
        try c.encode(periodType, forKey: .periodType)
        try c.encode(purchaseDate, forKey: .purchaseDate)
        try c.encodeIfPresent(originalPurchaseDate, forKey: .originalPurchaseDate)
        try c.encodeIfPresent(expiresDate, forKey: .expiresDate)
        try c.encode(willRenew, forKey: .willRenew)
        try c.encodeIfPresent(autoRenewProductId, forKey: .autoRenewProductId)
        try c.encodeIfPresent(gracePeriodExpiresDate, forKey: .gracePeriodExpiresDate)
        try c.encodeIfPresent(billingRetryEndsAt, forKey: .billingRetryEndsAt)
        try c.encode(expirationReason, forKey: .expirationReason)
        try c.encodeIfPresent(revocation, forKey: .revocation)
        try c.encode(isUpgraded, forKey: .isUpgraded)
        try c.encodeIfPresent(commitment, forKey: .commitment)
        try c.encodeIfPresent(renewalPrice, forKey: .renewalPrice)
        try c.encodeIfPresent(renewalCurrency, forKey: .renewalCurrency)
        var derived = encoder.container(keyedBy: DerivedKeys.self)
        try derived.encode(grantsAccess, forKey: .grantsAccess)
    }
}

/// A non-consumable, a consumable or a non-renewing subscription.
public struct NonSubscriptionState: Codable, Hashable, Sendable {
    public var transactionId: String
    public var productId: String
    public var type: ProductKind
    public var purchaseDate: Timestamp
    /// The end of a non-renewing subscription: the purchase plus the catalog's duration.
    public var expiresDate: Timestamp?
    /// Whether it gives access now; `nil` for consumables, which are only listed.
    public var active: Bool?
    public var quantity: Int32?
    public var environment: Environment?
    public var ownership: Ownership
    public var revocation: Revocation?
}

/// Access to one product or one entitlement.
public struct AccessState: Codable, Hashable, Sendable {
    public var active: Bool
    /// When the access ends; `nil` while active means for good (a non-consumable). When inactive: the last end known.
    public var expiresDate: Timestamp?
    /// The product that gives (or last gave) the access.
    public var productId: String?
    /// The transaction behind it: the original transaction id of a subscription, the transaction id otherwise.
    public var transactionId: String?
    /// In a state that covers several environments (``CustomerState/combining(_:current:)``): the environment of the
    /// access shown. Absent in a one-environment state.
    public var environment: Environment? = nil
    /// In a state that covers several environments: the access in each of them, by Apple's spelling of the
    /// environment (an environment where nothing ever gave it is absent). Absent in a one-environment state.
    public var environments: [String: AccessState]? = nil
    /// In a state that covers several environments, when the caller said which one it runs in: whether the access is
    /// active there. Absent otherwise.
    public var activeInCurrentEnvironment: Bool? = nil

    public init(active: Bool, expiresDate: Timestamp?, productId: String?, transactionId: String?) {
        self.active = active
        self.expiresDate = expiresDate
        self.productId = productId
        self.transactionId = transactionId
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(active, forKey: .active)
        try c.encode(expiresDate, forKey: .expiresDate)
        try c.encode(productId, forKey: .productId)
        try c.encode(transactionId, forKey: .transactionId)
        try c.encodeIfPresent(environment, forKey: .environment)
        try c.encodeIfPresent(environments, forKey: .environments)
        try c.encodeIfPresent(activeInCurrentEnvironment, forKey: .activeInCurrentEnvironment)
    }
}

/// The one subscription that counts in a subscription group.
public struct GroupState: Codable, Hashable, Sendable {
    public var originalTransactionId: String
    public var productId: String
    public var status: RenewalState
    public var active: Bool
    public var expiresDate: Timestamp?
    /// In a state that covers several environments: the environment of the subscription that counts. Absent in a
    /// one-environment state.
    public var environment: Environment? = nil
}

/// Whether the App Store would give the customer an introductory offer in a group.
///
/// Apple's rule: a customer is eligible unless they have already received an introductory offer (a free trial or an
/// introductory price) for any product of the group. Refunded introductory periods count as received.
public struct IntroEligibility: Codable, Hashable, Sendable {
    public var eligible: Bool
    /// The transaction that used the offer up, when not eligible.
    public var redeemedTransactionId: String?
    public var redeemedAt: Timestamp?
}

/// Whether a lapsed subscriber of a group can be offered a win-back offer.
///
/// Apple offers win-back offers to former subscribers whose subscription has expired; a subscription in its grace
/// period or in billing retry is not lapsed. `offerIds` are the offers Apple listed as eligible in the latest renewal
/// information (`eligibleWinBackOfferIds`), best first.
public struct WinBackEligibility: Codable, Hashable, Sendable {
    public var eligible: Bool
    public var lapsedAt: Timestamp?
    public var offerIds: [String]
}

/// Everything the app needs at launch about one customer, at one instant.
public struct CustomerState: Codable, Hashable, Sendable {
    public var state: CustomerStatus
    /// A subscription is in its grace period or in billing retry: the app can ask to update the payment method.
    public var billingIssue: Bool
    /// Every entitlement of the catalog.
    public var entitlements: [String: AccessState]
    /// Every product the customer bought.
    public var products: [String: AccessState]
    /// Every subscription group of the catalog or of the facts: the subscription that counts in it.
    public var groups: [String: GroupState]
    public var subscriptions: [SubscriptionState]
    public var nonSubscriptions: [NonSubscriptionState]
    public var introEligibility: [String: IntroEligibility]
    public var winBackEligibility: [String: WinBackEligibility]
    /// The earliest instant after which this state changes with no new fact; `nil` when it never does.
    public var nextChangeAt: Timestamp?
    /// A parent or guardian withdrew consent: the purchases whose access is withheld. Absent otherwise.
    public var consentRescinded: ConsentRescission? = nil

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(state, forKey: .state)
        try c.encode(billingIssue, forKey: .billingIssue)
        try c.encode(entitlements, forKey: .entitlements)
        try c.encode(products, forKey: .products)
        try c.encode(groups, forKey: .groups)
        try c.encode(subscriptions, forKey: .subscriptions)
        try c.encode(nonSubscriptions, forKey: .nonSubscriptions)
        try c.encode(introEligibility, forKey: .introEligibility)
        try c.encode(winBackEligibility, forKey: .winBackEligibility)
        try c.encode(nextChangeAt, forKey: .nextChangeAt)
        try c.encodeIfPresent(consentRescinded, forKey: .consentRescinded)
    }
}
