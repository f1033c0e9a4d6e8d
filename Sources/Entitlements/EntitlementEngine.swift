import AppStoreModels

/// The engine: the facts of one customer, the catalog and `now` in; the customer's state and subscription events out.
///
/// Pure and total: no I/O, no clock, and every input gives an answer. The answer depends on the set of facts only, not
/// on their order or on how often each came, because Apple delivers notifications late, twice or out of order and apps
/// post the same transaction again.
public enum EntitlementEngine {
    /// Apple retries a failed renewal for up to 60 days; after that the subscription has expired even if no fact says
    /// so yet.
    public static let billingRetryLimit: Int64 = 60 * 86_400_000

    /// The state at `now` and the events that happened up to `now`.
    ///
    /// With `environment`, facts signed for another environment are left out (facts without one are kept). Facts the
    /// engine cannot place are left out too: a transaction without `transactionId`, `productId` or `purchaseDate`, a
    /// renewal info without `originalTransactionId` (`storekeeper entitlements` rejects them with their line number).
    public static func evaluate(
        catalog: Catalog, facts: [Fact], now: Timestamp, environment: Environment? = nil
    ) -> CustomerEvaluation {
        PreparedCustomer(catalog: catalog, facts: facts, environment: environment).evaluate(at: now)
    }

    /// The state alone, for callers that do not need the events.
    public static func state(
        catalog: Catalog, facts: [Fact], now: Timestamp, environment: Environment? = nil
    ) -> CustomerState {
        PreparedCustomer(catalog: catalog, facts: facts, environment: environment).state(at: now)
    }
}

/// One customer's facts, prepared once: de-duplicated, merged, ordered and resolved against the catalog.
///
/// Preparing is most of the work. A server that keeps this value per customer evaluates it again when `nextChangeAt`
/// passes, and prepares anew only when a fact arrives.
public struct PreparedCustomer: Sendable {
    let evaluator: Evaluator

    public init(catalog: Catalog, facts: [Fact], environment: Environment? = nil) {
        evaluator = Evaluator(facts: FactSet(facts: facts, catalog: catalog, environment: environment), catalog: catalog)
    }

    public func state(at now: Timestamp) -> CustomerState { evaluator.state(at: now.millisecondsSince1970) }

    public func events(upTo now: Timestamp) -> [SubscriptionEvent] { evaluator.events(upTo: now.millisecondsSince1970) }

    public func evaluate(at now: Timestamp) -> CustomerEvaluation {
        CustomerEvaluation(state: state(at: now), events: events(upTo: now))
    }
}

/// The state and the events, encoded side by side: the keys of ``CustomerState`` and `events`.
public struct CustomerEvaluation: Encodable, Hashable, Sendable {
    public var state: CustomerState
    public var events: [SubscriptionEvent]

    enum CodingKeys: String, CodingKey { case events }

    public func encode(to encoder: any Encoder) throws {
        try state.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(events, forKey: .events)
    }
}

struct Evaluator: Sendable {
    let facts: FactSet
    let catalog: Catalog
    /// Past this many trial evaluations, `nextChangeAt` is the next breakpoint even if nothing changes there: early is
    /// safe for a cache, late is not.
    static let nextChangeProbes = 24

    func state(at t: Int64) -> CustomerState {
        var state = snapshot(at: t)
        state.nextChangeAt = nextChange(after: t, from: state).map(Timestamp.init(millisecondsSince1970:))
        return state
    }

    // MARK: - Subscriptions

    /// The latest renewal info of a subscription (by its index in `facts.chains`).
    func latestRenewal(_ chain: Int) -> RenewalRecord? { facts.chains[chain].renewals.last }

    /// Whether the subscription will renew, by the latest of its renewal infos and its renewal-status notifications.
    /// A period that began after the latest of them (a renewal, a resubscription) began with auto-renew on.
    func autoRenewSignal(_ chain: Int, periodStart: Int64 = .min) -> Bool? {
        guard let latest = facts.chains[chain].autoRenew else { return nil }
        return latest.at < periodStart ? true : latest.on
    }

    /// The renewal info if it speaks about this period or a later one (signed after the period began).
    func currentRenewal(_ chain: Int, periodStart: Int64) -> RenewalRecord? {
        guard let renewal = latestRenewal(chain) else { return nil }
        if let signed = renewal.signedDate?.millisecondsSince1970, signed < periodStart { return nil }
        return renewal
    }

    /// The subscription at `t`, and the index of its current product; `nil` before its first purchase.
    func subscription(_ chainIndex: Int, at t: Int64) -> (state: SubscriptionState, product: Int)? {
        let chain = facts.chains[chainIndex]
        var current: Purchase?
        var last: Purchase?
        var latestExpiry: Int64?
        for index in chain.members {
            let purchase = facts.purchases[index]
            guard purchase.start <= t else { break }
            if purchase.end > t { current = purchase }
            if let known = last {
                if (purchase.end, purchase.start) >= (known.end, known.start) { last = purchase }
            } else {
                last = purchase
            }
            if purchase.revocation == nil, !purchase.isUpgraded, let end = purchase.naturalEnd {
                latestExpiry = max(latestExpiry ?? end, end)
            }
        }
        guard let last else { return nil }
        let shown = current ?? last
        let renewal = currentRenewal(chainIndex, periodStart: shown.start)
        let retryEnds = last.naturalEnd.map { $0 &+ EntitlementEngine.billingRetryLimit }

        let status: RenewalState
        if current != nil {
            status = .active
        } else if let revocation = last.revocation, revocation.date.millisecondsSince1970 <= t {
            status = .revoked
        } else if last.isUpgraded {
            status = .expired
        } else if let renewal, renewal.isInBillingRetryPeriod == true, let retryEnds, t < retryEnds {
            if let grace = renewal.gracePeriodExpiresDate?.millisecondsSince1970, t < grace {
                status = .gracePeriod
            } else {
                status = .billingRetry
            }
        } else {
            status = .expired
        }

        let renewing = status == .active || status == .gracePeriod || status == .billingRetry
        // Under a commitment the remaining billing periods come whatever auto-renew says; it decides the next commitment.
        let autoRenew = renewing ? autoRenewSignal(chainIndex, periodStart: shown.start) : false
        let willRenew: Bool? = shown.commitment?.periodsRemain == true && renewing ? true : autoRenew
        var commitment = shown.commitment
        if renewing, let said = renewal?.commitmentAutoRenewStatus {
            commitment?.willRenew = said == .on
        } else {
            commitment?.willRenew = autoRenew
        }
        var pending: String?
        if renewing, willRenew == true, let next = renewal?.autoRenewProductId, next != shown.productId {
            pending = next
        }
        let inBilling = status == .gracePeriod || status == .billingRetry
        let state = SubscriptionState(
            originalTransactionId: chain.id,
            transactionId: shown.transactionId,
            productId: shown.productId,
            group: shown.group,
            environment: shown.environment,
            ownership: shown.ownership,
            status: status,
            periodType: shown.periodType,
            purchaseDate: Timestamp(millisecondsSince1970: shown.start),
            originalPurchaseDate: shown.originalPurchaseDate.map(Timestamp.init(millisecondsSince1970:)),
            expiresDate: (latestExpiry ?? shown.naturalEnd).map(Timestamp.init(millisecondsSince1970:)),
            willRenew: willRenew,
            autoRenewProductId: pending,
            gracePeriodExpiresDate: inBilling ? renewal?.gracePeriodExpiresDate : nil,
            billingRetryEndsAt: inBilling ? retryEnds.map(Timestamp.init(millisecondsSince1970:)) : nil,
            expirationReason: status == .expired ? expirationReason(chainIndex, last: last, renewal: renewal) : nil,
            revocation: status == .revoked ? last.revocation : nil,
            isUpgraded: status == .expired && last.isUpgraded,
            commitment: commitment,
            renewalPrice: willRenew == true ? renewal?.renewalPrice : nil,
            renewalCurrency: willRenew == true ? renewal?.currency : nil)
        return (state, shown.productIndex)
    }

    func expirationReason(_ chain: Int, last: Purchase, renewal: RenewalRecord?) -> ExpirationReason? {
        if last.isUpgraded { return nil }
        if let intent = renewal?.expirationIntent { return ExpirationReason(intent) }
        if let expired = facts.chains[chain].notifications.last(where: {
            $0.notificationType == .expired && $0.signedDate.millisecondsSince1970 >= last.start
        }), let reason = ExpirationReason(expiredSubtype: expired.subtype) {
            return reason
        }
        if renewal?.isInBillingRetryPeriod == true { return .billingError }
        if autoRenewSignal(chain) == false { return .voluntary }
        return nil
    }

    // MARK: - The whole state

    func snapshot(at t: Int64) -> CustomerState {
        let current = currentSubscriptions(at: t)
        var access = AccessTable(productCount: facts.productIds.count)
        var withheld = WithheldAccess()
        let oneTime = oneTimePurchases(at: t, access: &access, withheld: &withheld)
        let subscribed = groupStates(
            current.states, chains: current.chains, products: current.products, at: t, access: &access, withheld: &withheld)
        let eligibility = eligibility(at: t, subscriptions: current.states, chains: current.chains, counting: subscribed.counting)
        let anyActive = subscribed.anyActive || oneTime.states.contains { $0.active == true }
        let anyPurchase = oneTime.anyPurchase || !current.states.isEmpty
        return CustomerState(
            state: anyActive ? .active : (anyPurchase ? .inactive : .new),
            billingIssue: subscribed.billingIssue,
            entitlements: entitlements(access),
            products: products(access),
            groups: subscribed.groups,
            subscriptions: current.states,
            nonSubscriptions: oneTime.states,
            introEligibility: eligibility.intro,
            winBackEligibility: eligibility.winBack,
            nextChangeAt: nil,
            consentRescinded: withheld.rescission)
    }

    /// The best access each bought product gives, by index into `facts.productIds`.
    struct AccessTable {
        var byProduct: [AccessState?]

        init(productCount: Int) { byProduct = Array(repeating: nil, count: productCount) }

        mutating func offer(_ candidate: AccessState, product: Int) {
            if let existing = byProduct[product], !Evaluator.better(candidate, than: existing) { return }
            byProduct[product] = candidate
        }
    }

    /// The subscriptions that exist at `t`, with the chain and product index of each.
    func currentSubscriptions(at t: Int64) -> (states: [SubscriptionState], chains: [Int], products: [Int]) {
        var states: [SubscriptionState] = []
        var chains: [Int] = []
        var products: [Int] = []
        states.reserveCapacity(facts.chains.count)
        for chain in facts.chains.indices {
            if let subscription = subscription(chain, at: t) {
                states.append(subscription.state)
                chains.append(chain)
                products.append(subscription.product)
            }
        }
        return (states, chains, products)
    }

    /// Purchases other than subscriptions, and the access they (and lapsed subscription periods) give; whether any
    /// purchase other than a consumable was made.
    func oneTimePurchases(
        at t: Int64, access: inout AccessTable, withheld: inout WithheldAccess
    ) -> OneTimePurchases {
        var states: [NonSubscriptionState] = []
        var anyPurchase = false
        for purchase in facts.purchases {
            guard purchase.start <= t else { break }
            if purchase.kind == .autoRenewable {
                let ended = purchase.naturalEnd.map { min($0, purchase.end) } ?? purchase.end
                if let existing = access.byProduct[purchase.productIndex], (existing.expiresDate?.millisecondsSince1970 ?? .max) >= ended {
                    continue
                }
                access.offer(
                    AccessState(
                        active: false, expiresDate: Timestamp(millisecondsSince1970: ended),
                        productId: purchase.productId, transactionId: purchase.originalTransactionId),
                    product: purchase.productIndex)
                continue
            }
            let revoked = purchase.revocation.map { $0.date.millisecondsSince1970 <= t } ?? false
            var active: Bool?
            switch purchase.kind {
            case .nonConsumable: active = !revoked
            case .nonRenewing: active = t < purchase.end
            case .consumable, .autoRenewable: active = nil
            }
            if active == true,
                let rescinded = self.withheld(original: purchase.originalTransactionId, start: purchase.start, chain: nil, at: t)
            {
                active = false
                withheld.add(purchase.transactionId, since: rescinded)
            }
            if purchase.kind != .consumable { anyPurchase = true }
            states.append(
                NonSubscriptionState(
                    transactionId: purchase.transactionId, productId: purchase.productId, type: purchase.kind,
                    purchaseDate: Timestamp(millisecondsSince1970: purchase.start),
                    expiresDate: purchase.naturalEnd.map(Timestamp.init(millisecondsSince1970:)),
                    active: active, quantity: purchase.quantity, environment: purchase.environment,
                    ownership: purchase.ownership, revocation: revoked ? purchase.revocation : nil))
            if let active {
                let expires: Int64? = purchase.kind == .nonConsumable ? nil : purchase.naturalEnd
                access.offer(
                    AccessState(
                        active: active, expiresDate: expires.map(Timestamp.init(millisecondsSince1970:)),
                        productId: purchase.productId, transactionId: purchase.transactionId),
                    product: purchase.productIndex)
            }
        }
        return OneTimePurchases(states: states, anyPurchase: anyPurchase)
    }

    /// Purchases other than subscriptions as the state lists them, and whether any other than a consumable was made.
    struct OneTimePurchases {
        var states: [NonSubscriptionState]
        var anyPurchase: Bool
    }

    /// Each group's counting subscription (and its position in `subscriptions`), the access subscriptions give, and
    /// whether any is active or has a billing issue.
    func groupStates(
        _ subscriptions: [SubscriptionState], chains: [Int], products: [Int], at t: Int64, access: inout AccessTable,
        withheld: inout WithheldAccess
    ) -> (groups: [String: GroupState], counting: [String: Int], anyActive: Bool, billingIssue: Bool) {
        var groups: [String: GroupState] = [:]
        var counting: [String: Int] = [:]
        var billingIssue = false
        var anyActive = false
        for (position, subscription) in subscriptions.enumerated() {
            let live = subscription.status == .active || subscription.status == .gracePeriod || subscription.status == .billingRetry
            let began =
                facts.chains[chains[position]].members.first.map { facts.purchases[$0].start }
                ?? subscription.purchaseDate.millisecondsSince1970
            let rescinded =
                live ? self.withheld(original: subscription.originalTransactionId, start: began, chain: chains[position], at: t) : nil
            if let rescinded { withheld.add(subscription.originalTransactionId, since: rescinded) }
            if live, rescinded == nil { anyActive = true }
            if subscription.status == .gracePeriod || subscription.status == .billingRetry { billingIssue = true }
            if subscription.grantsAccess, rescinded == nil {
                let expires = subscription.status == .gracePeriod ? subscription.gracePeriodExpiresDate : subscription.expiresDate
                access.offer(
                    AccessState(
                        active: true, expiresDate: expires, productId: subscription.productId,
                        transactionId: subscription.originalTransactionId),
                    product: products[position])
            }
            let candidate = GroupState(
                originalTransactionId: subscription.originalTransactionId, productId: subscription.productId,
                status: subscription.status, active: subscription.grantsAccess && rescinded == nil,
                expiresDate: subscription.expiresDate)
            if let existing = groups[subscription.group], !Self.counts(candidate, over: existing) { continue }
            groups[subscription.group] = candidate
            counting[subscription.group] = position
        }
        return (groups, counting, anyActive, billingIssue)
    }

    /// Access per product id.
    func products(_ access: AccessTable) -> [String: AccessState] {
        var products: [String: AccessState] = [:]
        products.reserveCapacity(access.byProduct.count)
        for (index, state) in access.byProduct.enumerated() {
            if let state { products[facts.productIds[index]] = state }
        }
        return products
    }

    /// Every entitlement of the catalog: the best access of the products granting it, or none.
    func entitlements(_ access: AccessTable) -> [String: AccessState] {
        var entitlements: [String: AccessState] = [:]
        entitlements.reserveCapacity(facts.entitlementSources.count)
        for source in facts.entitlementSources {
            var best: AccessState?
            for product in source.products {
                guard let candidate = access.byProduct[product] else { continue }
                if let known = best, !Self.better(candidate, than: known) { continue }
                best = candidate
            }
            entitlements[source.id] = best ?? AccessState(active: false, expiresDate: nil, productId: nil, transactionId: nil)
        }
        return entitlements
    }

    /// Introductory-offer and win-back eligibility per group at `t`.
    func eligibility(
        at t: Int64, subscriptions: [SubscriptionState], chains: [Int], counting: [String: Int]
    ) -> (intro: [String: IntroEligibility], winBack: [String: WinBackEligibility]) {
        var intro: [String: IntroEligibility] = [:]
        var winBack: [String: WinBackEligibility] = [:]
        intro.reserveCapacity(facts.groups.count)
        winBack.reserveCapacity(facts.groups.count)
        for group in facts.groups {
            // A group known only from a purchase that has not happened yet at `t` is not listed yet.
            guard catalog.groups.contains(group.id) || (group.firstStart ?? .max) <= t else { continue }
            if let first = group.firstIntro, first.start <= t {
                intro[group.id] = IntroEligibility(
                    eligible: false, redeemedTransactionId: first.transactionId,
                    redeemedAt: Timestamp(millisecondsSince1970: first.start))
            } else {
                intro[group.id] = IntroEligibility(eligible: true, redeemedTransactionId: nil, redeemedAt: nil)
            }
            winBack[group.id] = WinBackEligibility(eligible: false, lapsedAt: nil, offerIds: [])
        }
        for (group, position) in counting {
            let subscription = subscriptions[position]
            var eligibility = WinBackEligibility(eligible: false, lapsedAt: nil, offerIds: [])
            if subscription.status == .expired, !subscription.isUpgraded {
                eligibility.eligible = true
                eligibility.lapsedAt = subscription.expiresDate
                eligibility.offerIds = latestRenewal(chains[position])?.eligibleWinBackOfferIds ?? []
            }
            winBack[group] = eligibility
        }
        return (intro, winBack)
    }

    /// Active beats inactive; then what lasts longer (no end is longest); then the smaller transaction id.
    static func better(_ a: AccessState, than b: AccessState) -> Bool {
        if a.active != b.active { return a.active }
        let left = a.expiresDate?.millisecondsSince1970 ?? (a.active ? .max : .min)
        let right = b.expiresDate?.millisecondsSince1970 ?? (b.active ? .max : .min)
        if left != right { return left > right }
        return (a.transactionId ?? "", a.productId ?? "") < (b.transactionId ?? "", b.productId ?? "")
    }

    static func rank(_ status: RenewalState) -> Int {
        switch status {
        case .active: 0
        case .gracePeriod: 1
        case .billingRetry: 2
        case .expired: 3
        case .revoked: 4
        }
    }

    /// The subscription that counts in a group: the best status, then the latest expiry, then the smaller id.
    static func counts(_ a: GroupState, over b: GroupState) -> Bool {
        if rank(a.status) != rank(b.status) { return rank(a.status) < rank(b.status) }
        let left = a.expiresDate?.millisecondsSince1970 ?? .min
        let right = b.expiresDate?.millisecondsSince1970 ?? .min
        if left != right { return left > right }
        return a.originalTransactionId < b.originalTransactionId
    }

    // MARK: - When it changes

    /// Every instant at which the state may change with no new fact.
    func breakpoints(after t: Int64) -> [Int64] {
        var points: [Int64] = []
        func add(_ value: Int64?) {
            if let value, value > t, value != .max { points.append(value) }
        }
        for purchase in facts.purchases {
            add(purchase.start)
            add(purchase.end)
            add(purchase.naturalEnd)
            add(purchase.revocation?.date.millisecondsSince1970)
            if purchase.kind == .autoRenewable, let end = purchase.naturalEnd {
                add(end &+ EntitlementEngine.billingRetryLimit)
            }
        }
        for chain in facts.chains {
            add(chain.renewals.last?.gracePeriodExpiresDate?.millisecondsSince1970)
        }
        for rescission in facts.rescissions.values { add(rescission.signedDate.millisecondsSince1970) }
        points.sort()
        var unique: [Int64] = []
        unique.reserveCapacity(points.count)
        for point in points where unique.last != point { unique.append(point) }
        return unique
    }

    func nextChange(after t: Int64, from state: CustomerState) -> Int64? {
        let points = breakpoints(after: t)
        for (probe, point) in points.enumerated() {
            if probe >= Self.nextChangeProbes { return point }
            if snapshot(at: point) != state { return point }
        }
        return nil
    }
}
