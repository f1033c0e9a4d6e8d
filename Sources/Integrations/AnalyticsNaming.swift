import Foundation

/// How subscription events are named in Amplitude and Mixpanel: `storekeeper` (our types and properties), or the names
/// Apphud's and RevenueCat's integrations use, so that a team switching from either keeps its charts.
public struct AnalyticsNaming: Sendable, Hashable {
    public enum Preset: String, Sendable, Hashable, CaseIterable { case storekeeper, apphud, revenuecat }
    public let preset: Preset

    public init(_ preset: Preset) { self.preset = preset }

    /// The types that move money: revenue (negative for a refund) is reported with these only.
    public static let revenueTypes: Set<String> = [
        "trial_converted", "intro_started", "intro_renewed", "intro_converted", "promo_started", "promo_converted",
        "subscription_started", "subscription_renewed", "subscription_resubscribed", "non_renewing_purchase",
        "non_consumable_purchase", "consumable_purchase", "refunded",
    ]

    /// The revenue in US dollars an event reports, if any: its price (negative for a refund), when a rate exists.
    public static func revenueUSD(_ event: OutboundEvent) -> Double? {
        guard revenueTypes.contains(event.type), event.retractedAt == nil, let usd = event.usdPrice, usd != 0 else { return nil }
        return event.type == "refunded" ? -abs(usd) : usd
    }

    public func eventName(_ event: OutboundEvent) -> String {
        let name: String
        switch preset {
        case .storekeeper:
            name = event.type
        case .apphud:
            name = "[Apphud] " + (Self.apphudNames[event.type] ?? event.type)
        case .revenuecat:
            name = Self.revenueCatNames[event.type] ?? "rc_\(event.type)_event"
        }
        return event.retractedAt == nil ? name : name + " (retracted)"
    }

    /// The event's properties, as JSON values.
    public func eventProperties(_ event: OutboundEvent) -> [(String, String)] {
        let local = event.price.map { String(Double($0) / 1000) } ?? "null"
        let usd = event.usdPrice.map { String($0) } ?? "null"
        var properties: [(String, String)]
        switch preset {
        case .storekeeper:
            properties = [
                ("event_id", JSONText.string(event.eventId)), ("product_id", JSONText.optional(event.productId)),
                ("environment", JSONText.string(event.environment)), ("price_local", local),
                ("currency", JSONText.optional(event.currency)), ("price_usd", usd), ("store", JSONText.string("app_store")),
            ]
        case .apphud:
            properties = [
                ("product_id", JSONText.optional(event.productId)), ("environment", JSONText.string(event.environment.lowercased())),
                ("local_price", local), ("currency", JSONText.optional(event.currency)), ("price_usd", usd),
            ]
        case .revenuecat:
            properties = [
                ("product_id", JSONText.optional(event.productId)), ("store", JSONText.string("APP_STORE")),
                ("environment", JSONText.string(event.environment == "Production" ? "PRODUCTION" : "SANDBOX")),
                ("price", usd), ("price_in_purchased_currency", local), ("currency", JSONText.optional(event.currency)),
            ]
            if event.type == "refunded" { properties.append(("cancel_reason", JSONText.string("CUSTOMER_SUPPORT"))) }
        }
        if let retracted = event.retractedAt { properties.append(("retracted_at", "\(retracted)")) }
        return properties
    }

    /// The customer's properties: status per subscription group, whether paying, total spent in US dollars.
    public func userProperties(_ event: OutboundEvent) -> [(String, String)] {
        let spent = event.totalSpentUSD.map { String($0) } ?? "null"
        let paying = event.paying.map { $0 ? "true" : "false" } ?? "null"
        switch preset {
        case .storekeeper:
            return event.groupStatuses.sorted { $0.key < $1.key }.map { ("storekeeper_status_\($0.key)", JSONText.string($0.value)) }
                + [("storekeeper_paying", paying), ("storekeeper_total_spent_usd", spent)]
        case .apphud:
            return event.groupStatuses.sorted { $0.key < $1.key }.map { ("[Apphud] status_\($0.key)", JSONText.string($0.value)) }
                + [("[Apphud] paying", paying), ("[Apphud] total_spent", spent)]
        case .revenuecat:
            return [("rc_subscription_status", JSONText.string(Self.overallStatus(event.groupStatuses)))]
        }
    }

    /// One status for the customer: the most engaged of its groups' statuses.
    static func overallStatus(_ statuses: [String: String]) -> String {
        let order = ["active", "trial", "grace_period", "billing_retry", "expired", "refunded"]
        return order.first { statuses.values.contains($0) } ?? "never_subscribed"
    }

    static let apphudNames: [String: String] = [
        "refunded": "subscription_refunded", "subscription_canceled": "autorenew_disabled", "billing_recovered": "billing_issue_resolved",
        "product_changed": "subscription_product_changed", "grace_period_started": "billing_issue",
    ]

    static let revenueCatNames: [String: String] = [
        "trial_started": "rc_trial_started_event", "trial_converted": "rc_trial_converted_event",
        "trial_canceled": "rc_trial_cancelled_event", "trial_expired": "rc_expiration_event",
        "intro_started": "rc_initial_purchase_event", "promo_started": "rc_initial_purchase_event",
        "subscription_started": "rc_initial_purchase_event", "subscription_resubscribed": "rc_initial_purchase_event",
        "subscription_renewed": "rc_renewal_event", "intro_renewed": "rc_renewal_event", "intro_converted": "rc_renewal_event",
        "promo_converted": "rc_renewal_event", "subscription_canceled": "rc_cancellation_event",
        "autorenew_enabled": "rc_uncancellation_event", "billing_issue": "rc_billing_issue_event",
        "subscription_expired": "rc_expiration_event", "intro_expired": "rc_expiration_event", "promo_expired": "rc_expiration_event",
        "refunded": "rc_cancellation_event", "product_changed": "rc_product_change_event",
        "non_renewing_purchase": "rc_non_renewing_purchase_event", "non_consumable_purchase": "rc_non_renewing_purchase_event",
        "consumable_purchase": "rc_non_renewing_purchase_event",
    ]
}
