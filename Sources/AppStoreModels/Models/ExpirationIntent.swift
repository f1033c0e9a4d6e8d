/// Why a subscription expired (`expirationIntent`).
///
/// Unknown values decode and are kept as they came; see ``AppleEnum``.
public struct ExpirationIntent: AppleEnum {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let customerCancelled = Self(rawValue: 1)
    public static let billingError = Self(rawValue: 2)
    public static let customerDidNotConsentToPriceIncrease = Self(rawValue: 3)
    public static let productNotAvailable = Self(rawValue: 4)
    public static let other = Self(rawValue: 5)

    public static let known: [Self] = [
        .customerCancelled, .billingError, .customerDidNotConsentToPriceIncrease, .productNotAvailable, .other,
    ]
}
