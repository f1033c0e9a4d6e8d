import AppStoreModels
import Foundation

/// A signed transaction as the store hands it to the app.
public struct StoreTransaction: Sendable, Hashable, Codable {
    /// The transaction's id.
    public var id: String
    /// Its original transaction id (the subscription's first transaction; its own id for other purchases).
    public var originalId: String
    /// The product bought.
    public var productId: String
    /// StoreKit 2's `jwsRepresentation`: what the server verifies.
    public var jwsRepresentation: String
    /// Whether the store checked Apple's signature on the device (StoreKit's `VerificationResult.verified`); nil when
    /// not known. An answer computed on the device is `verifiedOnDevice` only when every transaction in it was.
    public var verifiedByStore: Bool?

    /// A transaction as the store handed it over.
    public init(id: String, originalId: String, productId: String, jwsRepresentation: String, verifiedByStore: Bool? = nil) {
        self.id = id
        self.originalId = originalId
        self.productId = productId
        self.jwsRepresentation = jwsRepresentation
        self.verifiedByStore = verifiedByStore
    }
}

/// A subscription's status as the store reports it (`Product.SubscriptionInfo.status`): its latest transaction, which
/// may have expired (a billing retry), and its signed renewal info (whether it renews, whether it is in a billing grace
/// period).
public struct StoreSubscriptionStatus: Sendable, Hashable, Codable {
    /// The subscription's latest transaction.
    public var transaction: StoreTransaction
    /// The renewal info's compact JWS (`jwsRepresentation`).
    public var renewalInfo: String

    /// A status as the store reports it.
    public init(transaction: StoreTransaction, renewalInfo: String) {
        self.transaction = transaction
        self.renewalInfo = renewalInfo
    }
}

/// What a purchase came to in the store.
public enum StorePurchaseOutcome: Sendable, Hashable {
    case purchased(StoreTransaction)
    case userCancelled
    /// Waiting for approval (Ask to Buy) or a payment step; the transaction arrives later through the updates.
    case pending
}

/// A promotional offer's signature, as the server signs it for the customer (`Storekeeper.promotionalOffer`): StoreKit
/// 1's signature, which StoreKit 2's `.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)` option takes, and
/// StoreKit 2's JWS.
public struct PromotionalOfferSignature: Sendable, Hashable, Codable {
    /// The offer's identifier in App Store Connect.
    public var offerId: String
    /// The id of the In-App Purchase key the server signed with.
    public var keyIdentifier: String
    /// The one-time nonce the signature covers.
    public var nonce: UUID
    /// Epoch milliseconds.
    public var timestamp: Int64
    /// DER, base64.
    public var signature: String
    /// StoreKit 2's compact JWS (audience `promotional-offer`), when the server knows the key's issuer id.
    public var jws: String?

    /// A signed offer as the server answers it.
    public init(offerId: String, keyIdentifier: String, nonce: UUID, timestamp: Int64, signature: String, jws: String? = nil) {
        self.offerId = offerId
        self.keyIdentifier = keyIdentifier
        self.nonce = nonce
        self.timestamp = timestamp
        self.signature = signature
        self.jws = jws
    }
}

/// The store as the SDK sees it: StoreKit 2 in apps (`StorekeeperStoreKit`), the App Store simulator in tests
/// (`StorekeeperSDKTesting`).
public protocol StoreClient: Sendable {
    /// Transactions that arrive while the app runs: renewals, purchases made elsewhere, approvals (`Transaction.updates`).
    func transactionUpdates() -> AsyncStream<StoreTransaction>
    /// Transactions not finished yet (`Transaction.unfinished`).
    func unfinishedTransactions() async -> [StoreTransaction]
    /// The latest transaction of every product the customer has now (`Transaction.currentEntitlements`).
    func currentEntitlements() async -> [StoreTransaction]
    func purchase(
        productId: String, appAccountToken: UUID?, promotionalOffer: PromotionalOfferSignature?
    ) async throws(StorekeeperError) -> StorePurchaseOutcome
    /// Tells the store the purchase was delivered (`Transaction.finish()`).
    func finish(_ transaction: StoreTransaction) async
    /// Syncs with the App Store (`AppStore.sync()`): it may ask for the Apple ID password.
    func sync() async throws(StorekeeperError)
    /// The status of every subscription group these products belong to (`Product.SubscriptionInfo.status`); empty
    /// when the store cannot tell (no network and nothing cached, no subscription).
    func subscriptionStatuses(productIds: [String]) async -> [StoreSubscriptionStatus]
    /// The app's own signed transaction (`AppTransaction.shared`) when the store verified it, else nil.
    func appTransaction() async -> String?
    /// The App Store environment this copy of the app buys in (StoreKit's `AppTransaction.environment`; before it, the
    /// receipt's `sandboxReceipt` name), nil when the store cannot tell.
    func environment() async -> CustomerInfo.Environment?
}

extension StoreClient {
    /// A store that knows no subscription status: the offline computation then has the transactions alone (a
    /// subscription in its billing grace period counts as expired). Test doubles may leave it out.
    public func subscriptionStatuses(productIds: [String]) async -> [StoreSubscriptionStatus] { [] }

    /// A store without an app transaction.
    public func appTransaction() async -> String? { nil }

    /// The environment the app transaction names (its `receiptType`), nil without one.
    public func environment() async -> CustomerInfo.Environment? {
        guard let jws = await appTransaction() else { return nil }
        return CustomerInfo.Environment(appTransaction: jws)
    }
}

extension CustomerInfo.Environment {
    /// The environment an app transaction's compact JWS names (its `receiptType`); nil when it does not read as one or
    /// names an environment this SDK does not know. The signature is not checked here: the store checked it.
    public init?(appTransaction jws: String) {
        guard let payload = OfflineEntitlements.payload(of: jws, as: AppTransaction.self), let type = payload.receiptType else {
            return nil
        }
        self.init(rawValue: type.rawValue)
    }
}
