/// An external purchase token (Apple's `externalPurchaseToken` object).
public struct ExternalPurchaseToken: Codable, Hashable, Sendable {
    public var externalPurchaseId: String?
    public var tokenCreationDate: Timestamp?
    public var appAppleId: Int64?
    public var bundleId: String?

    public init() {}

    /// Apple marks sandbox tokens with a `SANDBOX` prefix on the id; this token carries no other environment field.
    public var environment: Environment {
        (externalPurchaseId?.hasPrefix("SANDBOX") ?? false) ? .sandbox : .production
    }
}
