/// The payment mode of an offer (`offerDiscountType`).
///
/// Unknown values decode and are kept as they came; see ``AppleEnum``.
public struct OfferDiscountType: AppleEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let freeTrial = Self(rawValue: "FREE_TRIAL")
    public static let payAsYouGo = Self(rawValue: "PAY_AS_YOU_GO")
    public static let payUpFront = Self(rawValue: "PAY_UP_FRONT")
    public static let oneTime = Self(rawValue: "ONE_TIME")

    public static let known: [Self] = [.freeTrial, .payAsYouGo, .payUpFront, .oneTime]
}
