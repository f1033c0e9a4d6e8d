/// The app and the signed transaction data a notification is about (Apple's `data` object).
public struct NotificationData: Codable, Hashable, Sendable {
    public var environment: Environment?
    public var appAppleId: Int64?
    public var bundleId: String?
    public var bundleVersion: String?
    /// A JWS of ``JWSTransactionDecodedPayload``.
    public var signedTransactionInfo: String?
    /// A JWS of ``JWSRenewalInfoDecodedPayload``.
    public var signedRenewalInfo: String?
    public var status: SubscriptionStatus?
    public var consumptionRequestReason: ConsumptionRequestReason?

    public init() {}
}
