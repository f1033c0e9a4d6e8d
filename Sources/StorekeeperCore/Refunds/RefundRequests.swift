import AppStore
import Foundation
import Storage

/// Apple's refund requests (`CONSUMPTION_REQUEST`) and the app's answers: the request is recorded with its decided answer
/// in the transaction that stores the notification (so an answer due is never lost), `RefundAnswerWorker` sends it,
/// and Apple's decision (`REFUND`, `REFUND_DECLINED`, `REFUND_REVERSED`) is linked to it when it comes.
public struct RefundRequests: Sendable {
    let database: StorageDatabase
    let administration: AppAdministration
    let clock: @Sendable () -> Date

    /// Apple waits 12 hours for the answer.
    public static let window: Int64 = 12 * 3_600_000

    // MARK: - Inside the ingest transaction

    /// Records a refund request, or links Apple's decision to the requests it answers; nothing for other notifications.
    static func record(
        _ verified: VerifiedNotification, customerId: String, app: AppRuntime, session: StorageSession, now: Int64
    ) async throws {
        guard let type = verified.payload.notificationType, let transaction = verified.transactionInfo,
            let transactionId = transaction.transactionId
        else { return }
        switch type {
        case .refund, .refundDeclined, .refundReversed:
            guard let outcome = RefundOutcome(notificationType: type.rawValue) else { return }
            let at = verified.payload.signedDate?.millisecondsSince1970 ?? now
            try await session.linkRefundOutcome(app: app.id, transactionId: transactionId, outcome: outcome, at: at)
        case .consumptionRequest:
            guard let uuid = verified.payload.notificationUUID, let productId = transaction.productId else { return }
            let environment = transaction.environment?.rawValue ?? verified.payload.data?.environment?.rawValue ?? "Production"
            let requestedAt = verified.payload.signedDate?.millisecondsSince1970 ?? now
            let deadline = requestedAt + window
            let report = try await session.consumptionReport(app: app.id, customerId: customerId)
            var status = RefundRequestRecord.Status.waiting
            var note: String?
            var decision = RefundDecision(preference: nil, decidedBy: "none")
            var due = now
            if let policy = app.config.refundPolicy {
                let spend = try await session.spend(customerId: customerId, environment: environment, before: requestedAt)
                let facts = RefundRequestFacts(
                    productId: productId, productType: transaction.type, reason: verified.payload.data?.consumptionRequestReason,
                    hoursSincePurchase: transaction.purchaseDate.map { Double(requestedAt - $0.millisecondsSince1970) / 3_600_000 },
                    lifetimeSpendUSD: spend.netUSD, refundsBefore: spend.refundsBefore, entitlementUsed: report?.entitlementUsed,
                    override: report?.override.map(RefundPreference.init(rawValue:)))
                decision = policy.decide(facts)
                // The hold ends half an hour before Apple's window at the latest, leaving time for retries.
                due = max(now, min(now + Int64(policy.holdMinutes) * 60_000, deadline - 1_800_000))
                if app.config.serverAPI == nil {
                    status = .unanswered
                    note = "the app has no App Store Server API key (serverAPI): no answer can be sent"
                } else if report?.consented != true {
                    status = .noConsent
                    note = "the customer's consent to share consumption data is not recorded (POST /v1/customers/{id}/consumption)"
                }
            } else {
                status = .unanswered
                note = "the app has no refund policy (PUT /v1/apps/{appId}/refund-policy)"
            }
            if now >= deadline {
                status = .expired
                note = "the request reached the server after Apple's 12-hour window"
            }
            // Apple's decision can reach the server first (retries come out of order): link it now, and answer no more.
            let original = transaction.originalTransactionId ?? transactionId
            let outcome = Self.outcome(
                of: try await session.refundDecisions(app: app.id, originalTransactionId: original, since: requestedAt))
            if let outcome, status != .expired {
                status = .unanswered
                note = "Apple decided (\(outcome.outcome.rawValue)) before the request reached the server"
            }
            var record = RefundRequestRecord(
                appId: app.id, notificationUUID: uuid, environment: environment, customerId: customerId, transactionId: transactionId,
                originalTransactionId: original, productId: productId,
                productType: transaction.type?.rawValue, reason: verified.payload.data?.consumptionRequestReason?.rawValue,
                requestedAt: requestedAt, deadlineAt: deadline, status: status, dueAt: due, preference: decision.preference?.rawValue,
                decidedBy: decision.decidedBy, note: note, createdAt: now)
            record.outcome = outcome?.outcome
            record.outcomeAt = outcome?.at
            try await session.insert(record)
        default:
            return
        }
    }

    /// Where Apple's decisions leave a request, and when the last that changed it was signed.
    struct DecidedOutcome: Equatable {
        var outcome: RefundOutcome
        var at: Int64
    }

    /// What Apple's decisions, oldest first, leave a request at.
    static func outcome(of notices: [RefundDecisionNotice]) -> DecidedOutcome? {
        var result: DecidedOutcome?
        for notice in notices {
            guard let decision = RefundOutcome(notificationType: notice.type),
                let next = decision.applied(to: result?.outcome), next != result?.outcome
            else { continue }
            result = DecidedOutcome(outcome: next, at: notice.signedDate)
        }
        return result
    }

    // MARK: - What the app reports

    /// The app's report for one of its customers: consent, usage, delivery. Fields absent keep their stored value.
    public func report(_ report: ConsumptionReport, appUserId: String, app: AppRuntime) async throws -> ConsumptionReport {
        try report.validate()
        return try await updateReport(appUserId: appUserId, app: app) { record in
            if let consented = report.customerConsented { record.consented = consented }
            if let used = report.entitlementUsed { record.entitlementUsed = used }
            if let percentage = report.consumptionPercentage { record.consumptionPercentage = percentage }
            if let delivery = report.deliveryStatus { record.deliveryStatus = delivery.rawValue }
            if let sample = report.sampleContentProvided { record.sampleContentProvided = sample }
        }
    }

    /// The team's preference for one customer, over the policy's rules (nil removes it).
    public func setOverride(_ preference: RefundPreference?, appUserId: String, app: AppRuntime) async throws -> ConsumptionReport {
        try await updateReport(appUserId: appUserId, app: app) { $0.override = preference?.rawValue }
    }

    /// Changes the report stored for an app user id (a new one if none); once it records consent, the customer's
    /// requests held back for want of it wait again, and the worker sends them within its interval.
    private func updateReport(
        appUserId: String, app: AppRuntime, _ change: @escaping @Sendable (inout ConsumptionReportRecord) -> Void
    ) async throws -> ConsumptionReport {
        let appUserId = try AppUserIds.validate(appUserId)
        let now = clock().millisecondsSince1970
        let stored = try await database.writing { session in
            var record =
                try await session.consumptionReport(app: app.id, appUserId: appUserId)
                ?? ConsumptionReportRecord(appId: app.id, appUserId: appUserId, updatedAt: now)
            change(&record)
            record.updatedAt = now
            try await session.upsert(record)
            if record.consented == true, let customer = try await session.customer(app: app.id, appUserId: appUserId) {
                try await session.reopenForConsent(app: app.id, customerId: customer.id, now: now)
            }
            return record
        }
        return ConsumptionReport(stored)
    }

    // MARK: - The team

    /// The app's refund policy.
    public func policy(of app: AppRuntime) -> RefundPolicy? { app.config.refundPolicy }

    /// Replaces (or, with nil, removes) the app's refund policy.
    public func setPolicy(_ policy: RefundPolicy?, of app: AppRuntime) async throws {
        var config = app.config
        config.refundPolicy = policy
        try await administration.update(app, to: config)
    }

    /// An app's requests in one environment, newest first.
    public func list(app: AppRuntime, environment: Environment, status: RefundRequestRecord.Status? = nil, limit: Int = 200)
        async throws -> [RefundRequestView]
    {
        let now = clock().millisecondsSince1970
        return try await database.refundRequests(app: app.id, environment: environment.rawValue, status: status, limit: limit)
            .map { RefundRequestView($0, now: now) }
    }

    /// A person's answer to a request not answered yet: it is sent at once (still only with the customer's consent).
    public func decide(_ notificationUUID: String, preference: RefundPreference?, by person: String, app: AppRuntime) async throws
        -> RefundRequestView
    {
        let now = clock().millisecondsSince1970
        let changed = try await database.writing { session in
            try await session.decideRefundRequest(
                app: app.id, notificationUUID: notificationUUID, preference: preference?.rawValue, by: person, now: now)
        }
        guard let record = try await database.refundRequest(app: app.id, notificationUUID: notificationUUID) else {
            throw CoreError.notFound("no refund request \(notificationUUID)")
        }
        guard changed else {
            throw CoreError.conflict(
                "refund request \(notificationUUID) is \(record.status.rawValue): only one waiting for its answer can be decided")
        }
        return RefundRequestView(record, now: now)
    }
}

/// What the app reports of a customer for refund requests (`POST /v1/customers/{appUserId}/consumption`), and what is
/// stored: every field optional on the way in.
public struct ConsumptionReport: Codable, Sendable, Hashable {
    /// Whether the customer consented to share consumption data with Apple. Without it no answer is ever sent.
    public var customerConsented: Bool?
    /// Whether the customer used what they bought.
    public var entitlementUsed: Bool?
    /// Share consumed, in milli-percent (0…100000), for consumables, non-consumables and non-renewing subscriptions.
    public var consumptionPercentage: Int?
    public var deliveryStatus: PurchaseDeliveryStatus?
    public var sampleContentProvided: Bool?
    /// The team's preference for this customer (read only here; set by the admin API).
    public var refundPreferenceOverride: RefundPreference?

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case customerConsented, entitlementUsed, consumptionPercentage, deliveryStatus, sampleContentProvided, refundPreferenceOverride
    }

    public init(
        customerConsented: Bool? = nil, entitlementUsed: Bool? = nil, consumptionPercentage: Int? = nil,
        deliveryStatus: PurchaseDeliveryStatus? = nil, sampleContentProvided: Bool? = nil
    ) {
        self.customerConsented = customerConsented
        self.entitlementUsed = entitlementUsed
        self.consumptionPercentage = consumptionPercentage
        self.deliveryStatus = deliveryStatus
        self.sampleContentProvided = sampleContentProvided
    }

    init(_ record: ConsumptionReportRecord) {
        customerConsented = record.consented
        entitlementUsed = record.entitlementUsed
        consumptionPercentage = record.consumptionPercentage
        deliveryStatus = record.deliveryStatus.map(PurchaseDeliveryStatus.init(rawValue:))
        sampleContentProvided = record.sampleContentProvided
        refundPreferenceOverride = record.override.map(RefundPreference.init(rawValue:))
    }

    func validate() throws(CoreError) {
        if let deliveryStatus, !deliveryStatus.isKnown {
            throw .invalidInput(
                field: "deliveryStatus", "one of \(PurchaseDeliveryStatus.known.map(\.rawValue).joined(separator: ", "))")
        }
        if let percentage = consumptionPercentage, !(0...100_000).contains(percentage) {
            throw .invalidInput(field: "consumptionPercentage", "a share in milli-percent: 0 to 100000 (100%)")
        }
        if refundPreferenceOverride != nil {
            throw .invalidInput(
                field: "refundPreferenceOverride", "the override is the team's: PUT /v1/apps/{appId}/customers/{appUserId}/refund-override")
        }
    }
}

/// A refund request as the API and the dashboard show it.
public struct RefundRequestView: Codable, Sendable, Hashable {
    public var id: String
    public var customerId: String
    public var environment: String
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var productType: String?
    public var reason: String?
    public var requestedAt: Int64
    public var deadlineAt: Int64
    public var status: String
    /// Whether it waits for a person (its hold has not ended).
    public var held: Bool
    public var dueAt: Int64
    public var preference: String?
    public var decidedBy: String
    public var note: String?
    public var attempts: Int
    public var lastError: String?
    public var appleStatus: Int?
    public var answeredAt: Int64?
    /// The body Apple was sent.
    public var body: String?
    public var outcome: String?
    public var outcomeAt: Int64?

    init(_ r: RefundRequestRecord, now: Int64) {
        id = r.notificationUUID
        customerId = r.customerId
        environment = r.environment
        transactionId = r.transactionId
        originalTransactionId = r.originalTransactionId
        productId = r.productId
        productType = r.productType
        reason = r.reason
        requestedAt = r.requestedAt
        deadlineAt = r.deadlineAt
        status = r.status.rawValue
        held = r.status == .waiting && r.dueAt > now
        dueAt = r.dueAt
        preference = r.preference
        decidedBy = r.decidedBy
        note = r.note
        attempts = r.attempts
        lastError = r.lastError
        appleStatus = r.appleStatus
        answeredAt = r.answeredAt
        body = r.body
        outcome = r.outcome?.rawValue
        outcomeAt = r.outcomeAt
    }
}
