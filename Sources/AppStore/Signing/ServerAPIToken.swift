import Crypto
import Foundation

/// The claims of an App Store Server API bearer token, as ``AppStoreServerAPIClient/makeToken(now:)`` makes them.
public struct ServerAPITokenClaims: Decodable, Sendable, Hashable {
    public var iss: String
    /// Optional: Apple's official clients (app-store-server-library) send none, and Apple's service accepts that.
    public var iat: Int64?
    public var exp: Int64
    public var aud: String
    public var bid: String

    /// Checks a bearer token the way Apple's API does (for servers that stand in for it, such as the simulator's):
    /// ES256 over the first two segments, `aud` `appstoreconnect-v1`, the expected `bid`, unexpired, and living at
    /// most an hour: with `iat`, issued no later than a minute from `now` and `exp` at most an hour after it; without
    /// (as Apple's own clients send it), `exp` at most an hour and a minute from `now`. `publicKey` nil skips the
    /// signature (the key is unknown). Nil when any of it fails.
    public static func verify(
        _ token: some StringProtocol, publicKey: P256.Signing.PublicKey?, bundleId: String, now: Date = Date()
    ) -> ServerAPITokenClaims? {
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3,
            let header = Base64.decode(Array(parts[0]), alphabet: .url),
            let payload = Base64.decode(Array(parts[1]), alphabet: .url),
            let signature = Base64.decode(Array(parts[2]), alphabet: .url),
            (try? JSONDecoder().decode([String: String].self, from: Data(header)))?["alg"] == "ES256",
            let claims = try? JSONDecoder().decode(ServerAPITokenClaims.self, from: Data(payload))
        else { return nil }
        let seconds = Int64(now.timeIntervalSince1970)
        guard claims.aud == "appstoreconnect-v1", claims.bid == bundleId, claims.exp > seconds else { return nil }
        if let issued = claims.iat {
            guard issued <= seconds + 60, claims.exp - issued <= 3600 else { return nil }
        } else {
            guard claims.exp <= seconds + 3600 + 60 else { return nil }
        }
        if let publicKey {
            let signingInput = Data(parts[0]) + Data(".".utf8) + Data(parts[1])
            guard let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
                publicKey.isValidSignature(ecdsa, for: signingInput)
            else { return nil }
        }
        return claims
    }
}
