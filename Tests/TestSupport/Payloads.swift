import AppStore
import Entitlements

/// Payloads as the App Store signs them, for every test target: one builder each, so that a field Apple adds is
/// added once.
public enum Payloads {
    /// A transaction. Instants are ms since 1970; `type` is taken from `catalog` when the product is in it.
    public static func transaction(
        _ id: String, original: String? = nil, product: String = "pro.monthly", purchase: Int64, expires: Int64? = nil,
        signed: Int64? = nil, period: PeriodType = .regular, reason: TransactionReason? = .purchase, price: Int64 = 9990,
        revoked: Int64? = nil, revocationReason: RevocationReason = .appIssue, revocationType: RevocationType? = nil,
        upgraded: Bool = false, ownership: InAppOwnershipType = .purchased, environment: Environment = .production,
        token: String? = nil, bundleId: String? = nil, type: ProductType? = nil, catalog: Catalog = TestCatalogs.full
    ) -> JWSTransactionDecodedPayload {
        var t = JWSTransactionDecodedPayload()
        t.transactionId = id
        t.originalTransactionId = original ?? id
        t.productId = product
        t.bundleId = bundleId
        t.purchaseDate = Timestamp(millisecondsSince1970: purchase)
        t.originalPurchaseDate = Timestamp(millisecondsSince1970: purchase)
        t.expiresDate = expires.map(Timestamp.init(millisecondsSince1970:))
        t.signedDate = Timestamp(millisecondsSince1970: signed ?? purchase)
        t.transactionReason = reason
        t.price = period == .trial ? 0 : price
        t.currency = "USD"
        t.storefront = "USA"
        t.environment = environment
        t.inAppOwnershipType = ownership
        t.appAccountToken = token
        switch period {
        case .trial:
            t.offerType = .introductoryOffer
            t.offerDiscountType = .freeTrial
        case .intro:
            t.offerType = .introductoryOffer
            t.offerDiscountType = .payAsYouGo
        case .promo:
            t.offerType = .promotionalOffer
            t.offerIdentifier = "promo"
        case .offerCode: t.offerType = .offerCode
        case .winBack: t.offerType = .winBackOffer
        case .regular: break
        }
        if let revoked {
            t.revocationDate = Timestamp(millisecondsSince1970: revoked)
            t.revocationReason = revocationReason
            t.revocationType = revocationType ?? .refundFull
        }
        if upgraded { t.isUpgraded = true }
        t.type = type ?? catalog[product].map { productType($0.type) }
        return t
    }

    /// A renewal info. Instants are ms since 1970.
    public static func renewal(
        _ original: String, product: String = "pro.monthly", signed: Int64, autoRenew: Bool = true, billingRetry: Bool? = nil,
        graceEnds: Int64? = nil, intent: ExpirationIntent? = nil, next: String? = nil, winBack: [String]? = nil,
        environment: Environment = .production, token: String? = nil
    ) -> JWSRenewalInfoDecodedPayload {
        var r = JWSRenewalInfoDecodedPayload()
        r.originalTransactionId = original
        r.productId = product
        r.autoRenewProductId = next ?? product
        r.autoRenewStatus = autoRenew ? .on : .off
        r.isInBillingRetryPeriod = billingRetry
        r.gracePeriodExpiresDate = graceEnds.map(Timestamp.init(millisecondsSince1970:))
        r.expirationIntent = intent
        r.signedDate = Timestamp(millisecondsSince1970: signed)
        r.environment = environment
        r.eligibleWinBackOfferIds = winBack
        r.appAccountToken = token
        return r
    }

    private static func productType(_ type: ProductKind) -> ProductType {
        switch type {
        case .autoRenewable: .autoRenewable
        case .nonConsumable: .nonConsumable
        case .nonRenewing: .nonRenewing
        case .consumable: .consumable
        }
    }
}
