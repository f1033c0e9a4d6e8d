/// One in-app purchase in an app receipt (ASN.1 fields 1701–1722), or in verifyReceipt's `in_app` and
/// `latest_receipt_info`. JSON uses verifyReceipt's names and its strings for numbers, booleans and instants.
public struct InAppPurchaseReceipt: Codable, Hashable, Sendable {
    public var quantity: Int64?
    public var productId: String?
    public var transactionId: String?
    public var originalTransactionId: String?
    public var purchaseDate: Timestamp?
    public var originalPurchaseDate: Timestamp?
    public var expiresDate: Timestamp?
    public var webOrderLineItemId: String?
    /// Set when Apple refunded or revoked the purchase. It wins over `expiresDate`, which a refund leaves unchanged.
    public var cancellationDate: Timestamp?
    /// `"1"`: the customer cancelled because of an issue in the app; `"0"`: another reason. verifyReceipt only.
    public var cancellationReason: String?
    public var isTrialPeriod: Bool?
    public var isInIntroOfferPeriod: Bool?
    public var promotionalOfferId: String?
    /// The remaining fields come from verifyReceipt only.
    public var offerCodeRefName: String?
    public var subscriptionGroupIdentifier: String?
    public var inAppOwnershipType: InAppOwnershipType?
    public var isUpgraded: Bool?
    public var appAccountToken: String?

    public init() {}

    enum CodingKeys: String, CodingKey {
        case quantity
        case productId = "product_id"
        case transactionId = "transaction_id"
        case originalTransactionId = "original_transaction_id"
        case purchaseDate = "purchase_date_ms"
        case originalPurchaseDate = "original_purchase_date_ms"
        case expiresDate = "expires_date_ms"
        case webOrderLineItemId = "web_order_line_item_id"
        case cancellationDate = "cancellation_date_ms"
        case cancellationReason = "cancellation_reason"
        case isTrialPeriod = "is_trial_period"
        case isInIntroOfferPeriod = "is_in_intro_offer_period"
        case promotionalOfferId = "promotional_offer_id"
        case offerCodeRefName = "offer_code_ref_name"
        case subscriptionGroupIdentifier = "subscription_group_identifier"
        case inAppOwnershipType = "in_app_ownership_type"
        case isUpgraded = "is_upgraded"
        case appAccountToken = "app_account_token"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        quantity = try c.appleInt(.quantity)
        productId = try c.appleString(.productId)
        transactionId = try c.appleString(.transactionId)
        originalTransactionId = try c.appleString(.originalTransactionId)
        purchaseDate = try c.appleMilliseconds(.purchaseDate)
        originalPurchaseDate = try c.appleMilliseconds(.originalPurchaseDate)
        expiresDate = try c.appleMilliseconds(.expiresDate)
        webOrderLineItemId = try c.appleString(.webOrderLineItemId)
        cancellationDate = try c.appleMilliseconds(.cancellationDate)
        cancellationReason = try c.appleString(.cancellationReason)
        isTrialPeriod = try c.appleBool(.isTrialPeriod)
        isInIntroOfferPeriod = try c.appleBool(.isInIntroOfferPeriod)
        promotionalOfferId = try c.appleString(.promotionalOfferId)
        offerCodeRefName = try c.appleString(.offerCodeRefName)
        subscriptionGroupIdentifier = try c.appleString(.subscriptionGroupIdentifier)
        inAppOwnershipType = try c.appleString(.inAppOwnershipType).map(InAppOwnershipType.init(rawValue:))
        isUpgraded = try c.appleBool(.isUpgraded)
        appAccountToken = try c.appleString(.appAccountToken)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeAppleString(quantity, forKey: .quantity)
        try c.encodeIfPresent(productId, forKey: .productId)
        try c.encodeIfPresent(transactionId, forKey: .transactionId)
        try c.encodeIfPresent(originalTransactionId, forKey: .originalTransactionId)
        try c.encodeAppleMilliseconds(purchaseDate, forKey: .purchaseDate)
        try c.encodeAppleMilliseconds(originalPurchaseDate, forKey: .originalPurchaseDate)
        try c.encodeAppleMilliseconds(expiresDate, forKey: .expiresDate)
        try c.encodeIfPresent(webOrderLineItemId, forKey: .webOrderLineItemId)
        try c.encodeAppleMilliseconds(cancellationDate, forKey: .cancellationDate)
        try c.encodeIfPresent(cancellationReason, forKey: .cancellationReason)
        try c.encodeAppleString(isTrialPeriod, forKey: .isTrialPeriod)
        try c.encodeAppleString(isInIntroOfferPeriod, forKey: .isInIntroOfferPeriod)
        try c.encodeIfPresent(promotionalOfferId, forKey: .promotionalOfferId)
        try c.encodeIfPresent(offerCodeRefName, forKey: .offerCodeRefName)
        try c.encodeIfPresent(subscriptionGroupIdentifier, forKey: .subscriptionGroupIdentifier)
        try c.encodeIfPresent(inAppOwnershipType?.rawValue, forKey: .inAppOwnershipType)
        try c.encodeAppleString(isUpgraded, forKey: .isUpgraded)
        try c.encodeIfPresent(appAccountToken, forKey: .appAccountToken)
    }
}
