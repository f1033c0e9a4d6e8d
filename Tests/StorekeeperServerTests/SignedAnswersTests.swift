import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import ResponseSigning
import StorekeeperCore
import TestSupport
import Testing

@testable import StorekeeperServer

/// The customer API's answers signed as README "Answers the device can trust" says, checked here with swift-crypto
/// alone (not the SDK's verifier).
@Suite("Signed answers")
struct SignedAnswersTests {
    static let nonceName = HTTPField.Name(SignatureHeaders.nonce)
    static let signatureName = HTTPField.Name(SignatureHeaders.signature)
    static let timeName = HTTPField.Name(SignatureHeaders.requestTime)

    @Test("a customer read is signed over its nonce, path, time, ETag and body by an intermediate the root key vouches for")
    func signedRead() async throws {
        let h = try await Harness.make(.sqlite)
        let signer = try #require(h.core.responseSigner)
        let root = try Curve25519.Signing.PublicKey(rawRepresentation: signer.rootPublicKey)
        try await h.test { client in
            var fields = headers(h.app.publicKey)
            let nonce = Data((0..<12).map { UInt8($0 * 7) }).base64EncodedString()
            fields[try #require(Self.nonceName)] = nonce
            let answer = try await client.execute(uri: "/v1/customers/alice", method: .get, headers: fields)
            #expect(answer.status == .ok)
            let signatureName = try #require(Self.signatureName)
            let timeName = try #require(Self.timeName)
            let header = try IntermediateKeySignature(headerValue: try #require(answer.headers[signatureName]))
            let timeText = try #require(answer.headers[timeName])
            let time = try #require(Int64(timeText))
            #expect(
                root.isValidSignature(
                    header.rootSignature, for: IntermediateKeySignature.statement(publicKey: header.publicKey, expiresAt: header.expiresAt))
            )
            #expect(time < header.expiresAt)
            let intermediate = try Curve25519.Signing.PublicKey(rawRepresentation: header.publicKey)
            let body = Array(answer.body.readableBytesView)
            let message = SignedMessage(
                nonce: nonce, path: "/v1/customers/alice", requestTime: time, etag: answer.headers[.eTag], body: body)
            #expect(intermediate.isValidSignature(header.signature, for: message.bytes))
            // Another nonce, path or body does not verify.
            var other = message
            other.nonce = Data(repeating: 1, count: 12).base64EncodedString()
            #expect(!intermediate.isValidSignature(header.signature, for: other.bytes))
            other = message
            other.path = "/v1/customers/bob"
            #expect(!intermediate.isValidSignature(header.signature, for: other.bytes))
            other = message
            other.body = Array(String(decoding: body, as: UTF8.self).replacingOccurrences(of: "false", with: "true").utf8)
            #expect(!intermediate.isValidSignature(header.signature, for: other.bytes))

            // Without a nonce it is signed all the same; a nonce that is not 12 bytes of base64 is refused, naming it.
            let plain = try await client.execute(uri: "/v1/customers/alice", method: .get, headers: headers(h.app.publicKey))
            #expect(plain.headers[signatureName] != nil)
            fields[try #require(Self.nonceName)] = "short"
            let refused = try await client.execute(uri: "/v1/customers/alice", method: .get, headers: fields)
            #expect(refused.status == .badRequest)
            #expect(String(buffer: refused.body).contains(SignatureHeaders.nonce))
            // The secret-key reads beside them are not the app's, and are not signed.
            let events = try await client.execute(uri: "/v1/customers/alice/events", method: .get, headers: headers(h.app.secretKey))
            #expect(events.headers[signatureName] == nil)
        }
    }

    @Test("the intermediate key is replaced after its rotation, and each is valid for twice that")
    func rotation() throws {
        let signer = ResponseSigner(root: Curve25519.Signing.PrivateKey(), rotation: .seconds(3600))
        let first = try signer.intermediate(at: 1_000_000)
        #expect(try signer.intermediate(at: 1_000_000 + 3_599_000).publicKey == first.publicKey)
        let next = try signer.intermediate(at: 1_000_000 + 3_600_000)
        #expect(next.publicKey != first.publicKey && next.expiresAt == 1_000_000 + 3_600_000 + 7_200_000)
    }
}
