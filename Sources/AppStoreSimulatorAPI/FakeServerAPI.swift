import AppStore
import AppStoreSimulator
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore

/// A fake App Store Server API over the simulator's ledger, at Apple's paths and in Apple's JSON: Get Transaction
/// History (v2, and v1, which Apple's clients still call by default), Get Transaction Info, Get All Subscription Statuses, Get Notification History, Request a Test
/// Notification and Get Test Notification Status, and Send Consumption Information. Point an App Store Server API
/// client's base URL at it.
///
/// Requests need Apple's bearer token (``ServerAPITokenClaims/verify(_:publicKey:bundleId:now:)``: ES256, `aud`,
/// the app's `bid`, unexpired; `iat` optional, as Apple's own clients omit it); with `publicKey` set, its signature is checked too. Errors are Apple's: `{"errorCode", "errorMessage"}`.
public struct FakeServerAPI: Sendable {
    public let store: SimulatedStore
    public let bundleId: String
    public let publicKey: P256.Signing.PublicKey?
    /// Where Request a Test Notification delivers the `TEST` notification (nil: it is only recorded).
    public let webhook: WebhookSender?
    /// Requests served, by path template: what a test can assert was asked.
    public let requests = NIOLockedValueBox<[String: Int]>([:])
    /// How many Send Consumption Information calls to answer with Apple's retryable 500 before accepting (faults for tests).
    public let consumptionFailures = NIOLockedValueBox<Int>(0)
    /// Items per page of history and notification history (Apple: 20).
    public var pageSize = 20
    /// The Retention Messaging API's images, messages, defaults, real-time URL and performance tests.
    public let retention = NIOLockedValueBox(FakeRetentionState())
    /// How a performance test calls the real-time URL.
    public let realtimeCaller: RealtimeCaller
    /// How Apple runs a performance test: requests, concurrency, the response time and success rate to pass.
    public var performanceTest = PerformanceTestConfig(
        maxConcurrentRequests: 10, totalRequests: 100, totalDuration: 60_000, responseTimeThreshold: 700, successRateThreshold: 95)

    public init(
        store: SimulatedStore, bundleId: String, publicKey: P256.Signing.PublicKey? = nil, webhook: WebhookSender? = nil,
        realtimeCaller: RealtimeCaller? = nil
    ) {
        self.store = store
        self.bundleId = bundleId
        self.publicKey = publicKey
        self.webhook = webhook
        self.realtimeCaller = realtimeCaller ?? RealtimeCall.http()
    }

    struct APIFailure: Error, HTTPResponseError {
        var status: HTTPResponse.Status
        var code: Int64
        var message: String

        func response(from request: Request, context: some RequestContext) throws -> Response {
            FakeServerAPI.json(["errorCode": code, "errorMessage": message], status: status)
        }

        static let unauthorized = APIFailure(status: .unauthorized, code: 4_010_000, message: "Unauthenticated")
        static func notFound(_ what: String) -> APIFailure { APIFailure(status: .notFound, code: 4_040_010, message: "\(what) not found.") }
        static func invalid(_ message: String) -> APIFailure { APIFailure(status: .badRequest, code: 4_000_006, message: message) }
    }

    public func router() -> Router<BasicRequestContext> {
        let router = Router()
        let api = self
        router.get("/inApps/v2/history/:transactionId") { request, context in try await api.history(request, context, version: 2) }
        // v1 (deprecated by Apple, still the default of its libraries): the same HistoryResponse, paged by `revision`. The
        // ledger does not track whether the app finished a transaction, so both versions list the same transactions.
        router.get("/inApps/v1/history/:transactionId") { request, context in try await api.history(request, context, version: 1) }
        router.get("/inApps/v1/transactions/:transactionId") { request, context in try await api.transaction(request, context) }
        router.get("/inApps/v1/subscriptions/:transactionId") { request, context in try await api.statuses(request, context) }
        router.post("/inApps/v1/notifications/history") { request, context in try await api.notificationHistory(request, context) }
        router.post("/inApps/v1/notifications/test") { request, context in try await api.requestTest(request, context) }
        router.get("/inApps/v1/notifications/test/:token") { request, context in try await api.testStatus(request, context) }
        router.put("/inApps/v2/transactions/consumption/:transactionId") { request, context in try await api.consumption(request, context) }
        router.put("/inApps/v1/transactions/:transactionId/appAccountToken") { request, context in
            try await api.appAccountToken(request, context)
        }
        addRetentionRoutes(to: router)
        return router
    }

    // MARK: - Auth

    func authorize(_ request: Request, _ path: String) throws(APIFailure) {
        requests.withLockedValue { $0[path, default: 0] += 1 }
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "),
            ServerAPITokenClaims.verify(header.dropFirst("Bearer ".count), publicKey: publicKey, bundleId: bundleId) != nil
        else { throw .unauthorized }
    }

    static func json(_ object: Any, status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: data)))
    }

    func identity() async -> [String: Any] {
        let app = await store.with { $0.app }
        var object: [String: Any] = ["bundleId": app.bundleId, "environment": app.environment.rawValue]
        if let id = app.appAppleId { object["appAppleId"] = id }
        return object
    }

    func transactionId(_ context: BasicRequestContext) throws(APIFailure) -> String {
        guard let id = context.parameters.get("transactionId"), !id.isEmpty, id.allSatisfy(\.isNumber) else {
            throw APIFailure(status: .badRequest, code: 4_000_006, message: "Invalid transaction id.")
        }
        return id
    }

    // MARK: - Endpoints

    func history(_ request: Request, _ context: BasicRequestContext, version: Int) async throws -> Response {
        try authorize(request, version == 2 ? "history" : "historyV1")
        let id = try transactionId(context)
        let list = await store.with { $0.history(ofTransaction: id) }
        guard let list else { throw APIFailure.notFound("Transaction id") }
        let sorted = request.uri.queryParameters.get("sort") == "DESCENDING" ? Array(list.reversed()) : list
        var offset = 0
        if let revision = request.uri.queryParameters.get("revision") {
            guard let value = Int(revision), value >= 0, value <= sorted.count else { throw APIFailure.invalid("Invalid revision.") }
            offset = value
        }
        let page = Array(sorted.dropFirst(offset).prefix(pageSize))
        var body = await identity()
        body["signedTransactions"] = page
        body["revision"] = String(offset + page.count)
        body["hasMore"] = offset + page.count < sorted.count
        return Self.json(body)
    }

    func transaction(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try authorize(request, "transaction")
        let id = try transactionId(context)
        guard let jws = await store.with({ $0.transactions[id]?.jws }) else { throw APIFailure.notFound("Transaction id") }
        return Self.json(["signedTransactionInfo": jws])
    }

    func statuses(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try authorize(request, "statuses")
        let id = try transactionId(context)
        let wanted = Set(request.uri.queryParameters.getAll("status").compactMap { Int32($0) })
        let groups = try await store.with { try $0.statuses(ofTransaction: id) }
        guard let groups else { throw APIFailure.notFound("Transaction id") }
        var body = await identity()
        body["data"] = groups.map { group in
            [
                "subscriptionGroupIdentifier": group.group,
                "lastTransactions": group.items.filter { wanted.isEmpty || wanted.contains($0.status.rawValue) }.map {
                    [
                        "status": $0.status.rawValue, "originalTransactionId": $0.originalTransactionId,
                        "signedTransactionInfo": $0.transaction, "signedRenewalInfo": $0.renewalInfo,
                    ] as [String: Any]
                },
            ] as [String: Any]
        }
        return Self.json(body)
    }

    struct HistoryQuery: Decodable {
        var startDate: Int64
        var endDate: Int64
        var notificationType: String?
        var notificationSubtype: String?
        var onlyFailures: Bool?
        var transactionId: String?
    }

    func notificationHistory(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try authorize(request, "notificationHistory")
        let buffer = try await request.body.collect(upTo: 64 * 1024)
        guard let query = try? JSONDecoder().decode(HistoryQuery.self, from: Data(buffer.readableBytesView)) else {
            throw APIFailure.invalid("Invalid request: startDate and endDate are required.")
        }
        guard query.startDate <= query.endDate else { throw APIFailure.invalid("Invalid end date.") }
        var offset = 0
        if let token = request.uri.queryParameters.get("paginationToken") {
            guard let value = Int(token), value >= 0 else { throw APIFailure.invalid("Invalid pagination token.") }
            offset = value
        }
        let entries = await store.with { model in
            model.history.filter { entry in
                let n = entry.notification
                guard n.signedDate >= query.startDate, n.signedDate <= query.endDate else { return false }
                if let type = query.notificationType, n.type.rawValue != type { return false }
                if let subtype = query.notificationSubtype, n.subtype?.rawValue != subtype { return false }
                if query.onlyFailures == true, entry.delivered { return false }
                if let id = query.transactionId, n.originalTransactionId != model.originalTransactionId(of: id) { return false }
                return true
            }
        }
        let page = entries.dropFirst(offset).prefix(pageSize)
        var body: [String: Any] = [
            "notificationHistory": page.map { entry in
                [
                    "signedPayload": entry.notification.signedPayload,
                    "sendAttempts": entry.attempts.map { ["attemptDate": $0.date, "sendAttemptResult": $0.result] as [String: Any] },
                ] as [String: Any]
            },
            "hasMore": offset + page.count < entries.count,
        ]
        if offset + page.count < entries.count { body["paginationToken"] = String(offset + page.count) }
        return Self.json(body)
    }

    func requestTest(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try authorize(request, "requestTest")
        let notification = try await store.with { try $0.testNotification() }
        let now = await store.with { $0.now }
        if let webhook {
            await store.recordAttempt(notification.uuid, at: now, result: Webhook.attemptResult(status: await webhook(notification)))
        }
        return Self.json(["testNotificationToken": notification.uuid])
    }

    func testStatus(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try authorize(request, "testStatus")
        let token = context.parameters.get("token") ?? ""
        let entry = await store.with { model in model.history.first { $0.notification.uuid == token && $0.notification.type == .test } }
        guard let entry else { throw APIFailure(status: .notFound, code: 4_040_008, message: "Test notification not found.") }
        return Self.json([
            "signedPayload": entry.notification.signedPayload,
            "sendAttempts": entry.attempts.map { ["attemptDate": $0.date, "sendAttemptResult": $0.result] as [String: Any] },
        ])
    }

    /// Send Consumption Information v2, validated as Apple documents it, and recorded for `decideRefund`: 400 with
    /// Apple's error unless customerConsented is true, deliveryStatus and refundPreference are Apple's values and
    /// sampleContentProvided a Boolean; a consumptionPercentage is 0…100000, never for an auto-renewable subscription, 0
    /// when not delivered, and strictly between 0 and 100000 with GRANT_PRORATED.
    func consumption(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try authorize(request, "consumption")
        let fail = consumptionFailures.withLockedValue { left in
            defer { left = max(left - 1, 0) }
            return left > 0
        }
        if fail { throw APIFailure(status: .internalServerError, code: 5_000_001, message: "An unknown error occurred. Retry.") }
        let id = try transactionId(context)
        guard let productType = await store.with({ $0.productType(ofTransaction: id) }) else { throw APIFailure.notFound("Transaction id") }
        let buffer = try await request.body.collect(upTo: 64 * 1024)
        let body: ConsumptionBody
        do {
            body = try JSONDecoder().decode(ConsumptionBody.self, from: Data(buffer.readableBytesView))
        } catch {
            let field = (error as? DecodingError).flatMap(Self.field) ?? "the body"
            throw APIFailure.invalid("Invalid request: \(field) is not of the documented type.")
        }
        let received = try Self.consumption(body, productType: productType, at: await store.with { $0.now })
        try await store.with { model in try model.recordConsumption(received, transactionId: id) }
        return Response(status: .accepted)
    }

    /// Set App Account Token: a UUID for an original transaction (Apple's 4000183 for anything else).
    func appAccountToken(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try authorize(request, "appAccountToken")
        let id = try transactionId(context)
        let buffer = try await request.body.collect(upTo: 64 * 1024)
        struct Body: Decodable { var appAccountToken: String? }
        guard let token = (try? JSONDecoder().decode(Body.self, from: Data(buffer.readableBytesView)))?.appAccountToken,
            UUID(uuidString: token) != nil
        else {
            throw APIFailure(
                status: .badRequest, code: 4_000_183, message: "Invalid request. The app account token field must be a valid UUID.")
        }
        guard try await store.with({ model in try model.setAppAccountToken(originalTransactionId: id, token) }) else {
            throw APIFailure.notFound("Transaction id")
        }
        return Response(status: .ok)
    }

    /// Send Consumption Information's body, every field optional so that a missing one gets Apple's own error.
    struct ConsumptionBody: Decodable {
        var customerConsented: Bool?
        var deliveryStatus: PurchaseDeliveryStatus?
        var sampleContentProvided: Bool?
        var consumptionPercentage: Int32?
        var refundPreference: RefundPreference?
    }

    static func field(_ error: DecodingError) -> String? {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return context.codingPath.last?.stringValue
        case .keyNotFound(let key, _): return key.stringValue
        @unknown default: return nil
        }
    }

    static func consumption(_ body: ConsumptionBody, productType: ProductType, at now: Int64) throws(APIFailure) -> ReceivedConsumption {
        guard body.customerConsented == true else {
            throw APIFailure(status: .badRequest, code: 4_000_035, message: "Invalid request. The customer consented field is invalid.")
        }
        guard let delivery = body.deliveryStatus, delivery.isKnown else {
            throw APIFailure(status: .badRequest, code: 4_000_036, message: "Invalid request. The delivery status field is invalid.")
        }
        guard let sample = body.sampleContentProvided else {
            throw APIFailure(
                status: .badRequest, code: 4_000_041, message: "Invalid request. The sample content provided field is invalid.")
        }
        if let preference = body.refundPreference, !preference.isKnown {
            throw APIFailure.invalid("Invalid request. The refund preference field is invalid.")
        }
        if let percentage = body.consumptionPercentage {
            guard (0...100_000).contains(percentage) else {
                throw APIFailure.invalid("Invalid request. The consumption percentage field is invalid.")
            }
            guard productType != .autoRenewable else {
                throw APIFailure.invalid(
                    "ConsumptionPercentageAutoRenewableSubscriptionError: don't provide a consumption percentage for an auto-renewable subscription."
                )
            }
            if delivery != .delivered, percentage != 0 {
                throw APIFailure.invalid(
                    "UndeliveredConsumptionPercentageNonZeroError: a purchase not delivered has a consumption percentage of 0.")
            }
        }
        if body.refundPreference == .grantProrated, productType != .autoRenewable,
            !(1..<100_000).contains(body.consumptionPercentage ?? 0)
        {
            throw APIFailure.invalid("GRANT_PRORATED needs a consumption percentage greater than 0 and less than 100000.")
        }
        return ReceivedConsumption(
            customerConsented: true, deliveryStatus: delivery, sampleContentProvided: sample,
            consumptionPercentage: body.consumptionPercentage,
            refundPreference: body.refundPreference, receivedAt: now)
    }
}
