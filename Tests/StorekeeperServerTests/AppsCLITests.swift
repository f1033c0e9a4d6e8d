import Foundation
import TestSupport
import Testing

/// `storekeeper apps …` as an operator uses it: list, show, rotate a lost key, with errors that name the flag.
@Suite("storekeeper apps")
struct AppsCLITests {
    func run(_ arguments: [String]) throws -> CommandRun { try StorekeeperCLI.run(arguments, near: Bundle.module.bundleURL) }

    @Test("list and show name an app's keys by prefix only; keys rotate from the command line; environments in any case")
    func listShowRotate() throws {
        let (database, app) = try DurabilityTests.appOnNewDatabase("apps-cli")
        let appId = try #require(app["appId"])
        let secret = try #require(app["secretKey"])
        let secretPrefix = secret.split(separator: "_").prefix(2).joined(separator: "_")
        let secretPart = String(secret.split(separator: "_").last ?? "")

        let list = try run(["apps", "list", "--database-url", database])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains(appId) && list.stdout.contains("Sandbox") && list.stdout.contains(secretPrefix))
        #expect(!list.stdout.contains(secretPart))

        let show = try run(["apps", "show", appId, "--database-url", database])
        #expect(show.status == 0, "\(show.stderr)")
        let shown = try #require(try JSONSerialization.jsonObject(with: Data(show.stdout.utf8)) as? [String: Any])
        #expect(shown["environments"] as? [String] == ["Sandbox"])
        let keys = try #require(shown["keys"] as? [[String: Any]])
        #expect(keys.count == 2 && keys.allSatisfy { ($0["prefix"] as? String)?.split(separator: "_").count == 2 })
        #expect(!show.stdout.contains(secretPart))

        let rotated = try run(["apps", "keys", "rotate", appId, "--database-url", database])
        #expect(rotated.status == 0, "\(rotated.stderr)")
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(rotated.stdout.utf8)) as? [String: Any])
        #expect((answer["key"] as? String)?.hasPrefix("sk_") == true && answer["revoked"] as? Int == 1)
        let after = try #require(
            try JSONSerialization.jsonObject(with: Data(try run(["apps", "show", appId, "--database-url", database]).stdout.utf8))
                as? [String: Any])
        let revoked = (after["keys"] as? [[String: Any]] ?? []).filter { $0["revokedAt"] != nil }
        #expect(revoked.count == 1 && revoked.first?["prefix"] as? String == secretPrefix)

        let unknown = try run(["apps", "show", "app_nope", "--database-url", database])
        #expect(unknown.status == 2 && unknown.stderr.contains("app_nope"))
    }

    @Test("production without an Apple id names the flag; environments are read in any case")
    func createErrors() throws {
        let directory = try TestRun.scratch("apps-create")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let database = directory.appendingPathComponent("db.sqlite").path
        let production = try run(["apps", "create", "--database-url", database, "--bundle-id", "com.x", "--environment", "Production"])
        #expect(production.status == 2 && production.stderr.contains("--app-apple-id"), "\(production.stderr)")
        let mixed = try run(["apps", "create", "--database-url", database, "--bundle-id", "com.x", "--environment", "SANDBOX"])
        #expect(mixed.status == 0, "\(mixed.stderr)")
        let list = try run(["apps", "list", "--json", "--database-url", database])
        #expect(list.stdout.contains("\"Sandbox\""))
    }
}
