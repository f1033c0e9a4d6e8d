import AppStore
import Foundation
import TestSupport
import Testing

@Suite struct ChainCacheTests {
    @Test func secondCallHitsTheCache() async throws {
        let pki = try TestPKI()
        let cache = ChainCache()
        let verifier = try pki.verifier(cache: cache)
        let jws = try pki.sign(transactionPayload())
        _ = try await verifier.verifyTransaction(jws)
        _ = try await verifier.verifyTransaction(jws)
        #expect(cache.count == 1)
        #expect(cache.statistics.hits == 1)
        #expect(cache.statistics.misses == 1)
    }

    /// A chain cached while valid is not kept valid once a certificate has expired at the validation time.
    @Test func expiredCertificateIsNotKeptValidByTheCache() async throws {
        let leafEnd: Int64 = 1_750_000_000_000
        let pki = try TestPKI(.init(leafValidity: TestPKI.start...Date(timeIntervalSince1970: Double(leafEnd) / 1000)))
        let cache = ChainCache()
        let verifier = try pki.verifier(cache: cache)
        _ = try await verifier.verifyTransaction(try pki.sign(transactionPayload(signedDate: leafEnd - 60_000)))
        #expect(cache.count == 1)
        let error = await verificationError {
            try await verifier.verifyTransaction(try pki.sign(transactionPayload(signedDate: leafEnd + 60_000)))
        }
        #expect(error?.code == .verificationFailure)
        // Data signed while the chain was valid still verifies from the cache.
        _ = try await verifier.verifyTransaction(try pki.sign(transactionPayload(signedDate: leafEnd - 30_000)))
    }

    @Test func intermediateAndRootWindowsAreCheckedToo() async throws {
        let intermediateEnd: Int64 = 1_750_000_000_000
        let pki = try TestPKI(.init(intermediateValidity: TestPKI.start...Date(timeIntervalSince1970: Double(intermediateEnd) / 1000)))
        let verifier = try pki.verifier()
        _ = try await verifier.verifyTransaction(try pki.sign(transactionPayload(signedDate: intermediateEnd - 1)))
        let error = await verificationError {
            try await verifier.verifyTransaction(try pki.sign(transactionPayload(signedDate: intermediateEnd + 1_000)))
        }
        #expect(error?.code == .verificationFailure)
    }

    @Test func leafSignatureIsCheckedOnEveryCall() async throws {
        let pki = try TestPKI()
        let verifier = try pki.verifier()
        _ = try await verifier.verifyTransaction(try pki.sign(transactionPayload()))
        var parts = try pki.sign(transactionPayload()).split(separator: ".").map(String.init)
        parts[1] = TestPKI.base64url(try JSONSerialization.data(withJSONObject: transactionPayload(bundleId: "com.attacker")))
        let error = await verificationError { try await verifier.verifyTransaction(parts.joined(separator: ".")) }
        #expect(error?.code == .verificationFailure)
    }

    @Test func cacheIsBounded() async throws {
        let cache = ChainCache(capacity: 2)
        for _ in 0..<5 {
            let pki = try TestPKI()
            _ = try await pki.verifier(cache: cache).verifyTransaction(try pki.sign(transactionPayload()))
        }
        #expect(cache.count == 2)
    }

    @Test func sharedCacheIsKeyedByTrustStore() async throws {
        let cache = ChainCache()
        let pki = try TestPKI()
        let other = try TestPKI()
        let jws = try pki.sign(transactionPayload())
        _ = try await pki.verifier(cache: cache).verifyTransaction(jws)
        let error = await verificationError { try await other.verifier(cache: cache).verifyTransaction(jws) }
        #expect(error?.code == .verificationFailure)
    }

    @Test func concurrentVerificationsAgree() async throws {
        let pki = try TestPKI()
        let verifier = try pki.verifier()
        let jws = try pki.sign(transactionPayload())
        let ids = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<32 { group.addTask { try await verifier.verifyTransaction(jws).transactionId } }
            return try await group.reduce(into: [String?]()) { $0.append($1) }
        }
        #expect(ids.count == 32)
        #expect(Set(ids) == ["2000000000000001"])
    }
}
