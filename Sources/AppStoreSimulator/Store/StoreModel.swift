import AppStore
import Crypto
import Entitlements
import Foundation

/// Something the simulated App Store refuses to do, as the real one would: a product it does not sell, an offer the
/// customer is not eligible for, a refund of nothing.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// How long subscription periods last: the calendar (a virtual clock), or Apple's sandbox table (compressed time).
public enum PeriodTime: Sendable, Hashable {
    case calendar
    case sandbox(SandboxTime)

    /// Simulated milliseconds per real day under the sandbox table: a 30-day month lasts 5 minutes, so a day 10 s.
    static let sandboxDay: Int64 = 10_000

    /// The end of `count` periods from `start`.
    func end(of period: ISO8601Duration, count: Int = 1, from start: Int64) -> Int64 {
        switch self {
        case .calendar:
            var end = start
            for _ in 0..<max(1, count) { end = period.added(to: end) }
            return end
        case .sandbox:
            // A catalog's period can be anything: saturate rather than overflow.
            let one: Int64
            if let real = SandboxTime.realDuration(ofPeriod: period.text) {
                one = real.components.seconds * 1000
            } else {
                let days = period.months.multipliedReportingOverflow(by: 30)
                let scaled = days.partialValue.addingReportingOverflow(period.days).partialValue.multipliedReportingOverflow(
                    by: Self.sandboxDay)
                one = days.overflow || scaled.overflow ? .max : max(1, scaled.partialValue &+ period.milliseconds / 8640)
            }
            return Self.adding(Int64(max(1, count)).multipliedReportingOverflow(by: one), to: start)
        }
    }

    /// `start` plus a product, saturating at the end of time.
    static func adding(_ product: (partialValue: Int64, overflow: Bool), to start: Int64) -> Int64 {
        guard !product.overflow else { return .max }
        let sum = start.addingReportingOverflow(product.partialValue)
        return sum.overflow ? .max : sum.partialValue
    }

    /// The length of `days` days (grace periods, Apple's 60 days of billing retry).
    func days(_ days: Int) -> Int64 {
        switch self {
        case .calendar: Int64(days) * 86_400_000
        case .sandbox: Int64(days) * Self.sandboxDay
        }
    }

    var renewalLimit: Int? {
        if case .sandbox(let time) = self { return time.renewalLimit }
        return nil
    }
}

/// An offer applied to a purchase.
public enum PurchaseOffer: Hashable, Sendable {
    case none
    case freeTrial
    /// An introductory price paid each period for `periods` periods.
    case payAsYouGo(periods: Int)
    /// An introductory price paid once for `periods` periods.
    case payUpFront(periods: Int)
    case promotional(id: String)
    case offerCode(id: String)

    var periodType: PeriodType {
        switch self {
        case .none: .regular
        case .freeTrial: .trial
        case .payAsYouGo, .payUpFront: .intro
        case .promotional: .promo
        case .offerCode: .offerCode
        }
    }

    var isIntroductory: Bool { periodType == .trial || periodType == .intro }
}

/// One notification the store produced: what it is about, and its signed body.
public struct SimulatedNotification: Sendable, Hashable {
    public var uuid: String
    public var type: NotificationType
    public var subtype: NotificationSubtype?
    public var signedDate: Int64
    /// The customer it is about (by the simulator's name), if any.
    public var customer: String?
    public var originalTransactionId: String?
    /// The JWS the App Store sends as `signedPayload`.
    public var signedPayload: String

    public var label: String { type.rawValue + (subtype.map { "/" + $0.rawValue } ?? "") }
}

/// One event the server should derive, by Storekeeper's event vocabulary (see docs/events.md).
public struct ExpectedEvent: Codable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public var type: SubscriptionEventType
    public var originalTransactionId: String
    public var effectiveAt: Int64

    public init(type: SubscriptionEventType, originalTransactionId: String, effectiveAt: Int64) {
        self.type = type
        self.originalTransactionId = originalTransactionId
        self.effectiveAt = effectiveAt
    }

    public static func < (a: Self, b: Self) -> Bool {
        (a.effectiveAt, a.originalTransactionId, a.type.rawValue) < (b.effectiveAt, b.originalTransactionId, b.type.rawValue)
    }

    public var description: String { "\(type.rawValue)@\(effectiveAt)[\(originalTransactionId)]" }
}

/// The simulated App Store: customers, their subscriptions and one-time purchases, the ledger of signed
/// transactions, and the notifications it sent. Deterministic: the same actions at the same instants give the same
/// ids, the same payloads and the same notifications (signatures aside: ECDSA signs with fresh randomness).
public struct StoreModel: Sendable {
    public let app: SimulatedApp
    public let ca: SimulatorCA
    public let time: PeriodTime
    /// Distinguishes the ids of one run from another's against the same server (from the seed and scenario name).
    public let runId: UInt64
    public internal(set) var now: Int64

    var counter: UInt64 = 0
    var customers: [String: Customer] = [:]
    public internal(set) var customerNames: [String] = []
    var subscriptions: [String: Subscription] = [:]
    var subscriptionOrder: [String] = []
    var oneTime: [String: OneTimePurchase] = [:]
    var oneTimeOrder: [String] = []
    var removedFromSale: Set<String> = []
    /// New USD prices by product, after a price increase.
    var increasedPrices: [String: Int64] = [:]
    var due = DueQueue()

    /// Every signed transaction by id (its latest version), in the order they were first signed.
    public internal(set) var transactions: [String: Signed<JWSTransactionDecodedPayload>] = [:]
    public internal(set) var transactionOrder: [String] = []
    /// Every notification sent, with its delivery attempts: Notification History.
    public internal(set) var history: [HistoryEntry] = []
    var historyIndex: [String: Int] = [:]
    /// The events the server should derive, per customer name.
    public internal(set) var expectedEvents: [String: [ExpectedEvent]] = [:]
    /// What the developer sent with Send Consumption Information, by transaction id (the fake Server API records it):
    /// what `decideRefund` decides by.
    public internal(set) var consumptionAnswers: [String: ReceivedConsumption] = [:]

    public struct HistoryEntry: Sendable, Hashable {
        /// One delivery attempt: when, and Apple's `sendAttemptResult`.
        public struct Attempt: Sendable, Hashable {
            public var date: Int64
            public var result: String
        }

        public var notification: SimulatedNotification
        public var attempts: [Attempt]
        public var delivered: Bool { attempts.contains { $0.result == Webhook.success } }
    }

    struct Customer: Sendable {
        var name: String
        /// The appAccountToken the app set at purchase; family members who did not buy have none.
        var token: String?
        var storefront: Storefront
        /// The customer's app transaction (Apple's `appTransactionId`), which every transaction of theirs carries.
        var appTransactionId: String
        /// When a parent or guardian withdrew consent for the app (`RESCIND_CONSENT`).
        var consentRescindedAt: Int64?
        var paymentFails = false
        var introUsed: Set<String> = []
        /// The customer's subscriptions (original transaction ids) and one-time purchases (transaction ids), in
        /// the order they began: every per-customer lookup goes through these, never through the whole store.
        var subscriptionIds: [String] = []
        var purchaseIds: [String] = []
    }

    struct Period: Sendable {
        var transactionId: String
        var webOrderLineItemId: String
        var productId: String
        var start: Int64
        var end: Int64
        var offer: PurchaseOffer
        var price: Int64
        var currency: String
        var reason: TransactionReason
        var revocation: (date: Int64, reason: RevocationReason, type: RevocationType, percentage: Int32?)?
        var upgraded = false
        var signedAt: Int64
        /// A monthly payment of a commitment plan: which of its billing periods, of how many, and when it ends.
        var commitment: PeriodCommitment? = nil
    }

    /// A monthly payment's place in its commitment (Apple's `commitmentInfo`).
    struct PeriodCommitment: Sendable {
        var number: Int32
        var total: Int32
        var expiresAt: Int64

        var periodsRemain: Bool { number < total }
    }

    struct Subscription: Sendable {
        var originalTransactionId: String
        var customer: String
        var group: String
        var ownership: InAppOwnershipType
        /// The purchaser's subscription, for a family member's.
        var sharedFrom: String?
        var members: [String] = []
        var periods: [Period] = []
        var status: RenewalState = .active
        var autoRenew = true
        var autoRenewProductId: String
        var introRemaining = 0
        var pendingOffer: PurchaseOffer?
        var renewals = 0
        var failedAt: Int64?
        var graceEndsAt: Int64?
        var expirationIntent: ExpirationIntent?
        var expirationReason: ExpirationReason?
        var priceIncrease: PriceIncreaseStatus?

        var last: Period { periods[periods.count - 1] }
        var renewing: Bool { status == .active || status == .gracePeriod || status == .billingRetry }
    }

    struct OneTimePurchase: Sendable {
        var transactionId: String
        var customer: String
        var productId: String
        var kind: ProductKind
        var start: Int64
        var end: Int64?
        var quantity: Int32
        var price: Int64
        var currency: String
        var revocation: (date: Int64, reason: RevocationReason, type: RevocationType, percentage: Int32?)?
        /// The offer code redeemed for it (Apple's offer codes for one-time products since 2025: a one-time discount).
        var offerCode: String? = nil
    }

    public init(app: SimulatedApp, ca: SimulatorCA, time: PeriodTime = .calendar, runId: UInt64, start: Int64) {
        self.app = app
        self.ca = ca
        self.time = time
        self.runId = runId % 1_000_000
        self.now = start
    }

    // MARK: - Identity

    mutating func nextCounter() -> UInt64 {
        counter += 1
        return counter
    }

    /// A 16-digit id like Apple's: a prefix digit, the run's six digits, a nine-digit counter.
    mutating func newId(prefix: UInt64 = 2) -> String {
        String(prefix * 1_000_000_000_000_000 + runId * 1_000_000_000 + nextCounter() % 1_000_000_000)
    }

    func uuid(_ seed: String) -> String {
        // A version 4 layout over the digest's first 16 bytes.
        var b = Array(SHA256.hash(data: Array("\(runId):\(seed)".utf8)).prefix(16))
        b[6] = (b[6] & 0x0F) | 0x40
        b[8] = (b[8] & 0x3F) | 0x80
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
            .uuidString.lowercased()
    }

    // MARK: - Customers

    /// Adds a customer (an idempotent call): the app set an appAccountToken derived from the name and the run.
    public mutating func addCustomer(_ name: String, storefront: String? = nil, withToken: Bool = true) throws(StoreError) {
        if customers[name] != nil { return }
        let front: Storefront
        if let storefront {
            guard let found = Storefront.named(storefront) else {
                throw StoreError("unknown storefront '\(storefront)'; known: \(Storefront.all.map(\.code).joined(separator: ", "))")
            }
            front = found
        } else {
            front = Storefront.all[0]
        }
        customers[name] = Customer(
            name: name, token: withToken ? uuid("customer:\(name)") : nil, storefront: front,
            appTransactionId: uuid("app-transaction:\(name)"))
        customerNames.append(name)
    }

    /// Sets the appAccountToken the app passes with the customer's next purchases (an SDK's customer token), or
    /// none.
    public mutating func setAppAccountToken(_ name: String, _ token: String?) throws(StoreError) {
        guard customers[name] != nil else { throw StoreError("unknown customer '\(name)'") }
        customers[name]?.token = token?.lowercased()
    }

    /// The app user id the server knows the customer by: its appAccountToken (lower case), or for a family member
    /// without one, the name the server gives customers it cannot name (`$anonymous:<originalTransactionId>`).
    public func appUserId(of name: String) -> String? {
        guard let customer = customers[name] else { return nil }
        if let token = customer.token { return token }
        return customer.subscriptionIds.first.map { "$anonymous:" + $0 }
    }

    func customer(_ name: String) throws(StoreError) -> Customer {
        guard let customer = customers[name] else { throw StoreError("unknown customer '\(name)'") }
        return customer
    }

    func product(_ id: String) throws(StoreError) -> CatalogProduct {
        guard let product = app.catalog[id] else { throw StoreError("the catalog has no product '\(id)'") }
        return product
    }

    /// Adds a new subscription to the store and to its customer.
    mutating func add(_ subscription: Subscription) {
        subscriptions[subscription.originalTransactionId] = subscription
        subscriptionOrder.append(subscription.originalTransactionId)
        customers[subscription.customer]?.subscriptionIds.append(subscription.originalTransactionId)
    }

    /// Adds a new one-time purchase to the store and to its customer.
    mutating func add(_ purchase: OneTimePurchase) {
        oneTime[purchase.transactionId] = purchase
        oneTimeOrder.append(purchase.transactionId)
        customers[purchase.customer]?.purchaseIds.append(purchase.transactionId)
    }

    /// The customer's subscriptions and one-time purchases.
    func subscriptions(of name: String) -> [Subscription] { (customers[name]?.subscriptionIds ?? []).compactMap { subscriptions[$0] } }
    func purchases(of name: String) -> [OneTimePurchase] { (customers[name]?.purchaseIds ?? []).compactMap { oneTime[$0] } }

    mutating func expect(_ type: SubscriptionEventType, _ customer: String, _ originalTransactionId: String, at instant: Int64) {
        expectedEvents[customer, default: []].append(
            ExpectedEvent(type: type, originalTransactionId: originalTransactionId, effectiveAt: instant))
    }

    // MARK: - Time

    /// Moves the store's time to `instant`, renewing, failing and expiring subscriptions on the way; returns the
    /// notifications that time produced, in order.
    public mutating func advance(to instant: Int64) throws -> [SimulatedNotification] {
        var sent: [SimulatedNotification] = []
        while let next = due.peek(), next.at <= instant {
            _ = due.pop()
            guard let subscription = subscriptions[next.id], dueDate(subscription) == next.at else { continue }
            now = max(now, next.at)
            sent += try handleDue(next.id, at: next.at)
        }
        now = max(now, instant)
        return sent
    }

    func dueDate(_ s: Subscription) -> Int64? {
        guard s.sharedFrom == nil, !s.periods.isEmpty else { return nil }
        switch s.status {
        case .active: return s.last.end
        case .gracePeriod: return s.graceEndsAt
        case .billingRetry: return s.failedAt.map { $0 + time.days(60) }
        case .expired, .revoked: return nil
        }
    }

    mutating func schedule(_ id: String) {
        if let subscription = subscriptions[id], let at = dueDate(subscription) { due.push(at, id) }
    }
}

/// A min-heap of (instant, subscription) with lazy deletion: an entry whose instant no longer matches the
/// subscription's due date is skipped when popped.
struct DueQueue: Sendable {
    private var heap: [(at: Int64, id: String)] = []

    func peek() -> (at: Int64, id: String)? { heap.first }

    mutating func push(_ at: Int64, _ id: String) {
        heap.append((at, id))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.less(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> (at: Int64, id: String)? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        var parent = 0
        while true {
            let left = parent * 2 + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, Self.less(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count, Self.less(heap[right], heap[smallest]) { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return top
    }

    private static func less(_ a: (at: Int64, id: String), _ b: (at: Int64, id: String)) -> Bool {
        (a.at, a.id) < (b.at, b.id)
    }
}
