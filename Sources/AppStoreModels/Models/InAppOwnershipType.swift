/// Whether the customer bought the product or has it through Family Sharing.
///
/// Unknown values decode and are kept as they came; see ``AppleEnum``.
public struct InAppOwnershipType: AppleEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let purchased = Self(rawValue: "PURCHASED")
    public static let familyShared = Self(rawValue: "FAMILY_SHARED")

    public static let known: [Self] = [.purchased, .familyShared]
}
