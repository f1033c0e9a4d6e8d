import AppStoreModels

/// One thing known about a customer, exactly as the App Store signed it.
///
/// Facts come in any order and possibly more than once: the engine's result depends only on the set.
public enum Fact: Hashable, Sendable, Codable {
    case transaction(JWSTransactionDecodedPayload)
    case renewalInfo(JWSRenewalInfoDecodedPayload)
    case notification(NotificationFact)

    enum CodingKeys: String, CodingKey { case transaction, renewalInfo, notification }

    /// Reads `{"transaction": {…}}`, `{"renewalInfo": {…}}` or `{"notification": {…}}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard container.allKeys.count == 1, let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [],
                    debugDescription: "a fact is an object with exactly one key: transaction, renewalInfo or notification"))
        }
        switch key {
        case .transaction: self = .transaction(try container.decode(JWSTransactionDecodedPayload.self, forKey: key))
        case .renewalInfo: self = .renewalInfo(try container.decode(JWSRenewalInfoDecodedPayload.self, forKey: key))
        case .notification: self = .notification(try container.decode(NotificationFact.self, forKey: key))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .transaction(let value): try container.encode(value, forKey: .transaction)
        case .renewalInfo(let value): try container.encode(value, forKey: .renewalInfo)
        case .notification(let value): try container.encode(value, forKey: .notification)
        }
    }

    /// The facts a verified App Store Server Notification carries: the notification itself, its transaction and its
    /// renewal info.
    public static func facts(of notification: VerifiedNotification) -> [Fact] {
        var facts: [Fact] = []
        if let summary = NotificationFact(notification) { facts.append(.notification(summary)) }
        if let transaction = notification.transactionInfo { facts.append(.transaction(transaction)) }
        if let renewal = notification.renewalInfo { facts.append(.renewalInfo(renewal)) }
        return facts
    }

    /// The transactions of a verified app receipt, one fact per in-app entry. See
    /// ``AppStore/JWSTransactionDecodedPayload/init(receiptEntry:receipt:)``.
    public static func facts(of receipt: AppReceipt) -> [Fact] {
        receipt.inApp.map { .transaction(JWSTransactionDecodedPayload(receiptEntry: $0, receipt: receipt)) }
    }
}

/// What the engine keeps of an App Store Server Notification V2: Apple's field names, plus the transaction it is about
/// (taken from its `signedTransactionInfo`).
public struct NotificationFact: Codable, Hashable, Sendable {
    public var notificationType: NotificationType
    public var subtype: NotificationSubtype?
    public var notificationUUID: String
    public var signedDate: Timestamp
    public var originalTransactionId: String?
    public var transactionId: String?
    public var productId: String?
    public var environment: Environment?
    /// The customer's app transaction (`appData.signedAppTransactionInfo`), for a notification about the customer
    /// rather than a purchase (`RESCIND_CONSENT`).
    public var appTransactionId: String?

    public init(
        notificationType: NotificationType, subtype: NotificationSubtype? = nil, notificationUUID: String,
        signedDate: Timestamp, originalTransactionId: String? = nil, transactionId: String? = nil,
        productId: String? = nil, environment: Environment? = nil, appTransactionId: String? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.signedDate = signedDate
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
        self.productId = productId
        self.environment = environment
        self.appTransactionId = appTransactionId
    }

    /// The summary of a verified notification; `nil` when it lacks a type, a UUID or a signing date.
    public init?(_ notification: VerifiedNotification) {
        let payload = notification.payload
        guard let type = payload.notificationType, let uuid = payload.notificationUUID, let signedDate = payload.signedDate
        else { return nil }
        let transaction = notification.transactionInfo
        self.init(
            notificationType: type, subtype: payload.subtype, notificationUUID: uuid, signedDate: signedDate,
            originalTransactionId: transaction?.originalTransactionId ?? notification.renewalInfo?.originalTransactionId,
            transactionId: transaction?.transactionId,
            productId: transaction?.productId ?? notification.renewalInfo?.productId,
            environment: payload.data?.environment ?? payload.summary?.environment ?? payload.appData?.environment
                ?? transaction?.environment,
            appTransactionId: notification.appTransactionInfo?.appTransactionId)
    }
}

extension JWSTransactionDecodedPayload {
    /// A legacy receipt's in-app entry as a transaction fact.
    ///
    /// `cancellation_date` becomes the revocation (with `cancellation_reason` 1 as an app issue), the trial and
    /// introductory flags, the promotional offer id and the offer code become Apple's `offerType`, and the receipt's
    /// creation date stands in for `signedDate`: it is when the App Store vouched for the entry. Fields a receipt does
    /// not carry (price, storefront, `type`, `transactionReason`) stay empty; when the same purchase also arrives as a
    /// signed transaction, the engine fills them from it.
    public init(receiptEntry entry: InAppPurchaseReceipt, receipt: AppReceipt? = nil) {
        self.init()
        transactionId = entry.transactionId
        originalTransactionId = entry.originalTransactionId ?? entry.transactionId
        webOrderLineItemId = entry.webOrderLineItemId
        bundleId = receipt?.bundleId
        productId = entry.productId
        subscriptionGroupIdentifier = entry.subscriptionGroupIdentifier
        purchaseDate = entry.purchaseDate
        originalPurchaseDate = entry.originalPurchaseDate
        expiresDate = entry.expiresDate
        quantity = entry.quantity.map { Int32(clamping: $0) }
        appAccountToken = entry.appAccountToken
        inAppOwnershipType = entry.inAppOwnershipType
        signedDate = receipt?.receiptCreationDate
        environment = receipt?.environment
        isUpgraded = entry.isUpgraded
        if let cancellation = entry.cancellationDate {
            revocationDate = cancellation
            revocationReason = entry.cancellationReason == "1" ? .appIssue : .other
        }
        if entry.isTrialPeriod == true {
            offerType = .introductoryOffer
            offerDiscountType = .freeTrial
        } else if entry.isInIntroOfferPeriod == true {
            offerType = .introductoryOffer
        } else if let promotional = entry.promotionalOfferId, !promotional.isEmpty {
            offerType = .promotionalOffer
            offerIdentifier = promotional
        } else if let code = entry.offerCodeRefName, !code.isEmpty {
            offerType = .offerCode
            offerIdentifier = code
        }
    }
}
