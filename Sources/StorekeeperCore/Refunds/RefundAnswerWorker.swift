import AppStore
import Foundation
import Logging
import ServiceLifecycle
import Storage

/// Sends the refund requests' answers that are due (Send Consumption Information v2), within Apple's 12-hour window.
///
/// A request is taken with a lease (its next attempt moved a minute on, in the statement that takes it), so that two
/// servers never send one answer at once and one a crashed server took is sent again after the lease. Apple's 5xx,
/// a rate limit or a network failure is retried with a growing wait while the window lasts; another 4xx is kept as
/// Apple's refusal; the window's end marks the request expired.
public struct RefundAnswerWorker: Service {
    let database: StorageDatabase
    let registry: AppRegistry
    let appleAPI: AppleAPIAccess?
    let metrics: ServerMetrics
    let logger: Logger
    let clock: @Sendable () -> Date
    /// How often due answers are looked for.
    var interval: Duration = .seconds(1)
    /// How long a taken request is another worker's to leave alone.
    var lease: Int64 = 60_000

    public func run() async throws {
        await everyUntilShutdown(interval, logger: logger, failure: "could not send refund request answers") { try await pass() }
    }

    /// One pass over what is due; how many answers it sent.
    @discardableResult
    public func pass() async throws -> Int {
        var sent = 0
        for key in try await database.dueRefundRequests(now: clock().millisecondsSince1970, limit: 100) {
            if try await answer(key) { sent += 1 }
        }
        return sent
    }

    private func answer(_ key: RefundRequestKey) async throws -> Bool {
        // Each request on the clock of its own turn: one pass can wait on Apple for a while.
        let now = clock().millisecondsSince1970
        let claimed = try await database.writing { session in
            try await session.claimRefundRequest(app: key.appId, notificationUUID: key.notificationUUID, now: now, lease: lease)
        }
        guard let request = claimed else { return false }
        func finish(
            _ status: RefundRequestRecord.Status, body: String? = nil, preference: String? = nil, note: String? = request.note,
            appleStatus: Int? = nil, error: String? = nil, next: Int64? = nil
        ) async throws {
            try await database.writing { session in
                try await session.finishRefundAnswer(
                    app: key.appId, notificationUUID: key.notificationUUID, claimedUntil: now + lease, status: status, body: body,
                    preference: preference, note: note, appleStatus: appleStatus, error: error, nextAttemptAt: next, now: now)
            }
            metrics.refundAnswer(status.rawValue)
        }
        guard now < request.deadlineAt else {
            try await finish(.expired, note: "Apple's 12-hour window closed before an answer could be sent")
            return false
        }
        let app: AppRuntime
        do {
            app = try await registry.app(id: key.appId)
        } catch CoreError.appNotFound {
            try await finish(.unanswered, note: "the app is gone")
            return false
        }  // Another failure (the database) leaves the claim to lapse: the request is taken again after the lease.
        let report = try await database.reading { session in
            try await session.consumptionReport(app: key.appId, customerId: request.customerId)
        }
        guard report?.consented == true else {
            try await finish(.noConsent, note: "the customer's consent to share consumption data is not recorded")
            return false
        }
        let client: AppStoreServerAPIClient?
        do {
            client = try await appleAPI?.client(app: app, environment: Environment(rawValue: request.environment))
        } catch {
            try await finish(.unanswered, note: "the app's App Store Server API key does not load: \(error)")
            return false
        }
        guard let client else {
            try await finish(.unanswered, note: "the app has no App Store Server API key")
            return false
        }
        let answer = ConsumptionAnswer(
            preference: request.preference.map(RefundPreference.init(rawValue:)),
            productType: request.productType.map(ProductType.init(rawValue:)), report: report,
            sampleContentProvided: app.config.refundPolicy?.sampleContentProvided ?? false)
        let body = String(decoding: try JSONEncoder.sortedKeys.encode(answer.request), as: UTF8.self)
        let failure: AppStoreServerAPIError?
        do {
            try await client.sendConsumptionInformation(transactionId: request.transactionId, answer.request)
            failure = nil
        } catch {
            failure = error
        }
        guard let failure else {
            try await finish(.sent, body: body, preference: answer.preference?.rawValue, note: answer.note, appleStatus: 202)
            logger.info(
                "refund request answered",
                metadata: [
                    "app": "\(key.appId)", "request": "\(key.notificationUUID)", "preference": "\(answer.preference?.rawValue ?? "none")",
                    "decidedBy": "\(request.decidedBy)",
                ])
            return true
        }
        let wait = Self.backoff(attempt: request.attempts)
        if failure.isRetryable, now + wait < request.deadlineAt {
            try await finish(.waiting, appleStatus: failure.httpStatus, error: failure.description, next: now + wait)
        } else if failure.isRetryable {
            try await finish(.expired, appleStatus: failure.httpStatus, error: failure.description)
        } else {
            try await finish(.rejected, appleStatus: failure.httpStatus, error: failure.description)
        }
        logger.warning(
            "refund request answer failed",
            metadata: ["app": "\(key.appId)", "request": "\(key.notificationUUID)", "error": "\(failure.description)"])
        return false
    }

    /// 10 s, doubling with each attempt, at most 30 minutes.
    static func backoff(attempt: Int) -> Int64 {
        min(10_000 << Int64(min(max(attempt - 1, 0), 20)), 1_800_000)
    }
}
