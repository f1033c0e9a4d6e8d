import AppStore
import Entitlements

/// What a server must say about one customer, by the simulator's own bookkeeping (not by the Entitlements engine):
/// the parts of Storekeeper's customer state that the App Store's facts decide.
public struct CustomerTruth: Codable, Hashable, Sendable, CustomStringConvertible {
    public struct Subscription: Codable, Hashable, Sendable {
        public var originalTransactionId: String
        public var productId: String
        public var status: RenewalState
        /// Compared only while the subscription is not revoked (a revoked period's end is not its expiry).
        public var expiresDate: Int64?
        public var willRenew: Bool
        public var autoRenewProductId: String?
        public var ownership: Ownership
        public var expirationReason: ExpirationReason?
    }

    public struct Purchase: Codable, Hashable, Sendable {
        public var transactionId: String
        public var productId: String
        public var active: Bool?
        public var revoked: Bool
    }

    public var state: CustomerStatus
    public var billingIssue: Bool
    /// Every entitlement of the catalog: whether it gives access.
    public var entitlements: [String: Bool]
    public var subscriptions: [Subscription]
    public var purchases: [Purchase]

    public var description: String {
        var lines = [
            "state=\(state.rawValue) billingIssue=\(billingIssue) entitlements=\(entitlements.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ","))"
        ]
        for s in subscriptions {
            lines.append(
                "  sub \(s.originalTransactionId) \(s.productId) \(s.status.rawValue) expires=\(s.expiresDate.map(String.init) ?? "-") willRenew=\(s.willRenew) next=\(s.autoRenewProductId ?? "-") \(s.ownership.rawValue) reason=\(s.expirationReason?.rawValue ?? "-")"
            )
        }
        for p in purchases {
            lines.append("  once \(p.transactionId) \(p.productId) active=\(p.active.map(String.init) ?? "-") revoked=\(p.revoked)")
        }
        return lines.joined(separator: "\n")
    }

    /// The same parts of a server's customer state, for comparison.
    public init(server: CustomerState, catalog: Catalog) {
        state = server.state
        billingIssue = server.billingIssue
        var entitlements: [String: Bool] = [:]
        for id in catalog.entitlementIds { entitlements[id] = server.entitlements[id]?.active ?? false }
        self.entitlements = entitlements
        subscriptions = server.subscriptions.map { s in
            Subscription(
                originalTransactionId: s.originalTransactionId, productId: s.productId, status: s.status,
                expiresDate: s.status == .revoked ? nil : s.expiresDate?.millisecondsSince1970, willRenew: s.willRenew ?? false,
                autoRenewProductId: s.autoRenewProductId, ownership: s.ownership,
                expirationReason: s.status == .expired ? s.expirationReason : nil)
        }.sorted { $0.originalTransactionId < $1.originalTransactionId }
        purchases = server.nonSubscriptions.map { p in
            Purchase(transactionId: p.transactionId, productId: p.productId, active: p.active, revoked: p.revocation != nil)
        }.sorted { $0.transactionId < $1.transactionId }
    }

    init(state: CustomerStatus, billingIssue: Bool, entitlements: [String: Bool], subscriptions: [Subscription], purchases: [Purchase]) {
        self.state = state
        self.billingIssue = billingIssue
        self.entitlements = entitlements
        self.subscriptions = subscriptions
        self.purchases = purchases
    }
}

extension StoreModel {
    /// The customer's truth now.
    public func truth(of name: String) -> CustomerTruth? {
        guard customers[name] != nil else { return nil }
        var entitlements: [String: Bool] = [:]
        for id in app.catalog.entitlementIds { entitlements[id] = false }
        var subscriptions: [CustomerTruth.Subscription] = []
        var anyActive = false
        var anyEver = false
        var billingIssue = false
        for s in self.subscriptions(of: name) where !s.periods.isEmpty {
            let id = s.originalTransactionId
            anyEver = true
            let withheld = consentWithheld(s)
            if s.renewing, !withheld { anyActive = true }
            if s.status == .gracePeriod || s.status == .billingRetry { billingIssue = true }
            let current = s.periods.last { $0.start <= now && now < $0.end && $0.revocation == nil && !$0.upgraded }
            let shown = current ?? s.last
            if s.status == .active || s.status == .gracePeriod, !withheld {
                for entitlement in app.catalog[shown.productId]?.entitlements ?? [] { entitlements[entitlement] = true }
            }
            let expires = s.periods.filter { $0.revocation == nil && !$0.upgraded }.map(\.end).max() ?? s.last.end
            subscriptions.append(
                CustomerTruth.Subscription(
                    originalTransactionId: id, productId: shown.productId, status: s.status,
                    expiresDate: s.status == .revoked ? nil : expires,
                    willRenew: s.renewing && (s.autoRenew || s.last.commitment?.periodsRemain == true),
                    autoRenewProductId: s.renewing && s.autoRenew && s.autoRenewProductId != shown.productId ? s.autoRenewProductId : nil,
                    ownership: s.ownership == .familyShared ? .familyShared : .purchased,
                    expirationReason: s.status == .expired ? s.expirationReason : nil))
        }
        var purchases: [CustomerTruth.Purchase] = []
        for o in self.purchases(of: name) {
            let id = o.transactionId
            let revoked = o.revocation != nil
            let rescinded = customers[name]?.consentRescindedAt.map { o.start <= $0 } ?? false
            let active: Bool?
            switch o.kind {
            case .nonConsumable: active = !revoked && !rescinded
            case .nonRenewing: active = !revoked && !rescinded && now < (o.end ?? now)
            default: active = nil
            }
            if o.kind != .consumable { anyEver = true }
            if active == true {
                anyActive = true
                for entitlement in app.catalog[o.productId]?.entitlements ?? [] { entitlements[entitlement] = true }
            }
            purchases.append(CustomerTruth.Purchase(transactionId: id, productId: o.productId, active: active, revoked: revoked))
        }
        return CustomerTruth(
            state: anyActive ? .active : (anyEver ? .inactive : .new), billingIssue: billingIssue, entitlements: entitlements,
            subscriptions: subscriptions.sorted { $0.originalTransactionId < $1.originalTransactionId },
            purchases: purchases.sorted { $0.transactionId < $1.transactionId })
    }

    /// Whether a parent's withdrawn consent withholds the subscription's access: it had begun when consent was
    /// withdrawn, and no new purchase (a resubscription) came after.
    func consentWithheld(_ s: Subscription) -> Bool {
        guard let rescinded = customers[s.customer]?.consentRescindedAt, let first = s.periods.first, first.start <= rescinded
        else { return false }
        return !s.periods.contains { $0.start > rescinded && $0.start <= now && $0.reason == .purchase }
    }

    /// The events the server should have derived for the customer by now, sorted.
    public func events(of name: String) -> [ExpectedEvent] {
        (expectedEvents[name] ?? []).filter { $0.effectiveAt <= now }.sorted()
    }

    /// Counts for a run's summary: customers with access, in a free trial, in billing trouble; revenue by currency
    /// (milliunits, refunds deducted).
    public func summary() -> StoreSummary {
        var summary = StoreSummary()
        summary.customers = customerNames.count
        for id in subscriptionOrder {
            guard let s = subscriptions[id] else { continue }
            summary.subscriptions += 1
            switch s.status {
            case .active, .gracePeriod:
                summary.active += 1
                let current = s.periods.last { $0.start <= now && now < $0.end }
                if current?.offer == .freeTrial { summary.trials += 1 }
            case .billingRetry: summary.billingRetry += 1
            case .expired: summary.expired += 1
            case .revoked: summary.revoked += 1
            }
            for p in s.periods where p.price > 0 {
                summary.revenue[p.currency, default: 0] +=
                    p.revocation.map { r in r.percentage.map { p.price * Int64(100_000 - $0) / 100_000 } ?? 0 } ?? p.price
            }
        }
        for id in oneTimeOrder {
            guard let o = oneTime[id] else { continue }
            summary.oneTimePurchases += 1
            summary.revenue[o.currency, default: 0] +=
                o.revocation.map { r in r.percentage.map { o.price * Int64(100_000 - $0) / 100_000 } ?? 0 } ?? o.price
        }
        summary.notifications = history.count
        return summary
    }
}

/// A run's ground truth in numbers.
public struct StoreSummary: Codable, Hashable, Sendable, CustomStringConvertible {
    public var customers = 0
    public var subscriptions = 0
    public var active = 0
    public var trials = 0
    public var billingRetry = 0
    public var expired = 0
    public var revoked = 0
    public var oneTimePurchases = 0
    public var notifications = 0
    public var revenue: [String: Int64] = [:]

    public var description: String {
        let money = revenue.sorted { $0.key < $1.key }.map { "\($0.key) \(Double($0.value) / 1000)" }.joined(separator: ", ")
        return """
            customers \(customers), subscriptions \(subscriptions): active \(active) (in a free trial \(trials)), billing retry \(billingRetry), \
            expired \(expired), revoked \(revoked); one-time purchases \(oneTimePurchases); notifications \(notifications)
            revenue: \(money.isEmpty ? "none" : money)
            """
    }
}
