import AppStore
import Entitlements

/// Buying, renewing, billing and expiry of auto-renewable subscriptions, each with the notifications Apple documents.
extension StoreModel {
    /// A product's price in the customer's storefront (after any price increase), with an offer's discount.
    func price(_ productId: String, for customer: Customer, offer: PurchaseOffer = .none) -> Int64 {
        let usd = increasedPrices[productId] ?? app.basePrice(productId)
        switch offer {
        case .none: return customer.storefront.price(usd: usd)
        case .freeTrial: return 0
        case .payAsYouGo: return customer.storefront.price(usd: usd / 2)
        case .payUpFront(let n): return customer.storefront.price(usd: usd * Int64(max(1, n)) / 2)
        case .promotional, .offerCode: return customer.storefront.price(usd: usd * 7 / 10)
        }
    }

    /// A commitment plan's monthly payment: a twelfth of the yearly price in the customer's storefront.
    func monthlyCommitmentPrice(_ productId: String, for customer: Customer) -> Int64 {
        customer.storefront.price(usd: (increasedPrices[productId] ?? app.basePrice(productId)) / Self.commitmentMonths)
    }

    /// A commitment plan: a year's subscription billed in twelve monthly payments (Apple's `billingPlanType`
    /// `MONTHLY`).
    static let commitmentMonths: Int64 = 12

    /// The customer's own subscription in `group`, if any (the latest, should there be several).
    func subscriptionId(of customer: String, group: String) -> String? {
        customers[customer]?.subscriptionIds.last { subscriptions[$0]?.group == group }
    }

    /// The customer's subscription named by a product of its group, or its only subscription.
    func subscriptionId(of customer: String, product: String?) throws(StoreError) -> String {
        if let product {
            guard let group = try self.product(product).group else { throw StoreError("'\(product)' is not a subscription") }
            guard let id = subscriptionId(of: customer, group: group) else {
                throw StoreError("\(customer) has no subscription in group '\(group)'")
            }
            return id
        }
        let own = subscriptions(of: customer)
        guard let id = own.last?.originalTransactionId else { throw StoreError("\(customer) has no subscription") }
        guard Set(own.map(\.group)).count == 1 else {
            throw StoreError("\(customer) has subscriptions in several groups: name the product")
        }
        return id
    }

    /// How long a free trial of `product` lasts: the catalog's `freeTrial`, else what most apps give (a week, or a
    /// month for a subscription of a year or more).
    public static func freeTrialLength(of product: CatalogProduct) -> ISO8601Duration? {
        product.freeTrial ?? (try? ISO8601Duration((product.period?.months ?? 0) >= 12 ? "P1M" : "P1W"))
    }

    // MARK: - Buying

    /// A purchase of an auto-renewable subscription: a first purchase (`SUBSCRIBED`/`INITIAL_BUY`), a
    /// resubscription to a lapsed one (`RESUBSCRIBE`), with an offer code or a promotional offer (`OFFER_REDEEMED`).
    /// Buying another product of a group the customer is subscribed in is a product change.
    /// With `billedMonthly`, a yearly product is sold as a commitment plan: twelve monthly payments, each a
    /// transaction with Apple's `billingPlanType` `MONTHLY` and `commitmentInfo`.
    public mutating func subscribe(_ name: String, product productId: String, offer: PurchaseOffer = .none, billedMonthly: Bool = false)
        throws -> [SimulatedNotification]
    {
        let customer = try customer(name)
        let product = try product(productId)
        guard product.type == .autoRenewable, let group = product.group, var period = product.period else {
            throw StoreError("'\(productId)' is not an auto-renewable subscription with a period")
        }
        if billedMonthly {
            guard period.months == Self.commitmentMonths, period.days == 0, offer == .none else {
                throw StoreError(
                    "a commitment plan is a yearly product (P1Y) billed monthly, without an offer: '\(productId)' is \(period)")
            }
            period = try ISO8601Duration("P1M")
        }
        guard !removedFromSale.contains(productId) else { throw StoreError("'\(productId)' is not for sale") }
        if offer.isIntroductory, customer.introUsed.contains(group) {
            throw StoreError("\(name) already had an introductory offer in group '\(group)': Apple would not offer another")
        }
        let existing = subscriptionId(of: name, group: group)
        if let existing, let s = subscriptions[existing], s.renewing {
            switch offer {
            case .promotional, .offerCode:
                if s.last.productId == productId { return try redeemForActive(existing, offer: offer) }
                return try changeProduct(name, to: productId, offer: offer)
            default:
                guard s.last.productId != productId else { throw StoreError("\(name) is already subscribed to '\(productId)'") }
                return try changeProduct(name, to: productId)
            }
        }
        let id = existing ?? newId()
        var s =
            existing.flatMap { subscriptions[$0] }
            ?? Subscription(
                originalTransactionId: id, customer: name, group: group, ownership: .purchased, autoRenewProductId: productId)
        let count: Int
        switch offer {
        case .payUpFront(let n): count = max(1, n)
        default: count = 1
        }
        // A free trial lasts what the catalog's offer gives; a paid offer or price, the product's period.
        let length = offer == .freeTrial ? Self.freeTrialLength(of: product) ?? period : period
        let p = Period(
            transactionId: existing == nil ? id : newId(), webOrderLineItemId: newId(prefix: 4), productId: productId,
            start: now, end: time.end(of: length, count: count, from: now), offer: offer,
            price: billedMonthly ? monthlyCommitmentPrice(productId, for: customer) : price(productId, for: customer, offer: offer),
            currency: customer.storefront.currency, reason: .purchase, signedAt: now,
            commitment: billedMonthly ? try commitment(startingAt: now, of: product) : nil)
        let first = existing == nil
        s.periods.append(p)
        s.status = .active
        s.autoRenew = true
        s.autoRenewProductId = productId
        s.failedAt = nil
        s.graceEndsAt = nil
        s.expirationIntent = nil
        s.expirationReason = nil
        s.pendingOffer = nil
        s.priceIncrease = nil
        if case .payAsYouGo(let n) = offer { s.introRemaining = max(0, n - 1) } else { s.introRemaining = 0 }
        if offer.isIntroductory { customers[name]?.introUsed.insert(group) }
        if first { add(s) } else { subscriptions[id] = s }
        schedule(id)
        expect(Self.startType(offer.periodType, first: first), name, id, at: now)
        let subtype: NotificationSubtype = first ? .initialBuy : .resubscribe
        switch offer {
        case .promotional, .offerCode: return [try notify(.offerRedeemed, subtype, subscription: id, at: now)]
        default: return [try notify(.subscribed, subtype, subscription: id, at: now)]
        }
    }

    /// The first billing period of a commitment to `product`'s year, starting at `start`.
    func commitment(startingAt start: Int64, of product: CatalogProduct) throws -> PeriodCommitment {
        guard let year = product.period else { throw StoreError("'\(product.id)' has no period") }
        return PeriodCommitment(number: 1, total: Int32(Self.commitmentMonths), expiresAt: time.end(of: year, from: start))
    }

    // `startType` and `conversion` restate docs/events.md's table on purpose, beside the engine's own (Timeline):
    // the ground truth must not call the engine it checks, or the end-to-end suite would test it against itself.
    static func startType(_ period: PeriodType, first: Bool) -> SubscriptionEventType {
        switch period {
        case .trial: .trialStarted
        case .intro: .introStarted
        case .promo where first: .promoStarted
        default: first ? .subscriptionStarted : .subscriptionResubscribed
        }
    }

    static func conversion(from previous: PeriodType, to next: PeriodType) -> SubscriptionEventType? {
        switch (previous, next) {
        case (.trial, .trial): nil
        case (.trial, _): .trialConverted
        case (.intro, .intro): .introRenewed
        case (.intro, _): .introConverted
        case (.promo, .promo): nil
        case (_, .promo): .promoStarted
        case (.promo, _): .promoConverted
        default: nil
        }
    }

    /// An offer redeemed for the active subscription itself: it applies from the next renewal (`OFFER_REDEEMED`,
    /// no subtype).
    mutating func redeemForActive(_ id: String, offer: PurchaseOffer) throws -> [SimulatedNotification] {
        subscriptions[id]?.pendingOffer = offer
        return [try notify(.offerRedeemed, nil, subscription: id, at: now)]
    }

    /// A change to another product of the group. By Apple's rules: to a higher level of service (a lower `level`)
    /// at once, with a new period (`DID_CHANGE_RENEWAL_PREF`/`UPGRADE`, or `OFFER_REDEEMED`/`UPGRADE`); a crossgrade
    /// to a product of the same duration at once too; a downgrade, or a crossgrade to another duration, at the next
    /// renewal (`DOWNGRADE`). Choosing the current product again cancels a pending change (no subtype).
    public mutating func changeProduct(_ name: String, to productId: String, offer: PurchaseOffer = .none) throws -> [SimulatedNotification]
    {
        let customer = try customer(name)
        let target = try product(productId)
        guard let group = target.group, let period = target.period else { throw StoreError("'\(productId)' is not a subscription") }
        guard let id = subscriptionId(of: name, group: group), var s = subscriptions[id], s.renewing else {
            throw StoreError("\(name) has no active subscription in group '\(group)' to change")
        }
        let redeemed = offer != .none
        let current = try product(s.last.productId)
        if productId == s.last.productId {
            guard s.autoRenewProductId != productId else { throw StoreError("\(name) is already on '\(productId)'") }
            s.autoRenewProductId = productId
            subscriptions[id] = s
            return [try notify(.didChangeRenewalPref, nil, subscription: id, at: now)]
        }
        let fromLevel = current.level ?? 0
        let toLevel = target.level ?? 0
        let samePeriod = current.period == target.period
        let immediate = toLevel < fromLevel || (toLevel == fromLevel && samePeriod)
        guard immediate else {
            s.autoRenewProductId = productId
            if redeemed { s.pendingOffer = offer }
            subscriptions[id] = s
            return [try notify(redeemed ? .offerRedeemed : .didChangeRenewalPref, .downgrade, subscription: id, at: now)]
        }
        guard s.status == .active else { throw StoreError("\(name) cannot upgrade while the payment is failing") }
        var sent: [SimulatedNotification] = []
        let previous = s.last
        s.periods[s.periods.count - 1].upgraded = true
        s.periods[s.periods.count - 1].signedAt = now
        let p = Period(
            transactionId: newId(), webOrderLineItemId: newId(prefix: 4), productId: productId, start: now,
            end: time.end(of: period, from: now), offer: offer, price: price(productId, for: customer, offer: offer),
            currency: customer.storefront.currency, reason: .purchase, signedAt: now)
        s.periods.append(p)
        s.autoRenewProductId = productId
        s.introRemaining = 0
        s.pendingOffer = nil
        subscriptions[id] = s
        // The upgraded transaction's new version (isUpgraded) goes into the ledger: history shows it.
        _ = try signPeriod(s, s.periods.count - 2)
        schedule(id)
        expect(.productChanged, name, id, at: now)
        if let conversion = Self.conversion(from: previous.offer.periodType, to: offer.periodType) { expect(conversion, name, id, at: now) }
        sent.append(try notify(redeemed ? .offerRedeemed : .didChangeRenewalPref, .upgrade, subscription: id, at: now))
        for member in s.members {
            sent += try mirrorRenewal(member, of: id, at: now, reason: .purchase, type: .didChangeRenewalPref, subtype: .upgrade)
        }
        return sent
    }

    // MARK: - Time-driven changes

    mutating func handleDue(_ id: String, at instant: Int64) throws -> [SimulatedNotification] {
        guard let s = subscriptions[id] else { return [] }
        switch s.status {
        case .active:
            let paymentFails = customers[s.customer]?.paymentFails ?? false
            // A commitment's remaining monthly payments come whatever auto-renew says.
            if !s.autoRenew, s.last.commitment?.periodsRemain != true { return try expire(id, .voluntary, at: instant) }
            if removedFromSale.contains(s.autoRenewProductId) { return try expire(id, .productNotForSale, at: instant) }
            if s.priceIncrease == .customerHasNotResponded { return try expire(id, .priceIncrease, at: instant) }
            if let limit = time.renewalLimit, s.renewals >= limit {
                subscriptions[id]?.autoRenew = false
                return try expire(id, .voluntary, at: instant)
            }
            if paymentFails { return try fail(id, at: instant) }
            return try renew(id, start: instant, at: instant, recovery: false)
        case .gracePeriod:
            subscriptions[id]?.status = .billingRetry
            expect(.gracePeriodExpired, s.customer, id, at: instant)
            var sent = [try notify(.gracePeriodExpired, subscription: id, at: instant)]
            for member in s.members where subscriptions[member]?.status == .gracePeriod {
                subscriptions[member]?.status = .billingRetry
                if let m = subscriptions[member] { expect(.gracePeriodExpired, m.customer, member, at: instant) }
                sent.append(try notify(.gracePeriodExpired, subscription: member, at: instant))
            }
            schedule(id)
            return sent
        case .billingRetry:
            return try expire(id, .billingRetry, at: instant)
        case .expired, .revoked:
            return []
        }
    }

    /// A renewal: a new period of the renewing product (a pending downgrade or crossgrade takes effect), at the
    /// introductory price while pay-as-you-go periods remain, at a redeemed offer's price once.
    mutating func renew(_ id: String, start: Int64, at instant: Int64, recovery: Bool) throws -> [SimulatedNotification] {
        guard var s = subscriptions[id], let customer = customers[s.customer] else { return [] }
        let productId = s.autoRenewProductId
        let product = try product(productId)
        guard var period = product.period else { throw StoreError("'\(productId)' has no period") }
        let previous = s.last
        // A commitment plan's next monthly payment: the next billing period, or the first of a new commitment.
        var commitment: PeriodCommitment?
        if var current = previous.commitment {
            period = try ISO8601Duration("P1M")
            if current.periodsRemain {
                current.number += 1
                commitment = current
            } else {
                commitment = try self.commitment(startingAt: start, of: product)
                expect(.commitmentRenewed, s.customer, id, at: start)
            }
        }
        var offer = PurchaseOffer.none
        if s.introRemaining > 0, case .payAsYouGo = previous.offer {
            offer = previous.offer
            s.introRemaining -= 1
        } else if let pending = s.pendingOffer {
            offer = pending
            s.pendingOffer = nil
        }
        s.periods.append(
            Period(
                transactionId: newId(), webOrderLineItemId: newId(prefix: 4), productId: productId, start: start,
                end: time.end(of: period, from: start), offer: offer,
                price: commitment == nil ? price(productId, for: customer, offer: offer) : monthlyCommitmentPrice(productId, for: customer),
                currency: customer.storefront.currency, reason: .renewal, signedAt: instant, commitment: commitment))
        s.status = .active
        s.renewals += 1
        s.failedAt = nil
        s.graceEndsAt = nil
        s.expirationIntent = nil
        if s.priceIncrease == .customerConsentedOrWasNotifiedWithoutNeedingConsent { s.priceIncrease = nil }
        subscriptions[id] = s
        schedule(id)
        if recovery { expect(.billingRecovered, s.customer, id, at: instant) }
        if productId != previous.productId { expect(.productChanged, s.customer, id, at: start) }
        expect(Self.conversion(from: previous.offer.periodType, to: offer.periodType) ?? .subscriptionRenewed, s.customer, id, at: start)
        var sent = [try notify(.didRenew, recovery ? .billingRecovery : nil, subscription: id, at: instant)]
        for member in s.members {
            sent += try mirrorRenewal(
                member, of: id, at: instant, start: start, reason: .renewal, type: .didRenew, subtype: recovery ? .billingRecovery : nil)
        }
        return sent
    }

    /// A family member's copy of the purchaser's newest period.
    mutating func mirrorRenewal(
        _ member: String, of owner: String, at instant: Int64, start: Int64? = nil, reason: TransactionReason,
        type: NotificationType, subtype: NotificationSubtype?
    ) throws -> [SimulatedNotification] {
        guard var m = subscriptions[member], m.renewing, let o = subscriptions[owner] else { return [] }
        let previous = m.last
        let recovering = m.status != .active
        m.periods.append(
            Period(
                transactionId: newId(), webOrderLineItemId: newId(prefix: 4), productId: o.last.productId, start: start ?? o.last.start,
                end: o.last.end, offer: .none, price: 0, currency: o.last.currency, reason: reason, signedAt: instant))
        m.status = .active
        m.autoRenewProductId = o.autoRenewProductId
        m.failedAt = nil
        m.graceEndsAt = nil
        subscriptions[member] = m
        if recovering { expect(.billingRecovered, m.customer, member, at: instant) }
        if previous.productId != o.last.productId { expect(.productChanged, m.customer, member, at: start ?? o.last.start) }
        if type == .didRenew { expect(.subscriptionRenewed, m.customer, member, at: start ?? o.last.start) }
        return [try notify(type, subtype, subscription: member, at: instant)]
    }

    /// The renewal's payment fails: a grace period when the app has one (`DID_FAIL_TO_RENEW`/`GRACE_PERIOD`), else
    /// billing retry (`DID_FAIL_TO_RENEW`). Apple keeps a weekly subscription's grace period to 6 days.
    mutating func fail(_ id: String, at instant: Int64) throws -> [SimulatedNotification] {
        guard var s = subscriptions[id] else { return [] }
        s.failedAt = instant
        var graceDays = app.gracePeriodDays
        if let days = graceDays, let period = app.catalog[s.last.productId]?.period, period.months == 0 { graceDays = min(days, 6) }
        if let days = graceDays, days > 0 {
            s.status = .gracePeriod
            s.graceEndsAt = instant + time.days(days)
        } else {
            s.status = .billingRetry
            s.graceEndsAt = nil
        }
        subscriptions[id] = s
        schedule(id)
        var sent: [SimulatedNotification] = []
        for target in [id] + s.members {
            guard var t = subscriptions[target], t.renewing else { continue }
            t.status = s.status
            t.failedAt = s.failedAt
            t.graceEndsAt = s.graceEndsAt
            subscriptions[target] = t
            expect(.billingIssue, t.customer, target, at: instant)
            if s.status == .gracePeriod { expect(.gracePeriodStarted, t.customer, target, at: instant) }
            sent.append(try notify(.didFailToRenew, s.status == .gracePeriod ? .gracePeriod : nil, subscription: target, at: instant))
        }
        return sent
    }

    /// The end of a subscription, with the `EXPIRED` subtype Apple documents for the reason.
    mutating func expire(_ id: String, _ subtype: NotificationSubtype, at instant: Int64) throws -> [SimulatedNotification] {
        guard let s = subscriptions[id] else { return [] }
        let (intent, reason): (ExpirationIntent, ExpirationReason) =
            switch subtype {
            case .voluntary: (.customerCancelled, .voluntary)
            case .billingRetry: (.billingError, .billingError)
            case .priceIncrease: (.customerDidNotConsentToPriceIncrease, .priceIncrease)
            case .productNotForSale: (.productNotAvailable, .productUnavailable)
            default: (.other, .other)
            }
        var sent: [SimulatedNotification] = []
        for target in [id] + s.members {
            guard var t = subscriptions[target], t.renewing else { continue }
            t.status = .expired
            t.expirationIntent = intent
            t.expirationReason = reason
            t.graceEndsAt = nil
            subscriptions[target] = t
            let type: SubscriptionEventType =
                switch t.last.offer.periodType {
                case .trial: .trialExpired
                case .intro: .introExpired
                case .promo: .promoExpired
                default: .subscriptionExpired
                }
            expect(type, t.customer, target, at: instant)
            if let commitment = t.last.commitment, !commitment.periodsRemain { expect(.commitmentEnded, t.customer, target, at: instant) }
            sent.append(try notify(.expired, subtype, subscription: target, at: instant))
        }
        return sent
    }

    // MARK: - The customer's choices

    /// The customer fixes their payment method: subscriptions in their grace period or in billing retry renew
    /// (`DID_RENEW`/`BILLING_RECOVERY`). Within the grace period the renewal date stays (no paid day is lost); in
    /// billing retry the new period starts now.
    public mutating func recoverBilling(_ name: String) throws -> [SimulatedNotification] {
        let customer = try customer(name)
        customers[name]?.paymentFails = false
        var sent: [SimulatedNotification] = []
        for id in customer.subscriptionIds {
            guard let s = subscriptions[id], s.sharedFrom == nil else { continue }
            if s.status == .gracePeriod, let failed = s.failedAt {
                sent += try renew(id, start: failed, at: now, recovery: true)
            } else if s.status == .billingRetry {
                sent += try renew(id, start: now, at: now, recovery: true)
            }
        }
        return sent
    }

    /// The customer's payment method starts failing: their next renewals fail.
    public mutating func failPayments(_ name: String) throws(StoreError) {
        _ = try customer(name)
        customers[name]?.paymentFails = true
    }

    /// Auto-renew turned off or on in the customer's subscription settings (`DID_CHANGE_RENEWAL_STATUS`).
    public mutating func setAutoRenew(_ name: String, product: String?, on: Bool) throws -> [SimulatedNotification] {
        let id = try subscriptionId(of: name, product: product)
        guard var s = subscriptions[id], s.renewing, s.sharedFrom == nil else { throw StoreError("\(name)'s subscription is not renewing") }
        guard s.autoRenew != on else { throw StoreError("auto-renew is already \(on ? "on" : "off")") }
        s.autoRenew = on
        subscriptions[id] = s
        for member in s.members { subscriptions[member]?.autoRenew = on }
        if on {
            expect(.autorenewEnabled, name, id, at: now)
        } else {
            let current = s.periods.last { $0.start <= now && now < $0.end } ?? s.last
            expect(current.offer.periodType == .trial ? .trialCanceled : .subscriptionCanceled, name, id, at: now)
        }
        return [try notify(.didChangeRenewalStatus, on ? .autoRenewEnabled : .autoRenewDisabled, subscription: id, at: now)]
    }

    /// The product is removed from sale: subscriptions to it expire at their next renewal (`PRODUCT_NOT_FOR_SALE`).
    public mutating func removeFromSale(_ productId: String) throws(StoreError) {
        _ = try product(productId)
        removedFromSale.insert(productId)
    }

    /// A price increase of a subscription product (`PRICE_INCREASE`): with the customer's consent required,
    /// `PENDING` for every subscriber, who then accepts (`ACCEPTED`) or lets the subscription expire at renewal
    /// (`EXPIRED`/`PRICE_INCREASE`); without, `ACCEPTED` at once.
    public mutating func increasePrice(_ productId: String, usd milliunits: Int64, consentRequired: Bool) throws -> [SimulatedNotification]
    {
        _ = try product(productId)
        guard (1...10_000_000).contains(milliunits) else { throw StoreError("a price is 1 to 10,000,000 milliunits of USD") }
        increasedPrices[productId] = milliunits
        var sent: [SimulatedNotification] = []
        for id in subscriptionOrder {
            guard var s = subscriptions[id], s.sharedFrom == nil, s.renewing, s.autoRenewProductId == productId else { continue }
            s.priceIncrease = consentRequired ? .customerHasNotResponded : .customerConsentedOrWasNotifiedWithoutNeedingConsent
            subscriptions[id] = s
            sent.append(try notify(.priceIncrease, consentRequired ? .pending : .accepted, subscription: id, at: now))
        }
        return sent
    }

    public mutating func acceptPriceIncrease(_ name: String, product: String?) throws -> [SimulatedNotification] {
        let id = try subscriptionId(of: name, product: product)
        guard subscriptions[id]?.priceIncrease == .customerHasNotResponded else {
            throw StoreError("\(name) has no pending price increase")
        }
        subscriptions[id]?.priceIncrease = .customerConsentedOrWasNotifiedWithoutNeedingConsent
        return [try notify(.priceIncrease, .accepted, subscription: id, at: now)]
    }

    /// The developer extends one subscription's renewal date (`RENEWAL_EXTENDED`): its current transaction is
    /// signed again with the later `expiresDate`.
    public mutating func extendRenewal(_ name: String, product: String?, days: Int) throws -> [SimulatedNotification] {
        guard (1...90).contains(days) else { throw StoreError("Apple extends by 1 to 90 days") }
        let id = try subscriptionId(of: name, product: product)
        guard let s = subscriptions[id], s.status == .active else {
            throw StoreError("only an active subscription can be extended (Apple refuses billing retry)")
        }
        return try extend(id, days: days)
    }

    mutating func extend(_ id: String, days: Int) throws -> [SimulatedNotification] {
        guard var s = subscriptions[id] else { return [] }
        s.periods[s.periods.count - 1].end = PeriodTime.adding((time.days(days), false), to: s.last.end)
        s.periods[s.periods.count - 1].signedAt = now
        subscriptions[id] = s
        schedule(id)
        return [try notify(.renewalExtended, subscription: id, at: now)]
    }

    /// Extends every active subscriber of a product (Apple's mass extension): `RENEWAL_EXTENDED` for each,
    /// `RENEWAL_EXTENSION`/`FAILURE` for each subscription that cannot be (billing retry), then the `SUMMARY`.
    public mutating func extendAll(_ productId: String, days: Int) throws -> [SimulatedNotification] {
        guard (1...90).contains(days) else { throw StoreError("Apple extends by 1 to 90 days") }
        _ = try product(productId)
        var sent: [SimulatedNotification] = []
        var succeeded: Int64 = 0
        var failed: Int64 = 0
        for id in subscriptionOrder {
            guard let s = subscriptions[id], s.sharedFrom == nil, s.last.productId == productId, s.renewing else { continue }
            if s.status == .active {
                sent += try extend(id, days: days)
                succeeded += 1
            } else {
                sent.append(try notify(.renewalExtension, .failure, subscription: id, at: now))
                failed += 1
            }
        }
        var summary = NotificationSummary()
        summary.environment = app.environment
        summary.appAppleId = app.appAppleId
        summary.bundleId = app.bundleId
        summary.productId = productId
        summary.requestIdentifier = uuid("mass-extension:\(nextCounter())")
        summary.storefrontCountryCodes = Storefront.all.map(\.code)
        summary.succeededCount = succeeded
        summary.failedCount = failed
        sent.append(try send(.renewalExtension, .summary, summary: summary, at: now))
        return sent
    }
}
