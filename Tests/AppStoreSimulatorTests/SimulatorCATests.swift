import AppStore
import AppStoreSimulator
import Foundation
import TestSupport
import Testing

@Suite struct SimulatorCATests {
    @Test func simulatorSignaturesVerifyWithTheRealVerifier() async throws {
        let ca = try SimulatorCA(validity: Date(timeIntervalSince1970: 1_700_000_000)...Date(timeIntervalSince1970: 2_000_000_000))
        var transaction = JWSTransactionDecodedPayload()
        transaction.transactionId = "1"
        transaction.bundleId = "com.example.app"
        transaction.environment = .sandbox
        transaction.signedDate = Timestamp(millisecondsSince1970: 1_748_736_000_000)
        let jws = try ca.sign(transaction)
        let verifier = try SignedDataVerifier(.init(rootCertificates: [ca.rootDER], bundleId: "com.example.app", environment: .sandbox))
        #expect(try await verifier.verifyTransaction(jws) == transaction)
        // Never trusted by default.
        let error = await verificationError { try await SignedDataVerifier(.init()).verifyTransaction(jws) }
        #expect(error?.code == .verificationFailure)
    }
}
