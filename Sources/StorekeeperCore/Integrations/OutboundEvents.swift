import Analytics
import Entitlements
import Foundation
import Integrations
import Storage

/// Reads what a batch of deliveries sends: their events (the current rows, whatever version the delivery was written
/// for), the customers' names and last computed states, and USD rates, in a few queries for the whole batch.
enum OutboundEvents {
    /// The fields of a stored event the messages render.
    private struct Rendered: Decodable {
        var productId: String?
        var transactionId: String?
        var periodType: String?
        var price: Int64?
        var currency: String?
        /// The money the event moves (``SubscriptionEvent/revenue``); `.some(nil)` when it moves none, nil for an event
        /// stored before events carried it.
        var revenue: Int64??

        enum CodingKeys: String, CodingKey { case productId, transactionId, periodType, price, currency, revenue }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            productId = try c.decodeIfPresent(String.self, forKey: .productId)
            transactionId = try c.decodeIfPresent(String.self, forKey: .transactionId)
            periodType = try c.decodeIfPresent(String.self, forKey: .periodType)
            price = try c.decodeIfPresent(Int64.self, forKey: .price)
            currency = try c.decodeIfPresent(String.self, forKey: .currency)
            revenue = c.contains(.revenue) ? .some(try c.decodeIfPresent(Int64.self, forKey: .revenue)) : nil
        }

        /// The money moved, in milliunits: the event's own figure, or for an event stored before events carried one,
        /// its price for the types that moved money then (negative for a refund).
        func moved(type: String) -> Int64? {
            if let revenue { return revenue }
            guard AnalyticsNaming.legacyRevenueTypes.contains(type), let price else { return nil }
            return type == SubscriptionEventType.refunded.rawValue ? -abs(price) : price
        }
    }

    /// One message per delivery whose event is stored, by the delivery's event seq, with the `details` its
    /// destination renders: prices in USD, and customers' profiles (groups' statuses, paying, total spent).
    static func read(
        _ deliveries: [DeliveryRecord], appId: String, bundleId: String, details: MessageDetails, session: StorageSession
    ) async throws
        -> [Int64: OutboundEvent]
    {
        let events = Dictionary(
            try await session.events(app: appId, ids: Array(Set(deliveries.map(\.eventId)))).map { ($0.eventId, $0) },
            uniquingKeysWith: { first, _ in first })
        let customers = Array(Set(events.values.map(\.customerId)))
        let names = try await session.appUserIds(customers: customers)
        var states: [String: String] = [:]
        for state in try await session.states(customers: customers) { states[state.customerId + "\n" + state.environment] = state.state }
        let profiles = details.contains(.customerProfile)
        let spent = profiles ? try await session.spentUSD(customers: customers) : [:]
        let decoder = JSONDecoder()
        let rendered = events.mapValues { try? decoder.decode(Rendered.self, from: Data($0.payload.utf8)) }
        // Money in USD at the rate the ledger converted the purchase with, so that what destinations sum equals the
        // ledger; a purchase the ledger holds no rate for, at the event day's rate.
        let ledgerRates =
            details.contains(.usdPrices)
            ? try await session.ledgerUSDRates(app: appId, transactionIds: Array(Set(rendered.values.compactMap { $0?.transactionId })))
            : [:]
        // Each currency and day looked up once per batch, found or not.
        var rates: [String: Double?] = [:]
        var messages: [Int64: OutboundEvent] = [:]
        for delivery in deliveries {
            guard let event = events[delivery.eventId] else { continue }
            let rendered = rendered[delivery.eventId] ?? nil
            var usd: Double?
            var revenueUSD: Double?
            if details.contains(.usdPrices), let currency = rendered?.currency {
                let day = CalendarDay(containing: event.effectiveAt).daysSinceEpoch
                let key = "\(currency) \(day)"
                if rates[key] == nil, currency != "USD" {
                    rates[key] = .some(try await session.usdRate(currency: currency, onOrBefore: day)?.rate)
                }
                let dayRate = currency == "USD" ? 1 : rates[key] ?? nil
                usd = rendered?.price.flatMap { price in dayRate.map { Double(price) / 1000 * $0 } }
                let ledgerRate = rendered?.transactionId.flatMap {
                    ledgerRates[LedgerRateKey(environment: event.environment, transactionId: $0)]
                }
                if let moved = rendered?.moved(type: event.type), let rate = currency == "USD" ? 1 : ledgerRate ?? dayRate {
                    revenueUSD = Double(moved) / 1000 * rate
                }
            }
            let customerNames = names[event.customerId] ?? []
            messages[delivery.eventSeq] = OutboundEvent(
                deliveryId: delivery.id, eventId: event.eventId, type: event.type, effectiveAt: event.effectiveAt,
                recordedAt: delivery.createdAt, retractedAt: delivery.retraction ? (event.retractedAt ?? delivery.createdAt) : nil,
                environment: event.environment, productId: rendered?.productId, price: rendered?.price, currency: rendered?.currency,
                usdPrice: usd, appId: appId, bundleId: bundleId, customerId: event.customerId, appUserId: customerNames.first,
                aliases: Array(customerNames.dropFirst()), eventJSON: event.payload,
                stateJSON: states[event.customerId + "\n" + event.environment])
            messages[delivery.eventSeq]?.revenue = rendered?.moved(type: event.type)
            messages[delivery.eventSeq]?.periodType = rendered?.periodType
            messages[delivery.eventSeq]?.revenueUSD = revenueUSD
            guard profiles else { continue }
            messages[delivery.eventSeq]?.totalSpentUSD = spent[event.customerId + "\n" + event.environment] ?? 0
            if let json = states[event.customerId + "\n" + event.environment],
                let state = try? decoder.decode(CustomerState.self, from: Data(json.utf8))
            {
                let groups = Self.groupStatuses(state)
                messages[delivery.eventSeq]?.groupStatuses = groups.statuses
                messages[delivery.eventSeq]?.groupPeriodTypes = groups.periodTypes
                messages[delivery.eventSeq]?.paying = groups.paying
                if let subscription = Self.standing(of: event.originalTransactionId, in: state) {
                    messages[delivery.eventSeq]?.subscription = SubscriptionStanding(
                        status: subscription.status.rawValue, periodType: subscription.periodType.rawValue,
                        willRenew: subscription.willRenew)
                }
                messages[delivery.eventSeq]?.isOneTimePurchase = state.nonSubscriptions.contains {
                    $0.transactionId == rendered?.transactionId
                }
            }
        }
        return messages
    }

    /// The subscription an event's customer stands by: the event's own, else (an event of a one-time purchase, or of
    /// a transaction the facts do not hold) the customer's that gives access, else the latest to end, since a status
    /// such as RevenueCat's `rc_subscription_status` is the customer's, sent with every event. Nil for a customer who
    /// never subscribed.
    static func standing(of originalTransactionId: String?, in state: CustomerState) -> SubscriptionState? {
        if let own = state.subscriptions.first(where: { $0.originalTransactionId == originalTransactionId }) { return own }
        return state.subscriptions.max { a, b in
            if a.grantsAccess != b.grantsAccess { return !a.grantsAccess }
            return (a.expiresDate ?? a.purchaseDate, a.originalTransactionId) < (b.expiresDate ?? b.purchaseDate, b.originalTransactionId)
        }
    }

    /// Each group's status and period type by its latest subscription, and whether a paid period (not a free trial)
    /// gives access.
    static func groupStatuses(_ state: CustomerState) -> GroupStandings {
        var standings = GroupStandings()
        var latest: [String: Int64] = [:]
        for subscription in state.subscriptions {
            let started = subscription.purchaseDate.millisecondsSince1970
            if subscription.grantsAccess && subscription.periodType != .trial { standings.paying = true }
            guard started >= latest[subscription.group] ?? .min else { continue }
            latest[subscription.group] = started
            let status: String
            switch subscription.status {
            case .active: status = subscription.periodType == .trial ? "trial" : "active"
            case .gracePeriod: status = "grace_period"
            case .billingRetry: status = "billing_retry"
            case .expired: status = "expired"
            case .revoked: status = "refunded"
            }
            standings.statuses[subscription.group] = status
            standings.periodTypes[subscription.group] = subscription.periodType.rawValue
        }
        return standings
    }

    /// What `groupStatuses` finds.
    struct GroupStandings {
        var statuses: [String: String] = [:]
        var periodTypes: [String: String] = [:]
        var paying = false
    }
}
