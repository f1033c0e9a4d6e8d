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

extension NotificationData {
    enum CodingKeys: String, CodingKey {
        case environment
        case appAppleId
        case bundleId
        case bundleVersion
        case signedTransactionInfo
        case signedRenewalInfo
        case status
        case consumptionRequestReason
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        environment = try container.apple(.environment)
        appAppleId = try container.decodeIfPresent(Int64.self, forKey: .appAppleId)
        bundleId = try container.decodeIfPresent(String.self, forKey: .bundleId)
        bundleVersion = try container.decodeIfPresent(String.self, forKey: .bundleVersion)
        signedTransactionInfo = try container.decodeIfPresent(String.self, forKey: .signedTransactionInfo)
        signedRenewalInfo = try container.decodeIfPresent(String.self, forKey: .signedRenewalInfo)
        status = try container.apple(.status)
        consumptionRequestReason = try container.apple(.consumptionRequestReason)
    }
}
