import Crypto
import Foundation
import Logging
@_spi(FixedExpiryValidationTime) import X509

/// Verifies and decodes the data the App Store signs with JWS: App Store Server Notifications V2, transactions,
/// renewal information and app transactions.
///
/// Every call checks, in order: the size bound; the compact JWS shape; `alg` ES256; the `x5c` chain (leaf,
/// intermediate, and a root that must be one of the configured roots: `x5c[2]` is never used); Apple's
/// OIDs on leaf and intermediate; RFC 5280 validity at the validation time; optionally OCSP; the leaf's ES256
/// signature over the JWS (on every call); then the bundle id, environment and, in production, the appAppleId.
///
/// Verified chains are cached (see ``ChainCache``), so after the first call a JWS costs one P-256 verification plus
/// decoding. The verifier is a value and safe to share across tasks. Its methods run on the caller's executor
/// (`nonisolated(nonsending)`), so a verification from an actor costs no executor hop: on this 2-core machine a
/// hop costs more than the signature check itself.
public struct SignedDataVerifier: Sendable {
    /// The instant at which certificate validity is checked.
    public enum ValidationTime: Sendable, Hashable {
        /// The payload's own `signedDate`, as Apple's offline verification does (the default). Data that carries no
        /// `signedDate` is checked at the current time.
        case signedDate
        /// The current time: the strict mode.
        case now
        /// A given instant.
        case fixed(Date)
    }

    public struct Configuration: Sendable {
        /// The trust anchors, DER-encoded. Apple Root CA - G3 by default.
        public var rootCertificates: [[UInt8]]
        /// The expected bundle id; nil skips the check.
        public var bundleId: String?
        /// The expected appAppleId, checked on production data. Required when `environment` is production.
        public var appAppleId: Int64?
        /// The expected environment; nil skips the check. Xcode and LocalTesting data, which is signed by a single
        /// self-signed certificate, is accepted only when this is `.xcode` or `.localTesting`.
        public var environment: Environment?
        public var validationTime: ValidationTime
        /// OCSP revocation checking of the chain; off (nil) by default.
        public var ocsp: OCSPChecking?
        /// Inputs longer than this are rejected before any parsing.
        public var maxInputBytes: Int
        /// Where the current time comes from, for `.now`, data without `signedDate`, and OCSP cache ageing.
        public var clock: @Sendable () -> Date

        public init(
            rootCertificates: [[UInt8]] = AppleRootCertificates.storeKit,
            bundleId: String? = nil,
            appAppleId: Int64? = nil,
            environment: Environment? = nil,
            validationTime: ValidationTime = .signedDate,
            ocsp: OCSPChecking? = nil,
            maxInputBytes: Int = 128 * 1024,
            clock: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.rootCertificates = rootCertificates
            self.bundleId = bundleId
            self.appAppleId = appAppleId
            self.environment = environment
            self.validationTime = validationTime
            self.ocsp = ocsp
            self.maxInputBytes = maxInputBytes
            self.clock = clock
        }
    }

    /// A configuration that cannot verify anything safely.
    public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    public let configuration: Configuration
    public let cache: ChainCache
    private let trustStore: CertificateStore
    /// SHA-256 over the sorted roots: what the cache keys the trust store by.
    private let trustStoreID: [UInt8]
    private let acceptsSelfSigned: Bool
    private let logger: Logger

    public init(
        _ configuration: Configuration,
        cache: ChainCache = ChainCache(),
        logger: Logger = Logger(label: "storekeeper.appstore.verifier")
    ) throws(ConfigurationError) {
        let roots = try TrustRoots.parse(configuration.rootCertificates)
        if configuration.environment == .production, configuration.appAppleId == nil {
            throw ConfigurationError(message: "an appAppleId is required to verify production data")
        }
        self.configuration = configuration
        self.cache = cache
        self.trustStore = CertificateStore(roots)
        var hasher = SHA256()
        for der in configuration.rootCertificates.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            withUnsafeBytes(of: UInt64(der.count).bigEndian) { hasher.update(bufferPointer: $0) }
            hasher.update(data: der)
        }
        self.trustStoreID = Array(hasher.finalize())
        self.acceptsSelfSigned = configuration.environment == .xcode || configuration.environment == .localTesting
        self.logger = logger
    }

    // MARK: - Public entry points

    /// Verifies a signed transaction (`signedTransactionInfo`, or a transaction from the App Store Server API).
    public nonisolated(nonsending) func verifyTransaction(_ jws: String) async throws(VerificationError) -> JWSTransactionDecodedPayload {
        let transaction = try await verifySignature(jws, as: JWSTransactionDecodedPayload.self) { $0.signedDate }
        try checkApp(
            bundleId: transaction.bundleId, appAppleId: nil, environment: transaction.environment,
            checksAppAppleId: false, what: "transaction")
        return transaction
    }

    /// Verifies signed renewal information (`signedRenewalInfo`). It carries no bundle id; its environment is checked.
    public nonisolated(nonsending) func verifyRenewalInfo(_ jws: String) async throws(VerificationError) -> JWSRenewalInfoDecodedPayload {
        let renewalInfo = try await verifySignature(jws, as: JWSRenewalInfoDecodedPayload.self) { $0.signedDate }
        try checkEnvironment(renewalInfo.environment, what: "renewal info")
        return renewalInfo
    }

    /// Verifies a signed app transaction.
    public nonisolated(nonsending) func verifyAppTransaction(_ jws: String) async throws(VerificationError) -> AppTransaction {
        let appTransaction = try await verifySignature(jws, as: AppTransaction.self) {
            $0.signedDate ?? $0.receiptCreationDate
        }
        try checkApp(
            bundleId: appTransaction.bundleId, appAppleId: appTransaction.appAppleId,
            environment: appTransaction.receiptType, checksAppAppleId: true, what: "app transaction")
        return appTransaction
    }

    /// Verifies a notification's `signedPayload`, and the transaction, renewal info or app transaction nested in it.
    public nonisolated(nonsending) func verifyNotification(_ signedPayload: String) async throws(VerificationError) -> VerifiedNotification
    {
        let payload = try await verifySignature(signedPayload, as: ResponseBodyV2DecodedPayload.self) { $0.signedDate }
        let app = payload.appIdentity
        try checkApp(
            bundleId: app.bundleId, appAppleId: app.appAppleId, environment: app.environment,
            checksAppAppleId: true, what: "notification")
        var verified = VerifiedNotification(payload: payload)
        if let signed = payload.data?.signedTransactionInfo {
            let transaction = try await nested("signedTransactionInfo") { () async throws(VerificationError) in
                try await verifyTransaction(signed)
            }
            if let outer = app.bundleId, let inner = transaction.bundleId, outer != inner {
                throw .appIdentifier("the notification is for bundle id \(outer) but its transaction is for \(inner)")
            }
            if let outer = app.environment, let inner = transaction.environment, outer != inner {
                throw .environment("the notification is from \(outer) but its transaction is from \(inner)")
            }
            verified.transactionInfo = transaction
        }
        if let signed = payload.data?.signedRenewalInfo {
            let renewalInfo = try await nested("signedRenewalInfo") { () async throws(VerificationError) in
                try await verifyRenewalInfo(signed)
            }
            if let outer = app.environment, let inner = renewalInfo.environment, outer != inner {
                throw .environment("the notification is from \(outer) but its renewal info is from \(inner)")
            }
            verified.renewalInfo = renewalInfo
        }
        if let signed = payload.appData?.signedAppTransactionInfo {
            verified.appTransactionInfo = try await nested("signedAppTransactionInfo") { () async throws(VerificationError) in
                try await verifyAppTransaction(signed)
            }
        }
        return verified
    }

    /// Verifies a Retention Messaging request's `signedPayload` (what Apple sends the Get Retention Message endpoint):
    /// the signature, every field Apple requires, the environment, and in production the appAppleId. It names no bundle
    /// id, so the appAppleId is what ties it to the app.
    public nonisolated(nonsending) func verifyRealtimeRequest(_ signedPayload: String) async throws(VerificationError)
        -> DecodedRealtimeRequestBody
    {
        let request = try await verifySignature(signedPayload, as: DecodedRealtimeRequestBody.self) { $0.signedDate }
        if let missing = request.missingField {
            throw .format("the retention message request has no \(missing)")
        }
        try checkApp(
            bundleId: configuration.bundleId, appAppleId: request.appAppleId, environment: request.environment,
            checksAppAppleId: true, what: "retention message request")
        return request
    }

    /// Verifies any of the four kinds, telling them apart by their payload's fields.
    public nonisolated(nonsending) func verify(_ jws: String) async throws(VerificationError) -> VerifiedPayload {
        switch try payloadKind(of: jws) {
        case .notification: return .notification(try await verifyNotification(jws))
        case .appTransaction: return .appTransaction(try await verifyAppTransaction(jws))
        case .transaction: return .transaction(try await verifyTransaction(jws))
        case .renewalInfo: return .renewalInfo(try await verifyRenewalInfo(jws))
        }
    }

    // MARK: - Signature and chain

    /// One decoder for every call: building a `JSONDecoder` per payload is a measurable cost.
    private static let decoder = JSONDecoder()

    private nonisolated(nonsending) func verifySignature<Payload: Decodable>(
        _ jws: String,
        as type: Payload.Type,
        signedDate: (Payload) -> Timestamp?
    ) async throws(VerificationError) -> Payload {
        do throws(VerificationError) {
            let parsed = try CompactJWS(Array(jws.utf8), maxBytes: configuration.maxInputBytes)
            let header = try cache.header(parsed.headerSegment, decoder: Self.decoder)
            guard header.alg == "ES256" else {
                throw VerificationError.failure("the JWS algorithm is \(header.alg.map { "'\($0)'" } ?? "missing"); only ES256 is accepted")
            }
            guard let x5c = header.x5c else {
                throw VerificationError.format("the JWS header has no x5c certificate chain")
            }
            let payload: Payload
            do {
                payload = try Self.decoder.decode(Payload.self, from: parsed.payload)
            } catch {
                throw VerificationError.format("the payload is not a valid \(Payload.self): \(Self.describe(error))")
            }
            let key = try await leafKey(x5c, at: configuration.validationTime.date(signed: signedDate(payload), clock: configuration.clock))
            guard parsed.signature.count == 64,
                let signature = try? P256.Signing.ECDSASignature(rawRepresentation: parsed.signature),
                key.isValidSignature(signature, for: parsed.signingInput)
            else {
                throw VerificationError.failure("the ES256 signature does not match the leaf certificate's key")
            }
            return payload
        } catch {
            logger.debug("signed data rejected", metadata: ["error": "\(error)"])
            throw error
        }
    }

    /// The leaf's key, once the chain is known to lead to a configured root at `time`.
    private nonisolated(nonsending) func leafKey(_ x5c: [[UInt8]?], at time: Date) async throws(VerificationError) -> P256.Signing.PublicKey
    {
        if x5c.count == 1, acceptsSelfSigned {
            return try selfSignedKey(try Self.der(x5c[0], position: "x5c[0]"), at: time)
        }
        guard x5c.count == 3 else {
            if x5c.count == 1 {
                throw .certificate(
                    "x5c holds a single certificate (Xcode or local testing data); it is accepted only by a verifier configured for the Xcode or LocalTesting environment"
                )
            }
            throw .certificate("x5c must hold exactly 3 certificates (leaf, intermediate, root); it holds \(x5c.count)")
        }
        let leafDER = try Self.der(x5c[0], position: "x5c[0] (leaf)")
        let intermediateDER = try Self.der(x5c[1], position: "x5c[1] (intermediate)")
        let key = ChainCache.Key(trustStore: trustStoreID, leaf: leafDER, intermediate: intermediateDER)
        let now = configuration.clock()
        if let cached = cache.leafKey(for: key, at: time, now: now, revocationLifetime: configuration.ocsp?.cacheLifetime) {
            return cached
        }

        let leaf = try Self.certificate(leafDER, position: "x5c[0] (leaf)")
        let intermediate = try Self.certificate(intermediateDER, position: "x5c[1] (intermediate)")
        guard let leafKey = P256.Signing.PublicKey(leaf.publicKey) else {
            throw .certificate("the leaf certificate's key is not a P-256 key, which ES256 requires")
        }
        let recorder = configuration.ocsp.map { RecordingOCSPRequester($0.transport) }
        var verifier = Verifier(rootCertificates: trustStore) {
            AppleChainPolicy()
            RFC5280Policy(fixedExpiryValidationTime: time)
            if let recorder {
                OCSPVerifierPolicy(failureMode: .hard, requester: recorder)
            }
        }
        let result = await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        // swift-certificates lets a chain pass when a responder could not be asked, even in hard-fail mode; an
        // unanswered query is a retryable failure here, whatever the verifier concluded.
        if let unanswered = recorder?.unansweredQueries, !unanswered.isEmpty {
            throw .retryable("the OCSP responder could not be reached: \(unanswered.joined(separator: "; "))")
        }
        switch result {
        case .validCertificate(let chain):
            var windows: [ClosedRange<Date>] = []
            for certificate in chain {
                guard certificate.notValidBefore <= certificate.notValidAfter else {
                    throw .certificate("a certificate of the chain has an empty validity period")
                }
                windows.append(certificate.notValidBefore...certificate.notValidAfter)
            }
            cache.insert(key, leafKey: leafKey, validity: windows, revocationCheckedAt: recorder == nil ? nil : now)
            return leafKey
        case .couldNotValidate(let failures):
            throw TrustRoots.chainFailure(failures, at: time, subject: "the certificate chain")
        }
    }

    /// Xcode and StoreKit local testing sign with one self-signed certificate.
    private func selfSignedKey(_ der: [UInt8], at time: Date) throws(VerificationError) -> P256.Signing.PublicKey {
        let certificate = try Self.certificate(der, position: "x5c[0]")
        guard certificate.issuer == certificate.subject,
            certificate.publicKey.isValidSignature(certificate.signature, for: certificate)
        else {
            throw .failure("the single x5c certificate is not self-signed")
        }
        guard certificate.notValidBefore <= time, time <= certificate.notValidAfter else {
            throw .failure("the self-signed certificate is not valid at \(Timestamp(time)) ms")
        }
        guard let key = P256.Signing.PublicKey(certificate.publicKey) else {
            throw .certificate("the certificate's key is not a P-256 key, which ES256 requires")
        }
        return key
    }

    private static func der(_ decoded: [UInt8]?, position: String) throws(VerificationError) -> [UInt8] {
        guard let decoded else { throw .certificate("\(position) is not standard base64") }
        return decoded
    }

    private static func certificate(_ der: [UInt8], position: String) throws(VerificationError) -> Certificate {
        do {
            return try Certificate(derEncoded: der)
        } catch {
            throw .certificate("\(position) is not a DER X.509 certificate")
        }
    }

    // MARK: - Claims

    private func checkApp(
        bundleId: String?, appAppleId: Int64?, environment: Environment?, checksAppAppleId: Bool, what: String
    ) throws(VerificationError) {
        if let expected = configuration.bundleId, bundleId != expected {
            throw .appIdentifier("the \(what) is for bundle id \(bundleId ?? "(none)"), not \(expected)")
        }
        try checkEnvironment(environment, what: what)
        if checksAppAppleId, environment == .production, let expected = configuration.appAppleId, appAppleId != expected {
            throw .appIdentifier("the \(what) is for appAppleId \(appAppleId.map(String.init) ?? "(none)"), not \(expected)")
        }
    }

    private func checkEnvironment(_ environment: Environment?, what: String) throws(VerificationError) {
        if let expected = configuration.environment, environment != expected {
            throw .environment("the \(what) is from \(environment?.rawValue ?? "no environment"), not \(expected.rawValue)")
        }
    }

    private nonisolated(nonsending) func nested<T>(
        _ field: String, _ body: () async throws(VerificationError) -> T
    ) async throws(VerificationError) -> T {
        do {
            return try await body()
        } catch {
            throw VerificationError(error.code, "\(field): \(error.message)")
        }
    }

    // MARK: - Kinds

    private struct KindProbe: Decodable {
        var notificationType: String?
        var notificationUUID: String?
        var receiptType: String?
        var transactionId: String?
        var bundleId: String?
    }

    private func payloadKind(of jws: String) throws(VerificationError) -> VerifiedPayload.Kind {
        let parsed = try CompactJWS(Array(jws.utf8), maxBytes: configuration.maxInputBytes)
        let probe: KindProbe
        do {
            probe = try Self.decoder.decode(KindProbe.self, from: parsed.payload)
        } catch {
            throw .format("the payload is not a JSON object of App Store fields: \(Self.describe(error))")
        }
        if probe.notificationType != nil || probe.notificationUUID != nil { return .notification }
        if probe.receiptType != nil { return .appTransaction }
        // Renewal info never carries a bundle id or transaction id; transactions always do.
        if probe.transactionId != nil || probe.bundleId != nil { return .transaction }
        return .renewalInfo
    }

    static func describe(_ error: any Error) -> String { DecodingErrorDescription.describe(error) }
}

extension ResponseBodyV2DecodedPayload {
    /// The bundle id, appAppleId and environment, from whichever of `data`, `summary`, `externalPurchaseToken` or
    /// `appData` the notification carries.
    public var appIdentity: NotificationAppIdentity {
        if let data { return .init(bundleId: data.bundleId, appAppleId: data.appAppleId, environment: data.environment) }
        if let summary { return .init(bundleId: summary.bundleId, appAppleId: summary.appAppleId, environment: summary.environment) }
        if let token = externalPurchaseToken {
            return .init(bundleId: token.bundleId, appAppleId: token.appAppleId, environment: token.environment)
        }
        if let appData { return .init(bundleId: appData.bundleId, appAppleId: appData.appAppleId, environment: appData.environment) }
        return .init(bundleId: nil, appAppleId: nil, environment: nil)
    }
}

/// The app a notification is about, as it says.
public struct NotificationAppIdentity: Sendable, Hashable {
    public var bundleId: String?
    public var appAppleId: Int64?
    public var environment: Environment?
}
