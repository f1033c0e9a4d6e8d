import Foundation

/// How subscription events are named in Amplitude and Mixpanel: `storekeeper` (our types and properties), or the names
/// Apphud's and RevenueCat's integrations use, so that a team switching from either keeps its charts.
public struct AnalyticsNaming: Sendable, Hashable {
    public enum Preset: String, Sendable, Hashable, CaseIterable { case storekeeper, apphud, revenuecat }
    public let preset: Preset

    public init(_ preset: Preset) { self.preset = preset }

    /// The types whose price was reported as revenue before events carried the money they move (`revenue`): how an
    /// event stored then is still reported.
    public static let legacyRevenueTypes: Set<String> = [
        "trial_converted", "intro_started", "intro_renewed", "intro_converted", "promo_started", "promo_converted",
        "subscription_started", "subscription_renewed", "subscription_resubscribed", "non_renewing_purchase",
        "non_consumable_purchase", "consumable_purchase", "refunded",
    ]

    /// The revenue in US dollars a message reports, if any: the money its event moves (negative for money returned),
    /// and for a retraction the opposite, so that a destination's sum of revenue stays the ledger's.
    public static func revenueUSD(_ event: OutboundEvent) -> Double? {
        guard let usd = event.revenueUSD, usd != 0 else { return nil }
        return event.retractedAt == nil ? usd : -usd
    }

    public func eventName(_ event: OutboundEvent) -> String {
        let name: String
        switch preset {
        case .storekeeper:
            name = event.type
        case .apphud:
            name = "[Apphud] " + Self.apphudName(event)
        case .revenuecat:
            name = Self.revenueCatNames[event.type] ?? "rc_\(event.type)_event"
        }
        return event.retractedAt == nil ? name : name + " (retracted)"
    }

    /// Apphud's event name (docs.apphud.com, Events): a refund by what was refunded (`trial_refunded`,
    /// `intro_refunded`, `promo_refunded`, `subscription_refunded`, `non_renewing_purchase_refunded`), every one-time
    /// purchase `non_renewing_purchase`, a cancellation `trial_canceled` or `subscription_canceled` (Apphud's current
    /// names; `autorenew_disabled` is deprecated). Our types Apphud has no name for keep ours (listed in the README).
    static func apphudName(_ event: OutboundEvent) -> String {
        let offer = apphudOffer(event.periodType)
        switch event.type {
        case "refunded": return event.isOneTimePurchase ? "non_renewing_purchase_refunded" : "\(offer)_refunded"
        case "subscription_canceled": return event.periodType == "trial" ? "trial_canceled" : "subscription_canceled"
        case "non_renewing_purchase", "non_consumable_purchase", "consumable_purchase": return "non_renewing_purchase"
        default: return apphudNames[event.type] ?? event.type
        }
    }

    /// The `revenueType` of a revenue event in Amplitude: our event type, or for the `apphud` preset Apphud's event
    /// name (`non_renewing_purchase`, `subscription_refunded`, `non_renewing_purchase_refunded` …), as Apphud's
    /// integration sends it. RevenueCat's integration documents no revenue type: the `revenuecat` preset sends ours.
    public func revenueType(_ event: OutboundEvent) -> String {
        preset == .apphud ? Self.apphudName(event) : event.type
    }

    /// Apphud's word for a period type: `trial`, `intro`, `promo` (promotional offers, offer codes and win-backs are
    /// all offers Apphud counts as promo) or `subscription` (a regular price).
    static func apphudOffer(_ periodType: String?) -> String {
        switch periodType {
        case "trial": "trial"
        case "intro": "intro"
        case "promo", "offerCode", "winBack": "promo"
        default: "subscription"
        }
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
            // Apphud's parameters: product_id, local_price, currency, usd_price.
            properties = [
                ("product_id", JSONText.optional(event.productId)), ("environment", JSONText.string(event.environment.lowercased())),
                ("local_price", local), ("currency", JSONText.optional(event.currency)), ("usd_price", usd),
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

    /// The customer's properties. Ours: status per subscription group, whether paying, total spent in US dollars.
    /// Apphud's: `[Apphud] status-<group>` with Apphud's values, `[Apphud] paying`, `[Apphud] total_spent`.
    /// RevenueCat's: `rc_subscription_status` of the subscription the event is about, with RevenueCat's values (none
    /// for a one-time purchase).
    public func userProperties(_ event: OutboundEvent) -> [(String, String)] {
        let spent = event.totalSpentUSD.map { String($0) } ?? "null"
        let paying = event.paying.map { $0 ? "true" : "false" } ?? "null"
        switch preset {
        case .storekeeper:
            return event.groupStatuses.sorted { $0.key < $1.key }.map { ("storekeeper_status_\($0.key)", JSONText.string($0.value)) }
                + [("storekeeper_paying", paying), ("storekeeper_total_spent_usd", spent)]
        case .apphud:
            return event.groupStatuses.sorted { $0.key < $1.key }.map { group, status in
                ("[Apphud] status-\(group)", JSONText.string(Self.apphudStatus(status, periodType: event.groupPeriodTypes[group])))
            } + [("[Apphud] paying", paying), ("[Apphud] total_spent", spent)]
        case .revenuecat:
            guard let subscription = event.subscription else { return [] }
            return [("rc_subscription_status", JSONText.string(Self.revenueCatStatus(subscription)))]
        }
    }

    /// Apphud's `status-<group>` values: `trial`, `intro`, `promo`, `regular`, `grace`, `refunded`, `expired`. A
    /// subscription in billing retry (no access) is `expired` to Apphud.
    static func apphudStatus(_ status: String, periodType: String?) -> String {
        switch status {
        case "trial": return "trial"
        case "active":
            let offer = apphudOffer(periodType)
            return offer == "subscription" ? "regular" : offer
        case "grace_period": return "grace"
        case "refunded": return "refunded"
        default: return "expired"
        }
    }

    /// RevenueCat's `rc_subscription_status` values (its documentation's list): `trial`, `cancelled_trial`,
    /// `grace_period_trial`, `intro`, `active`, `cancelled`, `grace_period`, `expired`. Billing retry without a grace
    /// period gives no access, which RevenueCat reports as `expired`; a refund too.
    public static func revenueCatStatus(_ subscription: SubscriptionStanding) -> String {
        let trial = subscription.periodType == "trial"
        switch subscription.status {
        case "active":
            if trial { return subscription.willRenew == false ? "cancelled_trial" : "trial" }
            if subscription.willRenew == false { return "cancelled" }
            return subscription.periodType == "intro" ? "intro" : "active"
        case "gracePeriod": return trial ? "grace_period_trial" : "grace_period"
        default: return "expired"
        }
    }

    static let apphudNames: [String: String] = [
        "billing_recovered": "billing_issue_resolved", "product_changed": "subscription_product_changed",
        "grace_period_started": "billing_issue", "subscription_resubscribed": "subscription_started",
    ]

    /// RevenueCat's default event names for Amplitude and Mixpanel. A resubscription is a renewal to RevenueCat
    /// ("a lapsed user has resubscribed"); a one-time purchase is `rc_non_subscription_purchase_event`; a refund is a
    /// cancellation (with `cancel_reason`).
    static let revenueCatNames: [String: String] = [
        "trial_started": "rc_trial_started_event", "trial_converted": "rc_trial_converted_event",
        "trial_canceled": "rc_trial_cancelled_event", "trial_expired": "rc_expiration_event",
        "intro_started": "rc_initial_purchase_event", "promo_started": "rc_initial_purchase_event",
        "subscription_started": "rc_initial_purchase_event", "subscription_resubscribed": "rc_renewal_event",
        "subscription_renewed": "rc_renewal_event", "intro_renewed": "rc_renewal_event", "intro_converted": "rc_renewal_event",
        "promo_converted": "rc_renewal_event", "subscription_canceled": "rc_cancellation_event",
        "autorenew_enabled": "rc_uncancellation_event", "billing_issue": "rc_billing_issue_event",
        "subscription_expired": "rc_expiration_event", "intro_expired": "rc_expiration_event", "promo_expired": "rc_expiration_event",
        "refunded": "rc_cancellation_event", "product_changed": "rc_product_change_event",
        "non_renewing_purchase": "rc_non_subscription_purchase_event", "non_consumable_purchase": "rc_non_subscription_purchase_event",
        "consumable_purchase": "rc_non_subscription_purchase_event",
    ]
}
