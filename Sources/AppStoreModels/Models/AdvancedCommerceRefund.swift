/// A refund of an Advanced Commerce item.
public struct AdvancedCommerceRefund: Codable, Hashable, Sendable {
    public var refundAmount: Int64?
    public var refundDate: Timestamp?
    /// Such as `FULFILLMENT_ISSUE`; kept as sent.
    public var refundReason: String?
    /// `FULL`, `PRORATED` or `CUSTOM`; kept as sent.
    public var refundType: String?

    public init() {}
}
