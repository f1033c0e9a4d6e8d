import Foundation

/// A signed transaction as the store hands it to the app.
public struct StoreTransaction: Sendable, Hashable, Codable {
    public var id: String
    public var originalId: String
    public var productId: String
    /// StoreKit 2's `jwsRepresentation`: what the server verifies.
    public var jwsRepresentation: String

    public init(id: String, originalId: String, productId: String, jwsRepresentation: String) {
        self.id = id
        self.originalId = originalId
        self.productId = productId
        self.jwsRepresentation = jwsRepresentation
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
    public var offerId: String
    public var keyIdentifier: String
    public var nonce: UUID
    /// Epoch milliseconds.
    public var timestamp: Int64
    /// DER, base64.
    public var signature: String
    /// StoreKit 2's compact JWS (audience `promotional-offer`), when the server knows the key's issuer id.
    public var jws: String?

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
}
