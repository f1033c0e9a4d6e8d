import Foundation

/// An app receipt: the payload of the PKCS#7 blob, or verifyReceipt's `receipt` object. JSON uses verifyReceipt's
/// names and its strings for numbers and instants.
public struct AppReceipt: Codable, Hashable, Sendable {
    /// `Production`, `ProductionSandbox` or `Xcode` (field 0; verifyReceipt's `receipt_type`).
    public var receiptType: String?
    /// The app's Apple ID, 0 outside production (field 1; `app_item_id`).
    public var appItemId: Int64?
    public var bundleId: String?
    public var applicationVersion: String?
    public var originalApplicationVersion: String?
    public var receiptCreationDate: Timestamp?
    public var expirationDate: Timestamp?
    public var originalPurchaseDate: Timestamp?
    /// verifyReceipt only.
    public var requestDate: Timestamp?
    public var versionExternalIdentifier: Int64?
    /// Field 4, the opaque value that goes into the device hash. Local receipts only.
    public var opaqueValue: [UInt8]?
    /// Field 5, SHA-1 of (device identifier ‖ opaque value ‖ bundle id field). Local receipts only.
    public var sha1Hash: [UInt8]?
    /// Field 2's raw DER (a UTF8String), which goes into the device hash. Not encoded.
    public var bundleIdDER: [UInt8]?
    public var inApp: [InAppPurchaseReceipt]

    public init() {
        inApp = []
    }

    /// The environment named by `receiptType`.
    public var environment: Environment? {
        switch receiptType {
        case "Production", "ProductionVPP": .production
        case "ProductionSandbox", "ProductionVPPSandbox", "Sandbox": .sandbox
        case "Xcode": .xcode
        default: nil
        }
    }

    enum CodingKeys: String, CodingKey {
        case receiptType = "receipt_type"
        case appItemId = "app_item_id"
        case bundleId = "bundle_id"
        case applicationVersion = "application_version"
        case originalApplicationVersion = "original_application_version"
        case receiptCreationDate = "receipt_creation_date_ms"
        case expirationDate = "expiration_date_ms"
        case originalPurchaseDate = "original_purchase_date_ms"
        case requestDate = "request_date_ms"
        case versionExternalIdentifier = "version_external_identifier"
        case opaqueValue = "opaque_value"
        case sha1Hash = "sha1_hash"
        case inApp = "in_app"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        receiptType = try c.appleString(.receiptType)
        appItemId = try c.appleInt(.appItemId)
        bundleId = try c.appleString(.bundleId)
        applicationVersion = try c.appleString(.applicationVersion)
        originalApplicationVersion = try c.appleString(.originalApplicationVersion)
        receiptCreationDate = try c.appleMilliseconds(.receiptCreationDate)
        expirationDate = try c.appleMilliseconds(.expirationDate)
        originalPurchaseDate = try c.appleMilliseconds(.originalPurchaseDate)
        requestDate = try c.appleMilliseconds(.requestDate)
        versionExternalIdentifier = try c.appleInt(.versionExternalIdentifier)
        opaqueValue = try c.appleString(.opaqueValue).flatMap { Data(base64Encoded: $0) }.map(Array.init)
        sha1Hash = try c.appleString(.sha1Hash).flatMap { Data(base64Encoded: $0) }.map(Array.init)
        inApp = try c.decodeIfPresent([InAppPurchaseReceipt].self, forKey: .inApp) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(receiptType, forKey: .receiptType)
        try c.encodeAppleString(appItemId, forKey: .appItemId)
        try c.encodeIfPresent(bundleId, forKey: .bundleId)
        try c.encodeIfPresent(applicationVersion, forKey: .applicationVersion)
        try c.encodeIfPresent(originalApplicationVersion, forKey: .originalApplicationVersion)
        try c.encodeAppleMilliseconds(receiptCreationDate, forKey: .receiptCreationDate)
        try c.encodeAppleMilliseconds(expirationDate, forKey: .expirationDate)
        try c.encodeAppleMilliseconds(originalPurchaseDate, forKey: .originalPurchaseDate)
        try c.encodeAppleMilliseconds(requestDate, forKey: .requestDate)
        try c.encodeAppleString(versionExternalIdentifier, forKey: .versionExternalIdentifier)
        try c.encodeIfPresent(opaqueValue.map { Data($0).base64EncodedString() }, forKey: .opaqueValue)
        try c.encodeIfPresent(sha1Hash.map { Data($0).base64EncodedString() }, forKey: .sha1Hash)
        try c.encode(inApp, forKey: .inApp)
    }
}
