/// One item of an Advanced Commerce transaction.
public struct AdvancedCommerceTransactionItem: Codable, Hashable, Sendable {
    public var SKU: String?
    public var description: String?
    public var displayName: String?
    public var offer: AdvancedCommerceOffer?
    public var price: Int64?
    public var refunds: [AdvancedCommerceRefund]?
    public var revocationDate: Timestamp?

    public init() {}
}
