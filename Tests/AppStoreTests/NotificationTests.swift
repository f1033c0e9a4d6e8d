import AppStore
import Foundation
import TestSupport
import Testing

@Suite struct NotificationTests {
    func notification(_ pki: TestPKI, transaction: String?, renewal: String?, bundleId: String = "com.example.app") -> [String: Any] {
        var data: [String: Any] = ["bundleId": bundleId, "appAppleId": 1234, "environment": "Sandbox", "bundleVersion": "1.0", "status": 1]
        if let transaction { data["signedTransactionInfo"] = transaction }
        if let renewal { data["signedRenewalInfo"] = renewal }
        return [
            "notificationType": "SUBSCRIBED", "subtype": "INITIAL_BUY", "notificationUUID": "002e14d5-51f5-4503-b5a8-c3a1af68eb20",
            "version": "2.0", "signedDate": signedAt, "data": data,
        ]
    }

    func renewalPayload() -> [String: Any] {
        [
            "originalTransactionId": "2000000000000001", "productId": "com.example.monthly", "autoRenewProductId": "com.example.monthly",
            "autoRenewStatus": 1, "signedDate": signedAt, "environment": "Sandbox", "renewalDate": signedAt + 2_592_000_000,
            "recentSubscriptionStartDate": signedAt - 1000,
        ]
    }

    @Test func nestedDataIsVerifiedAndDecoded() async throws {
        let pki = try TestPKI()
        let jws = try pki.sign(notification(pki, transaction: try pki.sign(transactionPayload()), renewal: try pki.sign(renewalPayload())))
        let verified = try await pki.verifier(bundleId: "com.example.app", environment: .sandbox).verifyNotification(jws)
        #expect(verified.payload.notificationType == .subscribed)
        #expect(verified.payload.subtype == .initialBuy)
        #expect(verified.payload.data?.status == .active)
        #expect(verified.transactionInfo?.transactionId == "2000000000000001")
        #expect(verified.renewalInfo?.autoRenewStatus == .on)
    }

    @Test func forgedNestedTransactionFailsTheNotification() async throws {
        let pki = try TestPKI()
        let attacker = try TestPKI()
        let jws = try pki.sign(notification(pki, transaction: try attacker.sign(transactionPayload()), renewal: nil))
        let error = await verificationError { try await pki.verifier().verifyNotification(jws) }
        #expect(error?.code == .verificationFailure)
        #expect(error?.message.hasPrefix("signedTransactionInfo:") == true)
    }

    @Test func nestedTransactionForAnotherAppFails() async throws {
        let pki = try TestPKI()
        let jws = try pki.sign(notification(pki, transaction: try pki.sign(transactionPayload(bundleId: "com.other")), renewal: nil))
        let error = await verificationError { try await pki.verifier().verifyNotification(jws) }
        #expect(error?.code == .invalidAppIdentifier)
    }

    @Test func nestedRenewalFromAnotherEnvironmentFails() async throws {
        let pki = try TestPKI()
        var renewal = renewalPayload()
        renewal["environment"] = "Production"
        let jws = try pki.sign(notification(pki, transaction: nil, renewal: try pki.sign(renewal)))
        let error = await verificationError { try await pki.verifier().verifyNotification(jws) }
        #expect(error?.code == .invalidEnvironment)
    }

    @Test func unknownTypeDecodesAndIsKept() async throws {
        let pki = try TestPKI()
        var payload = notification(pki, transaction: nil, renewal: nil)
        payload["notificationType"] = "SOMETHING_NEW"
        payload["subtype"] = "BRAND_NEW"
        let verified = try await pki.verifier().verifyNotification(try pki.sign(payload))
        #expect(verified.payload.notificationType?.rawValue == "SOMETHING_NEW")
        #expect(verified.payload.notificationType?.isKnown == false)
        #expect(verified.payload.subtype?.rawValue == "BRAND_NEW")
        let json = String(decoding: try JSONEncoder().encode(verified), as: UTF8.self)
        #expect(json.contains("\"SOMETHING_NEW\""))
    }

    @Test func summaryAndExternalPurchaseTokenCarryTheAppIdentity() async throws {
        let pki = try TestPKI()
        let summary: [String: Any] = [
            "notificationType": "RENEWAL_EXTENSION", "subtype": "SUMMARY", "notificationUUID": "1", "signedDate": signedAt,
            "summary": [
                "environment": "Sandbox", "appAppleId": 1234, "bundleId": "com.example.app", "succeededCount": 5, "failedCount": 2,
            ],
        ]
        let verified = try await pki.verifier(bundleId: "com.example.app", environment: .sandbox).verifyNotification(try pki.sign(summary))
        #expect(verified.payload.summary?.succeededCount == 5)

        let token: [String: Any] = [
            "notificationType": "EXTERNAL_PURCHASE_TOKEN", "subtype": "UNREPORTED", "notificationUUID": "2", "signedDate": signedAt,
            "externalPurchaseToken": [
                "externalPurchaseId": "SANDBOX_b2158121", "tokenCreationDate": signedAt, "appAppleId": 1234, "bundleId": "com.example.app",
            ],
        ]
        _ = try await pki.verifier(bundleId: "com.example.app", environment: .sandbox).verifyNotification(try pki.sign(token))
        let wrong = await verificationError {
            try await pki.verifier(bundleId: "com.example.other", environment: .sandbox).verifyNotification(try pki.sign(token))
        }
        #expect(wrong?.code == .invalidAppIdentifier)
    }

    @Test func appDataAppTransactionIsVerified() async throws {
        let pki = try TestPKI()
        let app: [String: Any] = [
            "receiptType": "Sandbox", "appAppleId": 1234, "bundleId": "com.example.app", "receiptCreationDate": signedAt,
            "originalPlatform": "iOS",
        ]
        let payload: [String: Any] = [
            "notificationType": "RESCIND_CONSENT", "notificationUUID": "3", "signedDate": signedAt,
            "appData": [
                "appAppleId": 1234, "bundleId": "com.example.app", "environment": "Sandbox", "signedAppTransactionInfo": try pki.sign(app),
            ],
        ]
        let verified = try await pki.verifier(bundleId: "com.example.app").verifyNotification(try pki.sign(payload))
        #expect(verified.appTransactionInfo?.originalPlatform == .iOS)
        let json = String(decoding: try JSONEncoder().encode(verified), as: UTF8.self)
        #expect(json.contains("\"appTransactionInfo\""))
    }

    @Test func verifyTellsTheKindsApart() async throws {
        let pki = try TestPKI()
        let verifier = try pki.verifier()
        guard case .transaction = try await verifier.verify(try pki.sign(transactionPayload())) else {
            Issue.record("a transaction was not recognised")
            return
        }
        guard case .renewalInfo = try await verifier.verify(try pki.sign(renewalPayload())) else {
            Issue.record("renewal info was not recognised")
            return
        }
        guard case .notification = try await verifier.verify(try pki.sign(notification(pki, transaction: nil, renewal: nil))) else {
            Issue.record("a notification was not recognised")
            return
        }
        let app: [String: Any] = ["receiptType": "Sandbox", "bundleId": "com.example.app", "receiptCreationDate": signedAt]
        guard case .appTransaction = try await verifier.verify(try pki.sign(app)) else {
            Issue.record("an app transaction was not recognised")
            return
        }
    }

    @Test func webhookBodyIsUnwrapped() throws {
        #expect(try SignedInput.extractJWS(from: Data(" {\"signedPayload\": \"a.b.c\"}\n".utf8)) == "a.b.c")
        #expect(try SignedInput.extractJWS(from: Data("a.b.c\n".utf8)) == "a.b.c")
        #expect(throws: VerificationError.self) { try SignedInput.extractJWS(from: Data("{\"payload\": 1}".utf8)) }
    }
}
