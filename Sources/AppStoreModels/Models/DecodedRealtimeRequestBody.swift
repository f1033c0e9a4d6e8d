/// What Apple asks the developer's Get Retention Message endpoint when a customer opens the subscription's cancellation
/// screen: the payload of its `signedPayload` (Apple's `DecodedRealtimeRequestBody`, Retention Messaging API).
/// Every field is required by Apple; they are optional here so that a payload missing one decodes and is refused by
/// name (``missingField``) instead of failing as a whole.
public struct DecodedRealtimeRequestBody: Codable, Hashable, Sendable {
    /// The subscription the customer is about to cancel.
    public var originalTransactionId: String?
    public var appAppleId: Int64?
    /// The subscription's product.
    public var productId: String?
    /// The customer's App Store locale (`en-US`): the message's language.
    public var userLocale: String?
    /// A UUID per request: Apple's idempotency key.
    public var requestIdentifier: String?
    public var environment: Environment?
    public var signedDate: Timestamp?

    public init() {}

    /// The first field Apple requires that the payload lacks.
    public var missingField: String? {
        if originalTransactionId?.isEmpty ?? true { return "originalTransactionId" }
        if productId?.isEmpty ?? true { return "productId" }
        if userLocale?.isEmpty ?? true { return "userLocale" }
        if requestIdentifier?.isEmpty ?? true { return "requestIdentifier" }
        if environment == nil { return "environment" }
        if signedDate == nil { return "signedDate" }
        return nil
    }
}
