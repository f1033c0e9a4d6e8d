import Foundation
import ResponseSigning

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

#if canImport(CryptoKit)
    import CryptoKit
#elseif canImport(Crypto)
    import Crypto
#endif

/// Checks the server's signature on an answer (README "Answers the device can trust"): the intermediate key must be
/// signed by the root key the app was configured with and not expired at the answer's request time, and its signature
/// must cover this request's nonce, the path asked, the request time, the ETag and the body received.
///
/// `@_spi(Benchmarks)`: the benchmarks time it; apps never see it.
@_spi(Benchmarks) public struct ResponseVerifier: Sendable {
    /// The root key's public half (32 bytes), or nil when the configured one does not read (every answer then fails).
    let rootKey: [UInt8]?
    /// Intermediate keys whose root signature already verified (key, expiry and root signature, as received): the
    /// same intermediate signs a day of answers, so each answer then costs one Ed25519 verification, not two.
    private let vouched = Locked<Set<[UInt8]>>([])

    /// A verifier for the root public key `signingKey` (base64 of 32 bytes).
    public init(signingKey: String) {
        rootKey = Data(base64Encoded: signingKey.trimmingCharacters(in: .whitespacesAndNewlines)).flatMap {
            $0.count == 32 ? Array($0) : nil
        }
    }

    /// A new nonce: 12 random bytes, base64.
    static func nonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<SignatureHeaders.nonceLength).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
            .base64EncodedString()
    }

    /// The path as the server signs it: the request's percent-encoded path from `/v1/` on, so that a base URL with a
    /// path of its own (a proxy that strips a prefix) signs the same.
    static func signedPath(of url: URL?) -> String {
        let path = url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false)?.percentEncodedPath } ?? ""
        guard let start = path.range(of: "/v1/") else { return path }
        return String(path[start.lowerBound...])
    }

    /// Why an answer does not verify, or nil when it does.
    public func failure(nonce: String?, url: URL?, response: HTTPURLResponse, body: Data) -> String? {
        guard let rootKey else { return "the configured signing key is not an Ed25519 public key (base64 of 32 bytes)" }
        guard let header = response.value(forHTTPHeaderField: SignatureHeaders.signature) else { return "the answer is not signed" }
        guard let timeText = response.value(forHTTPHeaderField: SignatureHeaders.requestTime), let requestTime = Int64(timeText) else {
            return "the answer has no request time"
        }
        let signature: IntermediateKeySignature
        do {
            signature = try IntermediateKeySignature(headerValue: header)
        } catch {
            return "the signature does not read: \(error)"
        }
        let statement = IntermediateKeySignature.statement(publicKey: signature.publicKey, expiresAt: signature.expiresAt)
        let vouchedFor = statement + signature.rootSignature
        if !vouched.withLock({ $0.contains(vouchedFor) }) {
            guard Self.isValid(signature.rootSignature, of: statement, by: rootKey) else {
                return "the intermediate key is not signed by the app's root key"
            }
            vouched.withLock { known in
                if known.count >= 16 { known.removeAll() }
                known.insert(vouchedFor)
            }
        }
        guard requestTime < signature.expiresAt else { return "the intermediate key had expired when the answer was signed" }
        let message = SignedMessage(
            nonce: nonce, path: Self.signedPath(of: url), requestTime: requestTime, etag: response.value(forHTTPHeaderField: "ETag"),
            body: response.statusCode == 304 ? [] : Array(body))
        guard Self.isValid(signature.signature, of: message.bytes, by: signature.publicKey) else {
            return "the signature does not match this request and answer"
        }
        return nil
    }

    /// Ed25519, with CryptoKit on Apple platforms and swift-crypto elsewhere (which an app that adds the SDK without
    /// the package's traits does not have: there nothing verifies).
    static func isValid(_ signature: [UInt8], of message: [UInt8], by publicKey: [UInt8]) -> Bool {
        #if canImport(CryptoKit) || canImport(Crypto)
            guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else { return false }
            return key.isValidSignature(signature, for: message)
        #else
            return false
        #endif
    }
}
