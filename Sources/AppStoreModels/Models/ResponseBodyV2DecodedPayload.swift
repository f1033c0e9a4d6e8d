/// An App Store Server Notification V2 as Apple signs it (`ResponseBodyV2DecodedPayload`).
///
/// Exactly one of `data`, `summary`, `externalPurchaseToken` and `appData` is present, depending on the type.
public struct ResponseBodyV2DecodedPayload: Codable, Hashable, Sendable {
    public var notificationType: NotificationType?
    public var subtype: NotificationSubtype?
    public var notificationUUID: String?
    public var data: NotificationData?
    public var version: String?
    public var signedDate: Timestamp?
    public var summary: NotificationSummary?
    public var externalPurchaseToken: ExternalPurchaseToken?
    public var appData: AppData?

    public init() {}
}

extension ResponseBodyV2DecodedPayload {
    enum CodingKeys: String, CodingKey {
        case notificationType
        case subtype
        case notificationUUID
        case data
        case version
        case signedDate
        case summary
        case externalPurchaseToken
        case appData
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        notificationType = try container.apple(.notificationType)
        subtype = try container.apple(.subtype)
        notificationUUID = try container.decodeIfPresent(String.self, forKey: .notificationUUID)
        data = try container.decodeIfPresent(NotificationData.self, forKey: .data)
        version = try container.decodeIfPresent(String.self, forKey: .version)
        signedDate = try container.timestamp(.signedDate)
        summary = try container.decodeIfPresent(NotificationSummary.self, forKey: .summary)
        externalPurchaseToken = try container.decodeIfPresent(ExternalPurchaseToken.self, forKey: .externalPurchaseToken)
        appData = try container.decodeIfPresent(AppData.self, forKey: .appData)
    }
}
