/// Why a piece of signed App Store data was not accepted.
///
/// The `code` is stable and meant for programs (HTTP mapping, metrics); the `message` is for people.
public struct VerificationError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The input is not a compact JWS of the expected shape (segments, base64url, JSON, size, header fields).
        case invalidJWTFormat
        /// A certificate in `x5c` is missing, malformed, of the wrong kind, or the chain has the wrong length.
        case invalidCertificate
        /// The signature, the chain, the validity at the validation time, Apple's OIDs or the trust root do not check out.
        case verificationFailure
        /// Verification could not complete for a reason that may pass (an OCSP responder that did not answer).
        case retryableVerificationFailure
        /// The bundle id or the appAppleId is not the configured one.
        case invalidAppIdentifier
        /// The environment is not the configured one.
        case invalidEnvironment
        /// The input is not an app receipt: neither base64 nor DER, not PKCS#7 SignedData, or its payload is malformed.
        case invalidReceiptFormat
        /// The receipt's hash does not match the device identifier it was checked against.
        case deviceMismatch
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Whether trying again later may succeed (Apple retries a webhook answered with 5xx).
    public var isRetryable: Bool { code == .retryableVerificationFailure }

    public var description: String { "\(code.rawValue): \(message)" }

    static func format(_ message: String) -> Self { .init(.invalidJWTFormat, message) }
    static func certificate(_ message: String) -> Self { .init(.invalidCertificate, message) }
    static func failure(_ message: String) -> Self { .init(.verificationFailure, message) }
    static func retryable(_ message: String) -> Self { .init(.retryableVerificationFailure, message) }
    static func appIdentifier(_ message: String) -> Self { .init(.invalidAppIdentifier, message) }
    static func environment(_ message: String) -> Self { .init(.invalidEnvironment, message) }
    static func receiptFormat(_ message: String) -> Self { .init(.invalidReceiptFormat, message) }
    static func deviceMismatch(_ message: String) -> Self { .init(.deviceMismatch, message) }
}
