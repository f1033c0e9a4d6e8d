/// The status of an auto-renewable subscription (`status`).
///
/// Unknown values decode and are kept as they came; see ``AppleEnum``.
public struct SubscriptionStatus: AppleEnum {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static let active = Self(rawValue: 1)
    public static let expired = Self(rawValue: 2)
    public static let billingRetry = Self(rawValue: 3)
    public static let billingGracePeriod = Self(rawValue: 4)
    public static let revoked = Self(rawValue: 5)

    public static let known: [Self] = [.active, .expired, .billingRetry, .billingGracePeriod, .revoked]
}
