/// Whether the customer has consented to a price increase (`priceIncreaseStatus`).
///
/// Unknown values decode and are kept as they came; see ``AppleEnum``.
public struct PriceIncreaseStatus: AppleEnum {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let customerHasNotResponded = Self(rawValue: 0)
    public static let customerConsentedOrWasNotifiedWithoutNeedingConsent = Self(rawValue: 1)

    public static let known: [Self] = [.customerHasNotResponded, .customerConsentedOrWasNotifiedWithoutNeedingConsent]
}
