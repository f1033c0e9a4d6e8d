import Crypto
import Foundation

/// API keys: `pk_<id>_<secret>` (public, for the SDK: customer endpoints of one app) and `sk_<id>_<secret>` (secret:
/// admin endpoints). The id finds the stored key; only SHA-256 of the secret is stored, and it is compared in
/// constant time.
public enum APIKeys {
    public struct Generated: Sendable {
        public var key: String
        public var id: String
        public var secretHash: String
    }

    public static func generate(kind: String) -> Generated {
        let id = randomToken(bytes: 9)
        let secret = randomToken(bytes: 24)
        return Generated(key: "\(kind)_\(id)_\(secret)", id: id, secretHash: hash(secret))
    }

    /// Splits a presented key into its kind (`pk`/`sk`), id and secret; nil when it is not shaped like a key.
    public static func parse(_ key: String) -> (kind: String, id: String, secret: String)? {
        let parts = key.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "pk" || parts[0] == "sk", !parts[1].isEmpty, !parts[2].isEmpty,
              key.utf8.count <= 128
        else { return nil }
        return (String(parts[0]), String(parts[1]), String(parts[2]))
    }

    public static func hash(_ secret: String) -> String {
        Hex.encode(SHA256.hash(data: Data(secret.utf8)))
    }

    /// Compares two hex digests in time that depends only on their length.
    public static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<x.count { difference |= x[i] ^ y[i] }
        return difference == 0
    }

    /// URL-safe random text without `_` (the separator).
    static func randomToken(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        // 62 symbols: 6 bits of entropy per 8 would bias; draw uniformly per symbol instead.
        let length = (bytes * 8 + 5) / 6 + 1
        return String((0..<length).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] })
    }

    /// A new app id.
    public static func appId() -> String { "app_" + randomToken(bytes: 9) }
}

/// Lower-case hexadecimal, without Foundation's `String(format:)` (slow on Linux, and on the request path here).
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
