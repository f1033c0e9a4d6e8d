import AppStore
import Foundation
import Hummingbird
import Testing

/// verifyReceipt against a local fake of Apple's production and sandbox endpoints.
@Suite struct VerifyReceiptClientTests {
    let log = RequestLog()

    static var successBody: [String: Any] {
        [
            "status": 0, "environment": "Sandbox",
            "receipt": [
                "bundle_id": "com.example.app", "application_version": "3", "receipt_creation_date_ms": "1698148900000",
                "in_app": [
                    [
                        "product_id": "com.example.monthly", "transaction_id": "2", "original_transaction_id": "1",
                        "purchase_date_ms": "1698148800000", "expires_date_ms": "1700827200000", "quantity": "1",
                        "is_trial_period": "true", "is_in_intro_offer_period": "false",
                    ]
                ],
            ],
            "latest_receipt": "bGF0ZXN0",
            "latest_receipt_info": [
                [
                    "product_id": "com.example.monthly", "transaction_id": "3", "original_transaction_id": "1",
                    "purchase_date_ms": "1700827200000", "expires_date_ms": "1703419200000",
                    "cancellation_date_ms": "1701000000000", "cancellation_reason": "1", "is_trial_period": "false",
                    "in_app_ownership_type": "PURCHASED", "subscription_group_identifier": "21000000",
                ]
            ],
            "pending_renewal_info": [
                [
                    "auto_renew_product_id": "com.example.monthly", "auto_renew_status": "0", "expiration_intent": "1",
                    "is_in_billing_retry_period": "0", "original_transaction_id": "1", "product_id": "com.example.monthly",
                    "grace_period_expires_date_ms": "1703500000000",
                ]
            ],
        ]
    }

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        let log = self.log
        for environment in ["production", "sandbox"] {
            router.post("/\(environment)/verifyReceipt") { request, _ in
                let body = try await request.body.collect(upTo: 100_000)
                let object = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] ?? [:]
                log.append(.init(method: "POST", path: environment, query: "", body: Data(buffer: body), claims: [:]))
                guard object["password"] as? String == "shared-secret", object["exclude-old-transactions"] as? Bool == true,
                    let receipt = object["receipt-data"] as? String
                else { return try FakeServer.json(["status": 21004]) }
                switch (receipt, environment) {
                case ("sandbox-receipt", "production"): return try FakeServer.json(["status": 21007])
                case ("sandbox-receipt", "sandbox"): return try FakeServer.json(Self.successBody)
                case ("ping-pong", "production"): return try FakeServer.json(["status": 21007])
                case ("ping-pong", "sandbox"): return try FakeServer.json(["status": 21008])
                case ("production-receipt", "production"): return try FakeServer.json(Self.successBody)
                case ("busy", _): return try FakeServer.json(["status": 21005])
                case ("internal-final", _): return try FakeServer.json(["status": 21150, "is-retryable": false])
                case ("internal-retry", _): return try FakeServer.json(["status": "21199", "is-retryable": "true"])
                case ("garbage", _): return FakeServer.json(Data("<html>".utf8))
                case ("http-error", _): return Response(status: .serviceUnavailable)
                default: return try FakeServer.json(["status": 21002])
                }
            }
        }
        return router
    }

    func client(_ base: String) -> VerifyReceiptClient {
        VerifyReceiptClient(
            .init(
                sharedSecret: "shared-secret", productionURL: "\(base)/production/verifyReceipt",
                sandboxURL: "\(base)/sandbox/verifyReceipt", timeout: .seconds(5)))
    }

    func receiptError(_ body: () async throws -> Void) async -> VerifyReceiptError? {
        do {
            try await body()
            return nil
        } catch let error as VerifyReceiptError {
            return error
        } catch {
            return nil
        }
    }

    @Test func sandboxReceiptGoesToProductionFirst() async throws {
        let log = self.log
        try await FakeServer.run(router()) { base in
            let response = try await self.client(base).verify(receiptData: "sandbox-receipt")
            #expect(log.all.map(\.path) == ["production", "sandbox"])
            #expect(response.status == 0 && response.environment == "Sandbox")
            #expect(response.receipt?.bundleId == "com.example.app")
            #expect(response.receipt?.receiptCreationDate?.millisecondsSince1970 == 1_698_148_900_000)
            let inApp = try #require(response.receipt?.inApp.first)
            #expect(inApp.isTrialPeriod == true && inApp.quantity == 1 && inApp.expiresDate?.millisecondsSince1970 == 1_700_827_200_000)
            let latest = try #require(response.latestReceiptInfo.first)
            #expect(latest.cancellationDate?.millisecondsSince1970 == 1_701_000_000_000 && latest.cancellationReason == "1")
            #expect(latest.inAppOwnershipType == .purchased)
            let pending = try #require(response.pendingRenewalInfo.first)
            #expect(pending.autoRenewStatus == false && pending.expirationIntent == .customerCancelled)
            #expect(pending.gracePeriodExpiresDate?.millisecondsSince1970 == 1_703_500_000_000)
            #expect(response.latestReceipt == "bGF0ZXN0")
        }
    }

    @Test func productionReceiptStaysOnProduction() async throws {
        let log = self.log
        try await FakeServer.run(router()) { base in
            _ = try await self.client(base).verify(receiptData: "production-receipt")
            #expect(log.all.map(\.path) == ["production"])
        }
    }

    @Test func statusesMapToNamedErrors() async throws {
        try await FakeServer.run(router()) { base in
            let client = self.client(base)
            let busy = await self.receiptError { _ = try await client.verify(receiptData: "busy") }
            #expect(busy?.status == 21005 && busy?.name == "receiptServerUnavailable" && busy?.isRetryable == true)
            let final = await self.receiptError { _ = try await client.verify(receiptData: "internal-final") }
            #expect(final?.status == 21150 && final?.name == "internalDataAccessError" && final?.isRetryable == false)
            let retry = await self.receiptError { _ = try await client.verify(receiptData: "internal-retry") }
            #expect(retry?.status == 21199 && retry?.isRetryable == true)
            let malformed = await self.receiptError { _ = try await client.verify(receiptData: "nonsense") }
            #expect(malformed?.name == "malformedReceiptData" && malformed?.isRetryable == false)
            let pingPong = await self.receiptError { _ = try await client.verify(receiptData: "ping-pong") }
            #expect(pingPong?.status == 21008)
            let garbage = await self.receiptError { _ = try await client.verify(receiptData: "garbage") }
            #expect(garbage?.status == nil && garbage?.isRetryable == false)
            let http = await self.receiptError { _ = try await client.verify(receiptData: "http-error") }
            #expect(http?.isRetryable == true)
        }
    }

    @Test func wrongSharedSecretIsNamed() async throws {
        try await FakeServer.run(router()) { base in
            let client = VerifyReceiptClient(
                .init(
                    sharedSecret: "wrong", productionURL: "\(base)/production/verifyReceipt",
                    sandboxURL: "\(base)/sandbox/verifyReceipt"))
            let error = await self.receiptError { _ = try await client.verify(receiptData: "production-receipt") }
            #expect(error?.name == "sharedSecretMismatch")
        }
    }
}
