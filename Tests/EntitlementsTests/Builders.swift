import AppStore
import TestSupport

@testable import Entitlements

let testCatalog = TestCatalogs.full

/// `days` after `t0`, for the builders' whole days.
private func at(days: Int64) -> Int64 { at(Double(days)) }

/// A transaction as the App Store would sign it, in days after `t0`.
func transaction(
    _ id: String, original: String? = nil, product: String = "pro.monthly", start: Int64, expires: Int64? = nil,
    period: PeriodType = .regular, reason: TransactionReason? = .purchase, price: Int64 = 9990, signed: Int64? = nil,
    revoked: Int64? = nil, revocationType: RevocationType? = nil, upgraded: Bool = false,
    ownership: InAppOwnershipType = .purchased, environment: Environment = .production
) -> JWSTransactionDecodedPayload {
    Payloads.transaction(
        id, original: original, product: product, purchase: at(days: start), expires: expires.map { at(days: $0) },
        signed: at(days: signed ?? start), period: period, reason: reason, price: price, revoked: revoked.map { at(days: $0) },
        revocationType: revocationType,
        upgraded: upgraded, ownership: ownership, environment: environment, catalog: testCatalog)
}

func renewal(
    _ original: String, product: String = "pro.monthly", signed: Int64, autoRenew: Bool = true,
    billingRetry: Bool = false, graceEnds: Int64? = nil, intent: ExpirationIntent? = nil, next: String? = nil,
    winBack: [String]? = nil
) -> JWSRenewalInfoDecodedPayload {
    Payloads.renewal(
        original, product: product, signed: at(days: signed), autoRenew: autoRenew, billingRetry: billingRetry,
        graceEnds: graceEnds.map { at(days: $0) }, intent: intent, next: next, winBack: winBack)
}

func notification(
    _ type: NotificationType, _ subtype: NotificationSubtype? = nil, uuid: String, signed: Int64, original: String,
    transaction: String? = nil
) -> NotificationFact {
    NotificationFact(
        notificationType: type, subtype: subtype, notificationUUID: uuid, signedDate: ts(Double(signed)),
        originalTransactionId: original, transactionId: transaction, environment: .production)
}

func evaluate(_ facts: [Fact], atDay day: Int64, catalog: Catalog = testCatalog) -> CustomerEvaluation {
    EntitlementEngine.evaluate(catalog: catalog, facts: facts, now: ts(Double(day)))
}

func evaluate(_ facts: [Fact], at instant: Int64, catalog: Catalog = testCatalog) -> CustomerEvaluation {
    EntitlementEngine.evaluate(catalog: catalog, facts: facts, now: Timestamp(millisecondsSince1970: instant))
}

extension CustomerEvaluation {
    var types: [SubscriptionEventType] { events.map(\.type) }
    func events(_ type: SubscriptionEventType) -> [SubscriptionEvent] { events.filter { $0.type == type } }
    var subscription: SubscriptionState? { state.subscriptions.first }
}
