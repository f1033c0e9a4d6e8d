/// The kind of subscription offer applied (`offerType`).
///
/// Unknown values decode and are kept as they came; see ``AppleEnum``.
public struct OfferType: AppleEnum {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let introductoryOffer = Self(rawValue: 1)
    public static let promotionalOffer = Self(rawValue: 2)
    public static let offerCode = Self(rawValue: 3)
    public static let winBackOffer = Self(rawValue: 4)

    public static let known: [Self] = [.introductoryOffer, .promotionalOffer, .offerCode, .winBackOffer]
}
