/// What the integrations refuse, by name: a malformed secret or schedule from an operator, a signature a receiver
/// must not accept.
public struct IntegrationError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable {
        /// A webhook signing secret that is not `whsec_` followed by base64 of at least one byte.
        case invalidSecret
        /// A retry schedule with a negative or non-finite delay, or more attempts than allowed.
        case invalidRetrySchedule
        /// A webhook request whose `webhook-id`, `webhook-timestamp` or `webhook-signature` header is missing or
        /// malformed.
        case missingSignatureHeaders
        /// A webhook timestamp further from now than the tolerance (a replayed or delayed request).
        case timestampOutOfTolerance
        /// No signature in `webhook-signature` matches the body under the secret.
        case signatureMismatch
        /// A destination's configuration that cannot be used: an unknown kind or field, a missing or malformed one.
        case invalidConfiguration
        /// A destination address that is, or resolves to, loopback, private, link-local or other internal ranges
        /// (refused unless the operator allows them): no attempt can succeed as configured.
        case forbiddenAddress
        /// A destination's host name that does not resolve now: a passing DNS failure as often as a typo, so retried on
        /// the schedule, never a reason to disable the destination.
        case unresolvableAddress
    }

    /// The configuration field at fault, when there is one (`config.url`).
    public var field: String?

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
