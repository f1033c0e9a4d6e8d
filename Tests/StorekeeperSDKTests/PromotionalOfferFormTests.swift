import Foundation
import Testing

@testable import StorekeeperSDK

/// How the StoreKit adapter passes a promotional offer on: decided before the purchase, so that an offer StoreKit could
/// not apply is an error and never a purchase at full price.
@Suite("Promotional offers, as StoreKit takes them")
struct PromotionalOfferFormTests {
    static let nonce = UUID(uuidString: "5C1D7E0A-9C2B-4E47-8F3A-2B6D1E0F9A11") ?? UUID()
    static let jws = "eyJhbGciOiJFUzI1NiJ9.eyJvZmZlcklkZW50aWZpZXIiOiJ3aW4tYmFjayJ9.c2lnbmF0dXJl"

    static func offer(
        signature: String = Data([0x30, 0x45, 0x02]).base64EncodedString(), timestamp: Int64 = 1_767_571_200_000, jws: String? = nil
    )
        -> PromotionalOfferSignature
    {
        PromotionalOfferSignature(
            offerId: "win-back", keyIdentifier: "KEY123", nonce: nonce, timestamp: timestamp, signature: signature, jws: jws)
    }

    @Test("a signed JWS goes as the JWS where StoreKit takes it (the signature form is deprecated from iOS 26)")
    func jwsPreferred() throws {
        let form = try Self.offer(jws: Self.jws).form(jwsSupported: true)
        #expect(form == .compactJWS(offerId: "win-back", jws: Self.jws))
    }

    @Test("without a StoreKit that takes JWS offers, or without a JWS, the signature goes, decoded")
    func signatureOtherwise() throws {
        let expected = PromotionalOfferForm.signature(
            offerId: "win-back", keyIdentifier: "KEY123", nonce: Self.nonce, signature: Data([0x30, 0x45, 0x02]),
            timestamp: 1_767_571_200_000)
        #expect(try Self.offer(jws: Self.jws).form(jwsSupported: false) == expected)
        #expect(try Self.offer().form(jwsSupported: true) == expected)
    }

    @Test("a signature that is not base64 is an error, never a purchase without the offer", arguments: ["", "not base64!", "%%%%"])
    func malformedSignature(signature: String) {
        #expect(throws: StorekeeperError.self) { try Self.offer(signature: signature).form(jwsSupported: false) }
        do {
            _ = try Self.offer(signature: signature).form(jwsSupported: false)
        } catch {
            guard case .invalidOffer(let message) = error else {
                Issue.record("expected invalidOffer, got \(error)")
                return
            }
            #expect(message.contains("win-back"))
        }
    }

    @Test("a JWS that is not three base64url parts is an error", arguments: ["a.b", "a..c", "a.b.c.d", "a.b+.c", ""])
    func malformedJWS(jws: String) {
        #expect(throws: StorekeeperError.self) { try Self.offer(jws: jws).form(jwsSupported: true) }
    }

    @Test("epoch milliseconds do not fit a 32-bit watch's Int: without a JWS that is an error, with one the JWS goes")
    func thirtyTwoBitTimestamp() throws {
        #expect(throws: StorekeeperError.self) { try Self.offer().form(jwsSupported: true, intBitWidth: 32) }
        #expect(try Self.offer(jws: Self.jws).form(jwsSupported: true, intBitWidth: 32) == .compactJWS(offerId: "win-back", jws: Self.jws))
        // A timestamp that does fit (only in a test: real ones are milliseconds since 1970) goes through.
        let small = try Self.offer(timestamp: 1_000).form(jwsSupported: false, intBitWidth: 32)
        guard case .signature(_, _, _, _, let timestamp) = small else {
            Issue.record("expected the signature form, got \(small)")
            return
        }
        #expect(timestamp == 1_000)
    }

    @Test("the error says nothing was bought")
    func message() {
        #expect(StorekeeperError.invalidOffer("x").message.contains("nothing was bought"))
        #expect(!StorekeeperError.invalidOffer("x").isRetryable)
    }
}
