/// A discount on an Advanced Commerce item.
public struct AdvancedCommerceOffer: Codable, Hashable, Sendable {
    public var period: String?
    public var periodCount: Int32?
    public var price: Int64?
    /// Such as `ACQUISITION`, `RETENTION` or `WIN_BACK`; kept as sent.
    public var reason: String?

    public init() {}
}
