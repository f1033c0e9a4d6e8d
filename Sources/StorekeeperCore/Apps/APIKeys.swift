import Crypto
import Foundation
import Storage

/// API keys: `pk_<id>_<secret>` (public, for the SDK: customer endpoints of one app) and `sk_<id>_<secret>` (secret:
/// admin endpoints). The id finds the stored key; only SHA-256 of the secret is stored, and it is compared in
/// constant time.
public enum APIKeys {
    public struct Generated: Sendable {
        public var key: String
        public var id: String
        public var secretHash: String
    }

    public static func generate(_ kind: APIKeyRecord.Kind) -> Generated {
        let id = randomToken(bytes: 9)
        let secret = randomToken(bytes: 24)
        return Generated(key: "\(kind.prefix)_\(id)_\(secret)", id: id, secretHash: hash(secret))
    }

    /// A presented key, split: its kind (from `pk`/`sk`), id and secret.
    public struct Presented: Sendable {
        public var kind: APIKeyRecord.Kind
        public var id: String
        public var secret: String
    }

    /// Splits a presented key; nil when it is not shaped like a key.
    public static func parse(_ key: String) -> Presented? {
        let parts = key.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 3, let kind = APIKeyRecord.Kind(prefix: parts[0]), !parts[1].isEmpty, !parts[2].isEmpty,
            key.utf8.count <= 128
        else { return nil }
        return Presented(kind: kind, id: String(parts[1]), secret: String(parts[2]))
    }

    public static func hash(_ secret: String) -> String {
        Hex.encode(SHA256.hash(data: Data(secret.utf8)))
    }

    /// Compares two hex digests in time that depends only on their length.
    public static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<x.count { difference |= x[i] ^ y[i] }
        return difference == 0
    }

    /// URL-safe random text without `_` (the separator).
    public static func randomToken(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        // 62 symbols: 6 bits of entropy per 8 would bias; draw uniformly per symbol instead.
        let length = (bytes * 8 + 5) / 6 + 1
        return String((0..<length).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] })
    }

    /// A new app id.
    public static func appId() -> String { "app_" + randomToken(bytes: 9) }
}

extension APIKeyRecord.Kind {
    /// What a key of this kind starts with.
    public var prefix: String { self == .public ? "pk" : "sk" }

    init?(prefix: Substring) {
        switch prefix {
        case "pk": self = .public
        case "sk": self = .secret
        default: return nil
        }
    }
}
