/// The result of a renewal-date extension for all subscribers (Apple's `summary` object).
public struct NotificationSummary: Codable, Hashable, Sendable {
    public var environment: Environment?
    public var appAppleId: Int64?
    public var bundleId: String?
    public var productId: String?
    public var requestIdentifier: String?
    public var storefrontCountryCodes: [String]?
    public var succeededCount: Int64?
    public var failedCount: Int64?

    public init() {}
}
