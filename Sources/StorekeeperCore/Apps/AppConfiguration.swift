import Analytics
import AppStore
import Entitlements
import Foundation
import Integrations

/// What an app is configured with, stored as JSON in `apps.config`. Secrets (the verifyReceipt shared secret and the
/// Server API key) live here and never leave the server: ``AppConfiguration/View`` is what the admin API shows.
public struct AppConfiguration: Codable, Sendable, Hashable {
    public enum TransferPolicy: String, Codable, Sendable, Hashable {
        /// An original transaction posted by another customer moves to that customer (the default).
        case transfer
        /// The first owner keeps it; the other customer gets 409.
        case keep
    }

    /// App Store Server API credentials: the issuer id, the key id and the `.p8` private key (PEM).
    public struct ServerAPICredentials: Codable, Sendable, Hashable {
        public var issuerId: String
        public var keyId: String
        public var privateKey: String
        /// Where the API is; Apple's by default (the simulator's fake Server API in tests).
        public var baseURL: String?

        /// Its fields as JSON names them (listed, so that a request body's unknown ones can be refused: a misspelt
        /// `baseURL` would otherwise send the app's calls to Apple instead).
        public enum CodingKeys: String, CodingKey, CaseIterable { case issuerId, keyId, privateKey, baseURL }

        public init(issuerId: String, keyId: String, privateKey: String, baseURL: String? = nil) {
            self.issuerId = issuerId
            self.keyId = keyId
            self.privateKey = privateKey
            self.baseURL = baseURL
        }
    }

    /// The In-App Purchase key that signs promotional offers for the app (StoreKit 1's signature and StoreKit 2's JWS):
    /// its key id, the `.p8` private key (PEM) and the issuer id (StoreKit 2's `iss`; the Server API's when absent).
    public struct OfferSigningKey: Codable, Sendable, Hashable {
        public var keyId: String
        public var privateKey: String
        public var issuerId: String?

        /// Its fields as JSON names them (listed, so that a request body's unknown ones can be refused).
        public enum CodingKeys: String, CodingKey, CaseIterable { case keyId, privateKey, issuerId }

        public init(keyId: String, privateKey: String, issuerId: String? = nil) {
            self.keyId = keyId
            self.privateKey = privateKey
            self.issuerId = issuerId
        }
    }

    public var bundleId: String
    public var appAppleId: Int64?
    /// `Production`, `Sandbox` (and `Xcode`, `LocalTesting`): the first is the default of the customer API.
    public var environments: [String]
    /// DER certificates, base64; Apple's roots when absent.
    public var trustedRoots: [String]?
    public var sharedSecret: String?
    public var serverAPI: ServerAPICredentials?
    /// verifyReceipt's URLs, when not Apple's (tests): production's, then sandbox's.
    public var verifyReceiptURLs: [String]?
    public var catalog: Catalog
    public var transferPolicy: TransferPolicy
    /// The Small Business Program and storefront tax rates, for estimated proceeds.
    public var proceeds: ProceedsSettings?
    public var offerSigningKey: OfferSigningKey?
    /// How Apple's refund requests are answered (`/v1/apps/{appId}/refund-policy`); none: they are only recorded.
    public var refundPolicy: RefundPolicy?
    /// How Apple's Get Retention Message requests are answered (`/v1/apps/{appId}/retention-policy`); none: with
    /// Apple's default message, unless a split test on the placement `cancel` decides.
    public var retentionPolicy: RetentionPolicy?

    public init(
        bundleId: String, appAppleId: Int64? = nil, environments: [String], trustedRoots: [String]? = nil,
        sharedSecret: String? = nil, serverAPI: ServerAPICredentials? = nil, verifyReceiptURLs: [String]? = nil,
        catalog: Catalog, transferPolicy: TransferPolicy = .transfer, proceeds: ProceedsSettings? = nil
    ) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environments = environments
        self.trustedRoots = trustedRoots
        self.sharedSecret = sharedSecret
        self.serverAPI = serverAPI
        self.verifyReceiptURLs = verifyReceiptURLs
        self.catalog = catalog
        self.transferPolicy = transferPolicy
        self.proceeds = proceeds
    }

    enum CodingKeys: String, CodingKey {
        case bundleId, appAppleId, environments, trustedRoots, sharedSecret, serverAPI, verifyReceiptURLs, catalog, transferPolicy
        case proceeds, offerSigningKey, refundPolicy, retentionPolicy
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        bundleId = try c.decode(String.self, forKey: .bundleId)
        appAppleId = try c.decodeIfPresent(Int64.self, forKey: .appAppleId)
        environments = Self.spelled(try c.decode([String].self, forKey: .environments))
        trustedRoots = try c.decodeIfPresent([String].self, forKey: .trustedRoots)
        sharedSecret = try c.decodeIfPresent(String.self, forKey: .sharedSecret)
        serverAPI = try c.decodeIfPresent(ServerAPICredentials.self, forKey: .serverAPI)
        verifyReceiptURLs = try c.decodeIfPresent([String].self, forKey: .verifyReceiptURLs)
        catalog = try c.decodeIfPresent(Catalog.self, forKey: .catalog) ?? Catalog.empty
        transferPolicy = try c.decodeIfPresent(TransferPolicy.self, forKey: .transferPolicy) ?? .transfer
        proceeds = try c.decodeIfPresent(ProceedsSettings.self, forKey: .proceeds)
        offerSigningKey = try c.decodeIfPresent(OfferSigningKey.self, forKey: .offerSigningKey)
        refundPolicy = try c.decodeIfPresent(RefundPolicy.self, forKey: .refundPolicy)
        retentionPolicy = try c.decodeIfPresent(RetentionPolicy.self, forKey: .retentionPolicy)
    }

    /// The key that signs the app's promotional offers, when one is set.
    public func offerSigner() throws(CoreError) -> AppStoreSigningKey? {
        guard let offerSigningKey else { return nil }
        do {
            return try AppStoreSigningKey(
                pem: offerSigningKey.privateKey, keyId: offerSigningKey.keyId,
                issuerId: offerSigningKey.issuerId ?? serverAPI?.issuerId ?? "", bundleId: bundleId)
        } catch {
            throw .invalidInput(field: "offerSigningKey.privateKey", "\(error)")
        }
    }

    /// Environments as given, in any case (`sandbox`), in Apple's spelling (`Sandbox`); a list that names one twice
    /// as written is kept as it is, for `validate` to refuse, and spellings of one environment count once.
    public static func spelled(_ environments: [String]) -> [String] {
        guard Set(environments).count == environments.count else { return environments }
        var seen = Set<String>()
        return environments.map { Environment.known(spelled: $0)?.rawValue ?? $0 }.filter { seen.insert($0).inserted }
    }

    /// The environments, typed.
    public var allowedEnvironments: [Environment] { environments.map(Environment.init(rawValue:)) }

    /// The trusted roots as DER.
    public func rootCertificates() throws(CoreError) -> [[UInt8]] {
        guard let trustedRoots else { return AppleRootCertificates.storeKit }
        return try trustedRoots.enumerated().map { index, text throws(CoreError) in
            guard let der = Data(base64Encoded: text) else {
                throw .invalidInput(field: "trustedRoots[\(index)]", "is not base64")
            }
            return Array(der)
        }
    }

    /// Checks what can be checked without Apple: known environments, an appAppleId for production, parseable roots,
    /// a usable Server API key.
    public func validate() throws(CoreError) {
        guard !bundleId.isEmpty else { throw .invalidInput(field: "bundleId", "is empty") }
        guard !environments.isEmpty else { throw .invalidInput(field: "environments", "is empty: allow Production, Sandbox or both") }
        guard Set(environments).count == environments.count else {
            throw .invalidInput(field: "environments", "names an environment twice")
        }
        for environment in environments where !Environment.known.map(\.rawValue).contains(environment) {
            throw .invalidInput(
                field: "environments", "unknown environment '\(environment)': use Production, Sandbox, Xcode or LocalTesting")
        }
        if let appAppleId, appAppleId < 1 {
            throw .invalidInput(field: "appAppleId", "an appAppleId is Apple's positive id of the app, not \(appAppleId)")
        }
        if environments.contains(Environment.production.rawValue), appAppleId == nil {
            throw .invalidInput(field: "appAppleId", "an appAppleId is required to accept Production data")
        }
        let roots = try rootCertificates()
        do {
            _ = try SignedDataVerifier(.init(rootCertificates: roots, bundleId: bundleId, appAppleId: appAppleId))
        } catch {
            throw .invalidInput(field: "trustedRoots", error.message)
        }
        try refundPolicy?.validate()
        try retentionPolicy?.validate(config: self)
        do { try proceeds?.validate() } catch { throw .invalidInput(field: "proceeds.\(error.field)", error.reason) }
        if sharedSecret?.isEmpty == true { throw .invalidInput(field: "sharedSecret", "is empty: null removes the secret") }
        if let verifyReceiptURLs {
            guard verifyReceiptURLs.count == 2 else {
                throw .invalidInput(
                    field: "verifyReceiptURLs",
                    "is two URLs, production's verifyReceipt then sandbox's, not \(verifyReceiptURLs.count)")
            }
            for (index, url) in verifyReceiptURLs.enumerated() where AddressPolicy.httpHost(of: url) == nil {
                throw .invalidInput(field: "verifyReceiptURLs[\(index)]", "is not an http or https URL with a host")
            }
        }
        if let base = serverAPI?.baseURL, AddressPolicy.httpHost(of: base) == nil {
            throw .invalidInput(field: "serverAPI.baseURL", "is not an http or https URL with a host")
        }
        if let serverAPI {
            if serverAPI.issuerId.isEmpty { throw .invalidInput(field: "serverAPI.issuerId", "is empty") }
            if serverAPI.keyId.isEmpty { throw .invalidInput(field: "serverAPI.keyId", "is empty") }
            do {
                _ = try AppStoreSigningKey(
                    pem: serverAPI.privateKey, keyId: serverAPI.keyId, issuerId: serverAPI.issuerId, bundleId: bundleId)
            } catch {
                throw .invalidInput(field: "serverAPI.privateKey", "\(error)")
            }
        }
        if let offerSigningKey, offerSigningKey.keyId.isEmpty {
            throw .invalidInput(field: "offerSigningKey.keyId", "is empty: the key id of the In-App Purchase key")
        }
        if offerSigningKey?.issuerId?.isEmpty == true {
            throw .invalidInput(field: "offerSigningKey.issuerId", "is empty: leave it out for the Server API's issuer")
        }
        _ = try offerSigner()
    }

    /// What the admin API shows: everything but the secrets, which appear only as "configured".
    public struct View: Codable, Sendable {
        public var appId: String
        public var bundleId: String
        public var appAppleId: Int64?
        public var environments: [String]
        public var trustedRoots: [String]?
        public var sharedSecretConfigured: Bool
        public var serverAPI: ServerAPIView?
        public var catalog: Catalog
        public var transferPolicy: TransferPolicy
        public var proceeds: ProceedsSettings?
        public var offerSigningKey: OfferSigningKeyView?

        public struct OfferSigningKeyView: Codable, Sendable {
            public var keyId: String
            public var issuerId: String?
            public var privateKeyConfigured = true
        }

        public struct ServerAPIView: Codable, Sendable {
            public var issuerId: String
            public var keyId: String
            public var baseURL: String?
            public var privateKeyConfigured = true
        }
    }

    public func view(appId: String) -> View {
        View(
            appId: appId, bundleId: bundleId, appAppleId: appAppleId, environments: environments, trustedRoots: trustedRoots,
            sharedSecretConfigured: sharedSecret != nil,
            serverAPI: serverAPI.map { .init(issuerId: $0.issuerId, keyId: $0.keyId, baseURL: $0.baseURL) },
            catalog: catalog, transferPolicy: transferPolicy, proceeds: proceeds,
            offerSigningKey: offerSigningKey.map { .init(keyId: $0.keyId, issuerId: $0.issuerId) })
    }
}
