// swift-format-ignore-file: AlwaysUseLowerCamelCase
// The property names are RevenueCat's JSON keys, snake_case, as its clients read them.

import AppStore
import Entitlements
import Foundation

/// RevenueCat's v1 `GET /subscribers/{app_user_id}` response, the subset its public OpenAPI spec documents, so that
/// a team can move its backend over without rewriting its reads. Dates are ISO 8601 in UTC, as RevenueCat sends them.
/// What is documented but left out (store other than `app_store`, `management_url`, `subscriber_attributes`,
/// `original_application_version`) is listed in the README.
struct RevenueCatSubscriber: Codable {
    struct Entitlement: Codable {
        var expires_date: String?
        var grace_period_expires_date: String?
        var product_identifier: String
        var purchase_date: String
    }

    struct Subscription: Codable {
        var expires_date: String?
        var purchase_date: String
        var original_purchase_date: String?
        var period_type: String
        var store: String = "app_store"
        var is_sandbox: Bool
        var unsubscribe_detected_at: String?
        var billing_issues_detected_at: String?
        var grace_period_expires_date: String?
        var refunded_at: String?
        var ownership_type: String
        var store_transaction_id: String
        var auto_resume_date: String? = nil
    }

    struct NonSubscription: Codable {
        var id: String
        var is_sandbox: Bool
        var purchase_date: String
        var store: String = "app_store"
        var store_transaction_id: String
    }

    struct Subscriber: Codable {
        var original_app_user_id: String
        var first_seen: String
        var last_seen: String
        var management_url: String? = nil
        var original_purchase_date: String?
        var entitlements: [String: Entitlement]
        var subscriptions: [String: Subscription]
        var non_subscriptions: [String: [NonSubscription]]
        var other_purchases: [String: String] = [:]
    }

    var request_date: String
    var request_date_ms: Int64
    var subscriber: Subscriber

    init(state: CustomerState, appUserId: String, environment: Environment, requestDate: Int64, firstSeen: Int64) {
        let iso = Self.iso
        var subscriptions: [String: Subscription] = [:]
        // One entry per product: the latest subscription of it, as RevenueCat keys them.
        for s in state.subscriptions.sorted(by: { ($0.expiresDate ?? $0.purchaseDate) < ($1.expiresDate ?? $1.purchaseDate) }) {
            subscriptions[s.productId] = Subscription(
                expires_date: s.expiresDate.map(iso), purchase_date: iso(s.purchaseDate),
                original_purchase_date: s.originalPurchaseDate.map(iso),
                period_type: s.periodType == .trial ? "trial" : (s.periodType == .regular ? "normal" : "intro"),
                is_sandbox: s.environment != .production,
                unsubscribe_detected_at: nil,
                billing_issues_detected_at: s.status == .billingRetry || s.status == .gracePeriod ? s.expiresDate.map(iso) : nil,
                grace_period_expires_date: s.gracePeriodExpiresDate.map(iso), refunded_at: s.revocation.map { iso($0.date) },
                ownership_type: s.ownership == .familyShared ? "FAMILY_SHARED" : "PURCHASED",
                store_transaction_id: s.transactionId)
        }
        var nonSubscriptions: [String: [NonSubscription]] = [:]
        for n in state.nonSubscriptions where n.revocation == nil {
            nonSubscriptions[n.productId, default: []].append(
                NonSubscription(
                    id: n.transactionId, is_sandbox: n.environment != .production, purchase_date: iso(n.purchaseDate),
                    store_transaction_id: n.transactionId))
        }
        var entitlements: [String: Entitlement] = [:]
        for (name, access) in state.entitlements {
            guard let productId = access.productId else { continue }
            let subscription = state.subscriptions.first { $0.transactionId == access.transactionId }
            let purchase =
                subscription?.purchaseDate ?? state.nonSubscriptions.first { $0.transactionId == access.transactionId }?.purchaseDate
            guard let purchase else { continue }
            entitlements[name] = Entitlement(
                expires_date: access.expiresDate.map(iso), grace_period_expires_date: subscription?.gracePeriodExpiresDate.map(iso),
                product_identifier: productId, purchase_date: iso(purchase))
        }
        let firstPurchase =
            (state.subscriptions.map { $0.originalPurchaseDate ?? $0.purchaseDate } + state.nonSubscriptions.map(\.purchaseDate)).min()
        request_date = iso(Timestamp(millisecondsSince1970: requestDate))
        request_date_ms = requestDate
        subscriber = Subscriber(
            original_app_user_id: appUserId, first_seen: iso(Timestamp(millisecondsSince1970: firstSeen)),
            last_seen: iso(Timestamp(millisecondsSince1970: requestDate)), original_purchase_date: firstPurchase.map(iso),
            entitlements: entitlements, subscriptions: subscriptions, non_subscriptions: nonSubscriptions)
    }

    static func iso(_ t: Timestamp) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: t.date)
    }
}
