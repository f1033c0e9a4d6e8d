import AppStore
import Entitlements
import Foundation
import Logging
import Storage

/// The server's work, apart from HTTP: ingesting notifications and the app's posts, resolving and merging customers,
/// and reading states. Each write is one database transaction; nothing is acknowledged before it commits.
public final class Ingestion: Sendable {
    public let database: StorageDatabase
    public let registry: AppRegistry
    public let states: CustomerStates
    let metrics: ServerMetrics
    let clock: @Sendable () -> Date
    let logger: Logger
    /// Pulls Apple's history for the SDK's posts and for reconciliation; nil leaves Apple alone.
    let appleAPI: AppleAPIAccess?

    init(database: StorageDatabase, registry: AppRegistry, states: CustomerStates, metrics: ServerMetrics,
         clock: @escaping @Sendable () -> Date, logger: Logger, appleAPI: AppleAPIAccess?) {
        self.database = database
        self.registry = registry
        self.states = states
        self.metrics = metrics
        self.clock = clock
        self.logger = logger
        self.appleAPI = appleAPI
    }

    var nowMs: Int64 { Int64((clock().timeIntervalSince1970 * 1000).rounded()) }

    // MARK: - Notifications

    public enum NotificationOutcome: String, Sendable {
        /// Stored, and the customer's state recomputed.
        case applied
        /// Stored; it concerns no transaction (a TEST notification, a summary).
        case stored
        /// Already stored before: nothing to do.
        case duplicate
    }

    /// Verifies and stores one App Store Server Notification V2 and updates its customer, all in one transaction.
    public func ingestNotification(app appId: String, signedPayload: String) async throws -> NotificationOutcome {
        let app = try await registry.app(id: appId)
        let verified: VerifiedNotification
        do {
            verified = try await app.verifyNotification(signedPayload)
        } catch {
            metrics.verificationFailure(error.code.rawValue)
            metrics.notification(type: "unverified", result: error.isRetryable ? "retry" : "rejected")
            logger.warning("notification rejected", metadata: ["app": "\(appId)", "error": "\(error.code.rawValue)", "reason": "\(error.message)"])
            throw APIError.verification(error)
        }
        let type = verified.payload.notificationType?.rawValue ?? "unknown"
        do {
            let outcome = try await applyNotification(verified, signedPayload: signedPayload, app: app)
            metrics.notification(type: type, result: outcome.rawValue)
            return outcome
        } catch {
            metrics.notification(type: type, result: "error")
            throw error
        }
    }

    func applyNotification(_ verified: VerifiedNotification, signedPayload: String, app: AppRuntime) async throws -> NotificationOutcome {
        let now = nowMs
        let notification = try FactCoding.record(verified, signed: signedPayload, app: app.id, now: now)
        let transaction = try verified.transactionInfo.map { t throws(APIError) in
            try FactCoding.record(t, signed: verified.payload.data?.signedTransactionInfo, source: "notification", app: app.id, now: now)
        }
        let renewal = try verified.renewalInfo.flatMap { r throws(APIError) in
            try FactCoding.record(r, signed: verified.payload.data?.signedRenewalInfo, app: app.id, now: now)
        }
        let token = verified.transactionInfo?.appAccountToken ?? verified.renewalInfo?.appAccountToken
        let states = self.states
        let result: (NotificationOutcome, String?, [Environment: StateSnapshot]) = try await database.writing { session in
            guard try await session.insert(notification) else { return (.duplicate, nil, [:]) }
            if let transaction { try await session.insert(transaction) }
            if let renewal { try await session.insert(renewal) }
            guard let original = transaction?.originalTransactionId ?? renewal?.originalTransactionId else {
                return (.stored, nil, [:])
            }
            let customer = try await Self.resolve(session, app: app, token: token, originalTransactionId: original, now: now)
            try await session.lockCustomer(id: customer)
            let snapshots = try await states.recompute(session, app: app, customerId: customer, now: now)
            return (.applied, customer, snapshots)
        }
        if let customer = result.1 { states.committed(customer: customer, result.2) }
        return result.0
    }

    /// The customer a notification belongs to: by appAccountToken (as a lower-case app user id), then by the
    /// original transaction's owner; failing both, a new customer named by the token, or an anonymous one named
    /// `$anonymous:<originalTransactionId>` that the app's post of the transaction merges later.
    static func resolve(
        _ session: StorageSession, app: AppRuntime, token: String?, originalTransactionId: String, now: Int64
    ) async throws -> String {
        let ownerRecord = try await session.ownerRecord(app: app.id, originalTransactionId: originalTransactionId)
        // An identified owner keeps its transaction: only the app's own post moves one between named customers.
        if let ownerRecord, !ownerRecord.anonymous { return ownerRecord.id }
        let owner = ownerRecord?.id
        if let token = token?.lowercased(), !token.isEmpty {
            if let named = try await session.customer(app: app.id, appUserId: token) {
                guard let owner else {
                    return try await session.link(app: app.id, originalTransactionId: originalTransactionId, customer: named.id, at: now)
                }
                if owner != named.id {
                    try await session.merge(customer: owner, into: named.id)
                    try await session.insertAudit(AuditRecord(
                        appId: app.id, action: "merge", originalTransactionId: originalTransactionId, fromCustomer: owner,
                        toCustomer: named.id, detail: "an anonymous customer's transactions joined the customer of appAccountToken \(token)", at: now))
                }
                return named.id
            }
            if let owner { return owner }
            let created = try await session.findOrCreateCustomer(app: app.id, appUserId: token, anonymous: false, newId: newCustomerId(), at: now)
            return try await session.link(app: app.id, originalTransactionId: originalTransactionId, customer: created.id, at: now)
        }
        if let owner { return owner }
        let anonymous = try await session.findOrCreateCustomer(
            app: app.id, appUserId: "$anonymous:" + originalTransactionId, anonymous: true, newId: newCustomerId(), at: now)
        return try await session.link(app: app.id, originalTransactionId: originalTransactionId, customer: anonymous.id, at: now)
    }

    static func newCustomerId() -> String { "cus_" + APIKeys.randomToken(bytes: 12) }

    // MARK: - The app's posts

    /// What the SDK posts: a StoreKit 2 signed transaction, or an app receipt (base64).
    public struct PostedPurchase: Decodable, Sendable {
        public var signedTransaction: String?
        public var receipt: String?
    }

    /// Verifies a posted purchase, pulls what Apple knows about it when the app has credentials, and links its
    /// original transactions to the customer (merging anonymous owners, transferring by the app's policy). Returns
    /// the customer and the environment the purchase is from.
    public func postPurchase(app appId: String, appUserId: String, _ posted: PostedPurchase) async throws -> (customerId: String, environment: Environment?) {
        let app = try await registry.app(id: appId)
        let now = nowMs
        var transactions: [TransactionRecord] = []
        var renewals: [RenewalInfoRecord] = []
        do {
            switch (posted.signedTransaction, posted.receipt) {
            case (let jws?, nil):
                let transaction = try await app.verifyTransaction(jws)
                transactions.append(try FactCoding.record(transaction, signed: jws, source: "sdk", app: app.id, now: now))
            case (nil, let receipt?):
                transactions += try await receiptTransactions(receipt, app: app, now: now)
            default:
                throw APIError.invalidRequest("post exactly one of signedTransaction and receipt")
            }
        } catch let error as VerificationError {
            metrics.verificationFailure(error.code.rawValue)
            throw APIError.verification(error)
        }
        if let appleAPI, app.config.serverAPI != nil, let any = transactions.first {
            let pulled = await appleAPI.history(app: app, transactionId: any.transactionId, environment: Environment(rawValue: any.environment), now: now)
            transactions += pulled.transactions
            renewals += pulled.renewals
        }
        let originals = Array(Set(transactions.map(\.originalTransactionId))).sorted()
        let states = self.states
        let (transactionsToStore, renewalsToStore) = (transactions, renewals)
        let (customerId, affected, merged) = try await database.writing { session -> (String, [String: [Environment: StateSnapshot]], Bool) in
            var merged = false
            let customer = try await session.findOrCreateCustomer(
                app: app.id, appUserId: appUserId, anonymous: false, newId: Self.newCustomerId(), at: now)
            var previousOwners: Set<String> = []
            for original in originals {
                guard let owner = try await session.owner(app: app.id, originalTransactionId: original) else {
                    _ = try await session.link(app: app.id, originalTransactionId: original, customer: customer.id, at: now)
                    continue
                }
                guard owner != customer.id else { continue }
                let previous = try await session.customer(id: owner)
                if previous?.anonymous == true {
                    merged = true
                    try await session.merge(customer: owner, into: customer.id)
                    try await session.insertAudit(AuditRecord(
                        appId: app.id, action: "merge", originalTransactionId: original, fromCustomer: owner, toCustomer: customer.id,
                        detail: "the app posted a transaction of an anonymous customer for \(appUserId)", at: now))
                    continue
                }
                switch app.config.transferPolicy {
                case .keep:
                    throw APIError.conflict("transaction_owned", "original transaction \(original) belongs to another app user; this app's transfer policy is keep")
                case .transfer:
                    try await session.transfer(app: app.id, originalTransactionId: original, to: customer.id, at: now)
                    try await session.insertAudit(AuditRecord(
                        appId: app.id, action: "transfer", originalTransactionId: original, fromCustomer: owner, toCustomer: customer.id,
                        detail: "the app posted the transaction for \(appUserId)", at: now))
                    previousOwners.insert(owner)
                }
            }
            for transaction in transactionsToStore { try await session.insert(transaction) }
            for renewal in renewalsToStore { try await session.insert(renewal) }
            var affected: [String: [Environment: StateSnapshot]] = [:]
            for id in [customer.id] + previousOwners.sorted() {
                try await session.lockCustomer(id: id)
                affected[id] = try await states.recompute(session, app: app, customerId: id, now: now)
            }
            return (customer.id, affected, merged)
        }
        for (id, snapshots) in affected { states.committed(customer: id, snapshots) }
        if merged { states.forgetCustomerIds(app: app.id) }
        let environment = transactions.first.map { Environment(rawValue: $0.environment) }
        return (customerId, environment.flatMap { app.config.allowedEnvironments.contains($0) ? $0 : nil })
    }

    private func receiptTransactions(_ base64: String, app: AppRuntime, now: Int64) async throws -> [TransactionRecord] {
        guard let der = Data(base64Encoded: base64, options: .ignoreUnknownCharacters) else {
            throw VerificationError(.invalidReceiptFormat, "the receipt is not base64")
        }
        let receipt = try await app.receiptVerifier.verify(Array(der))
        // A receipt that names no environment is refused: its purchases would otherwise count in every environment.
        guard let environment = receipt.environment else {
            throw VerificationError(.invalidEnvironment, "the receipt's type \(receipt.receiptType.map { "'\($0)'" } ?? "(none)") names no environment")
        }
        try app.checkEnvironment(environment, what: "receipt")
        var records: [TransactionRecord] = []
        for entry in receipt.inApp {
            var transaction = JWSTransactionDecodedPayload(receiptEntry: entry, receipt: receipt)
            transaction.environment = environment
            if transaction.transactionId == nil || transaction.productId == nil { continue }
            records.append(try FactCoding.record(transaction, signed: nil, source: "receipt", app: app.id, now: now))
        }
        if app.config.sharedSecret != nil, let appleAPI {
            records += try await appleAPI.verifyReceipt(base64, app: app, now: now)
        }
        return records
    }

    // MARK: - Aliases

    /// Makes `alias` another name of `appUserId`'s customer; if `alias` named a customer already, that customer's
    /// transactions and names merge into this one.
    public func alias(app appId: String, appUserId: String, alias: String) async throws -> String {
        let app = try await registry.app(id: appId)
        let now = nowMs
        let states = self.states
        let (customerId, snapshots) = try await database.writing { session -> (String, [Environment: StateSnapshot]) in
            let customer = try await session.findOrCreateCustomer(
                app: app.id, appUserId: appUserId, anonymous: false, newId: Self.newCustomerId(), at: now)
            if let other = try await session.customer(app: app.id, appUserId: alias) {
                guard other.id != customer.id else { return (customer.id, [:]) }
                try await session.merge(customer: other.id, into: customer.id)
                try await session.insertAudit(AuditRecord(
                    appId: app.id, action: "merge", fromCustomer: other.id, toCustomer: customer.id,
                    detail: "alias \(alias) merged into \(appUserId)", at: now))
            } else {
                try await session.addAppUserId(app: app.id, appUserId: alias, customer: customer.id, at: now)
                try await session.insertAudit(AuditRecord(
                    appId: app.id, action: "alias", toCustomer: customer.id, detail: "alias \(alias) added to \(appUserId)", at: now))
            }
            try await session.lockCustomer(id: customer.id)
            return (customer.id, try await states.recompute(session, app: app, customerId: customer.id, now: now))
        }
        states.committed(customer: customerId, snapshots)
        states.forgetCustomerIds(app: app.id)
        return customerId
    }

    // MARK: - Reading

    /// The customer behind an app user id, or nil for one the server has never seen.
    public func customerId(app appId: String, appUserId: String) async throws -> String? {
        if let cached = states.cachedCustomerId(app: appId, appUserId: appUserId) { return cached }
        guard let customer = try await database.reading({ try await $0.customer(app: appId, appUserId: appUserId) }) else {
            return nil
        }
        states.rememberCustomerId(app: appId, appUserId: appUserId, customer.id)
        return customer.id
    }

    /// The customer's state at server time: from memory, from the stored state while it is current, or computed
    /// anew (recording the events that time brought, such as an expiry).
    public func state(app: AppRuntime, customerId: String?, environment: Environment) async throws -> StateSnapshot {
        let now = nowMs
        guard let customerId else { return try states.newCustomer(app, environment: environment) }
        if let cached = states.cached(customer: customerId, environment: environment, now: now) { return cached }
        let stored = try await database.reading { try await $0.state(customer: customerId, environment: environment.rawValue) }
        return try await current(app: app, customerId: customerId, stored: stored, environment: environment, now: now)
    }

    /// The state of the customer an app user id names (nil: one never seen), with one database read at most when
    /// the memory cache cannot answer: the customer API's read path.
    public func state(app: AppRuntime, appUserId: String, environment: Environment) async throws -> (customerId: String?, snapshot: StateSnapshot) {
        let now = nowMs
        if let customerId = states.cachedCustomerId(app: app.id, appUserId: appUserId),
           let cached = states.cached(customer: customerId, environment: environment, now: now) {
            return (customerId, cached)
        }
        guard let found = try await database.reading({
            try await $0.customerAndState(app: app.id, appUserId: appUserId, environment: environment.rawValue)
        }) else {
            return (nil, try states.newCustomer(app, environment: environment))
        }
        states.rememberCustomerId(app: app.id, appUserId: appUserId, found.customerId)
        return (found.customerId, try await current(app: app, customerId: found.customerId, stored: found.state, environment: environment, now: now))
    }

    /// A stored state if it is still right (current at `now`, computed after the app's configuration last changed),
    /// otherwise one computed anew.
    private func current(app: AppRuntime, customerId: String, stored: StateRecord?, environment: Environment, now: Int64) async throws -> StateSnapshot {
        if let stored, stored.nextChangeAt.map({ now < $0 }) ?? true, stored.computedAt <= now, stored.computedAt >= app.updatedAt {
            let snapshot = StateSnapshot(json: stored.state, nextChangeAt: stored.nextChangeAt)
            states.remember(customer: customerId, environment: environment, snapshot)
            return snapshot
        }
        return try await refresh(app: app, customerId: customerId)[environment] ?? states.newCustomer(app, environment: environment)
    }

    /// Recomputes one customer now, in a transaction.
    @discardableResult
    public func refresh(app: AppRuntime, customerId: String) async throws -> [Environment: StateSnapshot] {
        let now = nowMs
        let states = self.states
        let snapshots = try await database.writing { session in
            try await session.lockCustomer(id: customerId)
            return try await states.recompute(session, app: app, customerId: customerId, now: now)
        }
        states.committed(customer: customerId, snapshots)
        return snapshots
    }
}

extension Ingestion {
    /// Stores what was pulled from Apple about one original transaction and recomputes its owner.
    func storePulled(_ pulled: AppleAPIAccess.Pulled, app: AppRuntime, originalTransactionId: String, now: Int64) async throws {
        let states = self.states
        let result: (String, [Environment: StateSnapshot])? = try await database.writing { session in
            var fresh = false
            for t in pulled.transactions { fresh = try await session.insert(t) || fresh }
            for r in pulled.renewals { fresh = try await session.insert(r) || fresh }
            guard fresh, let owner = try await session.owner(app: app.id, originalTransactionId: originalTransactionId) else { return nil }
            try await session.lockCustomer(id: owner)
            return (owner, try await states.recompute(session, app: app, customerId: owner, now: now))
        }
        if let result { states.committed(customer: result.0, result.1) }
    }
}
