import Foundation
import TestSupport
import Testing

/// `storekeeper keys signing`: the root public key an app is configured with, from the key file the server uses.
@Suite("storekeeper keys signing")
struct KeysCLITests {
    func run(_ arguments: [String]) throws -> CommandRun { try StorekeeperCLI.run(arguments, near: Bundle.module.bundleURL) }

    @Test("prints the same 32-byte public key each time, made once beside the database, owner-readable; a broken file is said")
    func signingKey() throws {
        let directory = try TestRun.scratch("keys-signing")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("db.sqlite").path
        let first = try run(["keys", "signing", "--database-url", database])
        #expect(first.status == 0, "\(first.stderr)")
        let key = first.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(Data(base64Encoded: key)?.count == 32)
        let file = directory.appendingPathComponent("storekeeper-signing.key").path
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let again = try run(["keys", "signing", "--database-url", database])
        #expect(again.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == key)

        let broken = directory.appendingPathComponent("broken.key").path
        try Data("not a key".utf8).write(to: URL(fileURLWithPath: broken))
        let refused = try run(["keys", "signing", "--database-url", database, "--key-file", broken])
        #expect(refused.status != 0 && refused.stderr.contains("storekeeper.signing.key.file"), "\(refused.stderr)")
    }
}
