/// The app a notification is about, with its signed app transaction (Apple's `appData` object).
public struct AppData: Codable, Hashable, Sendable {
    public var appAppleId: Int64?
    public var bundleId: String?
    public var environment: Environment?
    /// A JWS of ``AppTransaction``.
    public var signedAppTransactionInfo: String?

    public init() {}
}
