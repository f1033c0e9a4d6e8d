import AppStore
import Foundation

/// A promotional offer signed for one customer: StoreKit 1's signature (also what StoreKit 2's
/// `.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)` purchase option takes) and StoreKit 2's JWS.
public struct SignedPromotionalOffer: Codable, Sendable, Hashable {
    public var productId: String
    public var offerId: String
    public var keyIdentifier: String
    /// Lower-case UUID, used once.
    public var nonce: String
    /// Epoch milliseconds.
    public var timestamp: Int64
    /// The ECDSA signature (DER, base64) over bundle id, key id, product, offer, the customer's appAccountToken as the
    /// application username, nonce and timestamp.
    public var signature: String
    /// The application username the signature covers: the customer's appAccountToken, which the purchase must carry.
    public var appAccountToken: String
    /// StoreKit 2's compact JWS (audience `promotional-offer`); null when no issuer id is known for the key.
    public var jws: String?
}

/// Signs promotional offers for the app's customers with its In-App Purchase key, as Apphud and RevenueCat do: only
/// for customers who subscribed in the product's group before (promotional offers are for existing and lapsed
/// subscribers).
public struct PromotionalOffers: Sendable {
    let customers: CustomerReads
    let tokens: AccountTokens
    let clock: @Sendable () -> Date

    public func sign(
        productId: String, offerId: String, for appUserId: String, caller: Caller, environment: Environment
    ) async throws -> SignedPromotionalOffer {
        let app = caller.app
        guard let signer = try app.config.offerSigner() else {
            throw CoreError.conflict(
                "the app has no offerSigningKey: set its In-App Purchase key with PATCH /v1/apps/{appId} {\"offerSigningKey\": {\"keyId\", \"privateKey\"}}"
            )
        }
        guard !offerId.isEmpty, offerId.utf8.count <= 64 else {
            throw CoreError.invalidInput(field: "offerId", "an offer id is 1 to 64 characters")
        }
        guard let product = app.config.catalog[productId], product.type == .autoRenewable, let group = product.group else {
            throw CoreError.invalidInput(
                field: "productId", "'\(productId)' is not an auto-renewable subscription of the app's catalog")
        }
        let read = try await customers.state(of: appUserId, caller: caller, environment: environment)
        guard try read.snapshot.state().subscriptions.contains(where: { $0.group == group }) else {
            throw CoreError.conflict(
                "\(appUserId) never subscribed in group '\(group)': promotional offers are for existing and lapsed subscribers")
        }
        let token = try await tokens.token(for: appUserId, app: app.id)
        let nonce = UUID()
        let now = clock()
        let timestamp = now.millisecondsSince1970
        do {
            let signature = try signer.promotionalOfferSignatureV1(
                productId: productId, offerId: offerId, applicationUsername: token, nonce: nonce, timestamp: timestamp)
            let jws =
                signer.issuerId.isEmpty
                ? nil : try signer.promotionalOfferSignatureV2(productId: productId, offerIdentifier: offerId, now: now, nonce: nonce)
            return SignedPromotionalOffer(
                productId: productId, offerId: offerId, keyIdentifier: signer.keyId, nonce: nonce.uuidString.lowercased(),
                timestamp: timestamp, signature: signature, appAccountToken: token, jws: jws)
        } catch {
            throw CoreError.internalError("the offer could not be signed: \(error)")
        }
    }
}
