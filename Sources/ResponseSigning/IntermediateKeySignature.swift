import Foundation

/// An intermediate key as the root key vouches for it, with the signature it made over one answer: what travels in
/// `X-Signature`.
///
/// The root key (Ed25519) is long-lived: its public half is compiled into the app, its private half stays on the
/// server. The server signs answers with an intermediate key it makes itself and replaces every day; the root signs
/// the intermediate's public key and expiry (`statement`), so the app trusts an intermediate it has never seen, until
/// it expires.
///
/// Header value: `v1 key=<base64 public key> expires=<ms> keysig=<base64 root signature> sig=<base64 signature>`.
public struct IntermediateKeySignature: Sendable, Hashable {
    /// The intermediate's Ed25519 public key (32 bytes).
    public var publicKey: [UInt8]
    /// When the intermediate stops being valid, in milliseconds since 1970: an answer whose request time is later
    /// fails verification.
    public var expiresAt: Int64
    /// The root key's signature over `statement`.
    public var rootSignature: [UInt8]
    /// The intermediate key's signature over the answer's `SignedMessage`.
    public var signature: [UInt8]

    /// A signature from its parts.
    public init(publicKey: [UInt8], expiresAt: Int64, rootSignature: [UInt8], signature: [UInt8]) {
        self.publicKey = publicKey
        self.expiresAt = expiresAt
        self.rootSignature = rootSignature
        self.signature = signature
    }

    /// What the root key signs for an intermediate: a tag, the public key, and its expiry (8 bytes, big-endian).
    public static func statement(publicKey: [UInt8], expiresAt: Int64) -> [UInt8] {
        var out = Array("storekeeper-intermediate-key-v1".utf8)
        out += publicKey
        withUnsafeBytes(of: UInt64(bitPattern: expiresAt).bigEndian) { out += $0 }
        return out
    }

    /// The header value.
    public var headerValue: String {
        "v1 key=\(Data(publicKey).base64EncodedString()) expires=\(expiresAt) "
            + "keysig=\(Data(rootSignature).base64EncodedString()) sig=\(Data(signature).base64EncodedString())"
    }

    /// Why a header value does not read.
    public struct FormatError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, in words.
        public var description: String
    }

    /// Reads a header value; a missing field, a field that is not base64, or a key or signature of the wrong length
    /// is a `FormatError`.
    public init(headerValue: String) throws(FormatError) {
        let parts = headerValue.split(separator: " ")
        guard parts.first == "v1" else { throw FormatError(description: "the signature is not of version v1") }
        var fields: [Substring: Substring] = [:]
        for part in parts.dropFirst() {
            guard let equals = part.firstIndex(of: "=") else { throw FormatError(description: "'\(part.prefix(20))' is not name=value") }
            fields[part[..<equals]] = part[part.index(after: equals)...]
        }
        func bytes(_ name: Substring, count: Int) throws(FormatError) -> [UInt8] {
            guard let text = fields[name], let data = Data(base64Encoded: String(text)), data.count == count else {
                throw FormatError(description: "\(name) is missing or is not \(count) bytes of base64")
            }
            return Array(data)
        }
        guard let expires = fields["expires"].flatMap({ Int64($0) }) else {
            throw FormatError(description: "expires is missing or is not milliseconds")
        }
        self.init(
            publicKey: try bytes("key", count: 32), expiresAt: expires, rootSignature: try bytes("keysig", count: 64),
            signature: try bytes("sig", count: 64))
    }
}
