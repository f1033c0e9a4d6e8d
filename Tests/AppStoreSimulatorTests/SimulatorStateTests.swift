import AppStore
import AppStoreSimulator
import Crypto
import Foundation
import TestSupport
import Testing

@Suite("Simulator state and clocks")
struct SimulatorStateTests {
    @Test("a CA saved to a state folder loads back and still signs what the real verifier accepts")
    func roundTrip() async throws {
        let directory = try TestRun.scratch("simulator")
        let made = try SimulatorCA.loadOrCreate(in: directory)
        let loaded = try SimulatorCA.loadOrCreate(in: directory)
        #expect(loaded.rootDER == made.rootDER)
        #expect(loaded.leafDER == made.leafDER)
        let mode =
            try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("leaf-key.pem").path)[.posixPermissions]
            as? Int
        #expect(mode == 0o600)
        var transaction = JWSTransactionDecodedPayload()
        transaction.transactionId = "1"
        transaction.bundleId = "com.example.sim"
        transaction.environment = .sandbox
        transaction.signedDate = Timestamp(Date())
        let verifier = try SignedDataVerifier(.init(rootCertificates: [made.rootDER], bundleId: "com.example.sim", environment: .sandbox))
        #expect(try await verifier.verifyTransaction(try loaded.sign(transaction)) == transaction)
    }

    @Test("a state folder with a foreign key or a missing file is refused with a clear error")
    func refused() throws {
        let directory = try TestRun.scratch("simulator")
        _ = try SimulatorCA.loadOrCreate(in: directory)
        try Data(P256.Signing.PrivateKey().pemRepresentation.utf8).write(to: directory.appendingPathComponent("leaf-key.pem"))
        #expect(throws: SimulatorStateError.self) { try SimulatorCA.load(from: directory) }
        try FileManager.default.removeItem(at: directory.appendingPathComponent("intermediate.der"))
        let error = #expect(throws: SimulatorStateError.self) { try SimulatorCA.load(from: directory) }
        #expect(error?.message.contains("intermediate.der") == true)
        try Data("garbage".utf8).write(to: directory.appendingPathComponent("intermediate.der"))
        #expect(throws: SimulatorStateError.self) { try SimulatorCA.load(from: directory) }
    }

    @Test("storekeeper simulate ca --export writes the same root each time from the state folder")
    func exportCommand() throws {
        let directory = try TestRun.scratch("simulator")
        let first = try StorekeeperCLI.temporaryFile(Data())
        let second = try StorekeeperCLI.temporaryFile(Data())
        let run1 = try StorekeeperCLI.run(["simulate", "ca", "--export", first, "--state", directory.path], near: Bundle.module.bundleURL)
        let run2 = try StorekeeperCLI.run(["simulate", "ca", "--export", second, "--state", directory.path], near: Bundle.module.bundleURL)
        #expect(run1.status == 0, "\(run1.stderr)")
        #expect(run2.status == 0)
        let root = try Data(contentsOf: URL(fileURLWithPath: first))
        #expect(!root.isEmpty)
        #expect(root == (try Data(contentsOf: URL(fileURLWithPath: second))))
        #expect(root == (try Data(contentsOf: directory.appendingPathComponent("root.der"))))
    }

    @Test("Apple's sandbox table, the 12-renewal limit, and the clocks")
    func clocks() async throws {
        #expect(SandboxTime.realDuration(ofPeriod: "P1W") == .seconds(180))
        #expect(SandboxTime.realDuration(ofPeriod: "P1M") == .seconds(300))
        #expect(SandboxTime.realDuration(ofPeriod: "P2M") == .seconds(600))
        #expect(SandboxTime.realDuration(ofPeriod: "P3M") == .seconds(900))
        #expect(SandboxTime.realDuration(ofPeriod: "P6M") == .seconds(1800))
        #expect(SandboxTime.realDuration(ofPeriod: "P1Y") == .seconds(3600))
        #expect(SandboxTime.realDuration(ofPeriod: "P5D") == nil)
        let limited = SandboxTime()
        #expect(limited.renewsAgain(after: 11))
        #expect(!limited.renewsAgain(after: 12))
        #expect(SandboxTime(renewalLimit: nil).renewsAgain(after: 1000))

        let virtual = VirtualClock(start: 1_000)
        virtual.advance(byMilliseconds: 500)
        virtual.advance(byMilliseconds: -10_000)
        virtual.advance(to: 900)
        #expect(virtual.now == 1_500)
        virtual.advance(to: 2_000)
        #expect(virtual.now == 2_000)

        // A month in five minutes: 8,640 simulated seconds per real second.
        let compressed = CompressedClock(start: 0, simulated: .seconds(30 * 86_400), real: .seconds(300))
        #expect(compressed.factor == 8_640)
        try await Task.sleep(for: .milliseconds(50))
        #expect(compressed.now >= 50 * 8_640)
    }
}
