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
        var price: Int64?
        var currency: String?
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
        // Each currency and day looked up once per batch, found or not.
        var rates: [String: Double?] = [:]
        var messages: [Int64: OutboundEvent] = [:]
        let decoder = JSONDecoder()
        for delivery in deliveries {
            guard let event = events[delivery.eventId] else { continue }
            let rendered = try? decoder.decode(Rendered.self, from: Data(event.payload.utf8))
            var usd: Double?
            if details.contains(.usdPrices), let price = rendered?.price, let currency = rendered?.currency {
                let day = CalendarDay(containing: event.effectiveAt).daysSinceEpoch
                let key = "\(currency) \(day)"
                if rates[key] == nil, currency != "USD" {
                    rates[key] = .some(try await session.usdRate(currency: currency, onOrBefore: day)?.rate)
                }
                let rate = currency == "USD" ? 1 : rates[key] ?? nil
                usd = rate.map { Double(price) / 1000 * $0 }
            }
            let customerNames = names[event.customerId] ?? []
            messages[delivery.eventSeq] = OutboundEvent(
                deliveryId: delivery.id, eventId: event.eventId, type: event.type, effectiveAt: event.effectiveAt,
                recordedAt: delivery.createdAt, retractedAt: delivery.retraction ? (event.retractedAt ?? delivery.createdAt) : nil,
                environment: event.environment, productId: rendered?.productId, price: rendered?.price, currency: rendered?.currency,
                usdPrice: usd, appId: appId, bundleId: bundleId, customerId: event.customerId, appUserId: customerNames.first,
                aliases: Array(customerNames.dropFirst()), eventJSON: event.payload,
                stateJSON: states[event.customerId + "\n" + event.environment])
            guard profiles else { continue }
            messages[delivery.eventSeq]?.totalSpentUSD = spent[event.customerId + "\n" + event.environment] ?? 0
            if let json = states[event.customerId + "\n" + event.environment],
                let state = try? decoder.decode(CustomerState.self, from: Data(json.utf8))
            {
                let (statuses, paying) = Self.groupStatuses(state)
                messages[delivery.eventSeq]?.groupStatuses = statuses
                messages[delivery.eventSeq]?.paying = paying
            }
        }
        return messages
    }

    /// Each group's status by its latest subscription, and whether a paid period (not a free trial) gives access.
    static func groupStatuses(_ state: CustomerState) -> ([String: String], Bool) {
        var statuses: [String: String] = [:]
        var latest: [String: Int64] = [:]
        var paying = false
        for subscription in state.subscriptions {
            let started = subscription.purchaseDate.millisecondsSince1970
            if subscription.grantsAccess && subscription.periodType != .trial { paying = true }
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
            statuses[subscription.group] = status
        }
        return (statuses, paying)
    }
}
