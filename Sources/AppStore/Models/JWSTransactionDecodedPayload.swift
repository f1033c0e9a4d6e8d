/// A transaction as the App Store signs it (`JWSTransactionDecodedPayload`).
///
/// Field names are Apple's. Instants are ``Timestamp``s (epoch ms); `price` is in milliunits of `currency`.
public struct JWSTransactionDecodedPayload: Codable, Hashable, Sendable {
    public var originalTransactionId: String?
    public var transactionId: String?
    public var webOrderLineItemId: String?
    public var bundleId: String?
    public var productId: String?
    public var subscriptionGroupIdentifier: String?
    public var purchaseDate: Timestamp?
    public var originalPurchaseDate: Timestamp?
    public var expiresDate: Timestamp?
    public var quantity: Int32?
    public var type: ProductType?
    /// A UUID the app set at purchase time; kept as sent, see ``appAccountTokenUUID``.
    public var appAccountToken: String?
    public var inAppOwnershipType: InAppOwnershipType?
    public var signedDate: Timestamp?
    public var revocationReason: RevocationReason?
    public var revocationDate: Timestamp?
    public var isUpgraded: Bool?
    public var offerType: OfferType?
    public var offerIdentifier: String?
    public var environment: Environment?
    public var storefront: String?
    public var storefrontId: String?
    public var transactionReason: TransactionReason?
    public var price: Int64?
    public var currency: String?
    public var offerDiscountType: OfferDiscountType?
    public var appTransactionId: String?
    /// The ISO 8601 duration of the offer, such as `P1M`.
    public var offerPeriod: String?
    public var revocationType: RevocationType?
    /// The refunded share in milli-percent (`50000` is 50%).
    public var revocationPercentage: Int32?
    public var advancedCommerceInfo: AdvancedCommerceTransactionInfo?
    public var billingPlanType: String?
    public var commitmentInfo: CommitmentInfo?
    /// Present in data signed for a device (StoreKit on the device, Xcode).
    public var deviceVerification: String?
    public var deviceVerificationNonce: String?

    public init() {}
}

extension JWSTransactionDecodedPayload {
    /// `appAccountToken` as a UUID, when it is one.
    public var appAccountTokenUUID: UUID? { appAccountToken.flatMap(UUID.init(uuidString:)) }
}

import struct Foundation.UUID
