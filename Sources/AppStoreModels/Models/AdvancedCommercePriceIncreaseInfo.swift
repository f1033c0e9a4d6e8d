/// A pending price increase of an Advanced Commerce item.
public struct AdvancedCommercePriceIncreaseInfo: Codable, Hashable, Sendable {
    public var dependentSKUs: [String]?
    public var price: Int64?
    /// `SCHEDULED`, `PENDING` or `ACCEPTED`; kept as sent.
    public var status: String?

    public init() {}
}
