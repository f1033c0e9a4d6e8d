import AppStore
import Entitlements
import Foundation
import Logging
import NIOConcurrencyHelpers
import Storage

/// One app, ready to verify: its configuration and verifiers, built once and cached.
public struct AppRuntime: Sendable {
    public let id: String
    public let config: AppConfiguration
    let verifier: SignedDataVerifier
    /// For Xcode and LocalTesting data (a single self-signed certificate), when the app allows those environments.
    let localVerifier: SignedDataVerifier?
    let receiptVerifier: ReceiptVerifier
    let loadedAt: UInt64
    /// When the configuration last changed: stored states computed before it are stale.
    let updatedAt: Int64

    init(id: String, config: AppConfiguration, updatedAt: Int64, cache: ChainCache, clock: @escaping @Sendable () -> Date, loadedAt: UInt64) throws(APIError) {
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
                try SignedDataVerifier(.init(rootCertificates: roots, bundleId: config.bundleId, environment: environment, clock: clock),
                                       cache: cache)
            }
            receiptVerifier = try ReceiptVerifier(.init(rootCertificates: config.trustedRoots == nil ? AppleRootCertificates.receipts : AppleRootCertificates.receipts + roots,
                                                         bundleId: config.bundleId, maxInputBytes: 256 * 1024, clock: clock))
        } catch {
            throw APIError.internalError("app \(id) cannot verify: \(error.message)")
        }
        self.loadedAt = loadedAt
    }

    /// The environment the customer API answers for when the request names none: the first allowed.
    public var defaultEnvironment: Environment { config.allowedEnvironments.first ?? .production }

    /// Parses `?environment=`, which must be one of the app's.
    public func environment(_ requested: String?) throws(APIError) -> Environment {
        guard let requested else { return defaultEnvironment }
        guard let match = config.allowedEnvironments.first(where: { $0.rawValue.lowercased() == requested.lowercased() }) else {
            throw .invalidRequest("environment '\(requested)' is not one of this app's: \(config.environments.joined(separator: ", "))")
        }
        return match
    }

    /// Data from an environment the app does not accept is rejected as Apple's own library does.
    func checkEnvironment(_ environment: Environment?, what: String) throws(VerificationError) {
        guard let environment, config.allowedEnvironments.contains(environment) else {
            throw VerificationError(.invalidEnvironment,
                                    "the \(what) is from \(environment?.rawValue ?? "no environment"), which this app does not accept (\(config.environments.joined(separator: ", ")))")
        }
    }

    func verifyNotification(_ signedPayload: String) async throws(VerificationError) -> VerifiedNotification {
        let verified = try await withLocalFallback { (v: SignedDataVerifier) async throws(VerificationError) in
            try await v.verifyNotification(signedPayload)
        }
        try checkEnvironment(verified.payload.appIdentity.environment, what: "notification")
        return verified
    }

    func verifyTransaction(_ jws: String) async throws(VerificationError) -> JWSTransactionDecodedPayload {
        let transaction = try await withLocalFallback { (v: SignedDataVerifier) async throws(VerificationError) in
            try await v.verifyTransaction(jws)
        }
        try checkEnvironment(transaction.environment, what: "transaction")
        return transaction
    }

    func verifyRenewalInfo(_ jws: String) async throws(VerificationError) -> JWSRenewalInfoDecodedPayload {
        let info = try await withLocalFallback { (v: SignedDataVerifier) async throws(VerificationError) in
            try await v.verifyRenewalInfo(jws)
        }
        try checkEnvironment(info.environment, what: "renewal info")
        return info
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

/// The apps and API keys, read from the database and cached for a short time (`ttl`): a change made through this
/// server is seen at once (it invalidates), one made by another process within `ttl`.
public final class AppRegistry: Sendable {
    public struct Principal: Sendable, Hashable {
        public var appId: String
        public var kind: APIKeyRecord.Kind
    }

    let database: StorageDatabase
    let chainCache = ChainCache(capacity: 1024)
    let clock: @Sendable () -> Date
    let ttlNanoseconds: UInt64
    private let apps = NIOLockedValueBox<[String: AppRuntime]>([:])
    private let keys = NIOLockedValueBox<[String: (record: APIKeyRecord, loadedAt: UInt64)]>([:])

    public init(database: StorageDatabase, ttl: Duration = .seconds(5), clock: @escaping @Sendable () -> Date) {
        self.database = database
        self.clock = clock
        self.ttlNanoseconds = UInt64(ttl.components.seconds) * 1_000_000_000 + UInt64(ttl.components.attoseconds / 1_000_000_000)
    }

    private func fresh(_ loadedAt: UInt64) -> Bool {
        DispatchTime.now().uptimeNanoseconds &- loadedAt < ttlNanoseconds
    }

    /// The app, or 404.
    public func app(id: String) async throws -> AppRuntime {
        if let cached = apps.withLockedValue({ $0[id] }), fresh(cached.loadedAt) { return cached }
        guard let record = try await database.reading({ try await $0.app(id: id) }) else {
            throw APIError.notFound("no app \(id)")
        }
        let runtime = try Self.runtime(record, cache: chainCache, clock: clock)
        apps.withLockedValue { $0[id] = runtime }
        return runtime
    }

    static func runtime(_ record: AppRecord, cache: ChainCache, clock: @escaping @Sendable () -> Date) throws -> AppRuntime {
        let config: AppConfiguration
        do {
            config = try JSONDecoder().decode(AppConfiguration.self, from: Data(record.config.utf8))
        } catch {
            throw APIError.internalError("app \(record.id)'s stored configuration does not decode: \(DecodingErrorDescription.describe(error))")
        }
        return try AppRuntime(id: record.id, config: config, updatedAt: record.updatedAt, cache: cache, clock: clock, loadedAt: DispatchTime.now().uptimeNanoseconds)
    }

    public func invalidate(app id: String) {
        apps.withLockedValue { $0[id] = nil }
        keys.withLockedValue { $0 = $0.filter { $0.value.record.appId != id } }
    }

    /// Who a bearer key is: 401 for a missing, malformed, unknown or revoked key (the same answer for each, so a
    /// caller learns nothing about which keys exist).
    public func authenticate(_ authorization: String?) async throws -> Principal {
        guard let authorization else { throw APIError.unauthenticated("an API key is required: Authorization: Bearer <key>") }
        let presented = authorization.hasPrefix("Bearer ") ? String(authorization.dropFirst(7)) : authorization
        guard let parts = APIKeys.parse(presented.trimmingCharacters(in: .whitespaces)) else {
            throw APIError.unauthenticated("the API key is not valid")
        }
        var record = keys.withLockedValue { cache -> APIKeyRecord? in
            guard let hit = cache[parts.id], fresh(hit.loadedAt) else { return nil }
            return hit.record
        }
        if record == nil {
            record = try await database.reading { try await $0.key(id: parts.id) }
            if let loaded = record {
                let now = DispatchTime.now().uptimeNanoseconds
                keys.withLockedValue { $0[parts.id] = (loaded, now) }
            }
        }
        let secretHash = APIKeys.hash(parts.secret)
        guard let record, record.revokedAt == nil, record.kind.prefix == parts.kind,
              APIKeys.constantTimeEqual(record.secretHash, secretHash)
        else {
            throw APIError.unauthenticated("the API key is not valid")
        }
        return Principal(appId: record.appId, kind: record.kind)
    }
}

extension APIKeyRecord.Kind {
    var prefix: String { self == .public ? "pk" : "sk" }
}
