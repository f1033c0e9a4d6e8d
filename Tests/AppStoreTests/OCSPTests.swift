import AppStore
import Foundation
import TestSupport
import Testing

@Suite struct OCSPTests {
    struct Unreachable: OCSPTransport {
        func send(request: [UInt8], to uri: String) async throws -> [UInt8] {
            throw URLError(.cannotConnectToHost)
        }
    }

    struct Garbage: OCSPTransport {
        func send(request: [UInt8], to uri: String) async throws -> [UInt8] { [0x30, 0x03, 0x0A, 0x01, 0x00] }
    }

    @Test func unreachableResponderIsRetryable() async throws {
        let pki = try TestPKI(.init(ocspURI: "http://127.0.0.1:1/ocsp"))
        let error = await verificationError {
            try await pki.verifier(ocsp: OCSPChecking(transport: Unreachable())).verifyTransaction(try pki.sign(transactionPayload()))
        }
        #expect(error?.code == .retryableVerificationFailure)
        #expect(error?.isRetryable == true)
    }

    @Test func closedPortOverHTTPIsRetryable() async throws {
        // Port 1 on loopback: nothing listens there, so the connection is refused at once.
        let pki = try TestPKI(.init(ocspURI: "http://127.0.0.1:1/ocsp"))
        let error = await verificationError {
            try await pki.verifier(ocsp: OCSPChecking(transport: HTTPOCSPTransport(timeout: .seconds(2)))).verifyTransaction(
                try pki.sign(transactionPayload()))
        }
        #expect(error?.code == .retryableVerificationFailure)
    }

    @Test func unusableResponseIsAFailureNotARetry() async throws {
        let pki = try TestPKI(.init(ocspURI: "http://127.0.0.1:1/ocsp"))
        let error = await verificationError {
            try await pki.verifier(ocsp: OCSPChecking(transport: Garbage())).verifyTransaction(try pki.sign(transactionPayload()))
        }
        #expect(error?.code == .verificationFailure)
    }

    @Test func ocspIsOffByDefault() async throws {
        let pki = try TestPKI(.init(ocspURI: "http://127.0.0.1:1/ocsp"))
        #expect(try pki.verifier().configuration.ocsp == nil)
        _ = try await pki.verifier().verifyTransaction(try pki.sign(transactionPayload()))
    }
}
