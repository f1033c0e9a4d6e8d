import AppStore
import Entitlements

/// One-time purchases, refunds, Family Sharing, and the notifications that change no state.
extension StoreModel {
    // MARK: - One-time purchases

    /// A consumable, non-consumable or non-renewing subscription (`ONE_TIME_CHARGE`).
    /// A one-time purchase; with `offerCode`, redeemed with that code at half the price (the transaction carries
    /// `offerType` 3, the code's `offerIdentifier` and `offerDiscountType` `ONE_TIME`).
    public mutating func buyOnce(_ name: String, product productId: String, quantity: Int32 = 1, offerCode: String? = nil) throws
        -> [SimulatedNotification]
    {
        let customer = try customer(name)
        let product = try product(productId)
        guard product.type != .autoRenewable else { throw StoreError("'\(productId)' is a subscription: subscribe to it") }
        guard !removedFromSale.contains(productId) else { throw StoreError("'\(productId)' is not for sale") }
        guard (1...10).contains(quantity) else { throw StoreError("the App Store sells 1 to 10 at a time") }
        if product.type == .nonConsumable, purchases(of: name).contains(where: { $0.productId == productId && $0.revocation == nil }) {
            throw StoreError("\(name) already owns '\(productId)'")
        }
        let id = newId()
        let purchase = OneTimePurchase(
            transactionId: id, customer: name, productId: productId, kind: product.type, start: now,
            end: product.type == .nonRenewing ? product.duration.map { $0.added(to: now) } : nil, quantity: quantity,
            price: price(productId, for: customer) * Int64(quantity) / (offerCode == nil ? 1 : 2), currency: customer.storefront.currency,
            offerCode: offerCode)
        add(purchase)
        let type: SubscriptionEventType =
            switch product.type {
            case .consumable: .consumablePurchase
            case .nonConsumable: .nonConsumablePurchase
            default: .nonRenewingPurchase
            }
        expect(type, name, id, at: now)
        return [try notifyOneTime(.oneTimeCharge, purchase, at: now)]
    }

    // MARK: - Refunds

    enum Target {
        case period(subscription: String, index: Int)
        case once(String)
    }

    /// What a refund is about: the customer's latest one-time purchase of `product`, or the latest period of their
    /// subscription in its group (or their only subscription, with no product).
    func refundTarget(_ name: String, product productId: String?) throws(StoreError) -> Target {
        if let productId, try product(productId).type != .autoRenewable {
            guard let id = purchases(of: name).last(where: { $0.productId == productId })?.transactionId else {
                throw StoreError("\(name) never bought '\(productId)'")
            }
            return .once(id)
        }
        let id = try subscriptionId(of: name, product: productId)
        guard let s = subscriptions[id], s.sharedFrom == nil else { throw StoreError("only the purchaser can ask for a refund") }
        return .period(subscription: id, index: s.periods.count - 1)
    }

    /// Apple refunds a purchase (`REFUND`): its transaction is signed again with `revocationDate`, the reason
    /// (`1`: an issue with the app, `0`: other) and the type, full or prorated. A refunded subscription period is
    /// revoked, and family members lose access (`REVOKE`).
    public mutating func refund(_ name: String, product: String?, appIssue: Bool, percentage: Int32? = nil) throws
        -> [SimulatedNotification]
    {
        if let percentage, !(1...100_000).contains(percentage) { throw StoreError("a prorated refund is 1 to 100000 milli-percent") }
        let revocation = (
            date: now, reason: appIssue ? RevocationReason.appIssue : .other,
            type: percentage == nil ? RevocationType.refundFull : .refundProrated, percentage: percentage
        )
        switch try refundTarget(name, product: product) {
        case .once(let id):
            guard var o = oneTime[id], o.revocation == nil else { throw StoreError("that purchase is refunded already") }
            o.revocation = revocation
            oneTime[id] = o
            expect(.refunded, name, id, at: now)
            return [try notifyOneTime(.refund, o, at: now)]
        case .period(let id, let index):
            guard var s = subscriptions[id], s.periods[index].revocation == nil else { throw StoreError("that period is refunded already") }
            s.periods[index].revocation = revocation
            s.periods[index].signedAt = now
            s.status = .revoked
            s.graceEndsAt = nil
            subscriptions[id] = s
            expect(.refunded, name, id, at: now)
            var sent = [try notify(.refund, subscription: id, at: now)]
            for member in s.members { sent += try revokeShared(member) }
            return sent
        }
    }

    /// Records what the developer answered for a transaction's refund request (the fake Server API's Send
    /// Consumption Information); a later answer replaces an earlier one, as Apple keeps the last.
    public mutating func recordConsumption(_ answer: ReceivedConsumption, transactionId: String) throws(StoreError) {
        guard transactions[transactionId] != nil else { throw StoreError("no transaction \(transactionId)") }
        consumptionAnswers[transactionId] = answer
    }

    /// The product type Apple signed for a transaction (`Auto-Renewable Subscription` …).
    public func productType(ofTransaction id: String) -> ProductType? { transactions[id]?.value.type }

    /// Set App Account Token on an original transaction: the purchase's later transactions (renewals) carry it. The
    /// simulator keeps tokens per customer, so the customer who owns it takes the token. False for an unknown one.
    public mutating func setAppAccountToken(originalTransactionId id: String, _ token: String) throws(StoreError) -> Bool {
        guard let name = subscriptions[id]?.customer ?? oneTime[id]?.customer else { return false }
        try setAppAccountToken(name, token)
        return true
    }

    /// Apple decides the refund the customer asked for by the preference the developer sent for it: `DECLINE` declines
    /// (`REFUND_DECLINED`), `GRANT_FULL` refunds in full, `GRANT_PRORATED` refunds the share not consumed (for a
    /// subscription, the time left of its period). Without an answer Apple decides `otherwise` (`grant` or `decline`).
    public mutating func decideRefund(_ name: String, product: String?, otherwise: String) throws -> [SimulatedNotification] {
        guard otherwise == "grant" || otherwise == "decline" else { throw StoreError("decideRefund's otherwise is grant or decline") }
        let transactionId: String
        var unusedShare: Int32?
        switch try refundTarget(name, product: product) {
        case .once(let id):
            transactionId = id
            if let consumed = consumptionAnswers[id]?.consumptionPercentage { unusedShare = 100_000 - consumed }
        case .period(let id, let index):
            guard let period = subscriptions[id]?.periods[index] else { throw StoreError("no such subscription") }
            transactionId = period.transactionId
            let length = max(period.end - period.start, 1)
            unusedShare = Int32(clamping: max(period.end - now, 0) * 100_000 / length)
        }
        switch consumptionAnswers[transactionId]?.refundPreference ?? (otherwise == "grant" ? .grantFull : .decline) {
        case .grantFull:
            return try refund(name, product: product, appIssue: false)
        case .grantProrated:
            guard let share = unusedShare, (1..<100_000).contains(share) else { return try refund(name, product: product, appIssue: false) }
            return try refund(name, product: product, appIssue: false, percentage: share)
        default:
            return try declineRefund(name, product: product)
        }
    }

    /// Apple declines the customer's refund request (`REFUND_DECLINED`): nothing changes.
    public mutating func declineRefund(_ name: String, product: String?) throws -> [SimulatedNotification] {
        switch try refundTarget(name, product: product) {
        case .once(let id):
            guard let o = oneTime[id] else { return [] }
            return [try notifyOneTime(.refundDeclined, o, at: now)]
        case .period(let id, _):
            return [try notify(.refundDeclined, subscription: id, at: now)]
        }
    }

    /// Apple reverses a refund (`REFUND_REVERSED`): the transaction is signed again without its revocation, and the
    /// period gives access again while it lasts.
    public mutating func reverseRefund(_ name: String, product: String?) throws -> [SimulatedNotification] {
        switch try refundTarget(name, product: product) {
        case .once(let id):
            guard var o = oneTime[id], o.revocation != nil else { throw StoreError("that purchase is not refunded") }
            o.revocation = nil
            oneTime[id] = o
            expect(.refundReversed, name, id, at: now)
            return [try notifyOneTime(.refundReversed, o, at: now)]
        case .period(let id, let index):
            guard var s = subscriptions[id], s.periods[index].revocation != nil else { throw StoreError("that period is not refunded") }
            s.periods[index].revocation = nil
            s.periods[index].signedAt = now
            guard s.periods[index].end > now else {
                throw StoreError("the refunded period has ended: the simulator reverses refunds within their period")
            }
            s.status = .active
            subscriptions[id] = s
            schedule(id)
            expect(.refundReversed, name, id, at: now)
            return [try notify(.refundReversed, subscription: id, at: now)]
        }
    }

    /// The customer asked for a refund and Apple asks the developer for consumption information
    /// (`CONSUMPTION_REQUEST`).
    public mutating func requestConsumption(_ name: String, product: String?, reason: ConsumptionRequestReason) throws
        -> [SimulatedNotification]
    {
        switch try refundTarget(name, product: product) {
        case .once(let id):
            guard let o = oneTime[id] else { return [] }
            return [try notifyOneTime(.consumptionRequest, o, at: now, consumption: reason)]
        case .period(let id, _):
            return [try notify(.consumptionRequest, subscription: id, at: now, consumption: reason)]
        }
    }

    // MARK: - Family Sharing

    /// The purchaser shares their subscription with a family member, who gets their own original transaction
    /// (`SUBSCRIBED`/`INITIAL_BUY`, ownership `FAMILY_SHARED`, no appAccountToken).
    public mutating func shareWithFamily(_ owner: String, member: String, product: String?) throws -> [SimulatedNotification] {
        let id = try subscriptionId(of: owner, product: product)
        guard let o = subscriptions[id], o.sharedFrom == nil, o.status == .active else {
            throw StoreError("\(owner) has no active subscription of their own to share")
        }
        if customers[member] == nil { try addCustomer(member, storefront: customers[owner]?.storefront.code, withToken: false) }
        if let existing = subscriptionId(of: member, group: o.group), subscriptions[existing]?.renewing == true {
            throw StoreError("\(member) already has a subscription in group '\(o.group)'")
        }
        let memberId = newId()
        var m = Subscription(
            originalTransactionId: memberId, customer: member, group: o.group, ownership: .familyShared, sharedFrom: id,
            autoRenewProductId: o.autoRenewProductId)
        m.autoRenew = o.autoRenew
        m.periods = [
            Period(
                transactionId: memberId, webOrderLineItemId: newId(prefix: 4), productId: o.last.productId, start: now, end: o.last.end,
                offer: .none, price: 0, currency: o.last.currency, reason: .purchase, signedAt: now)
        ]
        add(m)
        subscriptions[id]?.members.append(memberId)
        expect(.subscriptionStarted, member, memberId, at: now)
        return [try notify(.subscribed, .initialBuy, subscription: memberId, at: now)]
    }

    /// The purchaser stops sharing, or the member leaves the family (`REVOKE`, revocation type `FAMILY_REVOKE`).
    public mutating func stopSharing(_ owner: String, member: String, product: String?) throws -> [SimulatedNotification] {
        let id = try subscriptionId(of: owner, product: product)
        guard let o = subscriptions[id], let memberId = o.members.first(where: { subscriptions[$0]?.customer == member }) else {
            throw StoreError("\(owner) does not share with \(member)")
        }
        subscriptions[id]?.members.removeAll { $0 == memberId }
        return try revokeShared(memberId)
    }

    mutating func revokeShared(_ memberId: String) throws -> [SimulatedNotification] {
        guard var m = subscriptions[memberId], m.status != .revoked, m.status != .expired else { return [] }
        m.periods[m.periods.count - 1].revocation = (now, .other, .familyRevoke, nil)
        m.periods[m.periods.count - 1].signedAt = now
        m.status = .revoked
        subscriptions[memberId] = m
        expect(.familyAccessRevoked, m.customer, memberId, at: now)
        return [try notify(.revoke, subscription: memberId, at: now)]
    }

    // MARK: - Notifications that change no customer's state

    /// `TEST`, as Request a Test Notification sends it.
    public mutating func testNotification() throws -> SimulatedNotification {
        try send(.test, nil, data: baseData(), at: now)
    }

    /// `EXTERNAL_PURCHASE_TOKEN` (`UNREPORTED`, `CREATED` or `ACTIVE_TOKEN_REMINDER`): about an external purchase
    /// token, with no transaction.
    public mutating func externalPurchaseToken(_ subtype: NotificationSubtype) throws -> SimulatedNotification {
        var token = ExternalPurchaseToken()
        token.externalPurchaseId = (app.environment == .production ? "" : "SANDBOX_") + uuid("external:\(nextCounter())")
        token.tokenCreationDate = Timestamp(millisecondsSince1970: now)
        token.appAppleId = app.appAppleId
        token.bundleId = app.bundleId
        return try send(.externalPurchaseToken, subtype, externalPurchaseToken: token, at: now)
    }

    /// `RESCIND_CONSENT`: a parent withdrew consent for the app; it carries `appData`, no transaction. About a
    /// customer, `appData` carries their signed app transaction, and the server withholds the access of every purchase
    /// they made so far (one `consent_rescinded` each); about no one, it is a notice.
    public mutating func rescindConsent(customer name: String? = nil) throws -> SimulatedNotification {
        var data = AppData()
        data.appAppleId = app.appAppleId
        data.bundleId = app.bundleId
        data.environment = app.environment
        if let name {
            let customer = try customer(name)
            var appTransaction = AppTransaction()
            appTransaction.receiptType = app.environment
            appTransaction.appAppleId = app.appAppleId
            appTransaction.bundleId = app.bundleId
            appTransaction.applicationVersion = "1"
            appTransaction.originalApplicationVersion = "1"
            appTransaction.receiptCreationDate = Timestamp(millisecondsSince1970: now)
            appTransaction.originalPurchaseDate = Timestamp(millisecondsSince1970: customerSince(name) ?? now)
            appTransaction.appTransactionId = customer.appTransactionId
            appTransaction.originalPlatform = .iOS
            data.signedAppTransactionInfo = try ca.sign(appTransaction)
            if customer.consentRescindedAt == nil {
                customers[name]?.consentRescindedAt = now
                for s in subscriptions(of: name) where s.periods.first.map({ $0.start <= now }) ?? false {
                    expect(.consentRescinded, name, s.originalTransactionId, at: now)
                }
                for o in purchases(of: name) where o.start <= now { expect(.consentRescinded, name, o.transactionId, at: now) }
            }
        }
        return try send(.rescindConsent, nil, appData: data, at: now, customer: name)
    }

    /// When the customer first bought anything.
    func customerSince(_ name: String) -> Int64? {
        (subscriptions(of: name).compactMap { $0.periods.first?.start } + purchases(of: name).map(\.start)).min()
    }

    /// `METADATA_UPDATE`, `MIGRATION` and `PRICE_CHANGE` belong to the Advanced Commerce API: the simulator sends
    /// them about a customer's subscription as it stands, so that a server can be seen to store them and change
    /// nothing.
    public mutating func advancedCommerceNotice(_ type: NotificationType, customer name: String, product: String?) throws
        -> [SimulatedNotification]
    {
        let id = try subscriptionId(of: name, product: product)
        return [try notify(type, subscription: id, at: now)]
    }
}
