import AppStore
@testable import Entitlements

/// Instants for readable scenarios: days after 2026-01-01T00:00:00Z.
let day: Int64 = 86_400_000
let t0: Int64 = 1_767_225_600_000
func at(_ days: Int64) -> Int64 { t0 + days * day }
func ts(_ days: Int64) -> Timestamp { Timestamp(millisecondsSince1970: at(days)) }

let testCatalog: Catalog = {
    do {
        return try Catalog(products: [
            CatalogProduct(id: "pro.monthly", type: .autoRenewable, group: "pro", period: try ISO8601Duration("P1M"),
                           entitlements: ["pro"], level: 2),
            CatalogProduct(id: "pro.yearly", type: .autoRenewable, group: "pro", period: try ISO8601Duration("P1Y"),
                           entitlements: ["pro"], level: 1),
            CatalogProduct(id: "plus.monthly", type: .autoRenewable, group: "plus", period: try ISO8601Duration("P1M"),
                           entitlements: ["plus"]),
            CatalogProduct(id: "lifetime", type: .nonConsumable, entitlements: ["pro"]),
            CatalogProduct(id: "pass.year", type: .nonRenewing, duration: try ISO8601Duration("P1Y"), entitlements: ["pass"]),
            CatalogProduct(id: "coins", type: .consumable),
        ])
    } catch {
        preconditionFailure("the test catalog is valid: \(error)")
    }
}()

/// A transaction as the App Store would sign it, in days after `t0`.
func transaction(
    _ id: String, original: String? = nil, product: String = "pro.monthly", start: Int64, expires: Int64? = nil,
    period: PeriodType = .regular, reason: TransactionReason? = .purchase, price: Int64 = 9990, signed: Int64? = nil,
    revoked: Int64? = nil, revocationType: RevocationType? = nil, upgraded: Bool = false,
    ownership: InAppOwnershipType = .purchased, environment: Environment = .production
) -> JWSTransactionDecodedPayload {
    var t = JWSTransactionDecodedPayload()
    t.transactionId = id
    t.originalTransactionId = original ?? id
    t.productId = product
    t.purchaseDate = ts(start)
    t.originalPurchaseDate = ts(start)
    t.expiresDate = expires.map(ts)
    t.transactionReason = reason
    t.price = period == .trial ? 0 : price
    t.currency = "USD"
    t.storefront = "USA"
    t.environment = environment
    t.inAppOwnershipType = ownership
    t.signedDate = ts(signed ?? start)
    switch period {
    case .trial: t.offerType = .introductoryOffer; t.offerDiscountType = .freeTrial
    case .intro: t.offerType = .introductoryOffer; t.offerDiscountType = .payAsYouGo
    case .promo: t.offerType = .promotionalOffer; t.offerIdentifier = "promo"
    case .offerCode: t.offerType = .offerCode
    case .winBack: t.offerType = .winBackOffer
    case .regular: break
    }
    if let revoked {
        t.revocationDate = ts(revoked)
        t.revocationReason = .appIssue
        t.revocationType = revocationType ?? .refundFull
    }
    if upgraded { t.isUpgraded = true }
    if let productType = testCatalog[product]?.type {
        switch productType {
        case .autoRenewable: t.type = .autoRenewable
        case .nonConsumable: t.type = .nonConsumable
        case .nonRenewing: t.type = .nonRenewing
        case .consumable: t.type = .consumable
        }
    }
    return t
}

func renewal(
    _ original: String, product: String = "pro.monthly", signed: Int64, autoRenew: Bool = true,
    billingRetry: Bool = false, graceEnds: Int64? = nil, intent: ExpirationIntent? = nil, next: String? = nil,
    winBack: [String]? = nil
) -> JWSRenewalInfoDecodedPayload {
    var r = JWSRenewalInfoDecodedPayload()
    r.originalTransactionId = original
    r.productId = product
    r.autoRenewProductId = next ?? product
    r.autoRenewStatus = autoRenew ? .on : .off
    r.isInBillingRetryPeriod = billingRetry
    r.gracePeriodExpiresDate = graceEnds.map(ts)
    r.expirationIntent = intent
    r.signedDate = ts(signed)
    r.environment = .production
    r.eligibleWinBackOfferIds = winBack
    return r
}

func notification(
    _ type: NotificationType, _ subtype: NotificationSubtype? = nil, uuid: String, signed: Int64, original: String,
    transaction: String? = nil
) -> NotificationFact {
    NotificationFact(
        notificationType: type, subtype: subtype, notificationUUID: uuid, signedDate: ts(signed),
        originalTransactionId: original, transactionId: transaction, environment: .production)
}

func evaluate(_ facts: [Fact], atDay day: Int64, catalog: Catalog = testCatalog) -> CustomerEvaluation {
    EntitlementEngine.evaluate(catalog: catalog, facts: facts, now: ts(day))
}

func evaluate(_ facts: [Fact], at instant: Int64, catalog: Catalog = testCatalog) -> CustomerEvaluation {
    EntitlementEngine.evaluate(catalog: catalog, facts: facts, now: Timestamp(millisecondsSince1970: instant))
}

extension CustomerEvaluation {
    var types: [SubscriptionEventType] { events.map(\.type) }
    func events(_ type: SubscriptionEventType) -> [SubscriptionEvent] { events.filter { $0.type == type } }
    var subscription: SubscriptionState? { state.subscriptions.first }
}
