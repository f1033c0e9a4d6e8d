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
}
