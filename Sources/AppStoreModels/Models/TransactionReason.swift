/// Why a transaction happened: a purchase by the customer or an automatic renewal.
///
/// Unknown values decode and are kept as they came; see ``AppleEnum``.
public struct TransactionReason: AppleEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let purchase = Self(rawValue: "PURCHASE")
    public static let renewal = Self(rawValue: "RENEWAL")

    public static let known: [Self] = [.purchase, .renewal]
}
