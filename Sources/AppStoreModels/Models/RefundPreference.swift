/// What the developer would like Apple to decide about a customer's refund request (`refundPreference`), sent with
/// Send Consumption Information.
///
/// Unknown values decode and are kept as they came; see ``AppleEnum``.
public struct RefundPreference: AppleEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let decline = Self(rawValue: "DECLINE")
    public static let grantFull = Self(rawValue: "GRANT_FULL")
    public static let grantProrated = Self(rawValue: "GRANT_PRORATED")

    public static let known: [Self] = [.decline, .grantFull, .grantProrated]
}
