import SQLKit

/// Apple's decision on a refund request, from the notification that followed it.
public enum RefundOutcome: String, Codable, Sendable, Hashable, CaseIterable {
    /// `REFUND`.
    case refunded
    /// `REFUND_DECLINED`.
    case declined
    /// `REFUND_REVERSED` after a refund.
    case reversed

    /// The outcome a notification type tells, if it tells one.
    public init?(notificationType: String) {
        switch notificationType {
        case "REFUND": self = .refunded
        case "REFUND_DECLINED": self = .declined
        case "REFUND_REVERSED": self = .reversed
        default: return nil
        }
    }

    /// What a decision does to the outcome so far: the first refund or decline answers the request (a customer who asks
    /// again makes a new one), a reversal undoes a refund.
    public func applied(to current: RefundOutcome?) -> RefundOutcome? {
        switch self {
        case .refunded, .declined: current ?? self
        case .reversed: current == .refunded ? .reversed : current
        }
    }
}

/// A customer's refund request as Apple notified it (`CONSUMPTION_REQUEST`), the answer decided for it and what
/// became of it. Keyed by the notification's UUID: the same notification twice is one request.
public struct RefundRequestRecord: Codable, Sendable, Hashable {
    /// Where the answer stands.
    public enum Status: String, Codable, Sendable, Hashable, CaseIterable {
        /// To be sent at `dueAt` (held for a person until then when the policy holds answers).
        case waiting
        /// The customer has not consented to sharing consumption data: only shown, never sent (until they consent).
        case noConsent
        /// Not answered automatically: the app has no refund policy, or no Server API key. `note` says which.
        case unanswered
        /// Apple accepted the answer.
        case sent
        /// Apple refused the answer (a 4xx other than a rate limit); `lastError` has its error.
        case rejected
        /// Apple's window (12 hours from the request) closed before an answer could be sent.
        case expired
    }

    public var appId: String
    public var notificationUUID: String
    public var environment: String
    public var customerId: String
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    /// Apple's product type (`Auto-Renewable Subscription`, `Consumable` …).
    public var productType: String?
    /// Apple's `consumptionRequestReason`.
    public var reason: String?
    /// When Apple asked (the notification's signed date), and the end of its 12-hour window.
    public var requestedAt: Int64
    public var deadlineAt: Int64
    public var status: Status
    /// When the answer may go out (the end of the hold), and when the worker next tries.
    public var dueAt: Int64
    public var nextAttemptAt: Int64
    /// `DECLINE`, `GRANT_FULL`, `GRANT_PRORATED`, or nil for an answer without a preference.
    public var preference: String?
    /// What decided it: `rule:<name>`, `default`, `override` (the customer's), `person:<email>`.
    public var decidedBy: String
    /// Why the answer differs from what was decided, or why none is sent.
    public var note: String?
    public var attempts: Int
    /// The body sent to Apple (JSON), once sent.
    public var body: String?
    public var lastError: String?
    /// Apple's HTTP status for the last attempt.
    public var appleStatus: Int?
    public var answeredAt: Int64?
    /// Apple's decision, from the notification that followed.
    public var outcome: RefundOutcome?
    public var outcomeAt: Int64?
    public var createdAt: Int64

    public init(
        appId: String, notificationUUID: String, environment: String, customerId: String, transactionId: String,
        originalTransactionId: String, productId: String, productType: String?, reason: String?, requestedAt: Int64,
        deadlineAt: Int64, status: Status, dueAt: Int64, preference: String?, decidedBy: String, note: String?, createdAt: Int64
    ) {
        self.appId = appId
        self.notificationUUID = notificationUUID
        self.environment = environment
        self.customerId = customerId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.productType = productType
        self.reason = reason
        self.requestedAt = requestedAt
        self.deadlineAt = deadlineAt
        self.status = status
        self.dueAt = dueAt
        self.nextAttemptAt = dueAt
        self.preference = preference
        self.decidedBy = decidedBy
        self.note = note
        self.attempts = 0
        self.createdAt = createdAt
    }

    enum CodingKeys: String, CodingKey {
        case appId = "app_id"
        case notificationUUID = "notification_uuid"
        case environment
        case customerId = "customer_id"
        case transactionId = "transaction_id"
        case originalTransactionId = "original_transaction_id"
        case productId = "product_id"
        case productType = "product_type"
        case reason
        case requestedAt = "requested_at"
        case deadlineAt = "deadline_at"
        case status
        case dueAt = "due_at"
        case nextAttemptAt = "next_attempt_at"
        case preference
        case decidedBy = "decided_by"
        case note, attempts, body
        case lastError = "last_error"
        case appleStatus = "apple_status"
        case answeredAt = "answered_at"
        case outcome
        case outcomeAt = "outcome_at"
        case createdAt = "created_at"
    }
}

/// What the app reported about a customer for refund requests (consent, usage, delivery), and the team's override of
/// the policy for that customer. Keyed by the app user id the app reported it for.
public struct ConsumptionReportRecord: Sendable, Hashable {
    public var appId: String
    public var appUserId: String
    /// Whether the customer consented to sharing consumption data with Apple; nil until the app says.
    public var consented: Bool?
    /// Whether the customer used what they bought (the app's judgement).
    public var entitlementUsed: Bool?
    /// Share consumed, in milli-percent (0…100000): for consumables, non-consumables and non-renewing subscriptions.
    public var consumptionPercentage: Int?
    /// Apple's `deliveryStatus`.
    public var deliveryStatus: String?
    public var sampleContentProvided: Bool?
    /// The team's preference for this customer, over the policy's rules.
    public var override: String?
    public var updatedAt: Int64

    public init(
        appId: String, appUserId: String, consented: Bool? = nil, entitlementUsed: Bool? = nil, consumptionPercentage: Int? = nil,
        deliveryStatus: String? = nil, sampleContentProvided: Bool? = nil, override: String? = nil, updatedAt: Int64
    ) {
        self.appId = appId
        self.appUserId = appUserId
        self.consented = consented
        self.entitlementUsed = entitlementUsed
        self.consumptionPercentage = consumptionPercentage
        self.deliveryStatus = deliveryStatus
        self.sampleContentProvided = sampleContentProvided
        self.override = override
        self.updatedAt = updatedAt
    }

}

/// A report as its table stores it: booleans as 0 and 1 (BIGINT, as the schema's other flags).
private struct ConsumptionReportRow: Codable {
    var appId: String
    var appUserId: String
    var consented: Int64?
    var entitlementUsed: Int64?
    var consumptionPercentage: Int64?
    var deliveryStatus: String?
    var sampleContentProvided: Int64?
    var override: String?
    var updatedAt: Int64

    enum CodingKeys: String, CodingKey {
        case appId = "app_id"
        case appUserId = "app_user_id"
        case consented
        case entitlementUsed = "entitlement_used"
        case consumptionPercentage = "consumption_percentage"
        case deliveryStatus = "delivery_status"
        case sampleContentProvided = "sample_content_provided"
        case override = "refund_override"
        case updatedAt = "updated_at"
    }

    init(_ r: ConsumptionReportRecord) {
        func flag(_ value: Bool?) -> Int64? { value.map { $0 ? 1 : 0 } }
        appId = r.appId
        appUserId = r.appUserId
        consented = flag(r.consented)
        entitlementUsed = flag(r.entitlementUsed)
        consumptionPercentage = r.consumptionPercentage.map(Int64.init)
        deliveryStatus = r.deliveryStatus
        sampleContentProvided = flag(r.sampleContentProvided)
        override = r.override
        updatedAt = r.updatedAt
    }

    var record: ConsumptionReportRecord {
        ConsumptionReportRecord(
            appId: appId, appUserId: appUserId, consented: consented.map { $0 != 0 }, entitlementUsed: entitlementUsed.map { $0 != 0 },
            consumptionPercentage: consumptionPercentage.map(Int.init), deliveryStatus: deliveryStatus,
            sampleContentProvided: sampleContentProvided.map { $0 != 0 }, override: override, updatedAt: updatedAt)
    }
}

/// What the ledger says of a customer's money, for a refund policy's rules.
public struct CustomerSpend: Sendable, Hashable {
    /// Σ (price − refund) in USD of the customer's purchases in converted currencies.
    public var netUSD: Double
    /// Purchases refunded before the given instant.
    public var refundsBefore: Int
}

/// One refund request as the `refundRequests` metric counts it.
public struct RefundRequestTally: Decodable, Sendable, Hashable {
    public var requestedAt: Int64
    public var status: String
    public var preference: String?
    public var outcome: RefundOutcome?

    enum CodingKeys: String, CodingKey {
        case requestedAt = "requested_at"
        case status, preference, outcome
    }

    /// Apple granted it (a refund, reversed later or not).
    public var granted: Bool { outcome == .refunded || outcome == .reversed }
    /// Our answer went out and preferred a grant.
    public var answeredGrant: Bool { status == RefundRequestRecord.Status.sent.rawValue && (preference?.hasPrefix("GRANT") ?? false) }
    /// Our answer went out and preferred a decline.
    public var answeredDecline: Bool { status == RefundRequestRecord.Status.sent.rawValue && preference == "DECLINE" }
}

extension StorageSession {
    static let refundRequests = "refund_requests"
    static let consumptionReports = "consumption_reports"

    /// Records a refund request; false when that notification's request is recorded already.
    @discardableResult
    public func insert(_ request: RefundRequestRecord) async throws -> Bool {
        try await !sql.insert(into: Self.refundRequests).model(request).ignoringConflicts(with: ["app_id", "notification_uuid"])
            .returning("notification_uuid").all().isEmpty
    }

    /// The latest report of any of the customer's app user ids.
    public func consumptionReport(app appId: String, customerId: String) async throws -> ConsumptionReportRecord? {
        try await sql.raw(
            """
            SELECT r.* FROM consumption_reports r JOIN app_users u ON u.app_id = r.app_id AND u.app_user_id = r.app_user_id
            WHERE r.app_id = \(bind: appId) AND u.customer_id = \(bind: customerId) ORDER BY r.updated_at DESC LIMIT 1
            """
        )
        .first(decoding: ConsumptionReportRow.self)?.record
    }

    /// The report stored for one app user id.
    public func consumptionReport(app appId: String, appUserId: String) async throws -> ConsumptionReportRecord? {
        try await sql.select().columns("*").from(Self.consumptionReports)
            .where("app_id", .equal, appId).where("app_user_id", .equal, appUserId)
            .first(decoding: ConsumptionReportRow.self)?.record
    }

    /// Stores a report whole (the caller merged it with the stored one).
    public func upsert(_ report: ConsumptionReportRecord) async throws {
        let row = ConsumptionReportRow(report)
        try await sql.insert(into: Self.consumptionReports).model(row)
            .onConflict(with: ["app_id", "app_user_id"]) { try $0.set(excludedContentOf: row) }
            .run()
    }

    /// The customer's spend in USD and refunds before `instant`, from the ledger of one environment.
    public func spend(customerId: String, environment: String, before instant: Int64) async throws -> CustomerSpend {
        let row = try await sql.raw(
            """
            SELECT COALESCE(SUM(usd_rate * (COALESCE(price, 0) - COALESCE(refund_amount, 0)) / 1000), 0) AS net,
                   COUNT(CASE WHEN refunded_at IS NOT NULL AND refunded_at < \(bind: instant) THEN 1 END) AS refunds
            FROM ledger WHERE customer_id = \(bind: customerId) AND environment = \(bind: environment)
            """
        ).first()
        return CustomerSpend(
            netUSD: try row?.decode(column: "net", as: Double?.self) ?? 0,
            refundsBefore: Int(try row?.decode(column: "refunds", as: Int64?.self) ?? 0))
    }

    /// Links Apple's decision to the requests about the transaction, as `RefundOutcome.applied(to:)` says.
    @discardableResult
    public func linkRefundOutcome(app appId: String, transactionId: String, outcome: RefundOutcome, at instant: Int64) async throws
        -> Int
    {
        let update = sql.update(Self.refundRequests).set("outcome", to: outcome.rawValue).set("outcome_at", to: instant)
            .where("app_id", .equal, appId).where("transaction_id", .equal, transactionId)
            .where("requested_at", .lessThanOrEqual, instant)
        // As `RefundOutcome.applied(to:)`: a refund or a decline answers an open request, a reversal undoes a refund.
        switch outcome {
        case .refunded, .declined: update.where("outcome", .is, SQLLiteral.null)
        case .reversed: update.where("outcome", .equal, RefundOutcome.refunded.rawValue)
        }
        return try await update.returning("notification_uuid").all().count
    }

    /// Apple's decisions on refunds of an original transaction (`REFUND`, `REFUND_DECLINED`, `REFUND_REVERSED`) signed at or
    /// after `instant`, oldest first: what a refund request that arrives after them (Apple retries out of order) links to.
    public func refundDecisions(app appId: String, originalTransactionId: String, since instant: Int64) async throws
        -> [RefundDecisionNotice]
    {
        try await sql.select().column("notification_type").column("signed_date").from("notifications")
            .where("app_id", .equal, appId).where("original_transaction_id", .equal, originalTransactionId)
            .where("notification_type", .in, ["REFUND", "REFUND_DECLINED", "REFUND_REVERSED"])
            .where("signed_date", .greaterThanOrEqual, instant)
            .orderBy("signed_date").all(decoding: RefundDecisionNotice.self)
    }

    /// Requests whose customer has now consented: those not sent for want of consent become waiting again.
    @discardableResult
    public func reopenForConsent(app appId: String, customerId: String, now: Int64) async throws -> Int {
        try await sql.update(Self.refundRequests).set("status", to: RefundRequestRecord.Status.waiting.rawValue)
            .set("note", to: SQLLiteral.null)
            .where("app_id", .equal, appId).where("customer_id", .equal, customerId)
            .where("status", .equal, RefundRequestRecord.Status.noConsent.rawValue).where("deadline_at", .greaterThan, now)
            .returning("notification_uuid").all().count
    }

    /// A person's decision on a request not answered yet: it goes out at once.
    public func decideRefundRequest(app appId: String, notificationUUID: String, preference: String?, by person: String, now: Int64)
        async throws -> Bool
    {
        try await !sql.update(Self.refundRequests).set("preference", to: preference).set("decided_by", to: "person:\(person)")
            .set("due_at", to: now).set("next_attempt_at", to: now).set("note", to: SQLLiteral.null)
            .where("app_id", .equal, appId).where("notification_uuid", .equal, notificationUUID)
            .where("status", .in, [RefundRequestRecord.Status.waiting.rawValue, RefundRequestRecord.Status.noConsent.rawValue])
            .where("deadline_at", .greaterThan, now)
            .returning("notification_uuid").all().isEmpty
    }

    /// Takes a waiting request that is due, for `lease` milliseconds (another worker, or this one after a crash, takes it
    /// again only then); nil when another took it first or it is not due.
    public func claimRefundRequest(app appId: String, notificationUUID: String, now: Int64, lease: Int64) async throws
        -> RefundRequestRecord?
    {
        try await sql.update(Self.refundRequests).set("next_attempt_at", to: now + lease)
            .set("attempts", to: SQLRaw("attempts + 1"))
            .where("app_id", .equal, appId).where("notification_uuid", .equal, notificationUUID)
            .where("status", .equal, RefundRequestRecord.Status.waiting.rawValue)
            .where("next_attempt_at", .lessThanOrEqual, now).where("due_at", .lessThanOrEqual, now)
            .returning(SQLLiteral.all).first(decoding: RefundRequestRecord.self)
    }

    /// What an attempt to answer ended in. Written only while the claim is the one that made the attempt
    /// (`claimedUntil`, the lease it set): a person who decided meanwhile moved the next attempt to now, and their answer,
    /// sent next, is the one recorded.
    public func finishRefundAnswer(
        app appId: String, notificationUUID: String, claimedUntil: Int64, status: RefundRequestRecord.Status, body: String?,
        preference: String?, note: String?, appleStatus: Int?, error: String?, nextAttemptAt: Int64?, now: Int64
    ) async throws {
        let update = sql.update(Self.refundRequests).set("status", to: status.rawValue).set("last_error", to: error)
            .set("apple_status", to: appleStatus).set("note", to: note)
            .where("app_id", .equal, appId).where("notification_uuid", .equal, notificationUUID)
            .where("next_attempt_at", .equal, claimedUntil)
        if let nextAttemptAt { update.set("next_attempt_at", to: nextAttemptAt) }
        if status == .sent {
            update.set("answered_at", to: now).set("body", to: body).set("preference", to: preference)
        }
        try await update.run()
    }
}

extension StorageDatabase {
    /// Waiting requests due by `now`, oldest first (their keys).
    public func dueRefundRequests(now: Int64, limit: Int) async throws -> [RefundRequestKey] {
        try await read { sql in
            try await sql.select().column("app_id").column("notification_uuid").from(StorageSession.refundRequests)
                .where("status", .equal, RefundRequestRecord.Status.waiting.rawValue)
                .where("next_attempt_at", .lessThanOrEqual, now).where("due_at", .lessThanOrEqual, now)
                .orderBy("next_attempt_at").limit(limit)
                .all(decoding: RefundRequestKey.self)
        }
    }

    /// An app's requests in one environment, newest first, optionally of one status.
    public func refundRequests(app appId: String, environment: String, status: RefundRequestRecord.Status?, limit: Int) async throws
        -> [RefundRequestRecord]
    {
        try await read { sql in
            let query = sql.select().columns("*").from(StorageSession.refundRequests)
                .where("app_id", .equal, appId).where("environment", .equal, environment)
            if let status { query.where("status", .equal, status.rawValue) }
            return try await query.orderBy("requested_at", .descending).limit(limit).all(decoding: RefundRequestRecord.self)
        }
    }

    /// One request.
    public func refundRequest(app appId: String, notificationUUID: String) async throws -> RefundRequestRecord? {
        try await read { sql in
            try await sql.select().columns("*").from(StorageSession.refundRequests)
                .where("app_id", .equal, appId).where("notification_uuid", .equal, notificationUUID)
                .first(decoding: RefundRequestRecord.self)
        }
    }

    /// Requests made in `[from, to)` (of one product, when given), each with what became of it, for the metric.
    public func refundRequestTallies(app appId: String, environment: String, productId: String?, from: Int64, to: Int64) async throws
        -> [RefundRequestTally]
    {
        try await read { sql in
            let query = sql.select().column("requested_at").column("status").column("preference").column("outcome")
                .from(StorageSession.refundRequests)
                .where("app_id", .equal, appId).where("environment", .equal, environment)
                .where("requested_at", .greaterThanOrEqual, from).where("requested_at", .lessThan, to)
            if let productId { query.where("product_id", .equal, productId) }
            return try await query.all(decoding: RefundRequestTally.self)
        }
    }
}

/// A notification of Apple's decision on a refund, as `refundDecisions` reads it.
public struct RefundDecisionNotice: Decodable, Sendable, Hashable {
    public var type: String
    public var signedDate: Int64

    enum CodingKeys: String, CodingKey {
        case type = "notification_type"
        case signedDate = "signed_date"
    }
}

/// The key of a refund request.
public struct RefundRequestKey: Codable, Sendable, Hashable {
    public var appId: String
    public var notificationUUID: String

    enum CodingKeys: String, CodingKey {
        case appId = "app_id"
        case notificationUUID = "notification_uuid"
    }
}
