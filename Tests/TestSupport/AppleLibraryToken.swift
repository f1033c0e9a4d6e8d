import Crypto
import Foundation

/// A bearer token for the App Store Server API as Apple's official app-store-server-library makes it: header `alg`
/// ES256, `kid` and `typ`; claims `bid`, `iss`, `aud` and `exp` (five minutes), and no `iat`.
public enum AppleLibraryToken {
    public static func make(key: P256.Signing.PrivateKey, keyId: String, issuerId: String, bundleId: String, now: Date = Date()) throws
        -> String
    {
        func segment(_ object: [String: Any]) throws -> String {
            base64URL(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
        }
        let header = try segment(["alg": "ES256", "kid": keyId, "typ": "JWT"])
        let claims = try segment([
            "bid": bundleId, "iss": issuerId, "aud": "appstoreconnect-v1", "exp": Int64(now.timeIntervalSince1970) + 300,
        ])
        let signature = try key.signature(for: Data("\(header).\(claims)".utf8)).rawRepresentation
        return "\(header).\(claims).\(base64URL(signature))"
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
