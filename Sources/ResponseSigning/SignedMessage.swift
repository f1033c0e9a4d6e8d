import Foundation

/// What the server signs in every customer answer, and the SDK checks: one byte string that binds the request's nonce,
/// the path it asked, the server's time, the answer's ETag and its body, so that an answer cannot be altered, moved to
/// another path, or replayed to a request with another nonce (or, within the same nonce, to a later time).
///
/// Layout (README "Answers the device can trust"): the ASCII tag `storekeeper-response-v1`, then each field as an
/// 8-byte big-endian length and its bytes: the nonce as sent in `X-Nonce` (empty without one), the path (the request
/// target's percent-encoded path, without the query), the request time in milliseconds since 1970 as decimal ASCII
/// (`X-Request-Time`), the ETag (empty without one), and the body as sent (empty for a 304, whose ETag names the body
/// the SDK holds).
public struct SignedMessage: Sendable, Hashable {
    /// The tag in front of every message: a signature made for anything else never verifies as one of these.
    public static let tag = Array("storekeeper-response-v1".utf8)

    /// The request's `X-Nonce` as sent, or nil without one.
    public var nonce: String?
    /// The request's percent-encoded path, from `/v1/` on, without the query.
    public var path: String
    /// The server's time when it signed, in milliseconds since 1970 (`X-Request-Time`).
    public var requestTime: Int64
    /// The answer's `ETag`, or nil without one.
    public var etag: String?
    /// The answer's body as sent (empty for a 304).
    public var body: [UInt8]

    /// A message from its parts.
    public init(nonce: String?, path: String, requestTime: Int64, etag: String?, body: [UInt8]) {
        self.nonce = nonce
        self.path = path
        self.requestTime = requestTime
        self.etag = etag
        self.body = body
    }

    /// The bytes signed.
    public var bytes: [UInt8] {
        var out = Self.tag
        out.reserveCapacity(out.count + 5 * 8 + path.utf8.count + body.count + 64)
        for field in [Array((nonce ?? "").utf8), Array(path.utf8), Array(String(requestTime).utf8), Array((etag ?? "").utf8)] {
            Self.append(field, to: &out)
        }
        Self.append(body, to: &out)
        return out
    }

    static func append(_ field: [UInt8], to out: inout [UInt8]) {
        withUnsafeBytes(of: UInt64(field.count).bigEndian) { out += $0 }
        out += field
    }
}

/// The headers of a signed answer, and of the request that asks for one.
public enum SignatureHeaders {
    /// The signature and the intermediate key it was made with (`IntermediateKeySignature.headerValue`).
    public static let signature = "X-Signature"
    /// The server's time when it signed, in milliseconds since 1970: part of the signed message.
    public static let requestTime = "X-Request-Time"
    /// The request's nonce: 12 random bytes, base64, chosen by the SDK for each request.
    public static let nonce = "X-Nonce"
    /// How many bytes a nonce is.
    public static let nonceLength = 12

    /// Whether `value` is a nonce as the SDK sends it: base64 of exactly 12 bytes.
    public static func isValidNonce(_ value: String) -> Bool {
        value.count == 16 && Data(base64Encoded: value)?.count == nonceLength
    }
}
