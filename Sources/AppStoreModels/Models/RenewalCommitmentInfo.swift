/// The commitment that follows at renewal (on renewal information).
public struct RenewalCommitmentInfo: Codable, Hashable, Sendable {
    public var commitmentAutoRenewProductId: String?
    public var commitmentAutoRenewStatus: AutoRenewStatus?
    public var commitmentRenewalBillingPlanType: String?
    public var commitmentRenewalDate: Timestamp?
    public var commitmentRenewalPrice: Int64?

    public init() {}
}
