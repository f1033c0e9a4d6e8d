/// The platform on which the customer first bought the app (`originalPlatform`).
///
/// Unknown values decode and are kept as they came; see ``AppleEnum``.
public struct PurchasePlatform: AppleEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let iOS = Self(rawValue: "iOS")
    public static let macOS = Self(rawValue: "macOS")
    public static let tvOS = Self(rawValue: "tvOS")
    public static let visionOS = Self(rawValue: "visionOS")

    public static let known: [Self] = [.iOS, .macOS, .tvOS, .visionOS]
}
