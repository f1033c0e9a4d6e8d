import struct Foundation.UUID

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

extension JWSTransactionDecodedPayload {
    enum CodingKeys: String, CodingKey {
        case originalTransactionId
        case transactionId
        case webOrderLineItemId
        case bundleId
        case productId
        case subscriptionGroupIdentifier
        case purchaseDate
        case originalPurchaseDate
        case expiresDate
        case quantity
        case type
        case appAccountToken
        case inAppOwnershipType
        case signedDate
        case revocationReason
        case revocationDate
        case isUpgraded
        case offerType
        case offerIdentifier
        case environment
        case storefront
        case storefrontId
        case transactionReason
        case price
        case currency
        case offerDiscountType
        case appTransactionId
        case offerPeriod
        case revocationType
        case revocationPercentage
        case advancedCommerceInfo
        case billingPlanType
        case commitmentInfo
        case deviceVerification
        case deviceVerificationNonce
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        originalTransactionId = try container.decodeIfPresent(String.self, forKey: .originalTransactionId)
        transactionId = try container.decodeIfPresent(String.self, forKey: .transactionId)
        webOrderLineItemId = try container.decodeIfPresent(String.self, forKey: .webOrderLineItemId)
        bundleId = try container.decodeIfPresent(String.self, forKey: .bundleId)
        productId = try container.decodeIfPresent(String.self, forKey: .productId)
        subscriptionGroupIdentifier = try container.decodeIfPresent(String.self, forKey: .subscriptionGroupIdentifier)
        purchaseDate = try container.timestamp(.purchaseDate)
        originalPurchaseDate = try container.timestamp(.originalPurchaseDate)
        expiresDate = try container.timestamp(.expiresDate)
        quantity = try container.decodeIfPresent(Int32.self, forKey: .quantity)
        type = try container.apple(.type)
        appAccountToken = try container.decodeIfPresent(String.self, forKey: .appAccountToken)
        inAppOwnershipType = try container.apple(.inAppOwnershipType)
        signedDate = try container.timestamp(.signedDate)
        revocationReason = try container.apple(.revocationReason)
        revocationDate = try container.timestamp(.revocationDate)
        isUpgraded = try container.decodeIfPresent(Bool.self, forKey: .isUpgraded)
        offerType = try container.apple(.offerType)
        offerIdentifier = try container.decodeIfPresent(String.self, forKey: .offerIdentifier)
        environment = try container.apple(.environment)
        storefront = try container.decodeIfPresent(String.self, forKey: .storefront)
        storefrontId = try container.decodeIfPresent(String.self, forKey: .storefrontId)
        transactionReason = try container.apple(.transactionReason)
        price = try container.decodeIfPresent(Int64.self, forKey: .price)
        currency = try container.decodeIfPresent(String.self, forKey: .currency)
        offerDiscountType = try container.apple(.offerDiscountType)
        appTransactionId = try container.decodeIfPresent(String.self, forKey: .appTransactionId)
        offerPeriod = try container.decodeIfPresent(String.self, forKey: .offerPeriod)
        revocationType = try container.apple(.revocationType)
        revocationPercentage = try container.decodeIfPresent(Int32.self, forKey: .revocationPercentage)
        advancedCommerceInfo = try container.decodeIfPresent(AdvancedCommerceTransactionInfo.self, forKey: .advancedCommerceInfo)
        billingPlanType = try container.decodeIfPresent(String.self, forKey: .billingPlanType)
        commitmentInfo = try container.decodeIfPresent(CommitmentInfo.self, forKey: .commitmentInfo)
        deviceVerification = try container.decodeIfPresent(String.self, forKey: .deviceVerification)
        deviceVerificationNonce = try container.decodeIfPresent(String.self, forKey: .deviceVerificationNonce)
    }
}
