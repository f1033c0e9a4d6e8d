import AppStore
import Crypto
import Foundation
import TestSupport
import Testing

@Suite("App Store Server API tokens, checked as Apple's API does")
struct ServerAPITokenTests {
    let key = P256.Signing.PrivateKey()

    func token(bundle: String = "com.example", at date: Date = Date(), signer: P256.Signing.PrivateKey? = nil) throws -> String {
        let signing = AppStoreSigningKey(privateKey: signer ?? key, keyId: "KEY", issuerId: "issuer", bundleId: bundle)
        return try AppStoreServerAPIClient(
            .init(key: signing, environment: .sandbox), verifier: try SignedDataVerifier(.init()), httpClient: .shared
        )
        .makeToken(now: date)
    }

    @Test("a fresh token of the app's key is accepted; another app's, an expired one or another key's is not")
    func verify() throws {
        let claims = ServerAPITokenClaims.verify(try token(), publicKey: key.publicKey, bundleId: "com.example")
        #expect(claims?.iss == "issuer")
        #expect(ServerAPITokenClaims.verify(try token(bundle: "com.other"), publicKey: key.publicKey, bundleId: "com.example") == nil)
        #expect(
            ServerAPITokenClaims.verify(try token(at: Date().addingTimeInterval(-7200)), publicKey: key.publicKey, bundleId: "com.example")
                == nil)
        #expect(
            ServerAPITokenClaims.verify(try token(signer: P256.Signing.PrivateKey()), publicKey: key.publicKey, bundleId: "com.example")
                == nil)
        // Without a key only the claims are checked.
        #expect(ServerAPITokenClaims.verify(try token(signer: P256.Signing.PrivateKey()), publicKey: nil, bundleId: "com.example") != nil)
        #expect(ServerAPITokenClaims.verify("a.b", publicKey: nil, bundleId: "com.example") == nil)
        #expect(ServerAPITokenClaims.verify("!!.??.##", publicKey: nil, bundleId: "com.example") == nil)
    }

    @Test("a token as Apple's own library makes it (no iat) is accepted; without iat, exp may still be at most an hour away")
    func withoutIssuedAt() throws {
        let apple = try AppleLibraryToken.make(key: key, keyId: "KEY", issuerId: "issuer", bundleId: "com.example")
        let claims = ServerAPITokenClaims.verify(apple, publicKey: key.publicKey, bundleId: "com.example")
        #expect(claims?.iat == nil)
        #expect(claims?.iss == "issuer")
        // Five minutes from a time two hours ago: expired.
        let old = try AppleLibraryToken.make(
            key: key, keyId: "KEY", issuerId: "issuer", bundleId: "com.example", now: Date().addingTimeInterval(-7200))
        #expect(ServerAPITokenClaims.verify(old, publicKey: key.publicKey, bundleId: "com.example") == nil)
        // Expiring two hours from now: longer-lived than Apple allows.
        let long = try AppleLibraryToken.make(
            key: key, keyId: "KEY", issuerId: "issuer", bundleId: "com.example", now: Date().addingTimeInterval(7200))
        #expect(ServerAPITokenClaims.verify(long, publicKey: key.publicKey, bundleId: "com.example") == nil)
    }
}
