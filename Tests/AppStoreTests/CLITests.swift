import Foundation
import TestSupport
import Testing

/// `storekeeper verify` as users and scripts call it: output, exit codes and messages.
@Suite struct CLITests {
    typealias Run = CommandRun

    func run(_ arguments: [String], stdin: Data? = nil) throws -> Run {
        try StorekeeperCLI.run(arguments, stdin: stdin, near: Bundle.module.bundleURL)
    }

    func fixturePath(_ name: String) throws -> String {
        try #require(Bundle.module.url(forResource: "Fixtures/\(name)", withExtension: nil)).path
    }

    @Test func validNotificationPrintsDecodedJSON() throws {
        let result = try run([
            "verify", try fixturePath("appstore-test-ca/testNotification"), "--root", try fixturePath("appstore-test-ca/testCA.der"),
            "--bundle-id", "com.example", "--environment", "sandbox",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["notificationType"] as? String == "TEST")
        #expect((object["data"] as? [String: Any])?["bundleId"] as? String == "com.example")
        #expect(object["signedDate"] as? Int == 1_681_314_324_000)
    }

    @Test func webhookBodyOnStandardInput() throws {
        let jws = try Fixtures.string("appstore-test-ca/testNotification")
        let body = try JSONSerialization.data(withJSONObject: ["signedPayload": jws])
        let result = try run(["verify", "-", "--root", try fixturePath("appstore-test-ca/testCA.der")], stdin: body)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"notificationUUID\" : \"9ad56bd2-0bc6-42e0-af24-fd996d87a1e6\""))
    }

    @Test func notificationShowsNestedDataDecoded() throws {
        let pki = try TestPKI()
        let payload: [String: Any] = [
            "notificationType": "DID_RENEW", "notificationUUID": "u-1", "signedDate": signedAt, "version": "2.0",
            "data": [
                "bundleId": "com.example.app", "environment": "Sandbox", "appAppleId": 1,
                "signedTransactionInfo": try pki.sign(transactionPayload()),
            ],
        ]
        let file = try StorekeeperCLI.temporaryFile(Data(try pki.sign(payload).utf8))
        let root = try StorekeeperCLI.temporaryFile(Data(pki.rootDER))
        let result = try run(["verify", file, "--root", root])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let data = try #require(object["data"] as? [String: Any])
        #expect((data["transactionInfo"] as? [String: Any])?["productId"] as? String == "com.example.monthly")
    }

    @Test func rejectedInputExitsOneWithTheErrorName() throws {
        let result = try run([
            "verify", try fixturePath("appstore-test-ca/wrongBundleId"), "--root", try fixturePath("appstore-test-ca/testCA.der"),
            "--bundle-id", "com.example",
        ])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("invalidAppIdentifier: "))
        #expect(result.stdout.isEmpty)

        let untrusted = try run(["verify", try fixturePath("appstore-test-ca/testNotification")])
        #expect(untrusted.status == 1)
        #expect(untrusted.stderr.hasPrefix("verificationFailure: "))

        let garbage = try run(["verify", "-"], stdin: Data("hello".utf8))
        #expect(garbage.status == 1)
        #expect(garbage.stderr.hasPrefix("invalidJWTFormat: "))
    }

    @Test func atTakesEpochMilliseconds() throws {
        let path = try fixturePath("appstore-test-ca/transactionInfo")
        let root = try fixturePath("appstore-test-ca/testCA.der")
        #expect(try run(["verify", path, "--root", root, "--at", "1700000000000"]).status == 0)
        // 2040: after every certificate of the test CA has expired.
        let late = try run(["verify", path, "--root", root, "--at", "2208988800000"])
        #expect(late.status == 1)
        #expect(late.stderr.hasPrefix("verificationFailure: "))
    }

    @Test func xcodeDataNeedsTheXcodeEnvironment() throws {
        let path = try fixturePath("xcode/xcode-signed-transaction")
        #expect(try run(["verify", path]).status == 1)
        let result = try run(["verify", path, "--environment", "xcode"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"purchaseDate\" : 1697679936050"))
    }

    @Test func usageErrorsExitTwo() throws {
        let path = try fixturePath("appstore-test-ca/testNotification")
        #expect(try run(["verify"]).status == 2)
        #expect(try run(["verify", path, "--environment", "staging"]).status == 2)
        #expect(try run(["verify", path, "--at", "yesterday"]).status == 2)
        #expect(try run(["verify", "/nonexistent/file"]).status == 2)
        #expect(try run(["verify", path, "--root", "/nonexistent/root.der"]).status == 2)
        #expect(try run(["verify", path, "--environment", "production"]).status == 2)
        #expect(try run(["verify", path, "--bogus"]).status == 2)
    }

    @Test func receiptPrintsVerifyReceiptNames() throws {
        let path = try fixturePath("receipts/receipt-sandbox-g5")
        let result = try run(["verify", path, "--device-id", "956328D9-CC6A-47F4-BE40-6953FB0AB6C7", "--bundle-id", "dev.bonzer.weeka.app"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["bundle_id"] as? String == "dev.bonzer.weeka.app")
        #expect(object["application_version"] as? String == "2")
        #expect(object["receipt_creation_date_ms"] as? String == "1766774387000")
        let inApp = try #require(object["in_app"] as? [[String: Any]])
        #expect(inApp.count == 2)
        for key in [
            "product_id", "transaction_id", "original_transaction_id", "purchase_date_ms", "expires_date_ms",
            "is_trial_period", "is_in_intro_offer_period", "web_order_line_item_id",
        ] {
            #expect(inApp[0][key] != nil, "\(key)")
        }

        let wrongDevice = try run(["verify", path, "--device-id", "00000000-0000-0000-0000-000000000000"])
        #expect(wrongDevice.status == 1)
        #expect(wrongDevice.stderr.hasPrefix("deviceMismatch: "))
        #expect(try run(["verify", path, "--device-id", "not-a-uuid"]).status == 2)
    }

    @Test func xcodeReceiptNeedsTheStoreKitRoot() throws {
        let path = try fixturePath("xcode/xcode-app-receipt-with-transaction")
        let untrusted = try run(["verify", path])
        #expect(untrusted.status == 1)
        #expect(untrusted.stderr.hasPrefix("verificationFailure: "))
        let result = try run(["verify", path, "--root", try fixturePath("xcode/StoreKitTestCertificate.cer")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"product_id\" : \"pass.premium\""))
    }

    @Test func legacyTransactionReceiptPrintsItsTransactionId() throws {
        let result = try run(["verify", try fixturePath("appstore-test-ca/legacyTransaction")])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["transaction_id"] as? String == "33993399")
        #expect(object["signature_verified"] as? Bool == false)
    }
}
