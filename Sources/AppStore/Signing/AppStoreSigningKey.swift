import Crypto
import Foundation

/// An App Store Connect key (the `.p8` file): In-App Purchase keys sign App Store Server API tokens, offer
/// signatures and StoreKit request JWS. Only ES256 (P-256) keys exist.
public struct AppStoreSigningKey: Sendable {
    public let keyId: String
    public let issuerId: String
    public let bundleId: String
    public let privateKey: P256.Signing.PrivateKey

    public struct InvalidKey: Error, CustomStringConvertible {
        public var description: String { "the signing key is not a P-256 private key in PKCS#8 PEM (.p8)" }
    }

    /// - Parameter pem: the contents of the `.p8` file.
    public init(pem: String, keyId: String, issuerId: String, bundleId: String) throws(InvalidKey) {
        do {
            self.privateKey = try P256.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw InvalidKey()
        }
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
    }

    public init(privateKey: P256.Signing.PrivateKey, keyId: String, issuerId: String, bundleId: String) {
        self.privateKey = privateKey
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
    }

    /// A compact JWS with header `{"alg":"ES256","kid":…,"typ":"JWT"}` and the given claims.
    func signJWT(_ claims: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let header = try encoder.encode(["alg": "ES256", "kid": keyId, "typ": "JWT"])
        return try JWSSigner.sign(headerJSON: header, payloadJSON: try encoder.encode(claims), key: privateKey)
    }
}
