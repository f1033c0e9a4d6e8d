import Crypto
import Foundation
import Hummingbird
import Testing

@testable import AppStore

/// The App Store Server API client against a local fake that checks every request and its token, and answers with
/// Apple's shapes (signed values replaced by JWS from a test chain the client's verifier trusts).
@Suite struct ServerAPIClientTests {
    let pki: TestPKI
    let key: AppStoreSigningKey
    let log = RequestLog()

    init() throws {
        pki = try TestPKI()
        key = try AppStoreSigningKey(
            pem: try Fixtures.string("appstore-test-ca/testSigningKey.p8"), keyId: "KEY123", issuerId: "issuer-uuid",
            bundleId: "com.example.app")
    }

    func signedTransaction(_ id: String) throws -> String {
        var payload = transactionPayload()
        payload["transactionId"] = id
        return try pki.sign(payload)
    }

    func signedRenewal() throws -> String {
        try pki.sign(["originalTransactionId": "1", "autoRenewStatus": 1, "environment": "Sandbox", "signedDate": signedAt])
    }

    func signedNotification(_ uuid: String) throws -> String {
        try pki.sign([
            "notificationType": "TEST", "notificationUUID": uuid, "signedDate": signedAt, "version": "2.0",
            "data": ["bundleId": "com.example.app", "environment": "Sandbox", "appAppleId": 1],
        ])
    }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        let check = TokenCheck(publicKey: key.privateKey.publicKey, keyId: "KEY123", issuerId: "issuer-uuid", bundleId: "com.example.app")
        let log = self.log
        let suite = self
        router.middlewares.add(RecordingMiddleware(check: check, log: log))

        router.get("/inApps/v2/history/{id}") { request, _ in
            var object = try FakeServer.fixtureObject("transactionHistoryResponse")
            let revision = request.uri.queryParameters.get("revision")
            object["environment"] = "Sandbox"
            object["signedTransactions"] = [try suite.signedTransaction(revision == nil ? "t1" : "t2")]
            object["hasMore"] = revision == nil
            object["revision"] = revision == nil ? "rev-1" : "rev-2"
            return try FakeServer.json(object)
        }
        router.get("/inApps/v1/transactions/{id}") { _, context in
            switch context.parameters.get("id") {
            case "missing": return try FakeServer.fixture("transactionIdNotFoundError", status: .notFound)
            case "bad": return try FakeServer.fixture("invalidTransactionIdError", status: .badRequest)
            case "crash": return try FakeServer.fixture("apiException", status: .internalServerError)
            case "odd": return try FakeServer.fixture("apiUnknownError", status: .badRequest)
            case "forged": return try FakeServer.json(["signedTransactionInfo": try TestPKI().sign(transactionPayload())])
            case "busy":
                if log.count("busy") <= 2 {
                    return try FakeServer.fixture("apiTooManyRequestsException", status: .tooManyRequests)
                }
                return try FakeServer.json(["signedTransactionInfo": try suite.signedTransaction("busy")])
            case "always-busy": return try FakeServer.fixture("apiTooManyRequestsException", status: .tooManyRequests)
            case let id?: return try FakeServer.json(["signedTransactionInfo": try suite.signedTransaction(id)])
            case nil: return Response(status: .badRequest)
            }
        }
        router.get("/inApps/v1/subscriptions/{id}") { _, _ in
            var object = try FakeServer.fixtureObject("getAllSubscriptionStatusesResponse")
            object["environment"] = "Sandbox"
            let item: [String: Any] = [
                "status": 1, "originalTransactionId": "3749183",
                "signedTransactionInfo": try suite.signedTransaction("s1"), "signedRenewalInfo": try suite.signedRenewal(),
            ]
            object["data"] = [["subscriptionGroupIdentifier": "sub_group_one", "lastTransactions": [item]]]
            return try FakeServer.json(object)
        }
        router.get("/inApps/v2/refund/lookup/{id}") { _, _ in
            var object = try FakeServer.fixtureObject("getRefundHistoryResponse")
            object["signedTransactions"] = [try suite.signedTransaction("r1"), try suite.signedTransaction("r2")]
            object["hasMore"] = false
            return try FakeServer.json(object)
        }
        router.get("/inApps/v1/lookup/{order}") { _, _ in
            var object = try FakeServer.fixtureObject("lookupOrderIdResponse")
            object["status"] = 0
            object["signedTransactions"] = [try suite.signedTransaction("o1")]
            return try FakeServer.json(object)
        }
        router.put("/inApps/v1/subscriptions/extend/{id}") { _, _ in try FakeServer.fixture("extendSubscriptionRenewalDateResponse") }
        router.post("/inApps/v1/subscriptions/extend/mass") { _, _ in
            try FakeServer.fixture("extendRenewalDateForAllActiveSubscribersResponse")
        }
        router.get("/inApps/v1/subscriptions/extend/mass/{product}/{request}") { _, _ in
            try FakeServer.fixture("getStatusOfSubscriptionRenewalDateExtensionsResponse")
        }
        router.put("/inApps/v2/transactions/consumption/{id}") { _, _ in Response(status: .accepted) }
        router.post("/inApps/v1/notifications/test") { _, _ in try FakeServer.fixture("requestTestNotificationResponse") }
        router.get("/inApps/v1/notifications/test/{token}") { _, _ in
            var object = try FakeServer.fixtureObject("getTestNotificationStatusResponse")
            object["signedPayload"] = try suite.signedNotification("test-1")
            return try FakeServer.json(object)
        }
        router.post("/inApps/v1/notifications/history") { request, _ in
            var object = try FakeServer.fixtureObject("getNotificationHistoryResponse")
            let first = request.uri.queryParameters.get("paginationToken") == nil
            object["hasMore"] = first
            object["notificationHistory"] = [
                [
                    "signedPayload": try suite.signedNotification(first ? "n1" : "n2"),
                    "sendAttempts": [["attemptDate": 1_698_148_900_000, "sendAttemptResult": "SUCCESS"]],
                ]
            ]
            return try FakeServer.json(object)
        }
        router.get("/inApps/v1/transactions/appTransactions/{id}") { _, context in
            if context.parameters.get("id") == "none" {
                return try FakeServer.fixture("appTransactionDoesNotExistError", status: .notFound)
            }
            let app: [String: Any] = [
                "receiptType": "Sandbox", "bundleId": "com.example.app", "appAppleId": 1, "receiptCreationDate": signedAt,
            ]
            return try FakeServer.json(["signedAppTransactionInfo": try suite.pki.sign(app)])
        }
        router.put("/inApps/v1/transactions/{id}/appAccountToken") { request, context in
            switch context.parameters.get("id") {
            case "family": return try FakeServer.fixture("familyTransactionNotSupportedError", status: .badRequest)
            case "renewal": return try FakeServer.fixture("transactionIdNotOriginalTransactionId", status: .badRequest)
            default:
                let body = try await request.body.collect(upTo: 10_000)
                let object = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
                guard let token = object?["appAccountToken"] as? String, UUID(uuidString: token) != nil else {
                    return try FakeServer.fixture("invalidAppAccountTokenUUIDError", status: .badRequest)
                }
                return Response(status: .ok)
            }
        }
        return router
    }

    func client(_ baseURL: String) throws -> AppStoreServerAPIClient {
        var configuration = AppStoreServerAPIClient.Configuration(key: key, environment: .sandbox)
        configuration.sandboxBaseURL = baseURL
        configuration.productionBaseURL = "http://127.0.0.1:1"
        configuration.rateLimitBackoff = .milliseconds(10)
        return AppStoreServerAPIClient(configuration, verifier: try pki.verifier(bundleId: "com.example.app", environment: .sandbox))
    }

    func apiError(_ body: () async throws -> Void) async -> AppStoreServerAPIError? {
        do {
            try await body()
            return nil
        } catch let error as AppStoreServerAPIError {
            return error
        } catch {
            return nil
        }
    }

    /// Apple's hosts since May 2026, as its own libraries name them (app-store-server-library-python 3.1.1).
    @Test func appleHostsByDefault() {
        var configuration = AppStoreServerAPIClient.Configuration(key: key, environment: .production)
        #expect(configuration.baseURL == "https://api.storekit.apple.com")
        configuration.environment = .sandbox
        #expect(configuration.baseURL == "https://api.storekit-sandbox.apple.com")
    }

    @Test func everyEndpointAgainstTheFake() async throws {
        let log = self.log
        try await FakeServer.run(router()) { base in
            let client = try self.client(base)

            var filter = TransactionHistoryRequest()
            filter.productIds = ["a", "b"]
            filter.sort = .descending
            filter.revoked = false
            let page = try await client.transactionHistory(transactionId: "123", filter: filter)
            #expect(page.hasMore && page.revision == "rev-1" && page.transactions.first?.value.transactionId == "t1")
            #expect(log.last?.query.contains("productId=a&productId=b") == true)
            #expect(log.last?.query.contains("sort=DESCENDING") == true)
            let all = try await client.allTransactionHistory(transactionId: "123")
            #expect(all.map(\.value.transactionId) == ["t1", "t2"])
            #expect(log.last?.query.contains("revision=rev-1") == true)

            #expect(try await client.transactionInfo(transactionId: "42").value.transactionId == "42")

            let statuses = try await client.allSubscriptionStatuses(transactionId: "42", status: [.active, .billingGracePeriod])
            #expect(statuses.groups.first?.lastTransactions.first?.renewalInfo?.value.autoRenewStatus == .on)
            #expect(statuses.groups.first?.lastTransactions.first?.status == .active)
            #expect(log.last?.query == "status=1&status=4")

            #expect(try await client.refundHistory(transactionId: "42").transactions.count == 2)
            let order = try await client.lookUpOrderId("MQ123")
            #expect(order.isValid && order.transactions.count == 1)

            let extended = try await client.extendRenewalDate(
                originalTransactionId: "2312412", .init(extendByDays: 7, extendReasonCode: 3, requestIdentifier: "req-1"))
            #expect(extended.success == true && extended.effectiveDate?.millisecondsSince1970 == 1_698_148_900_000)
            #expect(log.last?.method == "PUT")
            let extendBody = try JSONSerialization.jsonObject(with: try #require(log.last?.body)) as? [String: Any]
            #expect(extendBody?["extendByDays"] as? Int == 7 && extendBody?["requestIdentifier"] as? String == "req-1")

            let mass = try await client.extendRenewalDateForAllActiveSubscribers(
                .init(extendByDays: 1, extendReasonCode: 1, requestIdentifier: "m-1", storefrontCountryCodes: ["USA"], productId: "p"))
            #expect(mass.requestIdentifier == "758883e8-151b-47b7-abd0-60c4d804c2f5")
            let massStatus = try await client.renewalDateExtensionStatus(productId: "p", requestIdentifier: "m-1")
            #expect(massStatus.complete == true && massStatus.succeededCount == 30 && massStatus.failedCount == 2)

            try await client.sendConsumptionInformation(
                transactionId: "42",
                .init(
                    customerConsented: true, deliveryStatus: .delivered, sampleContentProvided: false,
                    consumptionPercentage: 25_000, refundPreference: .decline))
            let consumption = try JSONSerialization.jsonObject(with: try #require(log.last?.body)) as? [String: Any]
            #expect(consumption?["deliveryStatus"] as? String == "DELIVERED" && consumption?["consumptionPercentage"] as? Int == 25_000)

            #expect(try await client.requestTestNotification() == "ce3af791-365e-4c60-841b-1674b43c1609")
            let testStatus = try await client.testNotificationStatus(token: "ce3af791")
            #expect(testStatus.notification?.value.payload.notificationUUID == "test-1")
            #expect(testStatus.sendAttempts.map(\.sendAttemptResult) == ["NO_RESPONSE", "SUCCESS"])

            let history = try await client.notificationHistory(
                .init(
                    startDate: Timestamp(millisecondsSince1970: 1), endDate: Timestamp(millisecondsSince1970: 2),
                    notificationType: .subscribed))
            #expect(history.hasMore && history.items.first?.notification?.value.payload.notificationUUID == "n1")
            let historyBody = try JSONSerialization.jsonObject(with: try #require(log.last?.body)) as? [String: Any]
            #expect(historyBody?["notificationType"] as? String == "SUBSCRIBED")
            let next = try await client.notificationHistory(
                .init(startDate: Timestamp(millisecondsSince1970: 1), endDate: Timestamp(millisecondsSince1970: 2)),
                paginationToken: history.paginationToken)
            #expect(!next.hasMore && next.items.first?.notification?.value.payload.notificationUUID == "n2")

            #expect(try await client.appTransactionInfo(transactionId: "42").value.bundleId == "com.example.app")
            try await client.setAppAccountToken(originalTransactionId: "42", appAccountToken: UUID())

            // Every request carried a valid token.
            #expect(log.all.allSatisfy { $0.claims["aud"] == "appstoreconnect-v1" })
        }
    }

    @Test func errorBodiesMapToNamedErrors() async throws {
        try await FakeServer.run(router()) { base in
            let client = try self.client(base)
            let missing = await self.apiError { _ = try await client.transactionInfo(transactionId: "missing") }
            #expect(missing?.apiErrorName == "TransactionIdNotFoundError" && missing?.httpStatus == 404 && missing?.isRetryable == false)
            let bad = await self.apiError { _ = try await client.transactionInfo(transactionId: "bad") }
            #expect(bad?.apiErrorName == "InvalidTransactionIdError")
            let crash = await self.apiError { _ = try await client.transactionInfo(transactionId: "crash") }
            #expect(crash?.apiErrorName == "GeneralInternalError" && crash?.isRetryable == false)
            let odd = await self.apiError { _ = try await client.transactionInfo(transactionId: "odd") }
            #expect(odd?.kind == .api(code: 9_990_000, name: "UnknownError"))
            let noApp = await self.apiError { _ = try await client.appTransactionInfo(transactionId: "none") }
            #expect(noApp?.apiErrorName == "AppTransactionDoesNotExistError")
            let family = await self.apiError {
                try await client.setAppAccountToken(originalTransactionId: "family", appAccountToken: UUID())
            }
            #expect(family?.apiErrorName == "FamilyTransactionNotSupportedError")
            let renewal = await self.apiError {
                try await client.setAppAccountToken(originalTransactionId: "renewal", appAccountToken: UUID())
            }
            #expect(renewal?.apiErrorName == "TransactionIdIsNotOriginalTransactionIdError")
            let badId = await self.apiError { _ = try await client.transactionInfo(transactionId: "..") }
            #expect(badId?.kind == .invalidRequest && badId?.isRetryable == false)
            let forged = await self.apiError { _ = try await client.transactionInfo(transactionId: "forged") }
            #expect(forged?.kind == .verification(.verificationFailure))
        }
    }

    @Test func rateLimitIsRetriedThenReturned() async throws {
        let log = self.log
        try await FakeServer.run(router()) { base in
            let client = try self.client(base)
            #expect(try await client.transactionInfo(transactionId: "busy").value.transactionId == "busy")
            #expect(log.all.filter { $0.path.hasSuffix("/busy") }.count == 3)
            let error = await self.apiError { _ = try await client.transactionInfo(transactionId: "always-busy") }
            #expect(error?.apiErrorName == "RateLimitExceededError" && error?.isRetryable == true)
            // The first try and three retries.
            #expect(log.all.filter { $0.path.hasSuffix("/always-busy") }.count == 4)
        }
    }

    @Test("Retry-After: Apple's UNIX time in milliseconds is a wait until then; a count of seconds is read too; nonsense is ignored")
    func retryAfterReadsApplesMilliseconds() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(AppStoreServerAPIClient.retryAfter("1800000002500", now: now) == .milliseconds(2500))
        #expect(AppStoreServerAPIClient.retryAfter("1799999999000", now: now) == .zero)
        #expect(AppStoreServerAPIClient.retryAfter("30", now: now) == .seconds(30))
        #expect(AppStoreServerAPIClient.retryAfter("soon", now: now) == nil)
        #expect(AppStoreServerAPIClient.retryAfter("-5", now: now) == nil)
    }

    @Test func tokenIsFreshAndBounded() throws {
        var configuration = AppStoreServerAPIClient.Configuration(key: key, environment: .production)
        configuration.tokenLifetime = 86_400
        let client = AppStoreServerAPIClient(configuration, verifier: try pki.verifier())
        let token = try client.makeToken(now: Date(timeIntervalSince1970: 1_700_000_000))
        let claims = try TokenCheck(
            publicKey: key.privateKey.publicKey, keyId: "KEY123", issuerId: "issuer-uuid", bundleId: "com.example.app"
        )
        .check("Bearer \(token)")
        #expect(claims["iat"] == "1700000000")
        #expect(claims["exp"] == "1700003600")
    }

    @Test func unreachableServerIsATransportError() async throws {
        var configuration = AppStoreServerAPIClient.Configuration(key: key, environment: .production)
        configuration.productionBaseURL = "http://127.0.0.1:1"
        configuration.timeout = .seconds(2)
        let client = AppStoreServerAPIClient(configuration, verifier: try pki.verifier())
        let error = await apiError { _ = try await client.transactionInfo(transactionId: "1") }
        #expect(error?.kind == .transport && error?.isRetryable == true)
    }
}

/// Checks the token of every request, answers 401 without a good one, and records the request.
struct RecordingMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let check: TokenCheck
    let log: RequestLog

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var request = request
        let body = try await request.collectBody(upTo: 1_000_000)
        let claims: [String: String]
        do {
            claims = try check.check(request.headers[.authorization])
        } catch {
            return Response(status: .unauthorized)
        }
        log.append(
            .init(
                method: request.method.rawValue, path: request.uri.path, query: request.uri.query ?? "",
                body: Data(buffer: body), claims: claims))
        return try await next(request, context)
    }
}
