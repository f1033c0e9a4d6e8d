/// How a transaction was revoked (`revocationType`).
///
/// Unknown values decode and are kept as they came; see ``AppleEnum``.
public struct RevocationType: AppleEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let refundFull = Self(rawValue: "REFUND_FULL")
    public static let refundProrated = Self(rawValue: "REFUND_PRORATED")
    public static let familyRevoke = Self(rawValue: "FAMILY_REVOKE")

    public static let known: [Self] = [.refundFull, .refundProrated, .familyRevoke]
}
