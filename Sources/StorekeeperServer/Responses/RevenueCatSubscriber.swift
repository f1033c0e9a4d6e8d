// swift-format-ignore-file: AlwaysUseLowerCamelCase
// The property names are RevenueCat's JSON keys, snake_case, as its clients read them.

import AppStore
import Entitlements
import Foundation

/// RevenueCat's v1 `GET /subscribers/{app_user_id}` response, the subset its public API reference documents for App
/// Store data, so that a team can move its backend over without rewriting its reads. Dates are ISO 8601 in UTC, as
/// RevenueCat sends them, and every documented key is present: a value that does not exist is `null`, as RevenueCat
/// sends it, never a missing key. What is documented but left out is listed in the README.
///
/// Entitlements follow RevenueCat's meaning: every entitlement the customer ever had stays listed with its
/// `expires_date` (in the past once it lapsed), and `expires_date: null` means access for life; a refunded one-time
/// purchase's entitlement stays listed, expired at the refund, and the purchase stays in `non_subscriptions`. Every
/// entitlement's product is a key of `subscriptions` or `non_subscriptions` (RevenueCat's clients drop one whose
/// product is not), also a product the customer changed away from inside a subscription.
struct RevenueCatSubscriber: Codable {
    struct Entitlement: Codable {
        var expires_date: String?
        var grace_period_expires_date: String?
        var product_identifier: String
        var purchase_date: String

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(expires_date, forKey: .expires_date)
            try c.encode(grace_period_expires_date, forKey: .grace_period_expires_date)
            try c.encode(product_identifier, forKey: .product_identifier)
            try c.encode(purchase_date, forKey: .purchase_date)
        }
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

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(expires_date, forKey: .expires_date)
            try c.encode(purchase_date, forKey: .purchase_date)
            try c.encode(original_purchase_date, forKey: .original_purchase_date)
            try c.encode(period_type, forKey: .period_type)
            try c.encode(store, forKey: .store)
            try c.encode(is_sandbox, forKey: .is_sandbox)
            try c.encode(unsubscribe_detected_at, forKey: .unsubscribe_detected_at)
            try c.encode(billing_issues_detected_at, forKey: .billing_issues_detected_at)
            try c.encode(grace_period_expires_date, forKey: .grace_period_expires_date)
            try c.encode(refunded_at, forKey: .refunded_at)
            try c.encode(ownership_type, forKey: .ownership_type)
            try c.encode(store_transaction_id, forKey: .store_transaction_id)
            try c.encode(auto_resume_date, forKey: .auto_resume_date)
        }
    }

    struct NonSubscription: Codable {
        var id: String
        var is_sandbox: Bool
        var purchase_date: String
        var original_purchase_date: String
        var store: String = "app_store"
        var store_transaction_id: String
    }

    struct Subscriber: Codable {
        var original_app_user_id: String
        var original_application_version: String? = nil
        var first_seen: String
        var last_seen: String
        var management_url: String?
        var original_purchase_date: String?
        var entitlements: [String: Entitlement]
        var subscriptions: [String: Subscription]
        var non_subscriptions: [String: [NonSubscription]]
        var other_purchases: [String: String] = [:]

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(original_app_user_id, forKey: .original_app_user_id)
            try c.encode(original_application_version, forKey: .original_application_version)
            try c.encode(first_seen, forKey: .first_seen)
            try c.encode(last_seen, forKey: .last_seen)
            try c.encode(management_url, forKey: .management_url)
            try c.encode(original_purchase_date, forKey: .original_purchase_date)
            try c.encode(entitlements, forKey: .entitlements)
            try c.encode(subscriptions, forKey: .subscriptions)
            try c.encode(non_subscriptions, forKey: .non_subscriptions)
            try c.encode(other_purchases, forKey: .other_purchases)
        }
    }

    /// Where an App Store customer manages subscriptions: RevenueCat's `management_url` while one is active.
    static let appStoreManagementURL = "https://apps.apple.com/account/subscriptions"

    var request_date: String
    var request_date_ms: Int64
    var subscriber: Subscriber

    init(state: CustomerState, appUserId: String, requestDate: Int64, firstSeen: Int64) {
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
        // A product the customer moved away from inside a subscription (an upgrade, a downgrade, a crossgrade) keeps its
        // own entry, as RevenueCat keys subscriptions by product: an entitlement it gave names it, and RevenueCat's
        // clients drop an entitlement whose product is not listed.
        for (productId, access) in state.products where subscriptions[productId] == nil {
            guard let s = state.subscriptions.first(where: { $0.originalTransactionId == access.transactionId }) else { continue }
            var expires = access.expiresDate?.millisecondsSince1970
            if !access.active { expires = expires.map { min($0, requestDate) } }
            subscriptions[productId] = Subscription(
                expires_date: expires.map { iso(Timestamp(millisecondsSince1970: $0)) },
                purchase_date: iso(s.originalPurchaseDate ?? s.purchaseDate), original_purchase_date: s.originalPurchaseDate.map(iso),
                period_type: "normal", is_sandbox: s.environment != .production, unsubscribe_detected_at: nil,
                billing_issues_detected_at: nil, grace_period_expires_date: nil, refunded_at: s.revocation.map { iso($0.date) },
                ownership_type: s.ownership == .familyShared ? "FAMILY_SHARED" : "PURCHASED", store_transaction_id: s.transactionId)
        }
        var nonSubscriptions: [String: [NonSubscription]] = [:]
        // A refunded one-time purchase stays listed (its entitlement is listed too, expired at the refund).
        for n in state.nonSubscriptions {
            nonSubscriptions[n.productId, default: []].append(
                NonSubscription(
                    id: n.transactionId, is_sandbox: n.environment != .production, purchase_date: iso(n.purchaseDate),
                    original_purchase_date: iso(n.purchaseDate), store_transaction_id: n.transactionId))
        }
        var entitlements: [String: Entitlement] = [:]
        for (name, access) in state.entitlements {
            guard let entitlement = Self.entitlement(access, in: state, now: requestDate) else { continue }
            entitlements[name] = entitlement
        }
        let firstPurchase =
            (state.subscriptions.map { $0.originalPurchaseDate ?? $0.purchaseDate } + state.nonSubscriptions.map(\.purchaseDate)).min()
        let subscribed = state.subscriptions.contains { $0.status != .expired && $0.status != .revoked && !$0.isUpgraded }
        request_date = iso(Timestamp(millisecondsSince1970: requestDate))
        request_date_ms = requestDate
        subscriber = Subscriber(
            original_app_user_id: appUserId, first_seen: iso(Timestamp(millisecondsSince1970: firstSeen)),
            last_seen: iso(Timestamp(millisecondsSince1970: requestDate)),
            management_url: subscribed ? Self.appStoreManagementURL : nil, original_purchase_date: firstPurchase.map(iso),
            entitlements: entitlements, subscriptions: subscriptions, non_subscriptions: nonSubscriptions)
    }

    /// One entitlement as RevenueCat lists it, from the access the engine computed at `now`: the subscription behind
    /// it (an entitlement's `transactionId` is the subscription's *original* transaction id) or the one-time purchase.
    /// RevenueCat reads access from `expires_date` alone (null: for life; in the future: active), so an entitlement that
    /// gives nothing now never carries a future or missing expiry: a lapsed or refunded subscription's is when it
    /// ended, and a refunded one-time purchase is not listed. Nor is an entitlement nothing ever gave.
    static func entitlement(_ access: AccessState, in state: CustomerState, now: Int64) -> Entitlement? {
        guard let productId = access.productId, let transactionId = access.transactionId else { return nil }
        if let subscription = state.subscriptions.first(where: { $0.originalTransactionId == transactionId }) {
            var expires = (access.expiresDate ?? subscription.expiresDate)?.millisecondsSince1970
            if !access.active {
                let ended = subscription.revocation?.date.millisecondsSince1970 ?? now
                expires = min(expires ?? ended, ended, now)
            }
            return Entitlement(
                expires_date: expires.map { iso(Timestamp(millisecondsSince1970: $0)) },
                grace_period_expires_date: subscription.gracePeriodExpiresDate.map(iso), product_identifier: productId,
                purchase_date: iso(subscription.purchaseDate))
        }
        guard let purchase = state.nonSubscriptions.first(where: { $0.transactionId == transactionId }) else { return nil }
        if let revocation = purchase.revocation {
            // Refunded: listed, expired when the refund came (RevenueCat lists expired entitlements with their product).
            let ended = min(revocation.date.millisecondsSince1970, now)
            return Entitlement(
                expires_date: iso(Timestamp(millisecondsSince1970: ended)), grace_period_expires_date: nil, product_identifier: productId,
                purchase_date: iso(purchase.purchaseDate))
        }
        if !access.active, (access.expiresDate?.millisecondsSince1970 ?? .max) > now { return nil }
        return Entitlement(
            expires_date: access.expiresDate.map(iso), grace_period_expires_date: nil, product_identifier: productId,
            purchase_date: iso(purchase.purchaseDate))
    }

    static func iso(_ t: Timestamp) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: t.date)
    }
}
