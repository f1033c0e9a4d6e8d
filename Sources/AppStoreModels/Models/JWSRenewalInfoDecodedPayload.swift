/// The renewal information of an auto-renewable subscription as the App Store signs it
/// (`JWSRenewalInfoDecodedPayload`). `renewalPrice` is in milliunits of `currency`.
public struct JWSRenewalInfoDecodedPayload: Codable, Hashable, Sendable {
    public var expirationIntent: ExpirationIntent?
    public var originalTransactionId: String?
    public var autoRenewProductId: String?
    public var productId: String?
    public var autoRenewStatus: AutoRenewStatus?
    public var isInBillingRetryPeriod: Bool?
    public var priceIncreaseStatus: PriceIncreaseStatus?
    public var gracePeriodExpiresDate: Timestamp?
    public var offerType: OfferType?
    public var offerIdentifier: String?
    public var signedDate: Timestamp?
    public var environment: Environment?
    public var recentSubscriptionStartDate: Timestamp?
    public var renewalDate: Timestamp?
    public var currency: String?
    public var renewalPrice: Int64?
    public var offerDiscountType: OfferDiscountType?
    public var eligibleWinBackOfferIds: [String]?
    public var appAccountToken: String?
    public var appTransactionId: String?
    public var offerPeriod: String?
    public var advancedCommerceInfo: AdvancedCommerceRenewalInfo?
    public var commitmentInfo: RenewalCommitmentInfo?
    public var renewalBillingPlanType: String?
    public var deviceVerification: String?
    public var deviceVerificationNonce: String?

    public init() {}
}

extension JWSRenewalInfoDecodedPayload {
    enum CodingKeys: String, CodingKey {
        case expirationIntent
        case originalTransactionId
        case autoRenewProductId
        case productId
        case autoRenewStatus
        case isInBillingRetryPeriod
        case priceIncreaseStatus
        case gracePeriodExpiresDate
        case offerType
        case offerIdentifier
        case signedDate
        case environment
        case recentSubscriptionStartDate
        case renewalDate
        case currency
        case renewalPrice
        case offerDiscountType
        case eligibleWinBackOfferIds
        case appAccountToken
        case appTransactionId
        case offerPeriod
        case advancedCommerceInfo
        case commitmentInfo
        case renewalBillingPlanType
        case deviceVerification
        case deviceVerificationNonce
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        expirationIntent = try container.apple(.expirationIntent)
        originalTransactionId = try container.decodeIfPresent(String.self, forKey: .originalTransactionId)
        autoRenewProductId = try container.decodeIfPresent(String.self, forKey: .autoRenewProductId)
        productId = try container.decodeIfPresent(String.self, forKey: .productId)
        autoRenewStatus = try container.apple(.autoRenewStatus)
        isInBillingRetryPeriod = try container.decodeIfPresent(Bool.self, forKey: .isInBillingRetryPeriod)
        priceIncreaseStatus = try container.apple(.priceIncreaseStatus)
        gracePeriodExpiresDate = try container.timestamp(.gracePeriodExpiresDate)
        offerType = try container.apple(.offerType)
        offerIdentifier = try container.decodeIfPresent(String.self, forKey: .offerIdentifier)
        signedDate = try container.timestamp(.signedDate)
        environment = try container.apple(.environment)
        recentSubscriptionStartDate = try container.timestamp(.recentSubscriptionStartDate)
        renewalDate = try container.timestamp(.renewalDate)
        currency = try container.decodeIfPresent(String.self, forKey: .currency)
        renewalPrice = try container.decodeIfPresent(Int64.self, forKey: .renewalPrice)
        offerDiscountType = try container.apple(.offerDiscountType)
        eligibleWinBackOfferIds = try container.decodeIfPresent([String].self, forKey: .eligibleWinBackOfferIds)
        appAccountToken = try container.decodeIfPresent(String.self, forKey: .appAccountToken)
        appTransactionId = try container.decodeIfPresent(String.self, forKey: .appTransactionId)
        offerPeriod = try container.decodeIfPresent(String.self, forKey: .offerPeriod)
        advancedCommerceInfo = try container.decodeIfPresent(AdvancedCommerceRenewalInfo.self, forKey: .advancedCommerceInfo)
        commitmentInfo = try container.decodeIfPresent(RenewalCommitmentInfo.self, forKey: .commitmentInfo)
        renewalBillingPlanType = try container.decodeIfPresent(String.self, forKey: .renewalBillingPlanType)
        deviceVerification = try container.decodeIfPresent(String.self, forKey: .deviceVerification)
        deviceVerificationNonce = try container.decodeIfPresent(String.self, forKey: .deviceVerificationNonce)
    }
}
