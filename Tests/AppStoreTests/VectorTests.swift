import AppStore
import Crypto
import Foundation
import TestSupport
import Testing
import X509

/// Every JWS vector from `shared/vectors`, with the results its SOURCES.md gives.
@Suite struct VectorTests {
    func testCAVerifier(
        bundleId: String? = "com.example", appAppleId: Int64? = 1234, environment: AppStore.Environment? = .sandbox
    ) throws -> SignedDataVerifier {
        try SignedDataVerifier(
            .init(
                rootCertificates: [try Fixtures.bytes("appstore-test-ca/testCA.der")],
                bundleId: bundleId, appAppleId: appAppleId, environment: environment))
    }

    @Test func testNotificationVerifies() async throws {
        let verified = try await testCAVerifier().verifyNotification(try Fixtures.string("appstore-test-ca/testNotification"))
        #expect(verified.payload.notificationType == .test)
        #expect(verified.payload.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(verified.payload.data?.appAppleId == 1234)
        #expect(verified.payload.data?.bundleId == "com.example")
        #expect(verified.payload.data?.environment == .sandbox)
        #expect(verified.payload.signedDate == Timestamp(millisecondsSince1970: 1_681_314_324_000))
    }

    @Test func transactionInfoVerifies() async throws {
        let transaction = try await testCAVerifier().verifyTransaction(try Fixtures.string("appstore-test-ca/transactionInfo"))
        #expect(transaction.bundleId == "com.example")
        #expect(transaction.environment == .sandbox)
        #expect(transaction.signedDate?.millisecondsSince1970 == 1_672_956_154_000)
    }

    @Test func renewalInfoVerifies() async throws {
        let renewal = try await testCAVerifier().verifyRenewalInfo(try Fixtures.string("appstore-test-ca/renewalInfo"))
        #expect(renewal.environment == .sandbox)
        #expect(renewal.signedDate?.millisecondsSince1970 == 1_672_956_154_000)
    }

    /// x5c[2] of these files is not testCA.der (same subject and key, another certificate): trust comes from the
    /// configured root only, so it still verifies.
    @Test func x5cRootIsNeverTheAnchor() async throws {
        let jws = try Fixtures.string("appstore-test-ca/transactionInfo")
        let header = try #require(TestPKI.base64urlDecode(String(jws.split(separator: ".")[0])))
        let x5c = try #require((try JSONSerialization.jsonObject(with: header) as? [String: Any])?["x5c"] as? [String])
        #expect(try Data(base64Encoded: x5c[2]) != Fixtures.data("appstore-test-ca/testCA.der"))
        _ = try await testCAVerifier().verifyTransaction(jws)
    }

    @Test func wrongBundleIdIsRejected() async throws {
        await #expect(throws: VerificationError.self) {
            try await testCAVerifier().verifyNotification(try Fixtures.string("appstore-test-ca/wrongBundleId"))
        }
        let error = await verificationError {
            try await testCAVerifier().verifyNotification(try Fixtures.string("appstore-test-ca/wrongBundleId"))
        }
        #expect(error?.code == .invalidAppIdentifier)
    }

    @Test func missingX5CIsAFormatError() async throws {
        let error = await verificationError {
            try await testCAVerifier().verifyNotification(try Fixtures.string("appstore-test-ca/missingX5CHeaderClaim"))
        }
        #expect(error?.code == .invalidJWTFormat)
    }

    @Test func appleRootsDoNotTrustTheTestCA() async throws {
        let verifier = try SignedDataVerifier(.init())
        let error = await verificationError {
            try await verifier.verifyNotification(try Fixtures.string("appstore-test-ca/testNotification"))
        }
        #expect(error?.code == .verificationFailure)
    }

    @Test func productionVerifierRejectsSandboxData() async throws {
        let verifier = try testCAVerifier(environment: .production)
        let error = await verificationError {
            try await verifier.verifyNotification(try Fixtures.string("appstore-test-ca/testNotification"))
        }
        #expect(error?.code == .invalidEnvironment)
    }

    @Test(arguments: ["xcode/xcode-signed-transaction", "xcode/xcode-signed-renewal-info", "xcode/xcode-signed-app-transaction"])
    func xcodeDataIsRejectedByDefault(_ name: String) async throws {
        for verifier in [try SignedDataVerifier(.init()), try testCAVerifier(bundleId: nil, environment: nil)] {
            let error = await verificationError { try await verifier.verify(try Fixtures.string(name)) }
            #expect(error?.code == .invalidCertificate)
        }
    }

    @Test func xcodeDataIsAcceptedWhenConfigured() async throws {
        let verifier = try SignedDataVerifier(.init(bundleId: "com.example.naturelab.backyardbirds.example", environment: .xcode))
        let transaction = try await verifier.verifyTransaction(try Fixtures.string("xcode/xcode-signed-transaction"))
        #expect(transaction.environment == .xcode)
        #expect(transaction.productId == "pass.premium")
        #expect(transaction.offerType == .introductoryOffer)
        // 1697679936049.7297 rounds to the nearest millisecond.
        #expect(transaction.purchaseDate?.millisecondsSince1970 == 1_697_679_936_050)
        #expect(transaction.expiresDate?.millisecondsSince1970 == 1_700_358_336_050)

        let renewal = try await verifier.verifyRenewalInfo(try Fixtures.string("xcode/xcode-signed-renewal-info"))
        #expect(renewal.autoRenewStatus == .on)
        #expect(renewal.renewalDate?.millisecondsSince1970 == 1_700_358_336_050)

        let app = try await verifier.verifyAppTransaction(try Fixtures.string("xcode/xcode-signed-app-transaction"))
        #expect(app.receiptType == .xcode)
        #expect(app.originalPurchaseDate?.millisecondsSince1970 == -62_135_769_600_000)
    }

    @Test func xcodeVerifierStillChecksTheSignature() async throws {
        let jws = try Fixtures.string("xcode/xcode-signed-transaction")
        var parts = jws.split(separator: ".").map(String.init)
        var payload = try #require(TestPKI.base64urlDecode(parts[1]))
        let index = try #require(payload.firstRange(of: Data("pass.premium".utf8))).lowerBound
        payload[index] = UInt8(ascii: "b")
        parts[1] = TestPKI.base64url(payload)
        let verifier = try SignedDataVerifier(.init(environment: .xcode))
        let error = await verificationError { try await verifier.verifyTransaction(parts.joined(separator: ".")) }
        #expect(error?.code == .verificationFailure)
    }

    @Test func xcodeVerifierRejectsSandboxEnvironment() async throws {
        // A self-signed JWS claiming another environment: signed by an attacker's own certificate.
        let key = P256.Signing.PrivateKey()
        let name = try X509.DistinguishedName { X509.CommonName("StoreKit Testing in Xcode") }
        let certificate = try X509.Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey), notValidBefore: TestPKI.start,
            notValidAfter: TestPKI.end, issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: .init(), issuerPrivateKey: .init(key))
        let jws = try TestPKI.sign(
            transactionPayload(environment: "Sandbox"), x5c: [Data(TestPKI.der(certificate)).base64EncodedString()], key: key)
        let error = await verificationError { try await SignedDataVerifier(.init(environment: .xcode)).verifyTransaction(jws) }
        #expect(error?.code == .invalidEnvironment)
        let accepted = try TestPKI.sign(
            transactionPayload(environment: "Xcode"), x5c: [Data(TestPKI.der(certificate)).base64EncodedString()], key: key)
        _ = try await SignedDataVerifier(.init(environment: .xcode)).verifyTransaction(accepted)
    }

    @Test func embeddedAppleRootIsG3() {
        let digest = SHA256.hash(data: AppleRootCertificates.appleRootCAG3)
        #expect(digest.map { String(format: "%02X", $0) }.joined() == "63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179")
    }
}
