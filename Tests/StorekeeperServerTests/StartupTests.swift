import Foundation
import TestSupport
import Testing

/// `storekeeper serve` when it cannot start: it says why in words, exits non-zero, and leaves nothing open behind (an
/// open SQLite connection dropped at exit stops the process with an assertion and a backtrace).
@Suite("Starting the server")
struct StartupTests {
    @Test("a port in use: the second server says so, names --port and exits 2, without a crash")
    func portInUse() async throws {
        let (database, _) = try DurabilityTests.appOnNewDatabase("port-in-use")
        let first = try DurabilityTests.Server(database: database, near: Bundle.module.bundleURL)
        defer { first.process.terminate() }
        let port = try await first.port()
        let second = try StorekeeperCLI.run(
            ["serve", "--database-url", database + "-second", "--port", "\(port)", "--reconcile-interval", "0"],
            near: Bundle.module.bundleURL)
        #expect(second.status == 2, "\(second.stderr)")
        #expect(second.stderr.contains("port \(port) is in use (another storekeeper?); choose one with --port"), "\(second.stderr)")
        #expect(!second.stderr.contains("Assertion failed") && !second.stderr.contains("crashed"), "\(second.stderr)")
    }

    @Test("a database that cannot be opened, or a URL that names none, is said in words")
    func badDatabase() throws {
        let unwritable = try StorekeeperCLI.run(
            ["serve", "--database-url", "/nonexistent-\(UUID().uuidString)/db.sqlite", "--port", "0"], near: Bundle.module.bundleURL)
        #expect(unwritable.status == 1)
        #expect(unwritable.stderr.contains("cannot open the SQLite database"), "\(unwritable.stderr)")
        let badURL = try StorekeeperCLI.run(["serve", "--database-url", "mysql://db/x", "--port", "0"], near: Bundle.module.bundleURL)
        #expect(badURL.status == 2)
        #expect(badURL.stderr.contains("the database URL must start with postgres://"), "\(badURL.stderr)")
        for run in [unwritable, badURL] { #expect(!run.stderr.contains("Assertion failed"), "\(run.stderr)") }
    }
}
