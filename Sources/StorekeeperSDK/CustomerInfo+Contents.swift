import AppStoreModels
import Entitlements
import Foundation

// What `CustomerInfo` tells the app, in the SDK's own types: dates as `Date`, Apple's vocabularies as enums. The
// entitlement engine's `CustomerState` stays inside the SDK (it is the same engine as the server's, and its types
// change with it).

extension CustomerInfo {
    /// The App Store environment the customer's purchases were made in, in Apple's spelling on the wire.
    public enum Environment: String, Sendable, Hashable, Codable, CaseIterable {
        /// The App Store.
        case production = "Production"
        /// Apple's sandbox: TestFlight and sandbox accounts.
        case sandbox = "Sandbox"
        /// StoreKit testing in Xcode.
        case xcode = "Xcode"
        /// The local App Store simulator (Storekeeper's own, in tests).
        case localTesting = "LocalTesting"
    }

    /// Whether the customer has, had or never had a purchase that unlocks something.
    public enum Status: String, Sendable, Hashable, Codable {
        /// No subscription, non-consumable or non-renewing subscription, ever.
        case new
        /// A current subscription (also in its grace period or in billing retry), an owned non-consumable or a
        /// current non-renewing subscription.
        case active
        /// Had one of those, and none is current: expired, revoked or refunded.
        case inactive
    }

    /// Access to an entitlement or to a product.
    public struct Access: Sendable, Hashable {
        /// Whether it gives access now: the server granted it and it has not expired since, by server time.
        public var isActive: Bool
        /// When the access ends (a grace period included); nil while active means for good (a non-consumable).
        public var expiresDate: Date?
        /// The product that gives, or last gave, the access.
        public var productId: String?
        /// The transaction behind it: a subscription's original transaction id, else the purchase's transaction id.
        public var transactionId: String?
        /// The environment of the purchase behind it, in an answer that covers several (an app taking Production and
        /// Sandbox); nil in an answer for one environment, which is `CustomerInfo.environment`.
        public var environment: Environment?
    }

    /// One auto-renewable subscription: the transactions that share an original transaction id.
    public struct Subscription: Sendable, Hashable {
        /// Where a subscription is in its life, as Apple tells it.
        public enum State: String, Sendable, Hashable {
            /// Paid and current.
            case active
            /// A renewal failed and Apple's billing grace period still gives access.
            case gracePeriod
            /// A renewal failed and Apple is retrying the payment; no access.
            case billingRetry
            /// Ended: cancelled, or the retries ran out.
            case expired
            /// Refunded or revoked by Apple; no access.
            case revoked
        }

        /// The kind of period the customer is in (or was, for an ended subscription).
        public enum Period: String, Sendable, Hashable {
            /// A free trial.
            case trial
            /// A paid introductory offer.
            case intro
            /// A promotional offer.
            case promo
            /// An offer code.
            case offerCode
            /// A win-back offer.
            case winBack
            /// The regular price.
            case regular
        }

        /// The id all its transactions share.
        public var originalTransactionId: String
        /// The transaction of the current (or last) period.
        public var transactionId: String
        /// The product of the current (or last) period.
        public var productId: String
        /// The subscription group.
        public var group: String
        /// Where it is in its life.
        public var state: State
        /// The kind of its current (or last) period.
        public var period: Period
        /// When the current (or last) period was bought.
        public var purchaseDate: Date
        /// When the customer first subscribed.
        public var originalPurchaseDate: Date?
        /// The latest expiry known.
        public var expiresDate: Date?
        /// Whether it renews: nil when Apple has not said yet.
        public var willRenew: Bool?
        /// The product it renews into, when that differs from the current one (a pending downgrade or crossgrade).
        public var renewsIntoProductId: String?
        /// The end of the billing grace period, while in one.
        public var gracePeriodExpiresDate: Date?
        /// Whether a family member bought it and shares it with this customer.
        public var isFamilyShared: Bool
        /// When Apple refunded or revoked it.
        public var revocationDate: Date?
        /// Whether it was upgraded away from (it grants nothing any more).
        public var isUpgraded: Bool
        /// The environment it was bought in.
        public var environment: Environment?
        /// Whether it gives access (active, or in its grace period) by the server's answer.
        public var grantsAccess: Bool { state == .active || state == .gracePeriod }
    }

    /// A purchase that is not an auto-renewable subscription: a non-consumable, a consumable or a non-renewing
    /// subscription.
    public struct Purchase: Sendable, Hashable {
        /// The kind of product bought.
        public enum Kind: String, Sendable, Hashable {
            /// Bought once, owned for good.
            case nonConsumable
            /// Used up: only listed.
            case consumable
            /// A subscription for a fixed time that does not renew.
            case nonRenewing
        }

        /// The purchase's transaction.
        public var transactionId: String
        /// The product bought.
        public var productId: String
        /// What kind of product it is.
        public var kind: Kind
        /// When it was bought.
        public var purchaseDate: Date
        /// The end of a non-renewing subscription.
        public var expiresDate: Date?
        /// Whether it gives access now by the server's answer; nil for a consumable.
        public var isActive: Bool?
        /// How many were bought.
        public var quantity: Int?
        /// Whether a family member bought it and shares it with this customer.
        public var isFamilyShared: Bool
        /// When Apple refunded or revoked it.
        public var revocationDate: Date?
        /// The environment it was bought in.
        public var environment: Environment?
    }

    /// Whether the customer has, had or never had a purchase that unlocks something.
    public var status: Status {
        switch state.state {
        case .new: .new
        case .active: .active
        case .inactive: .inactive
        }
    }

    /// A subscription is in its grace period or in billing retry: the app can ask the customer to update the payment
    /// method.
    public var hasBillingIssue: Bool { state.billingIssue }

    /// Every entitlement of the app's catalog, active or not, by name; `isActive` is judged by server time now.
    public var entitlements: [String: Access] {
        let now = nowMilliseconds
        return state.entitlements.mapValues { Self.access($0, at: now) }
    }

    /// Every product the customer bought, by product id; `isActive` is judged by server time now.
    public var products: [String: Access] {
        let now = nowMilliseconds
        return state.products.mapValues { Self.access($0, at: now) }
    }

    /// Every auto-renewable subscription the customer has had.
    public var subscriptions: [Subscription] { state.subscriptions.map(Self.subscription) }

    /// Every other purchase: non-consumables, consumables and non-renewing subscriptions.
    public var purchases: [Purchase] { state.nonSubscriptions.map(Self.purchase) }

    static func date(_ timestamp: Timestamp?) -> Date? {
        timestamp.map { Date(timeIntervalSince1970: Double($0.millisecondsSince1970) / 1000) }
    }

    static func access(_ access: AccessState, at now: Int64) -> Access {
        Access(
            isActive: grants(access, at: now), expiresDate: date(access.expiresDate), productId: access.productId,
            transactionId: access.transactionId, environment: environment(access.environment))
    }

    static func environment(_ environment: AppStoreModels.Environment?) -> Environment? {
        environment.flatMap { Environment(rawValue: $0.rawValue) }
    }

    static func subscription(_ subscription: SubscriptionState) -> Subscription {
        let state: Subscription.State =
            switch subscription.status {
            case .active: .active
            case .gracePeriod: .gracePeriod
            case .billingRetry: .billingRetry
            case .expired: .expired
            case .revoked: .revoked
            }
        let period: Subscription.Period =
            switch subscription.periodType {
            case .trial: .trial
            case .intro: .intro
            case .promo: .promo
            case .offerCode: .offerCode
            case .winBack: .winBack
            case .regular: .regular
            }
        return Subscription(
            originalTransactionId: subscription.originalTransactionId, transactionId: subscription.transactionId,
            productId: subscription.productId, group: subscription.group, state: state, period: period,
            purchaseDate: date(subscription.purchaseDate) ?? Date(timeIntervalSince1970: 0),
            originalPurchaseDate: date(subscription.originalPurchaseDate), expiresDate: date(subscription.expiresDate),
            willRenew: subscription.willRenew, renewsIntoProductId: subscription.autoRenewProductId,
            gracePeriodExpiresDate: date(subscription.gracePeriodExpiresDate), isFamilyShared: subscription.ownership == .familyShared,
            revocationDate: date(subscription.revocation?.date), isUpgraded: subscription.isUpgraded,
            environment: environment(subscription.environment))
    }

    static func purchase(_ purchase: NonSubscriptionState) -> Purchase {
        let kind: Purchase.Kind =
            switch purchase.type {
            case .nonConsumable: .nonConsumable
            case .consumable: .consumable
            case .nonRenewing: .nonRenewing
            // The engine lists auto-renewable products among subscriptions, never here; named for completeness.
            case .autoRenewable: .nonRenewing
            }
        return Purchase(
            transactionId: purchase.transactionId, productId: purchase.productId, kind: kind,
            purchaseDate: date(purchase.purchaseDate) ?? Date(timeIntervalSince1970: 0), expiresDate: date(purchase.expiresDate),
            isActive: purchase.active, quantity: purchase.quantity.map(Int.init), isFamilyShared: purchase.ownership == .familyShared,
            revocationDate: date(purchase.revocation?.date), environment: environment(purchase.environment))
    }
}
