/// Why the customer asked for a refund (`consumptionRequestReason`).
///
/// Unknown values decode and are kept as they came; see ``AppleEnum``.
public struct ConsumptionRequestReason: AppleEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let unintendedPurchase = Self(rawValue: "UNINTENDED_PURCHASE")
    public static let fulfillmentIssue = Self(rawValue: "FULFILLMENT_ISSUE")
    public static let unsatisfiedWithPurchase = Self(rawValue: "UNSATISFIED_WITH_PURCHASE")
    public static let legal = Self(rawValue: "LEGAL")
    public static let other = Self(rawValue: "OTHER")

    public static let known: [Self] = [.unintendedPurchase, .fulfillmentIssue, .unsatisfiedWithPurchase, .legal, .other]
}
