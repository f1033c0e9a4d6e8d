import Analytics
import Entitlements
import StorekeeperCore

/// `PATCH /v1/apps/{appId}`: every field is optional; those present replace the stored ones. Secrets can be set or,
/// with null, removed; the other fields are not null. The bundle id cannot change, and an unknown field is refused
/// rather than ignored.
struct AppPatch: Decodable {
    var appAppleId: Int64??
    var environments: [String]?
    var trustedRoots: [String]??
    var sharedSecret: String??
    var serverAPI: AppConfiguration.ServerAPICredentials??
    var verifyReceiptURLs: [String]??
    var catalog: Catalog?
    var transferPolicy: AppConfiguration.TransferPolicy?
    var proceeds: ProceedsSettings??
    var offerSigningKey: AppConfiguration.OfferSigningKey??

    enum CodingKeys: String, CodingKey, CaseIterable {
        case appAppleId, environments, trustedRoots, sharedSecret, serverAPI, verifyReceiptURLs, catalog, transferPolicy, bundleId
        case proceeds, offerSigningKey
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if c.contains(.bundleId) {
            throw CoreError.invalidInput(field: "bundleId", "bundleId cannot change: create another app for another bundle id")
        }
        try StrictBody.refuseUnknown(decoder, CodingKeys.self, what: "an app's configuration")
        try StrictBody.refuseUnknown(
            in: c, at: .offerSigningKey, AppConfiguration.OfferSigningKey.CodingKeys.self, what: "an offer signing key")
        try StrictBody.refuseUnknown(in: c, at: .proceeds, ProceedsSettings.CodingKeys.self, what: "the proceeds settings")
        try StrictBody.refuseUnknown(
            in: c, at: .serverAPI, AppConfiguration.ServerAPICredentials.CodingKeys.self, what: "the Server API credentials")
        func nullable<T: Decodable>(_ key: CodingKeys) throws -> T?? {
            guard c.contains(key) else { return nil }
            return .some(try c.decodeNil(forKey: key) ? nil : try c.decode(T.self, forKey: key))
        }
        appAppleId = try nullable(.appAppleId)
        environments = try c.decodeUnlessAbsent([String].self, forKey: .environments)
        trustedRoots = try nullable(.trustedRoots)
        sharedSecret = try nullable(.sharedSecret)
        serverAPI = try nullable(.serverAPI)
        verifyReceiptURLs = try nullable(.verifyReceiptURLs)
        catalog = try c.decodeUnlessAbsent(WrittenCatalog.self, forKey: .catalog)?.catalog
        transferPolicy = try c.decodeUnlessAbsent(AppConfiguration.TransferPolicy.self, forKey: .transferPolicy)
        proceeds = try nullable(.proceeds)
        offerSigningKey = try nullable(.offerSigningKey)
    }

    func applied(to config: AppConfiguration) -> AppConfiguration {
        var config = config
        if let appAppleId { config.appAppleId = appAppleId }
        if let environments { config.environments = AppConfiguration.spelled(environments) }
        if let trustedRoots { config.trustedRoots = trustedRoots }
        if let sharedSecret { config.sharedSecret = sharedSecret }
        if let serverAPI { config.serverAPI = serverAPI }
        if let verifyReceiptURLs { config.verifyReceiptURLs = verifyReceiptURLs }
        if let catalog { config.catalog = catalog }
        if let transferPolicy { config.transferPolicy = transferPolicy }
        if let proceeds { config.proceeds = proceeds }
        if let offerSigningKey { config.offerSigningKey = offerSigningKey }
        return config
    }
}
