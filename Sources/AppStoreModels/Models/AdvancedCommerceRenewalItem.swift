/// One item of an Advanced Commerce subscription's next renewal.
public struct AdvancedCommerceRenewalItem: Codable, Hashable, Sendable {
    // swift-format-ignore: AlwaysUseLowerCamelCase
    // Apple's JSON key, as Apple's own library names it.
    public var SKU: String?
    public var description: String?
    public var displayName: String?
    public var offer: AdvancedCommerceOffer?
    public var price: Int64?
    public var priceIncreaseInfo: AdvancedCommercePriceIncreaseInfo?

    public init() {}
}
