/// Why Apple refunded or revoked a transaction (`revocationReason`).
///
/// Unknown values decode and are kept as they came; see ``AppleEnum``.
public struct RevocationReason: AppleEnum {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let other = Self(rawValue: 0)
    public static let appIssue = Self(rawValue: 1)

    public static let known: [Self] = [.other, .appIssue]
}
