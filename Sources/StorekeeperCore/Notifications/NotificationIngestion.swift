import AppStore
import Foundation
import Logging
import Storage

/// What became of a notification.
public enum NotificationOutcome: String, Sendable {
    /// Stored, and its customer's state recomputed.
    case applied
    /// Stored; it concerns no transaction (a TEST notification, a summary).
    case stored
    /// Already stored before: nothing to do.
    case duplicate
}

/// Ingests App Store Server Notifications V2: verifies one, stores its facts and recomputes its customer, all in one
/// transaction, so that nothing is acknowledged before it commits.
public struct NotificationIngestion: Sendable {
    let database: StorageDatabase
    let recomputer: StateRecomputer
    /// Counts the time spent here as ingest, which deliveries give way to.
    let activity: IngestActivity
    let metrics: ServerMetrics
    let clock: @Sendable () -> Date
    let logger: Logger
    /// First sightings not written yet, whose tokens a notification resolves by too.
    let sightings: PendingSightings

    /// Verifies and applies one signed notification (the webhook's body) for the app.
    public func ingest(_ signedPayload: String, app: AppRuntime) async throws -> NotificationOutcome {
        try await activity.measure { try await verifyAndApply(signedPayload, app: app) }
    }

    private func verifyAndApply(_ signedPayload: String, app: AppRuntime) async throws -> NotificationOutcome {
        let verified: VerifiedNotification
        do {
            verified = try await app.verifyNotification(signedPayload)
        } catch {
            metrics.verificationFailure(error.code.rawValue)
            metrics.notification(type: "unverified", result: error.isRetryable ? "retry" : "rejected")
            logger.warning(
                "notification rejected", metadata: ["app": "\(app.id)", "error": "\(error.code.rawValue)", "reason": "\(error.message)"])
            throw CoreError.verification(error)
        }
        let type = verified.payload.notificationType?.rawValue ?? "unknown"
        do {
            let outcome = try await apply(verified, signedPayload: signedPayload, app: app)
            metrics.notification(type: type, result: outcome.rawValue)
            return outcome
        } catch {
            metrics.notification(type: type, result: "error")
            throw error
        }
    }

    /// Applies a notification that the Server API client verified (Notification History): from one of the app's
    /// environments only.
    func applyFromHistory(_ verified: VerifiedNotification, signedPayload: String, app: AppRuntime) async throws -> NotificationOutcome {
        try app.checkEnvironment(of: verified)
        return try await apply(verified, signedPayload: signedPayload, app: app)
    }

    /// Stores a verified notification, its facts and its customer's new state.
    private func apply(_ verified: VerifiedNotification, signedPayload: String, app: AppRuntime) async throws -> NotificationOutcome {
        let now = clock().millisecondsSince1970
        let facts = try NotificationFacts(verified, signedPayload: signedPayload, app: app, now: now)
        let recomputer = self.recomputer
        let stored: StoredNotification = try await database.writing { session in
            guard try await session.insert(facts.notification) else { return .duplicate }
            if let transaction = facts.transaction { try await session.insert(transaction) }
            if let renewal = facts.renewal { try await session.insert(renewal) }
            guard let original = facts.originalTransactionId else {
                // About a customer rather than a purchase: a parent's withdrawn consent reaches every purchase it names.
                let rescinded = try await ConsentRescissions.record(verified, app: app, session: session, recomputer: recomputer, now: now)
                return rescinded.isEmpty ? .stored : .applied(rescinded)
            }
            let customer = try await NotificationOwner.resolve(
                session, app: app, appAccountToken: facts.appAccountToken, originalTransactionId: original, now: now,
                pending: sightings)
            let recomputed = try await recomputer.lockAndRecompute(session, app: app, customerId: customer, now: now)
            // A refund request and its answer, or Apple's decision on one, in the same transaction as the notification.
            try await RefundRequests.record(verified, customerId: customer, app: app, session: session, now: now)
            return .applied([recomputed])
        }
        if case .applied(let recomputed) = stored { recomputed.forEach(recomputer.committed) }
        return stored.outcome
    }
}

/// What one transaction of `apply` did.
private enum StoredNotification: Sendable {
    /// The customers it changed: one, or for a rescinded consent every owner of a purchase it reached.
    case applied([RecomputedCustomer])
    case stored
    case duplicate

    var outcome: NotificationOutcome {
        switch self {
        case .applied: .applied
        case .stored: .stored
        case .duplicate: .duplicate
        }
    }
}

/// The records one notification becomes.
struct NotificationFacts: Sendable {
    var notification: NotificationRecord
    var transaction: TransactionRecord?
    var renewal: RenewalInfoRecord?
    /// The app's name for the customer, when the purchase carried one.
    var appAccountToken: String?

    init(_ verified: VerifiedNotification, signedPayload: String, app: AppRuntime, now: Int64) throws(CoreError) {
        notification = try FactCoding.record(verified, signed: signedPayload, app: app.id, now: now)
        transaction = try verified.transactionInfo.map { t throws(CoreError) in
            try FactCoding.record(t, signed: verified.payload.data?.signedTransactionInfo, source: .notification, app: app.id, now: now)
        }
        renewal = try verified.renewalInfo.flatMap { r throws(CoreError) in
            try FactCoding.record(r, signed: verified.payload.data?.signedRenewalInfo, app: app.id, now: now)
        }
        appAccountToken = verified.transactionInfo?.appAccountToken ?? verified.renewalInfo?.appAccountToken
    }

    /// The subscription or purchase it concerns; nil for a notification about no transaction.
    var originalTransactionId: String? { transaction?.originalTransactionId ?? renewal?.originalTransactionId }
}
