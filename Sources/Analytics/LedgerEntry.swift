import Entitlements

/// What a ledger period was bought as: a subscription period's offer, or the kind of a one-time purchase.
public enum LedgerKind: String, Codable, Hashable, Sendable, CaseIterable {
    case trial, intro, promo, offerCode, winBack, regular, nonRenewing, nonConsumable, consumable

    init(kind: ProductKind, periodType: PeriodType) {
        switch kind {
        case .autoRenewable:
            switch periodType {
            case .trial: self = .trial
            case .intro: self = .intro
            case .promo: self = .promo
            case .offerCode: self = .offerCode
            case .winBack: self = .winBack
            case .regular: self = .regular
            }
        case .nonRenewing: self = .nonRenewing
        case .nonConsumable: self = .nonConsumable
        case .consumable: self = .consumable
        }
    }

    /// An auto-renewable subscription's period (any offer).
    public var isSubscriptionPeriod: Bool {
        switch self {
        case .trial, .intro, .promo, .offerCode, .winBack, .regular: true
        case .nonRenewing, .nonConsumable, .consumable: false
        }
    }
}

/// One row of the money ledger: a period (or one-time purchase) of one customer, with its price, its refund, and what
/// the metrics need precomputed (its price per month, Apple's estimated commission and the storefront's tax).
///
/// Money is in milliunits of `currency`, as Apple sends it; instants are epoch milliseconds.
public struct LedgerEntry: Hashable, Sendable {
    public var appId: String
    public var environment: String
    public var customerId: String
    public var originalTransactionId: String
    public var transactionId: String
    public var productId: String
    /// The subscription group; the product id for what is not a subscription.
    public var group: String
    public var kind: LedgerKind
    public var start: Int64
    /// When it stopped granting (expiry, refund, revocation, upgrade); `nil` for what never ends.
    public var end: Int64?
    /// A subscription's paid periods numbered from 0 in its original transaction; `nil` for trials and one-time
    /// purchases.
    public var renewalNumber: Int?
    /// `nil` when the App Store did not say (a legacy receipt's entry).
    public var price: Int64?
    public var currency: String?
    public var storefront: String?
    public var familyShared: Bool
    /// A refund (never a loss of Family Sharing) and its amount: the price, or its refunded share when prorated.
    public var refundedAt: Int64?
    public var refundAmount: Int64?
    /// The price of one month of this period (MRR's share), in milliunits; `nil` for what is not a paid subscription
    /// period.
    public var monthlyPrice: Int64?
    /// Apple's estimated commission in per mille: 300, or 150 (Small Business Program, or a subscriber's second year).
    public var commissionPerMille: Int
    /// The storefront's tax rate (VAT included in the price) in per mille, when the app gives one.
    public var taxPerMille: Int?
    /// The subscription's auto-renew status as last known, on its latest period only (`nil` elsewhere, or unknown).
    public var willRenew: Bool?
    /// The end of the grace period the subscription is in after this period, if any: it stays active until then.
    public var graceUntil: Int64?
    /// How a paid subscription period began, when it began a run of paid service; `nil` for a renewal.
    public var acquisition: Acquisition?
    /// The next paid period of the same subscription (original transaction), if any: its start, price per month and
    /// whether it was refunded. For a trial, the period it converted to.
    public var nextStart: Int64?
    public var nextMonthlyPrice: Int64?
    public var nextRefunded: Bool?

    public enum Acquisition: String, Codable, Hashable, Sendable {
        /// A first paid period without a trial before it (a regular price, or a paid introductory offer).
        case new
        /// The first paid period after a free trial.
        case trialConversion
        /// A subscription that had lapsed, paid again.
        case resubscription
    }

    public init(
        appId: String, environment: String, customerId: String, originalTransactionId: String, transactionId: String,
        productId: String, group: String, kind: LedgerKind, start: Int64, end: Int64?, renewalNumber: Int?, price: Int64?,
        currency: String?, storefront: String?, familyShared: Bool = false, refundedAt: Int64? = nil,
        refundAmount: Int64? = nil, monthlyPrice: Int64? = nil, commissionPerMille: Int = 300, taxPerMille: Int? = nil,
        willRenew: Bool? = nil, graceUntil: Int64? = nil
    ) {
        self.appId = appId
        self.environment = environment
        self.customerId = customerId
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
        self.productId = productId
        self.group = group
        self.kind = kind
        self.start = start
        self.end = end
        self.renewalNumber = renewalNumber
        self.price = price
        self.currency = currency
        self.storefront = storefront
        self.familyShared = familyShared
        self.refundedAt = refundedAt
        self.refundAmount = refundAmount
        self.monthlyPrice = monthlyPrice
        self.commissionPerMille = commissionPerMille
        self.taxPerMille = taxPerMille
        self.willRenew = willRenew
        self.graceUntil = graceUntil
    }

    /// Whether it counts as revenue: paid, not family-shared, with a price.
    public var isRevenue: Bool { !familyShared && (price ?? 0) > 0 && kind != .trial }

    /// The end of the access it gives, grace included.
    public var activeUntil: Int64? {
        guard let end else { return nil }
        return max(end, graceUntil ?? end)
    }
}
