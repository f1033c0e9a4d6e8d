import AppStore
import AsyncHTTPClient
import Entitlements
import Foundation
import Logging
import Storage

/// Calls to Apple on an app's behalf: the App Store Server API (history, statuses, notification history) and
/// verifyReceipt. Everything it returns is verified with the app's own verifier before it is stored. The calls carry
/// the app's credentials: they go only where `urls` allows, and never follow a redirect (`httpClient`).
public struct AppleAPIAccess: Sendable {
    let httpClient: HTTPClient
    let urls: AppleURLPolicy
    let logger: Logger
    let metrics: ServerMetrics

    /// An HTTP client that follows no redirect: a 3xx is an answer like any other (and an error to its caller), so
    /// that no token, shared secret or receipt is ever sent to a host the app's configuration did not name. Kept
    /// for the life of the process.
    public static let noRedirects: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    init(urls: AppleURLPolicy, logger: Logger, metrics: ServerMetrics) {
        self.httpClient = Self.noRedirects
        self.urls = urls
        self.logger = logger
        self.metrics = metrics
    }

    /// Refuses a call to a URL the policy does not allow (a configuration stored before the policy, or since changed):
    /// unavailable, so that a caller retries and nothing is acknowledged lost, and logged for the operator.
    func checkURLs(of app: AppRuntime) async throws(CoreError) {
        for (field, url) in AppleURLPolicy.urls(of: app.config) {
            do { try await urls.check(url, field: field) } catch {
                logger.error(
                    "an app's configuration names a URL its credentials may not be sent to",
                    metadata: ["app": "\(app.id)", "error": "\(error)"])
                throw .appleUnavailable("the app's \(field) may not be called: \(error.description)")
            }
        }
    }

    /// The app's client, or nil without credentials. `patience` sets how rate limits are waited for.
    func client(app: AppRuntime, environment: Environment, patience: RateLimitPatience = .serving) async throws -> AppStoreServerAPIClient?
    {
        guard let credentials = app.config.serverAPI else { return nil }
        try await checkURLs(of: app)
        let key = try AppStoreSigningKey(
            pem: credentials.privateKey, keyId: credentials.keyId, issuerId: credentials.issuerId,
            bundleId: app.config.bundleId)
        var configuration = AppStoreServerAPIClient.Configuration(key: key, environment: environment)
        if patience == .batch {
            // A batch (an import) waits as long as Apple asks: its limits are enforced per hour.
            configuration.rateLimitRetries = 20
            configuration.maxRateLimitWait = .seconds(3600)
        }
        if let base = credentials.baseURL {
            configuration.productionBaseURL = base
            configuration.sandboxBaseURL = base
        }
        return AppStoreServerAPIClient(configuration, verifier: app.verifier, httpClient: httpClient)
    }

    /// How a call waits when Apple answers that the app's rate limit is exceeded.
    enum RateLimitPatience: Sendable {
        /// A few short waits (someone is waiting for the answer).
        case serving
        /// As long as Apple's `Retry-After` says, up to an hour.
        case batch
    }

    /// What Apple said about one original transaction, as records to store.
    struct Pulled: Sendable {
        var transactions: [TransactionRecord] = []
        var renewals: [RenewalInfoRecord] = []
    }

    /// The whole transaction history and the subscription statuses behind one transaction. A failure here does not
    /// fail the app's post, whose own transaction is verified already: it is logged and counted, and reconciliation
    /// tries again later.
    func history(app: AppRuntime, transactionId: String, environment: Environment, now: Int64) async -> Pulled {
        await pull(app: app, transactionId: transactionId, environment: environment, now: now, history: true)
    }

    /// The subscription statuses alone (one call): what reconciliation asks about each subscription near expiry.
    func statuses(app: AppRuntime, transactionId: String, environment: Environment, now: Int64) async -> Pulled {
        await pull(app: app, transactionId: transactionId, environment: environment, now: now, history: false)
    }

    private func pull(app: AppRuntime, transactionId: String, environment: Environment, now: Int64, history: Bool) async -> Pulled {
        do {
            guard let client = try await client(app: app, environment: environment) else { return Pulled() }
            return try await fetch(client, app: app, transactionId: transactionId, now: now, history: history)
        } catch {
            logger.warning("pulling the App Store history failed", metadata: ["app": "\(app.id)", "error": "\(error)"])
            return Pulled()
        }
    }

    /// The whole transaction history (with `history`) and the subscription statuses behind one transaction, as records
    /// of the app's environments; Apple's and the records' errors are thrown.
    func fetch(_ client: AppStoreServerAPIClient, app: AppRuntime, transactionId: String, now: Int64, history: Bool) async throws -> Pulled
    {
        var pulled = Pulled()
        do {
            if history {
                for signed in try await client.allTransactionHistory(transactionId: transactionId) {
                    guard app.accepts(signed.value.environment) else { continue }
                    pulled.transactions.append(
                        try FactCoding.record(signed.value, signed: signed.jws, source: .serverAPI, app: app.id, now: now))
                }
            }
            let statuses = try await client.allSubscriptionStatuses(transactionId: transactionId)
            for group in statuses.groups {
                for item in group.lastTransactions {
                    if let t = item.transaction {
                        pulled.transactions.append(try FactCoding.record(t.value, signed: t.jws, source: .serverAPI, app: app.id, now: now))
                    }
                    if let r = item.renewalInfo, let record = try FactCoding.record(r.value, signed: r.jws, app: app.id, now: now) {
                        pulled.renewals.append(record)
                    }
                }
            }
            metrics.appleCall(history ? "history" : "statuses", result: "ok")
        } catch {
            metrics.appleCall(history ? "history" : "statuses", result: "error")
            throw error
        }
        return pulled
    }

    /// Set App Account Token: the original transaction's later transactions and notifications carry `token`, so they
    /// find their customer by it. Best effort, like the history pull: a failure is logged and counted.
    func setAccountToken(app: AppRuntime, originalTransactionId: String, environment: Environment, token: String) async {
        do {
            guard let client = try await client(app: app, environment: environment), let uuid = UUID(uuidString: token) else { return }
            try await client.setAppAccountToken(originalTransactionId: originalTransactionId, appAccountToken: uuid)
            metrics.appleCall("setAppAccountToken", result: "ok")
        } catch {
            metrics.appleCall("setAppAccountToken", result: "error")
            logger.warning(
                "setting the appAccountToken failed",
                metadata: ["app": "\(app.id)", "originalTransactionId": "\(originalTransactionId)", "error": "\(error)"])
        }
    }

    /// verifyReceipt's latest receipt info, as transactions. Apple's answer is not signed: it is trusted because it
    /// came over TLS from Apple with the app's shared secret, as Apple documents.
    func verifyReceipt(_ base64: String, app: AppRuntime, now: Int64) async throws -> [TransactionRecord] {
        try await checkURLs(of: app)
        var configuration = VerifyReceiptClient.Configuration(sharedSecret: app.config.sharedSecret)
        if let urls = app.config.verifyReceiptURLs, urls.count == 2 {
            configuration.productionURL = urls[0]
            configuration.sandboxURL = urls[1]
        }
        let response: VerifyReceiptResponse
        do {
            response = try await VerifyReceiptClient(configuration, httpClient: httpClient).verify(receiptData: base64)
            metrics.appleCall("verifyReceipt", result: "ok")
        } catch {
            metrics.appleCall("verifyReceipt", result: "error")
            if error.isRetryable { throw CoreError.appleUnavailable("verifyReceipt: \(error.message)") }
            throw CoreError.rejectedByApple("verifyReceipt: \(error.message)")
        }
        guard let environment = response.receipt?.environment ?? response.environment.map(Environment.init(rawValue:)) else {
            throw CoreError.rejectedByApple("verifyReceipt's answer names no environment")
        }
        do {
            try app.checkEnvironment(environment, what: "receipt")
        } catch {
            throw CoreError.verification(error)
        }
        return try response.latestReceiptInfo.compactMap { entry throws(CoreError) -> TransactionRecord? in
            var transaction = JWSTransactionDecodedPayload(receiptEntry: entry, receipt: response.receipt)
            transaction.environment = environment
            guard transaction.transactionId != nil, transaction.productId != nil else { return nil }
            return try FactCoding.record(transaction, signed: nil, source: .verifyReceipt, app: app.id, now: now)
        }
    }
}
