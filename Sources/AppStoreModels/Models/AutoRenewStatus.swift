/// Whether a subscription will renew (`autoRenewStatus`).
///
/// Unknown values decode and are kept as they came; see ``AppleEnum``.
public struct AutoRenewStatus: AppleEnum {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let off = Self(rawValue: 0)
    public static let on = Self(rawValue: 1)

    public static let known: [Self] = [.off, .on]
}
