import AppStore
import Crypto
import Foundation
import Testing

/// Offer signatures, verified with the public half of `testSigningKey.p8`.
@Suite struct OfferSignatureTests {
    let key: AppStoreSigningKey

    init() throws {
        key = try AppStoreSigningKey(
            pem: try Fixtures.string("appstore-test-ca/testSigningKey.p8"), keyId: "KEYID12345", issuerId: "issuer",
            bundleId: "com.example.app")
    }

    @Test func legacyPromotionalOfferSignature() throws {
        let nonce = UUID(uuidString: "A1B2C3D4-E5F6-4711-8899-AABBCCDDEEFF")!
        let token = UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138")!
        let payload = AppStoreSigningKey.promotionalOfferPayloadV1(
            bundleId: "com.example.app", keyId: "KEYID12345", productId: "com.example.monthly", offerId: "WINBACK",
            applicationUsername: token.uuidString, nonce: nonce, timestamp: 1_700_000_000_000)
        #expect(
            payload
                == "com.example.app\u{2063}KEYID12345\u{2063}com.example.monthly\u{2063}WINBACK\u{2063}7e3fb20b-4cdb-47cc-936d-99d65f608138\u{2063}a1b2c3d4-e5f6-4711-8899-aabbccddeeff\u{2063}1700000000000"
        )

        let signature = try key.promotionalOfferSignatureV1(
            productId: "com.example.monthly", offerId: "WINBACK", applicationUsername: token.uuidString, nonce: nonce,
            timestamp: 1_700_000_000_000)
        let der = try #require(Data(base64Encoded: signature))
        let ecdsa = try P256.Signing.ECDSASignature(derRepresentation: der)
        #expect(key.privateKey.publicKey.isValidSignature(ecdsa, for: Data(payload.utf8)))
        #expect(!key.privateKey.publicKey.isValidSignature(ecdsa, for: Data((payload + "1").utf8)))
    }

    /// Apple's "Generating a signature for promotional offers": `applicationUsername` is the app's own string for the
    /// account (SKPayment.applicationUsername), lower-cased in the payload; not necessarily a UUID.
    @Test func legacySignatureForAnyApplicationUsername() throws {
        let nonce = UUID(uuidString: "A1B2C3D4-E5F6-4711-8899-AABBCCDDEEFF")!
        let payload = AppStoreSigningKey.promotionalOfferPayloadV1(
            bundleId: "com.example.app", keyId: "KEYID12345", productId: "com.example.monthly", offerId: "WINBACK",
            applicationUsername: "User_42@Example.COM", nonce: nonce, timestamp: 1_700_000_000_000)
        #expect(
            payload
                == "com.example.app\u{2063}KEYID12345\u{2063}com.example.monthly\u{2063}WINBACK\u{2063}user_42@example.com\u{2063}a1b2c3d4-e5f6-4711-8899-aabbccddeeff\u{2063}1700000000000"
        )
        let signature = try key.promotionalOfferSignatureV1(
            productId: "com.example.monthly", offerId: "WINBACK", applicationUsername: "User_42@Example.COM", nonce: nonce,
            timestamp: 1_700_000_000_000)
        let ecdsa = try P256.Signing.ECDSASignature(derRepresentation: try #require(Data(base64Encoded: signature)))
        #expect(key.privateKey.publicKey.isValidSignature(ecdsa, for: Data(payload.utf8)))
        // The username is signed: another one does not verify.
        let other = payload.replacingOccurrences(of: "user_42", with: "user_43")
        #expect(!key.privateKey.publicKey.isValidSignature(ecdsa, for: Data(other.utf8)))
    }

    @Test func legacySignatureWithoutApplicationUsername() {
        let payload = AppStoreSigningKey.promotionalOfferPayloadV1(
            bundleId: "b", keyId: "k", productId: "p", offerId: "o", applicationUsername: "",
            nonce: UUID(uuidString: "00000000-0000-0000-0000-000000000001")!, timestamp: 5)
        #expect(payload == "b\u{2063}k\u{2063}p\u{2063}o\u{2063}\u{2063}00000000-0000-0000-0000-000000000001\u{2063}5")
    }

    func decode(_ jws: String) throws -> (header: [String: Any], claims: [String: Any]) {
        let parts = jws.split(separator: ".").map(String.init)
        let header = try JSONSerialization.jsonObject(with: try #require(TestPKI.base64urlDecode(parts[0]))) as? [String: Any] ?? [:]
        let claims = try JSONSerialization.jsonObject(with: try #require(TestPKI.base64urlDecode(parts[1]))) as? [String: Any] ?? [:]
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(TestPKI.base64urlDecode(parts[2])))
        #expect(key.privateKey.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
        return (header, claims)
    }

    @Test func promotionalOfferJWS() throws {
        let jws = try key.promotionalOfferSignatureV2(
            productId: "com.example.monthly", offerIdentifier: "WINBACK", transactionId: "42",
            now: Date(timeIntervalSince1970: 1_700_000_000))
        let (header, claims) = try decode(jws)
        #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == "KEYID12345" && header["typ"] as? String == "JWT")
        #expect(claims["aud"] as? String == "promotional-offer")
        #expect(claims["iss"] as? String == "issuer" && claims["bid"] as? String == "com.example.app")
        #expect(claims["iat"] as? Int == 1_700_000_000 && claims["exp"] == nil)
        #expect(claims["productId"] as? String == "com.example.monthly" && claims["offerIdentifier"] as? String == "WINBACK")
        #expect(claims["transactionId"] as? String == "42")
        #expect(UUID(uuidString: claims["nonce"] as? String ?? "") != nil)
        let withoutTransaction = try decode(try key.promotionalOfferSignatureV2(productId: "p", offerIdentifier: "o")).claims
        #expect(withoutTransaction["transactionId"] == nil)
    }

    @Test func introductoryOfferEligibilityJWS() throws {
        let (_, claims) = try decode(
            try key.introductoryOfferEligibilitySignature(
                productId: "com.example.monthly", allowIntroductoryOffer: false, transactionId: "42"))
        #expect(claims["aud"] as? String == "introductory-offer-eligibility")
        #expect(claims["allowIntroductoryOffer"] as? Bool == false)
        #expect(claims["transactionId"] as? String == "42")
    }

    @Test func badKeyIsRejected() {
        #expect(throws: AppStoreSigningKey.InvalidKey.self) {
            try AppStoreSigningKey(
                pem: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----", keyId: "k", issuerId: "i", bundleId: "b")
        }
    }
}
