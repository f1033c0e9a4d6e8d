import AppStore
import Crypto
import Foundation
import TestSupport
import Testing
import X509

/// Every way a JWS can be forged or broken, on chains built by the tests.
@Suite struct ChainVerificationTests {
    @Test func validChainVerifies() async throws {
        let pki = try TestPKI()
        let transaction = try await pki.verifier(bundleId: "com.example.app", environment: .sandbox)
            .verifyTransaction(try pki.sign(transactionPayload()))
        #expect(transaction.productId == "com.example.monthly")
        #expect(transaction.price == 9990)
        #expect(transaction.type == .autoRenewable)
    }

    @Test func flippedPayloadByteFails() async throws {
        let pki = try TestPKI()
        var parts = try pki.sign(transactionPayload()).split(separator: ".").map(String.init)
        var payload = try #require(TestPKI.base64urlDecode(parts[1]))
        let index = try #require(payload.firstRange(of: Data("com.example.monthly".utf8))).lowerBound
        payload[index + 4] ^= 0x01
        parts[1] = TestPKI.base64url(payload)
        let error = await verificationError { try await pki.verifier().verifyTransaction(parts.joined(separator: ".")) }
        #expect(error?.code == .verificationFailure)
    }

    @Test func flippedSignatureByteFails() async throws {
        let pki = try TestPKI()
        var parts = try pki.sign(transactionPayload()).split(separator: ".").map(String.init)
        var signature = try #require(TestPKI.base64urlDecode(parts[2]))
        signature[10] ^= 0x80
        parts[2] = TestPKI.base64url(signature)
        let error = await verificationError { try await pki.verifier().verifyTransaction(parts.joined(separator: ".")) }
        #expect(error?.code == .verificationFailure)
    }

    @Test(arguments: ["none", "HS256", "RS256", "ES384", "es256"])
    func otherAlgorithmsFail(_ alg: String) async throws {
        let pki = try TestPKI()
        var jws = try pki.sign(transactionPayload(), alg: alg)
        if alg == "none" {
            // An unsigned JWS has an empty signature segment.
            jws = String(jws[..<jws.lastIndex(of: ".")!]) + ".AA"
        }
        let error = await verificationError { try await pki.verifier().verifyTransaction(jws) }
        #expect(error?.code == .verificationFailure)
    }

    @Test(arguments: [2, 4])
    func chainOfWrongLengthIsInvalid(_ count: Int) async throws {
        let pki = try TestPKI()
        let x5c = count == 2 ? Array(pki.x5c.prefix(2)) : pki.x5c + [pki.x5c[2]]
        let error = await verificationError { try await pki.verifier().verifyTransaction(try pki.sign(transactionPayload(), x5c: x5c)) }
        #expect(error?.code == .invalidCertificate)
    }

    @Test func swappedLeafFromAnotherChainFails() async throws {
        let pki = try TestPKI()
        let other = try TestPKI(.init(name: "Other"))
        // The leaf of another chain, with the genuine intermediate, signed by that other leaf's key.
        let x5c = [other.x5c[0], pki.x5c[1], pki.x5c[2]]
        let error = await verificationError {
            try await pki.verifier().verifyTransaction(try pki.sign(transactionPayload(), x5c: x5c, key: other.leafKey))
        }
        #expect(error?.code == .verificationFailure)
    }

    @Test func signatureByAnotherKeyThanTheLeafFails() async throws {
        let pki = try TestPKI()
        let error = await verificationError {
            try await pki.verifier().verifyTransaction(try pki.sign(transactionPayload(), key: P256.Signing.PrivateKey()))
        }
        #expect(error?.code == .verificationFailure)
    }

    @Test func untrustedRootFails() async throws {
        let trusted = try TestPKI()
        let attacker = try TestPKI(.init(name: "Test"))  // same names, other keys
        let error = await verificationError {
            try await trusted.verifier().verifyTransaction(try attacker.sign(transactionPayload()))
        }
        #expect(error?.code == .verificationFailure)
    }

    @Test func x5cRootIsNotRead() async throws {
        let pki = try TestPKI()
        let x5c = [pki.x5c[0], pki.x5c[1], "not a certificate at all"]
        _ = try await pki.verifier().verifyTransaction(try pki.sign(transactionPayload(), x5c: x5c))
    }

    @Test func intermediateWithoutOIDFails() async throws {
        let pki = try TestPKI(.init(intermediateHasOID: false))
        let error = await verificationError { try await pki.verifier().verifyTransaction(try pki.sign(transactionPayload())) }
        #expect(error?.code == .verificationFailure)
        #expect(error?.message.contains("1.2.840.113635.100.6.2.1") == true)
    }

    @Test func leafWithoutOIDFails() async throws {
        let pki = try TestPKI(.init(leafHasOID: false))
        let error = await verificationError { try await pki.verifier().verifyTransaction(try pki.sign(transactionPayload())) }
        #expect(error?.code == .verificationFailure)
        #expect(error?.message.contains("1.2.840.113635.100.6.11.1") == true)
    }

    @Test func leafExpiredAtSignedDateFails() async throws {
        let pki = try TestPKI(.init(leafValidity: TestPKI.start...Date(timeIntervalSince1970: 1_700_000_000)))
        let error = await verificationError { try await pki.verifier().verifyTransaction(try pki.sign(transactionPayload())) }
        #expect(error?.code == .verificationFailure)
    }

    @Test func leafNotYetValidAtSignedDateFails() async throws {
        let pki = try TestPKI(.init(leafValidity: Date(timeIntervalSince1970: 1_800_000_000)...TestPKI.end))
        let error = await verificationError { try await pki.verifier().verifyTransaction(try pki.sign(transactionPayload())) }
        #expect(error?.code == .verificationFailure)
    }

    @Test func validationTimeModes() async throws {
        // The leaf was valid when the data was signed, and has expired since.
        let pki = try TestPKI(.init(leafValidity: TestPKI.start...Date(timeIntervalSince1970: 1_750_000_000)))
        let jws = try pki.sign(transactionPayload())
        let later = Date(timeIntervalSince1970: 1_760_000_000)
        _ = try await pki.verifier(clock: { later }).verifyTransaction(jws)
        let strict = await verificationError { try await pki.verifier(validationTime: .now, clock: { later }).verifyTransaction(jws) }
        #expect(strict?.code == .verificationFailure)
        let fixed = await verificationError { try await pki.verifier(validationTime: .fixed(later)).verifyTransaction(jws) }
        #expect(fixed?.code == .verificationFailure)
        _ = try await pki.verifier(validationTime: .fixed(Date(timeIntervalSince1970: 1_740_000_000))).verifyTransaction(jws)
    }

    @Test func wrongBundleIdFails() async throws {
        let pki = try TestPKI()
        let error = await verificationError {
            try await pki.verifier(bundleId: "com.example.other").verifyTransaction(try pki.sign(transactionPayload()))
        }
        #expect(error?.code == .invalidAppIdentifier)
    }

    @Test func wrongEnvironmentFails() async throws {
        let pki = try TestPKI()
        let error = await verificationError {
            try await pki.verifier(appAppleId: 1, environment: .production).verifyTransaction(try pki.sign(transactionPayload()))
        }
        #expect(error?.code == .invalidEnvironment)
        let renewal = await verificationError {
            try await pki.verifier(appAppleId: 1, environment: .production).verifyRenewalInfo(
                try pki.sign(["environment": "Sandbox", "signedDate": signedAt, "originalTransactionId": "1"]))
        }
        #expect(renewal?.code == .invalidEnvironment)
    }

    @Test func productionAppAppleIdMismatchFails() async throws {
        let pki = try TestPKI()
        let notification: [String: Any] = [
            "notificationType": "TEST", "notificationUUID": UUID().uuidString, "signedDate": signedAt, "version": "2.0",
            "data": ["bundleId": "com.example.app", "appAppleId": 111, "environment": "Production"],
        ]
        let jws = try pki.sign(notification)
        let error = await verificationError {
            try await pki.verifier(bundleId: "com.example.app", appAppleId: 222, environment: .production).verifyNotification(jws)
        }
        #expect(error?.code == .invalidAppIdentifier)
        _ = try await pki.verifier(bundleId: "com.example.app", appAppleId: 111, environment: .production).verifyNotification(jws)
        // The appAppleId is not checked on sandbox data, as Apple's documentation has it.
        let app: [String: Any] = [
            "receiptType": "Sandbox", "appAppleId": 999, "bundleId": "com.example.app", "receiptCreationDate": signedAt,
        ]
        _ = try await pki.verifier(bundleId: "com.example.app", appAppleId: 222).verifyAppTransaction(try pki.sign(app))
    }

    @Test func productionNeedsAnAppAppleId() throws {
        #expect(throws: SignedDataVerifier.ConfigurationError.self) {
            try SignedDataVerifier(.init(environment: .production))
        }
    }

    @Test func nonBase64InputIsAFormatError() async throws {
        let pki = try TestPKI()
        for input in ["", "not a jws", "a.b", "a.b.c.d", "@@@.eyJ9.AAAA", "eyJhbGciOiJFUzI1NiJ9.%%%.AAAA", "..."] {
            let error = await verificationError { try await pki.verifier().verifyTransaction(input) }
            #expect(error?.code == .invalidJWTFormat, "\(input)")
        }
    }

    @Test func headerThatIsNotJSONIsAFormatError() async throws {
        let jws = "\(TestPKI.base64url(Data("not json".utf8))).\(TestPKI.base64url(Data("{}".utf8))).AAAA"
        let error = await verificationError { try await TestPKI().verifier().verifyTransaction(jws) }
        #expect(error?.code == .invalidJWTFormat)
    }

    @Test func truncatedDERIsAnInvalidCertificate() async throws {
        let pki = try TestPKI()
        let truncated = Data(pki.leafDER.prefix(pki.leafDER.count - 20)).base64EncodedString()
        let error = await verificationError {
            try await pki.verifier().verifyTransaction(try pki.sign(transactionPayload(), x5c: [truncated, pki.x5c[1], pki.x5c[2]]))
        }
        #expect(error?.code == .invalidCertificate)
        let notBase64 = await verificationError {
            try await pki.verifier().verifyTransaction(try pki.sign(transactionPayload(), x5c: ["***", pki.x5c[1], pki.x5c[2]]))
        }
        #expect(notBase64?.code == .invalidCertificate)
    }

    @Test func oversizedInputIsRejectedBeforeParsing() async throws {
        let pki = try TestPKI()
        var payload = transactionPayload()
        payload["padding"] = String(repeating: "x", count: 200_000)
        let error = await verificationError { try await pki.verifier().verifyTransaction(try pki.sign(payload)) }
        #expect(error?.code == .invalidJWTFormat)
        #expect(error?.message.contains("limit") == true)
    }

    @Test func payloadOfTheWrongShapeIsAFormatError() async throws {
        let pki = try TestPKI()
        var payload = transactionPayload()
        payload["expiresDate"] = "tomorrow"
        let error = await verificationError { try await pki.verifier().verifyTransaction(try pki.sign(payload)) }
        #expect(error?.code == .invalidJWTFormat)
        #expect(error?.message.contains("expiresDate") == true)
    }
}
