import AppStoreSimulator
import Entitlements
import Foundation
import TestSupport
import Testing

@Suite("storekeeper simulate")
struct SimulateCLITests {
    func run(_ arguments: [String]) throws -> CommandRun {
        try StorekeeperCLI.run(["simulate"] + arguments, near: Bundle.module.bundleURL)
    }

    @Test("scenarios lists the library; catalog prints a catalog the server reads")
    func listing() throws {
        let list = try run(["scenarios"])
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.split(separator: "\n").count >= 20)
        #expect(list.stdout.contains("billing-grace-recovery:"))
        let catalog = try run(["catalog"])
        #expect(catalog.status == 0)
        let decoded = try JSONDecoder().decode(Catalog.self, from: Data(catalog.stdout.utf8))
        #expect(decoded == SimulatedApp.defaultCatalog)
    }

    @Test("a broken scenario and an unknown one are refused with the reason")
    func badScenario() throws {
        let file = try StorekeeperCLI.temporaryFile(
            Data(#"{"name": "x", "steps": [{"day": 5, "do": "wait"}, {"day": 1, "do": "wait"}]}"#.utf8))
        let state = try TestRun.scratch("sim").path
        let broken = try run(["run", file, "--webhook", "http://127.0.0.1:9/hook", "--bundle-id", "com.example", "--state", state])
        #expect(broken.status != 0)
        #expect(broken.stderr.contains("steps go in time order"))
        let unknown = try run([
            "run", "no-such-scenario", "--webhook", "http://127.0.0.1:9/hook", "--bundle-id", "com.example", "--state", state,
        ])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("no scenario 'no-such-scenario'"))
        // A catalog's misspelt field is named as the other commands name it.
        let catalog = try StorekeeperCLI.temporaryFile(
            Data(#"{"products": [{"id": "l", "type": "nonConsumable", "entitlment": ["pro"]}]}"#.utf8))
        let misspelt = try run([
            "run", "trial-converts", "--webhook", "http://127.0.0.1:9/hook", "--bundle-id", "com.example", "--state", state,
            "--catalog", catalog,
        ])
        #expect(misspelt.status != 0)
        #expect(misspelt.stderr.contains("'products.[0].entitlment': 'entitlment' is not a field of a product"), "\(misspelt.stderr)")
    }

    @Test("notifications that never arrive, after Apple's retries, fail the run")
    func unreachable() throws {
        let state = try TestRun.scratch("sim").path
        // Port 9 (discard) on the loopback: nothing listens.
        let result = try run([
            "run", "trial-converts", "--webhook", "http://127.0.0.1:9/hook", "--bundle-id", "com.example", "--state", state,
        ])
        #expect(result.status == 1)
        #expect(result.stdout.contains("SUBSCRIBED/INITIAL_BUY"))
        #expect(result.stdout.contains("never reached"))
        // Why, at the first failed delivery, and once: not only after Apple's last retry.
        let reason = "delivery failed: no answer from http://127.0.0.1:9/hook"
        #expect(result.stderr.components(separatedBy: reason).count == 2, "\(result.stderr)")
    }

    @Test("population names a few customers to look up and exports every customer's ids")
    func exportIds() throws {
        let state = try TestRun.scratch("sim").path
        let file = try TestRun.scratch("ids").appendingPathExtension("csv").path
        let result = try run([
            "population", "--customers", "8", "--days", "20", "--webhook", "http://127.0.0.1:9/hook", "--bundle-id", "com.example",
            "--state", state, "--export-ids", file,
        ])
        #expect(result.stdout.contains("customers to look up (GET /v1/customers/<app user id>): c"), "\(result.stdout)")
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.first == "app_user_id,transaction_id")
        #expect(lines.count > 8 && lines.dropFirst().allSatisfy { $0.split(separator: ",").count == 2 })
    }

    @Test("a refused delivery is said with the server's status and error")
    func refusals() {
        #expect(
            Webhook.refusal(
                status: 403,
                body: #"{"error":{"code":"invalidAppIdentifier","message":"bundle com.other is not this app's","permanent":true}}"#)
                == "the server answered 403: invalidAppIdentifier: bundle com.other is not this app's")
        #expect(
            Webhook.refusal(status: 404, body: #"{"error":{"code":"not_found","message":"no app app_x"}}"#)
                == "the server answered 404: not_found: no app app_x")
        #expect(Webhook.refusal(status: 502, body: "<html>Bad Gateway</html>") == "the server answered 502: <html>Bad Gateway</html>")
        #expect(Webhook.refusal(status: 500, body: "") == "the server answered 500")
    }

    @Test("a scenario file plays as written: grace period, recovery and refund, each notification in the run's list")
    func scenarioFile() throws {
        let file = try #require(Bundle.module.url(forResource: "grace-then-refund", withExtension: "json", subdirectory: "Fixtures"))
        let state = try TestRun.scratch("sim").path
        // Nothing listens: the run plays every step, then fails because nothing was delivered.
        let result = try run(["run", file.path, "--webhook", "http://127.0.0.1:9/hook", "--bundle-id", "com.example", "--state", state])
        #expect(result.status == 1, "\(result.stderr)")
        for expected in ["SUBSCRIBED/INITIAL_BUY", "DID_FAIL_TO_RENEW/GRACE_PERIOD", "DID_RENEW/BILLING_RECOVERY", "REFUND"] {
            #expect(result.stdout.contains(expected), "\(expected) in \(result.stdout)")
        }
    }
}
