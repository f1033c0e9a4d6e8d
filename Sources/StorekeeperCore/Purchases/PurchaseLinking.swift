import AppStore
import Foundation
import Storage

/// What the SDK posts: a StoreKit 2 signed transaction, or an app receipt (base64).
public struct PostedPurchase: Codable, Sendable {
    public var signedTransaction: String?
    public var receipt: String?

    public init(signedTransaction: String? = nil, receipt: String? = nil) {
        self.signedTransaction = signedTransaction
        self.receipt = receipt
    }
}

/// A purchase linked to its customer.
public struct LinkedPurchase: Sendable {
    public var customerId: String
    /// The environment the purchase is from, when it is one of the app's.
    public var environment: Environment?
    /// Whether linking moved purchases from another named customer (the app's `transfer` policy).
    public var transferred: Bool
}

/// Links what the app posts to its customers: verified purchases (merging anonymous owners, transferring by the app's
/// policy) and aliases. Each write is one transaction that also recomputes every customer it touched.
public struct PurchaseLinking: Sendable {
    let database: StorageDatabase
    let recomputer: StateRecomputer
    let cache: CustomerStateCache
    /// Counts verifying and recording as ingest, which deliveries give way to (not the wait for Apple's history).
    let activity: IngestActivity
    let metrics: ServerMetrics
    let clock: @Sendable () -> Date
    /// Pulls Apple's history behind a posted purchase; nil leaves Apple alone.
    let appleAPI: AppleAPIAccess?

    /// Verifies a posted purchase, pulls what Apple knows about it when the app has credentials, and links its
    /// original transactions to the customer named `appUserId`.
    public func post(_ posted: PostedPurchase, app: AppRuntime, appUserId: String) async throws -> LinkedPurchase {
        let appUserId = try AppUserIds.validate(appUserId, posting: true)
        let now = clock().millisecondsSince1970
        var transactions = try await activity.measure { try await verifiedTransactions(posted, app: app, now: now) }
        var renewals: [RenewalInfoRecord] = []
        if let appleAPI, app.config.serverAPI != nil, let any = transactions.first {
            let pulled = await appleAPI.history(
                app: app, transactionId: any.transactionId, environment: Environment(rawValue: any.environment), now: now)
            transactions += pulled.transactions
            renewals += pulled.renewals
        }
        let facts = (transactions: transactions, renewals: renewals)
        // Purchases that carry no appAccountToken (made in the App Store, or before the app passed one): Apple is asked to
        // carry the customer's from now on, so that their renewals' notifications find this customer by it.
        let tokenless = appleAPI != nil && app.config.serverAPI != nil ? FactCoding.originalsWithoutAccountToken(transactions) : []
        let token = AccountTokens.token(app: app.id, appUserId: appUserId)
        let recomputer = self.recomputer
        let linked = try await activity.measure {
            try await database.writing { session -> Linked in
                if !tokenless.isEmpty, token != appUserId.lowercased() {
                    try await session.registerAccountToken(app: app.id, token: token, appUserId: appUserId, at: now)
                }
                var linked = try await Self.link(
                    originalTransactionIds: Set(facts.transactions.map(\.originalTransactionId)).sorted(), to: appUserId, app: app,
                    session: session, now: now)
                for transaction in facts.transactions { try await session.insert(transaction) }
                for renewal in facts.renewals { try await session.insert(renewal) }
                for id in [linked.customerId] + linked.previousOwners.sorted() {
                    linked.recomputed.append(try await recomputer.lockAndRecompute(session, app: app, customerId: id, now: now))
                }
                return linked
            }
        }
        linked.recomputed.forEach(recomputer.committed)
        if linked.merged { cache.forgetCustomerIds(app: app.id) }
        let environment = transactions.first.map { Environment(rawValue: $0.environment) }
        if let appleAPI, let environment {
            for original in tokenless {
                await appleAPI.setAccountToken(app: app, originalTransactionId: original, environment: environment, token: token)
            }
        }
        return LinkedPurchase(
            customerId: linked.customerId, environment: environment.flatMap { app.accepts($0) ? $0 : nil },
            transferred: !linked.previousOwners.isEmpty)
    }

    /// What linking did inside the transaction.
    struct Linked: Sendable {
        var customerId: String
        /// Named customers that lost a transaction to this one (transfers): they are recomputed too.
        var previousOwners: Set<String> = []
        /// Whether an anonymous customer merged into this one (cached names may lead elsewhere now).
        var merged = false
        var recomputed: [RecomputedCustomer] = []
    }

    /// Finds or creates the customer and makes it the owner of every original transaction: unowned ones are linked,
    /// anonymous owners merge into it, named owners lose theirs by the app's transfer policy.
    static func link(
        originalTransactionIds: [String], to appUserId: String, app: AppRuntime, session: StorageSession, now: Int64
    ) async throws -> Linked {
        let customer = try await session.findOrCreateCustomer(
            app: app.id, appUserId: appUserId, anonymous: false, newId: CustomerIds.new(), at: now)
        var linked = Linked(customerId: customer.id)
        for original in originalTransactionIds {
            guard let owner = try await session.owner(app: app.id, originalTransactionId: original) else {
                _ = try await session.link(app: app.id, originalTransactionId: original, customer: customer.id, at: now)
                continue
            }
            guard owner != customer.id else { continue }
            if try await session.customer(id: owner)?.anonymous == true {
                linked.merged = true
                try await session.merge(customer: owner, into: customer.id)
                try await session.insertAudit(
                    AuditRecord(
                        appId: app.id, action: .merge, originalTransactionId: original, fromCustomer: owner, toCustomer: customer.id,
                        detail: "the app posted a transaction of an anonymous customer for \(appUserId)", at: now))
                continue
            }
            switch app.config.transferPolicy {
            case .keep:
                throw CoreError.transactionOwned(originalTransactionId: original)
            case .transfer:
                try await session.transfer(app: app.id, originalTransactionId: original, to: customer.id, at: now)
                try await session.insertAudit(
                    AuditRecord(
                        appId: app.id, action: .transfer, originalTransactionId: original, fromCustomer: owner, toCustomer: customer.id,
                        detail: "the app posted the transaction for \(appUserId)", at: now))
                linked.previousOwners.insert(owner)
            }
        }
        return linked
    }

    /// The posted purchase's transactions, verified: one signed transaction, or every entry of a receipt.
    private func verifiedTransactions(_ posted: PostedPurchase, app: AppRuntime, now: Int64) async throws -> [TransactionRecord] {
        do {
            switch (posted.signedTransaction, posted.receipt) {
            case (let jws?, nil):
                let transaction = try await app.verifyTransaction(jws)
                return [try FactCoding.record(transaction, signed: jws, source: .sdk, app: app.id, now: now)]
            case (nil, let receipt?):
                return try await receiptTransactions(receipt, app: app, now: now)
            default:
                throw CoreError.invalidInput("post exactly one of signedTransaction and receipt")
            }
        } catch let error as VerificationError {
            metrics.verificationFailure(error.code.rawValue)
            throw CoreError.verification(error)
        }
    }

    private func receiptTransactions(_ base64: String, app: AppRuntime, now: Int64) async throws -> [TransactionRecord] {
        guard let der = Data(base64Encoded: base64, options: .ignoreUnknownCharacters) else {
            throw VerificationError(.invalidReceiptFormat, "the receipt is not base64")
        }
        let receipt = try await app.receiptVerifier.verify(Array(der))
        // A receipt that names no environment is refused: its purchases would otherwise count in every environment.
        guard let environment = receipt.environment else {
            throw VerificationError(
                .invalidEnvironment, "the receipt's type \(receipt.receiptType.map { "'\($0)'" } ?? "(none)") names no environment")
        }
        try app.checkEnvironment(environment, what: "receipt")
        var records: [TransactionRecord] = []
        for entry in receipt.inApp {
            var transaction = JWSTransactionDecodedPayload(receiptEntry: entry, receipt: receipt)
            transaction.environment = environment
            if transaction.transactionId == nil || transaction.productId == nil { continue }
            records.append(try FactCoding.record(transaction, signed: nil, source: .receipt, app: app.id, now: now))
        }
        if app.config.sharedSecret != nil, let appleAPI {
            records += try await appleAPI.verifyReceipt(base64, app: app, now: now)
        }
        return records
    }

    /// Makes `alias` another name of `appUserId`'s customer; if `alias` named a customer already, that customer's
    /// transactions and names merge into this one. With the public key, only the app's own anonymous id
    /// (`$device:…`) can become an alias of a signed-in user.
    public func alias(_ alias: String, of appUserId: String, caller: Caller) async throws -> String {
        let appUserId = try AppUserIds.validate(appUserId, posting: true)
        let alias = try AppUserIds.validate(alias, field: "alias")
        guard alias != appUserId else { throw CoreError.invalidInput(field: "alias", "an app user id cannot be its own alias") }
        let device = AppUserIds.devicePrefix
        if caller.keyKind != .secret, !alias.hasPrefix(device) || appUserId.hasPrefix(device) {
            throw CoreError.forbidden(
                "with the public key, only an anonymous id (\(device)…) can become an alias of a signed-in user; merging other customers needs a secret key"
            )
        }
        let app = caller.app
        let now = clock().millisecondsSince1970
        let recomputer = self.recomputer
        let recomputed = try await database.writing { session -> RecomputedCustomer in
            let customer = try await session.findOrCreateCustomer(
                app: app.id, appUserId: appUserId, anonymous: false, newId: CustomerIds.new(), at: now)
            if let other = try await session.customer(app: app.id, appUserId: alias) {
                guard other.id != customer.id else { return RecomputedCustomer(appId: app.id, customerId: customer.id, states: [:]) }
                try await session.merge(customer: other.id, into: customer.id)
                try await session.insertAudit(
                    AuditRecord(
                        appId: app.id, action: .merge, fromCustomer: other.id, toCustomer: customer.id,
                        detail: "alias \(alias) merged into \(appUserId)", at: now))
            } else {
                try await session.addAppUserId(app: app.id, appUserId: alias, customer: customer.id, at: now)
                try await session.insertAudit(
                    AuditRecord(
                        appId: app.id, action: .alias, toCustomer: customer.id, detail: "alias \(alias) added to \(appUserId)", at: now))
            }
            return try await recomputer.lockAndRecompute(session, app: app, customerId: customer.id, now: now)
        }
        recomputer.committed(recomputed)
        cache.forgetCustomerIds(app: app.id)
        return recomputed.customerId
    }
}
