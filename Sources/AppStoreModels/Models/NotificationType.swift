/// The type of an App Store Server Notification V2 (`notificationType`).
///
/// Unknown values decode and are kept as they came; see ``AppleEnum``.
public struct NotificationType: AppleEnum {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let consumptionRequest = Self(rawValue: "CONSUMPTION_REQUEST")
    public static let didChangeRenewalPref = Self(rawValue: "DID_CHANGE_RENEWAL_PREF")
    public static let didChangeRenewalStatus = Self(rawValue: "DID_CHANGE_RENEWAL_STATUS")
    public static let didFailToRenew = Self(rawValue: "DID_FAIL_TO_RENEW")
    public static let didRenew = Self(rawValue: "DID_RENEW")
    public static let expired = Self(rawValue: "EXPIRED")
    public static let externalPurchaseToken = Self(rawValue: "EXTERNAL_PURCHASE_TOKEN")
    public static let gracePeriodExpired = Self(rawValue: "GRACE_PERIOD_EXPIRED")
    public static let metadataUpdate = Self(rawValue: "METADATA_UPDATE")
    public static let migration = Self(rawValue: "MIGRATION")
    public static let offerRedeemed = Self(rawValue: "OFFER_REDEEMED")
    public static let oneTimeCharge = Self(rawValue: "ONE_TIME_CHARGE")
    public static let priceChange = Self(rawValue: "PRICE_CHANGE")
    public static let priceIncrease = Self(rawValue: "PRICE_INCREASE")
    public static let refund = Self(rawValue: "REFUND")
    public static let refundDeclined = Self(rawValue: "REFUND_DECLINED")
    public static let refundReversed = Self(rawValue: "REFUND_REVERSED")
    public static let renewalExtended = Self(rawValue: "RENEWAL_EXTENDED")
    public static let renewalExtension = Self(rawValue: "RENEWAL_EXTENSION")
    public static let rescindConsent = Self(rawValue: "RESCIND_CONSENT")
    public static let revoke = Self(rawValue: "REVOKE")
    public static let subscribed = Self(rawValue: "SUBSCRIBED")
    public static let test = Self(rawValue: "TEST")

    public static let known: [Self] = [
        .consumptionRequest, .didChangeRenewalPref, .didChangeRenewalStatus, .didFailToRenew, .didRenew, .expired, .externalPurchaseToken,
        .gracePeriodExpired, .metadataUpdate, .migration, .offerRedeemed, .oneTimeCharge, .priceChange, .priceIncrease, .refund,
        .refundDeclined, .refundReversed, .renewalExtended, .renewalExtension, .rescindConsent, .revoke, .subscribed, .test,
    ]
}
