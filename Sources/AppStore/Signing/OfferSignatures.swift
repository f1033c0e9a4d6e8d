import Crypto
import Foundation

/// Signatures that let an app redeem subscription offers, made with an In-App Purchase key.
extension AppStoreSigningKey {
    /// The promotional-offer signature of StoreKit 1 (and `Product.PurchaseOption.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`):
    /// ECDSA P-256 with SHA-256 over `bundleId ⁣ keyId ⁣ productId ⁣ offerId ⁣ applicationUsername ⁣ nonce ⁣ timestamp`,
    /// joined with U+2063, the username and nonce in lower case (no username is the empty string), the timestamp in
    /// epoch ms. The username is whatever the app sets as `SKPayment.applicationUsername`: any string, often but not
    /// necessarily a UUID (pass an `appAccountToken` as its `uuidString`). Returns the DER signature in standard base64.
    public func promotionalOfferSignatureV1(
        productId: String, offerId: String, applicationUsername: String, nonce: UUID, timestamp: Int64
    ) throws -> String {
        let payload = Self.promotionalOfferPayloadV1(
            bundleId: bundleId, keyId: keyId, productId: productId, offerId: offerId,
            applicationUsername: applicationUsername, nonce: nonce, timestamp: timestamp)
        return try privateKey.signature(for: Data(payload.utf8)).derRepresentation.base64EncodedString()
    }

    /// The exact string the V1 promotional-offer signature covers.
    public static func promotionalOfferPayloadV1(
        bundleId: String, keyId: String, productId: String, offerId: String, applicationUsername: String, nonce: UUID,
        timestamp: Int64
    ) -> String {
        [bundleId, keyId, productId, offerId, applicationUsername.lowercased(), nonce.uuidString.lowercased(), String(timestamp)]
            .joined(separator: "\u{2063}")
    }

    /// The JWS for a promotional offer in StoreKit 2 (audience `promotional-offer`).
    public func promotionalOfferSignatureV2(
        productId: String, offerIdentifier: String, transactionId: String? = nil, now: Date = Date(), nonce: UUID = UUID()
    ) throws -> String {
        try signJWT(
            StoreKitRequestClaims(
                base: .init(key: self, audience: "promotional-offer", now: now, nonce: nonce),
                productId: productId, offerIdentifier: offerIdentifier, transactionId: transactionId, allowIntroductoryOffer: nil))
    }

    /// The JWS that sets a customer's introductory-offer eligibility (audience `introductory-offer-eligibility`).
    public func introductoryOfferEligibilitySignature(
        productId: String, allowIntroductoryOffer: Bool, transactionId: String, now: Date = Date(), nonce: UUID = UUID()
    ) throws -> String {
        try signJWT(
            StoreKitRequestClaims(
                base: .init(key: self, audience: "introductory-offer-eligibility", now: now, nonce: nonce),
                productId: productId, offerIdentifier: nil, transactionId: transactionId, allowIntroductoryOffer: allowIntroductoryOffer))
    }
}

/// The claims of a JWS that signs a StoreKit request: `iss`, `iat` (seconds), `aud`, `bid` and a one-time `nonce`,
/// plus the feature's own. There is no `exp`: Apple derives the expiry from `iat`.
struct StoreKitRequestClaims: Encodable {
    struct Base {
        var iss: String
        var iat: Int64
        var aud: String
        var bid: String
        var nonce: String

        init(key: AppStoreSigningKey, audience: String, now: Date, nonce: UUID) {
            iss = key.issuerId
            iat = Int64(now.timeIntervalSince1970)
            aud = audience
            bid = key.bundleId
            self.nonce = nonce.uuidString.lowercased()
        }
    }

    var base: Base
    var productId: String
    var offerIdentifier: String?
    var transactionId: String?
    var allowIntroductoryOffer: Bool?

    enum CodingKeys: String, CodingKey {
        case iss, iat, aud, bid, nonce, productId, offerIdentifier, transactionId, allowIntroductoryOffer
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(base.iss, forKey: .iss)
        try c.encode(base.iat, forKey: .iat)
        try c.encode(base.aud, forKey: .aud)
        try c.encode(base.bid, forKey: .bid)
        try c.encode(base.nonce, forKey: .nonce)
        try c.encode(productId, forKey: .productId)
        try c.encodeIfPresent(offerIdentifier, forKey: .offerIdentifier)
        try c.encodeIfPresent(transactionId, forKey: .transactionId)
        try c.encodeIfPresent(allowIntroductoryOffer, forKey: .allowIntroductoryOffer)
    }
}
