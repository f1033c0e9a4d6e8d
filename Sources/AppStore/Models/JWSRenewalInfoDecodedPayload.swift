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
