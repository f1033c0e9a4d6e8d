/// Advanced Commerce API data on a transaction (`advancedCommerceInfo`). Amounts are in milliunits.
public struct AdvancedCommerceTransactionInfo: Codable, Hashable, Sendable {
    public var descriptors: AdvancedCommerceDescriptors?
    public var estimatedTax: Int64?
    public var items: [AdvancedCommerceTransactionItem]?
    public var period: String?
    public var requestReferenceId: String?
    public var taxCode: String?
    public var taxExclusivePrice: Int64?
    /// A decimal kept as Apple writes it, such as `"0.15"`.
    public var taxRate: String?

    public init() {}
}
