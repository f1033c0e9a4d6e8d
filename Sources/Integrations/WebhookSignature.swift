import Crypto
import Foundation

/// A Standard Webhooks (v1) signing secret: `whsec_` and the base64 of the key's bytes. Shown to the operator once,
/// when the webhook is created; never logged (`description` redacts it).
public struct WebhookSecret: Sendable, Hashable, CustomStringConvertible {
    public let key: [UInt8]

    /// Reads `whsec_<base64>`; a bare prefix, an empty key or invalid base64 is refused.
    public init(_ text: String) throws(IntegrationError) {
        guard text.hasPrefix(Self.prefix) else {
            throw IntegrationError(.invalidSecret, "a webhook secret starts with '\(Self.prefix)'")
        }
        guard let key = Data(base64Encoded: String(text.dropFirst(Self.prefix.count))), !key.isEmpty else {
            throw IntegrationError(.invalidSecret, "a webhook secret is '\(Self.prefix)' followed by base64 of at least one byte")
        }
        self.key = Array(key)
    }

    public init(key: [UInt8]) { self.key = key }

    /// A new secret of 24 random bytes (the length the Standard Webhooks libraries generate).
    public static func generate() -> WebhookSecret {
        var generator = SystemRandomNumberGenerator()
        return WebhookSecret(key: (0..<24).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// The secret as the operator is shown it once: `whsec_…`.
    public var text: String { Self.prefix + Data(key).base64EncodedString() }

    public var description: String { Self.prefix + "…(redacted)" }

    static let prefix = "whsec_"
}

/// Standard Webhooks v1 signatures: `v1,` and the base64 HMAC-SHA256, under the secret's key, of
/// `<webhook-id>.<webhook-timestamp>.<body>`.
public enum WebhookSignature {
    /// One secret's signature of a message.
    public static func sign(id: String, timestamp: Int64, body: some DataProtocol, secret: WebhookSecret) -> String {
        var content = Data("\(id).\(timestamp).".utf8)
        content.append(contentsOf: body)
        let mac = HMAC<SHA256>.authenticationCode(for: content, using: SymmetricKey(data: secret.key))
        return "v1," + Data(mac).base64EncodedString()
    }

    /// The `webhook-signature` header: one signature per secret, separated by spaces (two during a rotation, so
    /// receivers holding either secret accept the message).
    public static func header(id: String, timestamp: Int64, body: some DataProtocol, secrets: [WebhookSecret]) -> String {
        secrets.map { sign(id: id, timestamp: timestamp, body: body, secret: $0) }.joined(separator: " ")
    }

    /// What a receiver checks: the headers are there, the timestamp is within `tolerance` seconds of `now` (either
    /// way), and one of the header's `v1` signatures is the body's under `secret` (compared in constant time).
    public static func verify(
        id: String?, timestamp: String?, signature: String?, body: some DataProtocol, secret: WebhookSecret, now: Int64,
        tolerance: Int64 = 300
    ) throws(IntegrationError) {
        guard let id, !id.isEmpty, let timestamp, let signature, !signature.isEmpty else {
            throw IntegrationError(.missingSignatureHeaders, "webhook-id, webhook-timestamp and webhook-signature are required")
        }
        guard let seconds = Int64(timestamp) else {
            throw IntegrationError(.missingSignatureHeaders, "webhook-timestamp is not a whole number of seconds")
        }
        // Compared without subtracting the sender's number from ours: an extreme timestamp must be refused, not
        // overflow.
        guard seconds >= now - tolerance, seconds <= now + tolerance else {
            throw IntegrationError(.timestampOutOfTolerance, "webhook-timestamp is more than \(tolerance) s from now")
        }
        let expected = Array(sign(id: id, timestamp: seconds, body: body, secret: secret).utf8)
        for candidate in signature.split(separator: " ") where candidate.hasPrefix("v1,") {
            if constantTimeEqual(Array(candidate.utf8), expected) { return }
        }
        throw IntegrationError(.signatureMismatch, "no v1 signature matches the body")
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
