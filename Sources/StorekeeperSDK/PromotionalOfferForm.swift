import Foundation

/// How a promotional offer goes to StoreKit, decided before the purchase starts: an offer that StoreKit could not apply
/// is an error then, never a purchase at full price.
package enum PromotionalOfferForm: Sendable, Hashable {
    /// StoreKit 2's JWS-signed offer (`Product.PurchaseOption.promotionalOffer(_:compactJWS:)`), which Apple asks for
    /// from iOS 26 (the signature form is deprecated there).
    case compactJWS(offerId: String, jws: String)
    /// StoreKit 1's signature form (`promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`): the DER signature
    /// decoded, the timestamp as the platform's `Int`.
    case signature(offerId: String, keyIdentifier: String, nonce: UUID, signature: Data, timestamp: Int)
}

extension PromotionalOfferSignature {
    /// The form to purchase with: the JWS when the server signed one and the SDK was built against a StoreKit that
    /// takes it (`jwsSupported`), else the signature. Throws `invalidOffer` when neither can be passed on as it is: a
    /// JWS that is not three base64url parts, a signature that is not base64, or a timestamp that does not fit an
    /// `Int` of `intBitWidth` bits (epoch milliseconds do not fit a 32-bit watch's `Int`: there only the JWS works).
    package func form(jwsSupported: Bool, intBitWidth: Int = Int.bitWidth) throws(StorekeeperError) -> PromotionalOfferForm {
        if jwsSupported, let jws {
            let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
            let alphabet = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.unicodeScalars.allSatisfy(alphabet.contains) }) else {
                throw .invalidOffer("the offer '\(offerId)' came with a JWS that is not three base64url parts")
            }
            return .compactJWS(offerId: offerId, jws: jws)
        }
        guard let decoded = Data(base64Encoded: signature), !decoded.isEmpty else {
            throw .invalidOffer("the offer '\(offerId)' came with a signature that is not base64")
        }
        let fits = intBitWidth >= 64 || (Int64(Int32.min)...Int64(Int32.max)).contains(timestamp)
        guard fits, let value = Int(exactly: timestamp) else {
            throw .invalidOffer(
                "the offer '\(offerId)' has a timestamp (\(timestamp) ms) that this device's StoreKit cannot take; it needs the offer as a JWS"
            )
        }
        return .signature(offerId: offerId, keyIdentifier: keyIdentifier, nonce: nonce, signature: decoded, timestamp: value)
    }
}
