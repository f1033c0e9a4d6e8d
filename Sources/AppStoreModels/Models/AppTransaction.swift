/// The signed record of the customer's purchase of the app itself (`AppTransaction`).
public struct AppTransaction: Codable, Hashable, Sendable {
    /// The environment, under Apple's name for it here.
    public var receiptType: Environment?
    public var appAppleId: Int64?
    public var bundleId: String?
    public var applicationVersion: String?
    public var versionExternalIdentifier: Int64?
    public var receiptCreationDate: Timestamp?
    public var originalPurchaseDate: Timestamp?
    public var originalApplicationVersion: String?
    public var deviceVerification: String?
    public var deviceVerificationNonce: String?
    public var preorderDate: Timestamp?
    public var appTransactionId: String?
    public var originalPlatform: PurchasePlatform?
    public var signedDate: Timestamp?
    public var requestDate: Timestamp?

    public init() {}
}
