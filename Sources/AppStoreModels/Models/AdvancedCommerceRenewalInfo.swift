/// Advanced Commerce API data on renewal information (`advancedCommerceInfo`).
public struct AdvancedCommerceRenewalInfo: Codable, Hashable, Sendable {
    public var consistencyToken: String?
    public var descriptors: AdvancedCommerceDescriptors?
    public var items: [AdvancedCommerceRenewalItem]?
    public var period: String?
    public var requestReferenceId: String?
    public var taxCode: String?

    public init() {}
}
