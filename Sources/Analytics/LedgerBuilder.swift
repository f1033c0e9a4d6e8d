import AppStore
import Entitlements

/// Turns one customer's purchases in one environment (as the entitlement engine resolved them) and their state into
/// ledger entries: kinds, renewal numbers, refunds, prices per month, the estimated commission and tax.
public struct LedgerBuilder: Sendable {
    /// Apple's commission drops to 15% once a subscriber has accrued a year of paid service in a subscription group; a
    /// lapse of more than 60 days starts the count again.
    static let yearOfService: Int64 = 365 * 86_400_000
    static let lapseThatResets: Int64 = 60 * 86_400_000

    /// Instants and money come from signed data, where any Int64 decodes. The ledger keeps them within ±9×10¹⁵ (the
    /// magnitude `Timestamp` accepts for fractional instants: year ±285,000; for money, nine trillion units), so that
    /// no difference, sum or product by a small factor here or in the metrics' SQL can overflow.
    public static let instantLimit: Int64 = 9_000_000_000_000_000
    public static let moneyLimit: Int64 = 9_000_000_000_000_000

    static func bounded(_ value: Int64, _ limit: Int64) -> Int64 { min(max(value, -limit), limit) }

    public let appId: String
    public let catalog: Catalog
    public let proceeds: ProceedsSettings

    public init(appId: String, catalog: Catalog, proceeds: ProceedsSettings) {
        self.appId = appId
        self.catalog = catalog
        self.proceeds = proceeds
    }

    public func entries(
        customerId: String, environment: Environment, purchases: [PurchasePeriod], state: CustomerState,
        events: [SubscriptionEvent]
    ) -> [LedgerEntry] {
        var entries = purchases.map { entry(customerId: customerId, environment: environment, $0) }
        numberRenewals(&entries)
        markAcquisitions(&entries, events: events)
        linkPeriods(&entries)
        applyCommission(&entries)
        attachSubscriptionState(&entries, state: state)
        return entries
    }

    func entry(customerId: String, environment: Environment, _ purchase: PurchasePeriod) -> LedgerEntry {
        let kind = LedgerKind(kind: purchase.kind, periodType: purchase.periodType)
        let familyShared = purchase.ownership == .familyShared
        let instant = { (timestamp: Timestamp) in Self.bounded(timestamp.millisecondsSince1970, Self.instantLimit) }
        let start = instant(purchase.start)
        let price = purchase.price.map { Self.bounded($0, Self.moneyLimit) }
        var refundedAt: Int64?
        var refundAmount: Int64?
        if let revocation = purchase.revocation, revocation.type != .familyRevoke, !familyShared {
            refundedAt = instant(revocation.date)
            refundAmount = price.map(revocation.refundedAmount(of:))
        }
        var entry = LedgerEntry(
            appId: appId, environment: environment.rawValue, customerId: customerId,
            originalTransactionId: purchase.originalTransactionId, transactionId: purchase.transactionId,
            productId: purchase.productId, group: purchase.group, kind: kind, start: start, end: purchase.end.map(instant),
            renewalNumber: nil, price: price, currency: purchase.currency, storefront: purchase.storefront,
            familyShared: familyShared, refundedAt: refundedAt, refundAmount: refundAmount,
            taxPerMille: proceeds.taxPerMille(storefront: purchase.storefront))
        if kind.isSubscriptionPeriod, entry.isRevenue, let price,
            let normalisation = normalisation(of: purchase, kind: kind, start: start, naturalEnd: purchase.naturalEnd.map(instant))
        {
            entry.monthlyPrice = normalisation.monthly(price)
        }
        return entry
    }

    /// A regular period is normalised by the catalog's billing period; an offer's period by its own length (a
    /// three-month introductory price paid up front is one three-month period), the catalog's when the length is
    /// unknown; a commitment's monthly payment as one month.
    func normalisation(of purchase: PurchasePeriod, kind: LedgerKind, start: Int64, naturalEnd: Int64?) -> MonthlyNormalisation? {
        // A commitment's monthly payment pays for its month, whatever the product's own period (a year billed monthly).
        if purchase.commitment != nil { return .month }
        let fromCatalog = catalog[purchase.productId]?.period.flatMap(MonthlyNormalisation.init)
        let fromLength = naturalEnd.flatMap { MonthlyNormalisation(lengthMilliseconds: $0 - start) }
        return kind == .regular ? fromCatalog ?? fromLength : fromLength ?? fromCatalog
    }

    /// Paid periods of each original transaction, numbered from 0 in start order (trials are not numbered).
    func numberRenewals(_ entries: inout [LedgerEntry]) {
        var next: [String: Int] = [:]
        for index in entries.indices.sorted(by: { entries[$0].start < entries[$1].start })
        where entries[index].kind.isSubscriptionPeriod && entries[index].kind != .trial {
            let chain = entries[index].originalTransactionId
            entries[index].renewalNumber = next[chain, default: 0]
            next[chain, default: 0] += 1
        }
    }

    /// Each subscription period learns the next paid period of its original transaction: its start, its price per
    /// month, whether it was refunded (what churn, revenue churn and trial conversion read). A period that renewed into
    /// it (the next is no acquisition of its own: neither new nor a resubscription) had auto-renew on, and says so: a
    /// period keeps the auto-renew status it had as the latest when its renewal arrives, so that nothing the hourly
    /// summary sums of it changes, and its row is updated in place (`replaceLedger`). After `markAcquisitions`.
    func linkPeriods(_ entries: inout [LedgerEntry]) {
        var nextPaid: [String: Int] = [:]
        for index in entries.indices.sorted(by: { entries[$0].start > entries[$1].start })
        where entries[index].kind.isSubscriptionPeriod {
            let chain = entries[index].originalTransactionId
            if let next = nextPaid[chain] {
                entries[index].nextStart = entries[next].start
                entries[index].nextMonthlyPrice = entries[next].monthlyPrice
                entries[index].nextRefunded = entries[next].refundedAt != nil
                if entries[next].acquisition == nil || entries[next].acquisition == .trialConversion {
                    entries[index].willRenew = true
                }
            }
            if entries[index].kind != .trial { nextPaid[chain] = index }
        }
    }

    /// The engine's events tell how a run of paid service began: started (or a paid introductory offer), converted
    /// from a trial, or resubscribed after a lapse.
    func markAcquisitions(_ entries: inout [LedgerEntry], events: [SubscriptionEvent]) {
        var acquisitions: [String: LedgerEntry.Acquisition] = [:]
        for event in events {
            guard let transactionId = event.transactionId else { continue }
            switch event.type {
            case .subscriptionStarted, .introStarted: acquisitions[transactionId] = .new
            case .trialConverted: acquisitions[transactionId] = .trialConversion
            case .subscriptionResubscribed: acquisitions[transactionId] = .resubscription
            default: continue
            }
        }
        for index in entries.indices where entries[index].kind.isSubscriptionPeriod && entries[index].kind != .trial {
            entries[index].acquisition = acquisitions[entries[index].transactionId]
        }
    }

    /// 15% from the Small Business Program's start, and for a subscription period that begins once its subscriber has
    /// a year of paid service in the group (more than 60 days without one resets the count); 30% otherwise.
    func applyCommission(_ entries: inout [LedgerEntry]) {
        let programStart = proceeds.smallBusinessProgramStart
        var served: [String: (accrued: Int64, lastEnd: Int64)] = [:]
        for index in entries.indices.sorted(by: { entries[$0].start < entries[$1].start }) {
            let entry = entries[index]
            var reduced = programStart.map { entry.start >= $0 } ?? false
            guard entry.kind.isSubscriptionPeriod, entry.isRevenue, let end = entry.end else {
                entries[index].commissionPerMille = reduced ? 150 : 300
                continue
            }
            var service = served[entry.group] ?? (0, entry.start)
            if entry.start - service.lastEnd > Self.lapseThatResets { service.accrued = 0 }
            if service.accrued >= Self.yearOfService { reduced = true }
            service.accrued += max(0, end - max(entry.start, min(service.lastEnd, end)))
            service.lastEnd = max(service.lastEnd, end)
            served[entry.group] = service
            entries[index].commissionPerMille = reduced ? 150 : 300
        }
    }

    /// The latest period of each subscription carries what the state says of it now: auto-renew and the grace period.
    func attachSubscriptionState(_ entries: inout [LedgerEntry], state: CustomerState) {
        for subscription in state.subscriptions {
            guard let index = entries.lastIndex(where: { $0.transactionId == subscription.transactionId }) else { continue }
            entries[index].willRenew = subscription.willRenew
            if subscription.status == .gracePeriod, let grace = subscription.gracePeriodExpiresDate {
                entries[index].graceUntil = Self.bounded(grace.millisecondsSince1970, Self.instantLimit)
            }
        }
    }
}
