import AppStoreModels

/// One purchase as the engine resolved it: the versions of one transaction merged, its kind and group from the
/// catalog, and the instant it stopped granting (a refund, a revocation, an upgrade). What the money ledger is made of.
public struct PurchasePeriod: Hashable, Sendable {
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var kind: ProductKind
    /// The subscription group (subscriptions), else the product id.
    public var group: String
    public var periodType: PeriodType
    public var start: Timestamp
    /// The end the App Store gave it (an auto-renewable's expiry, a non-renewing pass's end); `nil` for what does not
    /// end.
    public var naturalEnd: Timestamp?
    /// When it stopped granting: `naturalEnd`, or earlier after a revocation or an upgrade; `nil` for what never ends.
    public var end: Timestamp?
    public var revocation: Revocation?
    public var isUpgraded: Bool
    public var price: Int64?
    public var currency: String?
    public var storefront: String?
    public var environment: Environment?
    public var ownership: Ownership
    public var quantity: Int32?
    /// The commitment a monthly payment belongs to (``BillingCommitment``): the period is a month, whatever the
    /// product's own period.
    public var commitment: BillingCommitment?

    init(_ purchase: Purchase) {
        transactionId = purchase.transactionId
        originalTransactionId = purchase.originalTransactionId
        productId = purchase.productId
        kind = purchase.kind
        group = purchase.group
        periodType = purchase.periodType
        start = Timestamp(millisecondsSince1970: purchase.start)
        naturalEnd = purchase.naturalEnd.map { Timestamp(millisecondsSince1970: $0) }
        end = purchase.end == .max ? nil : Timestamp(millisecondsSince1970: purchase.end)
        revocation = purchase.revocation
        isUpgraded = purchase.isUpgraded
        price = purchase.price
        currency = purchase.currency
        storefront = purchase.storefront
        environment = purchase.environment
        ownership = purchase.ownership
        quantity = purchase.quantity
        commitment = purchase.commitment
    }
}

extension PreparedCustomer {
    /// Every purchase of the customer, ordered by start, then transaction id.
    public var purchases: [PurchasePeriod] { evaluator.facts.purchases.map(PurchasePeriod.init) }
}
