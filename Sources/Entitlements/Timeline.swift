import AppStoreModels

/// One event as a rule derives it, before the log gives it its id (type, environment, chain and anchor).
struct EventDraft {
    var type: SubscriptionEventType
    var at: Int64
    /// The original transaction id of the subscription or purchase.
    var chain: String
    /// What makes the event one of a kind within its chain: a transaction id, a notification's UUID.
    var anchor: String
    var source: EventLog.Source
    /// The period it concerns: its product, transaction, price and environment fill the event.
    var purchase: Purchase?
    var reason: String?
    var fromProductId: String?
    var notificationUUID: String?
    /// For an event a notification alone tells of (no purchase): what the notification says.
    var environment: Environment?
    var productId: String?
    var transactionId: String?
    /// The money it moves (``SubscriptionEvent/revenue``).
    var revenue: Int64? = nil

    /// The events that pay for their period: each paid period has exactly one of them (or an immediate product change
    /// that no conversion follows, which pays instead: `pays`).
    static let paying: Set<SubscriptionEventType> = [
        .trialConverted, .introStarted, .introRenewed, .introConverted, .promoStarted, .promoConverted, .subscriptionStarted,
        .subscriptionRenewed, .subscriptionResubscribed, .nonRenewingPurchase, .nonConsumablePurchase, .consumablePurchase,
    ]

    /// An event of a period, anchored on its transaction; an event that pays for the period carries its price.
    static func period(
        _ type: SubscriptionEventType, at: Int64, chain: String, _ purchase: Purchase, source: EventLog.Source = .transaction,
        reason: String? = nil, fromProductId: String? = nil, pays: Bool? = nil, revenue: Int64? = nil
    ) -> EventDraft {
        EventDraft(
            type: type, at: at, chain: chain, anchor: purchase.transactionId, source: source, purchase: purchase,
            reason: reason, fromProductId: fromProductId,
            revenue: revenue ?? ((pays ?? paying.contains(type)) ? purchase.paidAmount : nil))
    }
}

/// Collects events. The same event can be derived twice (from a transaction and from the notification that carried
/// it): they share an id, and the one derived from the stronger source is kept, transactions first, then renewal infos,
/// then notifications, and between equals the earlier, so the result depends only on the facts.
struct EventLog {
    enum Source: Int, Comparable {
        case transaction, renewalInfo, notification
        static func < (a: Source, b: Source) -> Bool { a.rawValue < b.rawValue }
    }

    let now: Int64
    private var events: [(event: SubscriptionEvent, source: Source)] = []

    init(now: Int64) {
        self.now = now
        events.reserveCapacity(16)
    }

    mutating func add(_ draft: EventDraft) {
        guard draft.at <= now else { return }
        let purchase = draft.purchase
        let environment = purchase?.environment ?? draft.environment
        var id = draft.type.rawValue
        id.reserveCapacity(id.utf8.count + draft.chain.utf8.count + draft.anchor.utf8.count + 16)
        id += ":"
        id += environment?.rawValue ?? "-"
        id += ":"
        id += draft.chain
        id += ":"
        id += draft.anchor
        let event = SubscriptionEvent(
            id: id, type: draft.type, effectiveAt: Timestamp(millisecondsSince1970: draft.at),
            productId: purchase?.productId ?? draft.productId, originalTransactionId: draft.chain,
            transactionId: purchase?.transactionId ?? draft.transactionId, price: purchase?.price, currency: purchase?.currency,
            storefront: purchase?.storefront, periodType: purchase?.periodType, environment: environment,
            reason: draft.reason, fromProductId: draft.fromProductId, notificationUUID: draft.notificationUUID, revenue: draft.revenue)
        events.append((event, draft.source))
    }

    /// One event per id, in time order; at one instant, by id. Indices are sorted, not the events, which are large.
    func sorted() -> [SubscriptionEvent] {
        let byId = events.indices.sorted { i, j in
            if events[i].event.id != events[j].event.id { return events[i].event.id < events[j].event.id }
            if events[i].source != events[j].source { return events[i].source < events[j].source }
            if events[i].event.effectiveAt != events[j].event.effectiveAt {
                return events[i].event.effectiveAt < events[j].event.effectiveAt
            }
            return (events[i].event.reason ?? "") < (events[j].event.reason ?? "")
        }
        var kept: [Int] = []
        kept.reserveCapacity(byId.count)
        for index in byId where kept.last.map({ events[$0].event.id != events[index].event.id }) ?? true {
            kept.append(index)
        }
        var order = kept
        order.sort { i, j in
            if events[i].event.effectiveAt != events[j].event.effectiveAt {
                return events[i].event.effectiveAt < events[j].event.effectiveAt
            }
            return events[i].event.id < events[j].event.id
        }
        return order.map { events[$0].event }
    }
}

/// What the renewal infos and notifications of one period say about its billing.
struct BillingEvidence {
    var issue = false
    var grace = false
    var graceEnd: Int64?
    var graceExpiredNotice: Int64?
    /// The latest renewal info of the window still says Apple is retrying.
    var stillRetrying = false
    var expiredNotice: (at: Int64, subtype: NotificationSubtype?)?
    var lastRenewalSigned: Int64?
    var intent: ExpirationIntent?
    var autoRenewOff = false
    var recoveryNotice = false
}

extension Evaluator {
    func events(upTo now: Int64) -> [SubscriptionEvent] {
        var log = EventLog(now: now)
        for chain in facts.chains.indices { chainEvents(chain, into: &log) }
        for purchase in facts.purchases {
            refundEvents(purchase, into: &log)
            let type: SubscriptionEventType
            switch purchase.kind {
            case .autoRenewable: continue
            case .nonConsumable: type = .nonConsumablePurchase
            case .nonRenewing: type = .nonRenewingPurchase
            case .consumable: type = .consumablePurchase
            }
            log.add(.period(type, at: purchase.start, chain: purchase.originalTransactionId, purchase))
        }
        notificationOnlyEvents(into: &log)
        rescissionEvents(into: &log)
        return log.sorted()
    }

    // MARK: - Subscriptions

    func chainEvents(_ index: Int, into log: inout EventLog) {
        let chain = (id: facts.chains[index].id, index: index)
        let members = facts.chains[index].members.map { facts.purchases[$0] }
        var runLast: Purchase?
        var coveredUntil = Int64.min
        // Renewals Apple announced as billing recoveries, by transaction: recovered within a grace period, the new
        // period starts when the failed one ended (no paid day is lost), so only the notice tells of the failure.
        var recoveries: [String: Int64] = [:]
        for notification in facts.chains[index].notifications
        where notification.notificationType == .didRenew && notification.subtype == .billingRecovery {
            if let id = notification.transactionId { recoveries[id] = notification.signedDate.millisecondsSince1970 }
        }
        for purchase in members {
            guard let previous = runLast else {
                log.add(.period(Self.startType(purchase.periodType, first: true), at: purchase.start, chain: chain.id, purchase))
                runLast = purchase
                coveredUntil = Self.coverage(purchase)
                continue
            }
            // Instants come from outside: any Int64. Saturate rather than overflow.
            let difference = purchase.start.subtractingReportingOverflow(coveredUntil)
            let gap = difference.overflow ? (purchase.start > coveredUntil ? Int64.max : .min) : difference.partialValue
            let tolerance: Int64 = purchase.reason == nil ? 60_000 : 0
            if gap < 0, purchase.productId != previous.productId {
                // An immediate change (an upgrade, or a crossgrade to another duration): the new period is paid at
                // once, by its conversion event when there is one, else by the change itself.
                let conversion = Self.conversion(from: previous.periodType, to: purchase.periodType)
                productChange(from: previous, to: purchase, chain: chain.index, pays: conversion == nil, into: &log)
                if let conversion { log.add(.period(conversion, at: purchase.start, chain: chain.id, purchase)) }
            } else if purchase.reason == .purchase, gap >= 0 {
                lapse(of: previous, until: purchase.start, chain: chain.index, into: &log)
                log.add(.period(Self.startType(purchase.periodType, first: false), at: purchase.start, chain: chain.id, purchase))
            } else if gap <= tolerance, previous.revocation == nil, let recoveredAt = recoveries[purchase.transactionId],
                recoveredAt > purchase.start
            {
                let evidence = billing(of: previous, chain: chain.index, until: recoveredAt, recovered: purchase)
                billingIssue(of: previous, evidence: evidence, until: recoveredAt, chain: chain.index, into: &log)
                log.add(.period(.billingRecovered, at: recoveredAt, chain: chain.id, purchase))
                renewal(from: previous, to: purchase, chain: chain.index, into: &log)
            } else if gap <= tolerance || (previous.revocation != nil && purchase.reason == .renewal) {
                renewal(from: previous, to: purchase, chain: chain.index, into: &log)
            } else {
                let evidence = billing(of: previous, chain: chain.index, until: purchase.start, recovered: purchase)
                if evidence.issue || evidence.recoveryNotice || purchase.reason == .renewal {
                    billingIssue(of: previous, evidence: evidence, until: purchase.start, chain: chain.index, into: &log)
                    log.add(.period(.billingRecovered, at: purchase.start, chain: chain.id, purchase))
                    renewal(from: previous, to: purchase, chain: chain.index, into: &log)
                } else {
                    lapse(of: previous, until: purchase.start, chain: chain.index, evidence: evidence, into: &log)
                    log.add(.period(Self.startType(purchase.periodType, first: false), at: purchase.start, chain: chain.id, purchase))
                }
            }
            if (purchase.end, purchase.start) >= (previous.end, previous.start) { runLast = purchase }
            coveredUntil = max(coveredUntil, Self.coverage(purchase))
        }
        if let last = runLast { lapse(of: last, until: nil, chain: chain.index, into: &log) }
        toggleEvents(index, members: members, into: &log)
    }

    /// Until when a period covers its subscription, for telling a renewal from a lapse: an upgraded period counts to
    /// its own expiry, so that the upgrade that cut it short reads as an overlap, not as a lapse.
    static func coverage(_ purchase: Purchase) -> Int64 {
        purchase.isUpgraded ? max(purchase.end, purchase.naturalEnd ?? purchase.end) : purchase.end
    }

    static func startType(_ period: PeriodType, first: Bool) -> SubscriptionEventType {
        switch period {
        case .trial: .trialStarted
        case .intro: .introStarted
        case .promo where first: .promoStarted
        default: first ? .subscriptionStarted : .subscriptionResubscribed
        }
    }

    /// The event of a period that follows the previous one without a lapse.
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

    func renewal(from previous: Purchase, to purchase: Purchase, chain: Int, into log: inout EventLog) {
        if purchase.productId != previous.productId {
            productChange(from: previous, to: purchase, chain: chain, into: &log)
        }
        let type = Self.conversion(from: previous.periodType, to: purchase.periodType) ?? .subscriptionRenewed
        log.add(.period(type, at: purchase.start, chain: facts.chains[chain].id, purchase))
        if purchase.commitment?.begins == true, previous.commitment != nil {
            log.add(.period(.commitmentRenewed, at: purchase.start, chain: facts.chains[chain].id, purchase))
        }
    }

    func productChange(from previous: Purchase, to purchase: Purchase, chain: Int, pays: Bool = false, into log: inout EventLog) {
        var change = ProductChange.crossgrade
        if let from = catalog[previous.productId]?.level, let to = catalog[purchase.productId]?.level {
            change = to < from ? .upgrade : (to > from ? .downgrade : .crossgrade)
        } else if previous.isUpgraded {
            change = .upgrade
        } else if let preference = facts.chains[chain].notifications.last(where: {
            $0.notificationType == .didChangeRenewalPref && $0.signedDate.millisecondsSince1970 >= previous.start
                && $0.signedDate.millisecondsSince1970 <= purchase.start
        }) {
            if preference.subtype == .upgrade { change = .upgrade }
            if preference.subtype == .downgrade { change = .downgrade }
        }
        log.add(
            .period(
                .productChanged, at: purchase.start, chain: facts.chains[chain].id, purchase, reason: change.rawValue,
                fromProductId: previous.productId, pays: pays))
    }

    /// What the renewal infos and notifications signed while a period ran, or after it until the next one, say.
    func billing(of period: Purchase, chain: Int, until next: Int64?, recovered: Purchase? = nil) -> BillingEvidence {
        var evidence = BillingEvidence()
        let upper = next ?? .max
        for renewal in facts.chains[chain].renewals {
            let signed = renewal.signedDate?.millisecondsSince1970
            if let signed, signed < period.start || signed >= upper { continue }
            if renewal.isInBillingRetryPeriod == true {
                evidence.issue = true
                if let grace = renewal.gracePeriodExpiresDate?.millisecondsSince1970 {
                    evidence.grace = true
                    evidence.graceEnd = grace
                }
            }
            if renewal.expirationIntent == .billingError { evidence.issue = true }
            evidence.stillRetrying = renewal.isInBillingRetryPeriod == true
            evidence.intent = renewal.expirationIntent ?? evidence.intent
            if let status = renewal.autoRenewStatus { evidence.autoRenewOff = status == .off }
            evidence.lastRenewalSigned = signed ?? evidence.lastRenewalSigned
        }
        for notification in facts.chains[chain].notifications {
            let signed = notification.signedDate.millisecondsSince1970
            if recovered != nil, notification.notificationType == .didRenew, notification.subtype == .billingRecovery,
                notification.transactionId == recovered?.transactionId
            {
                evidence.recoveryNotice = true
            }
            guard signed >= period.start, signed < upper else { continue }
            switch notification.notificationType {
            case .didFailToRenew:
                evidence.issue = true
                if notification.subtype == .gracePeriod { evidence.grace = true }
            case .gracePeriodExpired:
                evidence.issue = true
                evidence.grace = true
                evidence.graceExpiredNotice = evidence.graceExpiredNotice ?? signed
            case .expired:
                if evidence.expiredNotice == nil { evidence.expiredNotice = (signed, notification.subtype) }
                if notification.subtype == .billingRetry { evidence.issue = true }
            case .didChangeRenewalStatus:
                if notification.subtype == .autoRenewDisabled { evidence.autoRenewOff = true }
                if notification.subtype == .autoRenewEnabled { evidence.autoRenewOff = false }
            default:
                break
            }
        }
        return evidence
    }

    func billingIssue(of period: Purchase, evidence: BillingEvidence, until next: Int64?, chain index: Int, into log: inout EventLog) {
        guard let end = period.naturalEnd else { return }
        let chain = facts.chains[index].id
        log.add(.period(.billingIssue, at: end, chain: chain, period))
        guard evidence.grace else { return }
        log.add(.period(.gracePeriodStarted, at: end, chain: chain, period))
        if let graceEnd = evidence.graceEnd, graceEnd <= next ?? .max {
            log.add(.period(.gracePeriodExpired, at: graceEnd, chain: chain, period, source: .renewalInfo))
        } else if let notice = evidence.graceExpiredNotice {
            log.add(.period(.gracePeriodExpired, at: notice, chain: chain, period, source: .notification))
        }
    }

    /// The end of a run of periods that nothing continued: a billing issue and an expiry, each when the facts show it.
    func lapse(
        of period: Purchase, until next: Int64?, chain index: Int, evidence known: BillingEvidence? = nil,
        into log: inout EventLog
    ) {
        guard !period.isUpgraded, period.revocation == nil, let end = period.naturalEnd else { return }
        let chain = facts.chains[index].id
        let evidence = known ?? billing(of: period, chain: index, until: next)
        let expiry: Int64
        let reason: ExpirationReason
        if evidence.issue {
            billingIssue(of: period, evidence: evidence, until: next, chain: index, into: &log)
            if evidence.stillRetrying {
                expiry = end &+ EntitlementEngine.billingRetryLimit
            } else if let notice = evidence.expiredNotice {
                expiry = max(end, notice.at)
            } else if let signed = evidence.lastRenewalSigned, signed >= end {
                expiry = signed
            } else {
                expiry = end &+ EntitlementEngine.billingRetryLimit
            }
            reason = .billingError
        } else {
            expiry = end
            if let intent = evidence.intent {
                reason = ExpirationReason(intent)
            } else if let notice = evidence.expiredNotice {
                reason = ExpirationReason(expiredSubtype: notice.subtype) ?? .other
            } else if evidence.autoRenewOff {
                reason = .voluntary
            } else if next != nil || log.now >= end &+ EntitlementEngine.billingRetryLimit {
                // Nothing says why, but it did end: a resubscription came after a gap, or Apple's retries are over.
                reason = .other
            } else {
                // Renewing, with no word yet of the renewal or of its failure: not an expiry until a fact says so.
                return
            }
        }
        let type: SubscriptionEventType =
            switch period.periodType {
            case .trial: .trialExpired
            case .intro: .introExpired
            case .promo: .promoExpired
            default: .subscriptionExpired
            }
        log.add(.period(type, at: min(expiry, next ?? .max), chain: chain, period, reason: reason.rawValue))
        if period.commitment?.isLast == true {
            log.add(.period(.commitmentEnded, at: min(expiry, next ?? .max), chain: chain, period, reason: reason.rawValue))
        }
    }

    /// Auto-renew switched off or on: from renewal-status notifications, and from changes between successive renewal
    /// infos that no notification accounts for.
    func toggleEvents(_ index: Int, members: [Purchase], into log: inout EventLog) {
        let chain = facts.chains[index]
        let notifications = facts.chains[index].notifications.compactMap { notification -> (at: Int64, on: Bool, uuid: String)? in
            guard notification.notificationType == .didChangeRenewalStatus else { return nil }
            switch notification.subtype {
            case .some(.autoRenewEnabled): return (notification.signedDate.millisecondsSince1970, true, notification.notificationUUID)
            case .some(.autoRenewDisabled): return (notification.signedDate.millisecondsSince1970, false, notification.notificationUUID)
            default: return nil
            }
        }
        func period(at instant: Int64) -> Purchase? {
            members.last { $0.start <= instant && instant < $0.end } ?? members.last { $0.start <= instant }
        }
        func toggle(on: Bool, at instant: Int64, anchor: String, source: EventLog.Source, uuid: String?) {
            let current = period(at: instant)
            let type: SubscriptionEventType =
                on ? .autorenewEnabled : (current?.periodType == .trial ? .trialCanceled : .subscriptionCanceled)
            log.add(
                EventDraft(
                    type: type, at: instant, chain: chain.id, anchor: anchor, source: source, purchase: current,
                    notificationUUID: uuid))
        }
        for notification in notifications {
            toggle(on: notification.on, at: notification.at, anchor: notification.uuid, source: .notification, uuid: notification.uuid)
        }
        var previousOn = true
        var previousAt = Int64.min
        for renewal in facts.chains[index].renewals {
            guard let status = renewal.autoRenewStatus, status.isKnown, let at = renewal.signedDate?.millisecondsSince1970 else { continue }
            let on = status == .on
            defer {
                previousOn = on
                previousAt = at
            }
            guard on != previousOn else { continue }
            if notifications.contains(where: { $0.on == on && $0.at > previousAt && $0.at <= at }) { continue }
            // A new purchase (a resubscription) switches auto-renew on by itself: that is no re-enabling.
            if on, members.contains(where: { $0.reason == .purchase && $0.start > previousAt && $0.start <= at }) { continue }
            let inService = members.contains { $0.start <= at && at < $0.end } || renewal.isInBillingRetryPeriod == true
            guard inService else { continue }
            toggle(on: on, at: at, anchor: "r\(at)", source: .renewalInfo, uuid: nil)
        }
    }

    // MARK: - Refunds

    func refundEvents(_ purchase: Purchase, into log: inout EventLog) {
        /// What a refund gives back of what was paid; nil when nothing was paid or nothing comes back.
        func returned(_ revocation: Revocation) -> Int64? {
            purchase.paidAmount.map(revocation.refundedAmount(of:)).flatMap { $0 == 0 ? nil : $0 }
        }
        func revoked(_ revocation: Revocation) {
            let family = revocation.type == .familyRevoke
            log.add(
                .period(
                    family ? .familyAccessRevoked : .refunded, at: revocation.date.millisecondsSince1970,
                    chain: purchase.originalTransactionId, purchase, reason: family ? nil : revocation.reason.rawValue,
                    pays: false, revenue: family ? nil : returned(revocation).map { -$0 }))
        }
        if let revocation = purchase.revocation { revoked(revocation) }
        if let reversed = purchase.reversedRevocation, let at = purchase.reversedAt {
            revoked(reversed)
            log.add(
                .period(
                    .refundReversed, at: at, chain: purchase.originalTransactionId, purchase, pays: false,
                    revenue: reversed.type == .familyRevoke ? nil : returned(reversed)))
        }
    }

    // MARK: - Notifications about transactions the facts do not hold

    func notificationOnlyEvents(into log: inout EventLog) {
        func known(_ chain: String) -> Bool {
            FactSet.position(of: chain, in: facts.chains) != nil || facts.purchases.contains { $0.originalTransactionId == chain }
        }
        for notification in facts.notifications {
            guard let chain = notification.originalTransactionId, !known(chain) else { continue }
            let at = notification.signedDate.millisecondsSince1970
            let anchor = notification.transactionId ?? notification.notificationUUID
            func add(_ type: SubscriptionEventType, reason: String? = nil, anchor: String = anchor) {
                log.add(
                    EventDraft(
                        type: type, at: at, chain: chain, anchor: anchor, source: .notification, purchase: nil, reason: reason,
                        notificationUUID: notification.notificationUUID, environment: notification.environment,
                        productId: notification.productId, transactionId: notification.transactionId))
            }
            switch (notification.notificationType, notification.subtype) {
            case (.subscribed, .some(.resubscribe)): add(.subscriptionResubscribed)
            case (.subscribed, _): add(.subscriptionStarted)
            case (.didRenew, .some(.billingRecovery)): add(.billingRecovered)
            case (.didRenew, _): add(.subscriptionRenewed)
            case (.didFailToRenew, let subtype):
                add(.billingIssue)
                if subtype == .gracePeriod { add(.gracePeriodStarted) }
            case (.gracePeriodExpired, _): add(.gracePeriodExpired)
            case (.expired, let subtype):
                add(.subscriptionExpired, reason: (ExpirationReason(expiredSubtype: subtype) ?? .other).rawValue)
            case (.didChangeRenewalStatus, .some(.autoRenewDisabled)): add(.subscriptionCanceled, anchor: notification.notificationUUID)
            case (.didChangeRenewalStatus, .some(.autoRenewEnabled)): add(.autorenewEnabled, anchor: notification.notificationUUID)
            case (.refund, _): add(.refunded)
            case (.refundReversed, _): add(.refundReversed)
            case (.revoke, _): add(.familyAccessRevoked)
            default: break
            }
        }
    }
}
