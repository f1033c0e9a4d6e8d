import Crypto
import Foundation
import Integrations
import Testing

/// Standard Webhooks v1 signing, against the specification's published vectors (Fixtures/SOURCES.md) and the test's
/// own HMAC computation.
@Suite struct WebhookSignatureTests {
    struct Vector: Decodable {
        var secret: String
        var id: String
        var timestamp: Int64
        var payload: String
        var signature: String
    }

    static func vectors() throws -> [Vector] {
        guard let url = Bundle.module.url(forResource: "Fixtures/standard-webhooks-vectors", withExtension: "json") else {
            throw CocoaError(.fileNoSuchFile)
        }
        struct File: Decodable { var vectors: [Vector] }
        return try JSONDecoder().decode(File.self, from: Data(contentsOf: url)).vectors
    }

    @Test func thePublishedVectorsReproduceExactly() throws {
        let vectors = try Self.vectors()
        #expect(vectors.count == 2)
        for vector in vectors {
            let secret = try WebhookSecret(vector.secret)
            let signature = WebhookSignature.sign(
                id: vector.id, timestamp: vector.timestamp, body: Data(vector.payload.utf8), secret: secret)
            #expect(signature == vector.signature)
            try WebhookSignature.verify(
                id: vector.id, timestamp: "\(vector.timestamp)", signature: vector.signature, body: Data(vector.payload.utf8),
                secret: secret, now: vector.timestamp + 10)
        }
    }

    @Test func aSignatureIsTheHMACOfIdTimestampAndBody() throws {
        let secret = WebhookSecret.generate()
        #expect(secret.key.count == 24)
        #expect(try WebhookSecret(secret.text) == secret)
        let body = Data(#"{"type":"subscription.renewed"}"#.utf8)
        let key = try #require(Data(base64Encoded: String(secret.text.dropFirst(6))))
        let mac = HMAC<SHA256>.authenticationCode(for: Data("msg_1.1700000000.".utf8) + body, using: SymmetricKey(data: key))
        #expect(
            WebhookSignature.sign(id: "msg_1", timestamp: 1_700_000_000, body: body, secret: secret) == "v1,"
                + Data(mac).base64EncodedString())
    }

    @Test func duringARotationEitherSecretVerifies() throws {
        let old = WebhookSecret.generate()
        let new = WebhookSecret.generate()
        let body = Data("{}".utf8)
        let header = WebhookSignature.header(id: "msg_2", timestamp: 100, body: body, secrets: [new, old])
        #expect(header.split(separator: " ").count == 2)
        for secret in [old, new] {
            try WebhookSignature.verify(id: "msg_2", timestamp: "100", signature: header, body: body, secret: secret, now: 100)
        }
        #expect(throws: IntegrationError(.signatureMismatch, "no v1 signature matches the body")) {
            try WebhookSignature.verify(
                id: "msg_2", timestamp: "100", signature: header, body: body, secret: .generate(), now: 100)
        }
    }

    @Test func whatAReceiverMustRefuse() throws {
        let vector = try #require(try Self.vectors().first)
        let secret = try WebhookSecret(vector.secret)
        let body = Data(vector.payload.utf8)
        func code(
            id: String? = vector.id, timestamp: String? = "\(vector.timestamp)", signature: String? = vector.signature,
            body: Data = body, now: Int64 = vector.timestamp
        ) -> IntegrationError.Code? {
            do {
                try WebhookSignature.verify(id: id, timestamp: timestamp, signature: signature, body: body, secret: secret, now: now)
                return nil
            } catch {
                return error.code
            }
        }
        #expect(code() == nil)
        #expect(code(signature: "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=") == .signatureMismatch)
        #expect(code(signature: "v1,") == .signatureMismatch)
        #expect(code(body: Data((vector.payload + " ").utf8)) == .signatureMismatch)
        #expect(code(now: vector.timestamp + 301) == .timestampOutOfTolerance)
        #expect(code(now: vector.timestamp - 301) == .timestampOutOfTolerance)
        #expect(code(now: vector.timestamp + 300) == nil)
        #expect(code(timestamp: "\(vector.timestamp).5") == .missingSignatureHeaders)
        // A sender's extreme timestamps are refused, never overflow.
        #expect(code(timestamp: "\(Int64.min)") == .timestampOutOfTolerance)
        #expect(code(timestamp: "\(Int64.max)") == .timestampOutOfTolerance)
        #expect(code(id: nil) == .missingSignatureHeaders)
        #expect(code(timestamp: nil) == .missingSignatureHeaders)
        #expect(code(signature: nil) == .missingSignatureHeaders)
        for bad in ["", "whsec_", "sk_abc", "whsec_!!!"] {
            #expect(throws: IntegrationError.self) { try WebhookSecret(bad) }
        }
        #expect(!"\(secret)".contains(vector.secret.dropFirst(6)))
    }
}
