import Foundation

/// The forms in which signed data arrives: a bare compact JWS, or Apple's webhook body `{"signedPayload": "…"}`.
public enum SignedInput {
    private struct WebhookBody: Decodable {
        var signedPayload: String
    }

    /// The JWS in `data`, with surrounding white space removed.
    public static func extractJWS(from data: Data) throws(VerificationError) -> String {
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("{") else { return text }
        do {
            return try JSONDecoder().decode(WebhookBody.self, from: Data(text.utf8)).signedPayload
        } catch {
            throw VerificationError(.invalidJWTFormat, "the JSON body is not of the form {\"signedPayload\": \"…\"}")
        }
    }

    /// What a piece of input is.
    public enum Kind: Sendable, Equatable {
        /// A compact JWS (from a bare JWS or a webhook body).
        case jws(String)
        /// A PKCS#7 app receipt, as given (base64 text or DER).
        case receipt([UInt8])
        /// A legacy SKPaymentTransaction receipt (base64 of an old-style property list).
        case legacyTransactionReceipt([UInt8])
    }

    /// Tells a JWS or webhook body, an app receipt and a legacy transaction receipt apart.
    public static func classify(_ data: Data) throws(VerificationError) -> Kind {
        let bytes = Array(data)
        if bytes.first == 0x30 { return .receipt(bytes) }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("{") || text.contains(".") { return .jws(try extractJWS(from: data)) }
        let compact = Array(text.utf8).filter { !($0 == 0x0A || $0 == 0x0D || $0 == 0x20 || $0 == 0x09) }
        if let decoded = Base64.decode(compact, alphabet: .standard) {
            if decoded.first == 0x30 { return .receipt(compact) }
            if decoded.first == UInt8(ascii: "{") { return .legacyTransactionReceipt(compact) }
        }
        return .jws(text)
    }
}
