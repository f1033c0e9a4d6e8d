import AppStore
import Foundation

/// One app, ready to verify: its configuration and verifiers, built once and cached. Use cases take this value, not
/// the app's id: whoever resolved the app (authentication, the webhook's path) resolved it once.
public struct AppRuntime: Sendable {
    public let id: String
    public let config: AppConfiguration
    let verifier: SignedDataVerifier
    /// For Xcode and LocalTesting data (a single self-signed certificate), when the app allows those environments.
    let localVerifier: SignedDataVerifier?
    let receiptVerifier: ReceiptVerifier
    /// When it was loaded, on the monotonic clock (the registry's cache).
    let loadedAt: UInt64
    /// When the configuration last changed: stored states computed before it are stale.
    let updatedAt: Int64

    init(
        id: String, config: AppConfiguration, updatedAt: Int64, cache: ChainCache, clock: @escaping @Sendable () -> Date,
        loadedAt: UInt64
    ) throws(CoreError) {
        self.id = id
        self.updatedAt = updatedAt
        self.config = config
        let roots = try config.rootCertificates()
        do {
            verifier = try SignedDataVerifier(
                .init(rootCertificates: roots, bundleId: config.bundleId, appAppleId: config.appAppleId, clock: clock),
                cache: cache)
            let local = config.allowedEnvironments.first { $0 == .xcode || $0 == .localTesting }
            localVerifier = try local.map { environment throws(SignedDataVerifier.ConfigurationError) in
                try SignedDataVerifier(
                    .init(rootCertificates: roots, bundleId: config.bundleId, environment: environment, clock: clock),
                    cache: cache)
            }
            let receiptRoots = config.trustedRoots == nil ? AppleRootCertificates.receipts : AppleRootCertificates.receipts + roots
            receiptVerifier = try ReceiptVerifier(
                .init(rootCertificates: receiptRoots, bundleId: config.bundleId, maxInputBytes: 256 * 1024, clock: clock))
        } catch {
            throw .internalError("app \(id) cannot verify: \(error.message)")
        }
        self.loadedAt = loadedAt
    }

    /// The environment the customer API answers for when the request names none: the first allowed.
    public var defaultEnvironment: Environment { config.allowedEnvironments.first ?? .production }

    /// Parses a requested environment (`?environment=`), which must be one of the app's, in any case (`sandbox` or
    /// Apple's `Sandbox`); nil is the default.
    public func environment(_ requested: String?, field: String = "environment") throws(CoreError) -> Environment {
        guard let requested else { return defaultEnvironment }
        guard let match = config.allowedEnvironments.first(where: { $0.rawValue.caseInsensitiveCompare(requested) == .orderedSame })
        else {
            throw .invalidInput(
                field: field,
                "'\(requested)' is not one of this app's: \(config.environments.joined(separator: ", "))")
        }
        return match
    }

    /// Whether the app accepts data from this environment.
    func accepts(_ environment: Environment?) -> Bool {
        environment.map(config.allowedEnvironments.contains) ?? false
    }

    /// Data from an environment the app does not accept is rejected as Apple's own library does.
    func checkEnvironment(_ environment: Environment?, what: String) throws(VerificationError) {
        guard accepts(environment) else {
            throw VerificationError(
                .invalidEnvironment,
                "the \(what) is from \(environment?.rawValue ?? "no environment"), which this app does not accept (\(config.environments.joined(separator: ", ")))"
            )
        }
    }

    /// A notification, verified and from one of the app's environments.
    func verifyNotification(_ signedPayload: String) async throws(VerificationError) -> VerifiedNotification {
        let verified = try await withLocalFallback { (v: SignedDataVerifier) async throws(VerificationError) in
            try await v.verifyNotification(signedPayload)
        }
        try checkEnvironment(of: verified)
        return verified
    }

    /// A notification verified elsewhere (the Server API client's Notification History) must be from one of the
    /// app's environments too.
    func checkEnvironment(of notification: VerifiedNotification) throws(VerificationError) {
        try checkEnvironment(notification.payload.appIdentity.environment, what: "notification")
    }

    /// A StoreKit 2 signed transaction, verified and from one of the app's environments.
    func verifyTransaction(_ jws: String) async throws(VerificationError) -> JWSTransactionDecodedPayload {
        let transaction = try await withLocalFallback { (v: SignedDataVerifier) async throws(VerificationError) in
            try await v.verifyTransaction(jws)
        }
        try checkEnvironment(transaction.environment, what: "transaction")
        return transaction
    }

    /// A Retention Messaging request, verified and from one of the app's environments.
    func verifyRealtimeRequest(_ signedPayload: String) async throws(VerificationError) -> DecodedRealtimeRequestBody {
        let request = try await withLocalFallback { (v: SignedDataVerifier) async throws(VerificationError) in
            try await v.verifyRealtimeRequest(signedPayload)
        }
        try checkEnvironment(request.environment, what: "retention message request")
        return request
    }

    private func withLocalFallback<T>(
        _ body: (SignedDataVerifier) async throws(VerificationError) -> T
    ) async throws(VerificationError) -> T {
        do {
            return try await body(verifier)
        } catch {
            guard error.code == .invalidCertificate, let localVerifier else { throw error }
            return try await body(localVerifier)
        }
    }
}
