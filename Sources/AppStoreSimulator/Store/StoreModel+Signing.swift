import AppStore
import Entitlements

/// What the store signs: transactions, renewal infos and notifications, with Apple's fields.
extension StoreModel {
    func transactionPayload(_ s: Subscription, _ p: Period) -> JWSTransactionDecodedPayload {
        var t = JWSTransactionDecodedPayload()
        let customer = customers[s.customer]
        t.transactionId = p.transactionId
        t.originalTransactionId = s.originalTransactionId
        t.webOrderLineItemId = p.webOrderLineItemId
        t.bundleId = app.bundleId
        t.productId = p.productId
        t.subscriptionGroupIdentifier = s.group
        t.purchaseDate = Timestamp(millisecondsSince1970: p.start)
        t.originalPurchaseDate = Timestamp(millisecondsSince1970: s.periods.first?.start ?? p.start)
        t.expiresDate = Timestamp(millisecondsSince1970: p.end)
        t.quantity = 1
        t.type = .autoRenewable
        t.appAccountToken = customer?.token
        t.appTransactionId = customer?.appTransactionId
        t.inAppOwnershipType = s.ownership
        t.signedDate = Timestamp(millisecondsSince1970: p.signedAt)
        t.environment = app.environment
        t.storefront = customer?.storefront.code
        t.storefrontId = customer?.storefront.id
        t.transactionReason = p.reason
        t.price = p.price
        t.currency = p.currency
        t.isUpgraded = p.upgraded ? true : nil
        if let commitment = p.commitment {
            t.billingPlanType = BillingCommitment.monthly
            var info = CommitmentInfo()
            info.billingPeriodNumber = commitment.number
            info.totalBillingPeriods = commitment.total
            info.commitmentExpiresDate = Timestamp(millisecondsSince1970: commitment.expiresAt)
            t.commitmentInfo = info
        }
        Self.describe(p.offer, into: &t)
        if let revocation = p.revocation {
            t.revocationDate = Timestamp(millisecondsSince1970: revocation.date)
            t.revocationReason = revocation.reason
            t.revocationType = revocation.type
            t.revocationPercentage = revocation.percentage
        }
        return t
    }

    static func describe(_ offer: PurchaseOffer, into t: inout JWSTransactionDecodedPayload) {
        switch offer {
        case .none: break
        case .freeTrial:
            t.offerType = .introductoryOffer
            t.offerDiscountType = .freeTrial
        case .payAsYouGo:
            t.offerType = .introductoryOffer
            t.offerDiscountType = .payAsYouGo
        case .payUpFront:
            t.offerType = .introductoryOffer
            t.offerDiscountType = .payUpFront
        case .promotional(let id):
            t.offerType = .promotionalOffer
            t.offerIdentifier = id
            t.offerDiscountType = .payAsYouGo
        case .offerCode(let id):
            t.offerType = .offerCode
            t.offerIdentifier = id
            t.offerDiscountType = .payAsYouGo
        }
    }

    func oneTimePayload(_ o: OneTimePurchase, signedAt: Int64) -> JWSTransactionDecodedPayload {
        var t = JWSTransactionDecodedPayload()
        let customer = customers[o.customer]
        t.transactionId = o.transactionId
        t.originalTransactionId = o.transactionId
        t.bundleId = app.bundleId
        t.productId = o.productId
        t.purchaseDate = Timestamp(millisecondsSince1970: o.start)
        t.originalPurchaseDate = Timestamp(millisecondsSince1970: o.start)
        t.quantity = o.quantity
        t.type =
            switch o.kind {
            case .consumable: .consumable
            case .nonConsumable: .nonConsumable
            case .nonRenewing: .nonRenewing
            case .autoRenewable: .autoRenewable
            }
        t.appAccountToken = customer?.token
        t.appTransactionId = customer?.appTransactionId
        t.inAppOwnershipType = .purchased
        t.signedDate = Timestamp(millisecondsSince1970: signedAt)
        t.environment = app.environment
        t.storefront = customer?.storefront.code
        t.storefrontId = customer?.storefront.id
        t.transactionReason = .purchase
        t.price = o.price
        t.currency = o.currency
        if let code = o.offerCode {
            t.offerType = .offerCode
            t.offerIdentifier = code
            t.offerDiscountType = .oneTime
        }
        if let revocation = o.revocation {
            t.revocationDate = Timestamp(millisecondsSince1970: revocation.date)
            t.revocationReason = revocation.reason
            t.revocationType = revocation.type
            t.revocationPercentage = revocation.percentage
        }
        return t
    }

    func renewalPayload(_ s: Subscription, signedAt: Int64) -> JWSRenewalInfoDecodedPayload {
        var r = JWSRenewalInfoDecodedPayload()
        let customer = customers[s.customer]
        r.originalTransactionId = s.originalTransactionId
        r.productId = s.last.productId
        r.autoRenewProductId = s.autoRenewProductId
        r.autoRenewStatus = s.autoRenew ? .on : .off
        r.signedDate = Timestamp(millisecondsSince1970: signedAt)
        r.environment = app.environment
        r.appAccountToken = customer?.token
        r.appTransactionId = customer?.appTransactionId
        r.recentSubscriptionStartDate = Timestamp(millisecondsSince1970: s.periods.first?.start ?? s.last.start)
        r.currency = customer?.storefront.currency
        r.renewalPrice = customer.map { price(s.autoRenewProductId, for: $0) }
        if let commitment = s.last.commitment {
            // The next monthly payment, and whether a new commitment follows this one (the customer's auto-renew).
            r.renewalPrice = customer.map { monthlyCommitmentPrice(s.autoRenewProductId, for: $0) }
            r.renewalBillingPlanType = BillingCommitment.monthly
            var info = RenewalCommitmentInfo()
            info.commitmentAutoRenewProductId = s.autoRenewProductId
            info.commitmentAutoRenewStatus = s.autoRenew ? .on : .off
            info.commitmentRenewalBillingPlanType = BillingCommitment.monthly
            info.commitmentRenewalDate = Timestamp(millisecondsSince1970: commitment.expiresAt)
            info.commitmentRenewalPrice = r.renewalPrice
            r.commitmentInfo = info
        }
        if s.renewing {
            r.renewalDate = Timestamp(millisecondsSince1970: s.status == .active ? s.last.end : (s.graceEndsAt ?? s.failedAt ?? s.last.end))
        }
        switch s.status {
        case .gracePeriod:
            r.isInBillingRetryPeriod = true
            r.gracePeriodExpiresDate = s.graceEndsAt.map(Timestamp.init(millisecondsSince1970:))
            r.expirationIntent = .billingError
        case .billingRetry:
            r.isInBillingRetryPeriod = true
            r.gracePeriodExpiresDate = s.graceEndsAt.map(Timestamp.init(millisecondsSince1970:))
            r.expirationIntent = .billingError
        case .expired:
            r.isInBillingRetryPeriod = false
            r.expirationIntent = s.expirationIntent
        case .active, .revoked:
            r.isInBillingRetryPeriod = false
        }
        r.priceIncreaseStatus = s.priceIncrease
        if let pending = s.pendingOffer {
            var t = JWSTransactionDecodedPayload()
            Self.describe(pending, into: &t)
            r.offerType = t.offerType
            r.offerIdentifier = t.offerIdentifier
            r.offerDiscountType = t.offerDiscountType
        }
        return r
    }

    static func notificationStatus(_ status: RenewalState) -> SubscriptionStatus {
        switch status {
        case .active: .active
        case .gracePeriod: .billingGracePeriod
        case .billingRetry: .billingRetry
        case .expired: .expired
        case .revoked: .revoked
        }
    }

    /// Signs (and records in the ledger) the latest version of a period's transaction.
    mutating func signPeriod(_ s: Subscription, _ index: Int) throws -> String {
        let payload = transactionPayload(s, s.periods[index])
        let jws = try ca.sign(payload)
        record(payload, jws)
        return jws
    }

    mutating func record(_ payload: JWSTransactionDecodedPayload, _ jws: String) {
        guard let id = payload.transactionId else { return }
        if transactions.updateValue(Signed(jws: jws, value: payload), forKey: id) == nil { transactionOrder.append(id) }
    }

    /// A notification about a subscription: its latest (or given) period's transaction and its renewal info.
    mutating func notify(
        _ type: NotificationType, _ subtype: NotificationSubtype? = nil, subscription id: String, period: Int? = nil,
        at instant: Int64, consumption: ConsumptionRequestReason? = nil
    ) throws -> SimulatedNotification {
        guard let s = subscriptions[id] else { throw StoreError("no subscription \(id)") }
        var data = baseData()
        data.signedTransactionInfo = try signPeriod(s, period ?? s.periods.count - 1)
        data.signedRenewalInfo = try ca.sign(renewalPayload(s, signedAt: instant))
        data.status = Self.notificationStatus(s.status)
        data.consumptionRequestReason = consumption
        return try send(type, subtype, data: data, at: instant, customer: s.customer, originalTransactionId: id)
    }

    mutating func notifyOneTime(
        _ type: NotificationType, _ o: OneTimePurchase, at instant: Int64, consumption: ConsumptionRequestReason? = nil
    ) throws -> SimulatedNotification {
        let payload = oneTimePayload(o, signedAt: instant)
        let jws = try ca.sign(payload)
        record(payload, jws)
        var data = baseData()
        data.signedTransactionInfo = jws
        data.consumptionRequestReason = consumption
        return try send(type, nil, data: data, at: instant, customer: o.customer, originalTransactionId: o.transactionId)
    }

    func baseData() -> NotificationData {
        var data = NotificationData()
        data.bundleId = app.bundleId
        data.appAppleId = app.appAppleId
        data.environment = app.environment
        data.bundleVersion = "1.0"
        return data
    }

    /// Signs a notification and adds it to Notification History (with no delivery attempt yet).
    mutating func send(
        _ type: NotificationType, _ subtype: NotificationSubtype?, data: NotificationData? = nil, summary: NotificationSummary? = nil,
        externalPurchaseToken: ExternalPurchaseToken? = nil, appData: AppData? = nil, at instant: Int64,
        customer: String? = nil, originalTransactionId: String? = nil
    ) throws -> SimulatedNotification {
        var payload = ResponseBodyV2DecodedPayload()
        payload.notificationType = type
        payload.subtype = subtype
        payload.notificationUUID = uuid("notification:\(nextCounter())")
        payload.version = "2.0"
        payload.signedDate = Timestamp(millisecondsSince1970: instant)
        payload.data = data
        payload.summary = summary
        payload.externalPurchaseToken = externalPurchaseToken
        payload.appData = appData
        let notification = SimulatedNotification(
            uuid: payload.notificationUUID ?? "", type: type, subtype: subtype, signedDate: instant, customer: customer,
            originalTransactionId: originalTransactionId, signedPayload: try ca.sign(payload))
        historyIndex[notification.uuid] = history.count
        history.append(HistoryEntry(notification: notification, attempts: []))
        return notification
    }

    /// Records one delivery attempt (`SUCCESS`, or Apple's failure names such as `NO_RESPONSE`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`).
    public mutating func recordAttempt(_ uuid: String, at instant: Int64, result: String) {
        guard let index = historyIndex[uuid] else { return }
        history[index].attempts.append(.init(date: instant, result: result))
    }
}
