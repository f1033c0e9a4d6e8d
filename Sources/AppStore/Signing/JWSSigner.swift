import Crypto
import Foundation

/// Makes ES256 compact JWS: what the App Store Server API's bearer tokens are, and what the App Store itself signs.
public enum JWSSigner {
    /// `BASE64URL(header) '.' BASE64URL(payload) '.' BASE64URL(r || s)`, signed with `key` over the first two parts.
    public static func sign(headerJSON: Data, payloadJSON: Data, key: P256.Signing.PrivateKey) throws -> String {
        let signingInput = Base64.encodeURL(headerJSON) + "." + Base64.encodeURL(payloadJSON)
        let signature = try key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64.encodeURL(signature.rawRepresentation)
    }

    /// Signs an `Encodable` payload with an `x5c` chain in the header, as the App Store does.
    public static func sign(
        _ payload: some Encodable, x5c: [[UInt8]], key: P256.Signing.PrivateKey, encoder: JSONEncoder = JSONEncoder()
    ) throws -> String {
        let header = Header(alg: "ES256", x5c: x5c.map { Data($0).base64EncodedString() }, typ: "JWT")
        return try sign(headerJSON: try encoder.encode(header), payloadJSON: try encoder.encode(payload), key: key)
    }

    private struct Header: Encodable {
        var alg: String
        var x5c: [String]
        var typ: String
    }
}
