import Foundation
import TestSupport
import Testing

/// `storekeeper entitlements` as users call it.
@Suite struct EntitlementsCLITests {
    func fixture(_ name: String) throws -> String {
        try #require(Bundle.module.url(forResource: "Fixtures/\(name)", withExtension: nil)).path
    }

    func run(_ arguments: [String]) throws -> CommandRun {
        try StorekeeperCLI.run(["entitlements"] + arguments, near: Bundle.module.bundleURL)
    }

    @Test func printsTheStateAndTheEvents() throws {
        let day: Int64 = 86_400_000
        let result = try run([
            "--catalog", try fixture("catalog.json"), "--facts", try fixture("trial-lifecycle.jsonl"),
            "--at", String(1_767_225_600_000 + 60 * day),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        for key in ["state", "billingIssue", "entitlements", "subscriptions", "introEligibility", "nextChangeAt", "events"] {
            #expect(object[key] != nil, "missing \(key)")
        }
        #expect(object["state"] as? String == "active")
        #expect(object["billingIssue"] as? Bool == false)
        let pro = try #require((object["entitlements"] as? [String: Any])?["pro"] as? [String: Any])
        #expect(pro["active"] as? Bool == true)
        #expect(pro["productId"] as? String == "pro.monthly")
        #expect((pro["expiresDate"] as? NSNumber)?.int64Value == 1_767_225_600_000 + 81 * day)
        let subscriptions = try #require(object["subscriptions"] as? [[String: Any]])
        #expect(subscriptions.first?["status"] as? String == "active")
        let eligibility = try #require(object["introEligibility"] as? [String: Any])
        #expect((eligibility["pro"] as? [String: Any])?["eligible"] as? Bool == false)
        #expect((object["nextChangeAt"] as? NSNumber)?.int64Value == 1_767_225_600_000 + 81 * day)
        let types = try #require(object["events"] as? [[String: Any]]).compactMap { $0["type"] as? String }
        #expect(
            types == ["trial_started", "trial_converted", "subscription_canceled", "subscription_expired", "subscription_resubscribed"])
    }

    @Test func theInstantDecides() throws {
        let result = try run([
            "--catalog", try fixture("catalog.json"), "--facts", try fixture("trial-lifecycle.jsonl"),
            "--at", String(1_767_225_600_000 + 45 * 86_400_000),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["state"] as? String == "inactive")
        let subscriptions = try #require(object["subscriptions"] as? [[String: Any]])
        #expect(subscriptions.first?["status"] as? String == "expired")
        #expect(subscriptions.first?["expirationReason"] as? String == "voluntary")
    }

    @Test(arguments: [
        (#"{"transaction": {"transactionId": "1", "productId": "a", "purchaseDate": 1}}"# + "\n" + #"{"transaction": "#, 2, "JSON"),
        (#"{"transaction": {"productId": "a", "purchaseDate": 1}}"#, 1, "no transactionId"),
        ("\n\n" + #"{"renewalInfo": {"autoRenewStatus": 1}}"#, 3, "no originalTransactionId"),
        (#"{"notification": {"notificationType": "DID_RENEW"}}"#, 1, "notificationUUID"),
        (#"{"purchase": {}}"#, 1, "exactly one key"),
        (#"{"transaction": {"transactionId": "1", "productId": "a", "purchaseDate": "yesterday"}}"#, 1, "purchaseDate"),
    ])
    func malformedLinesAreReportedWithTheirNumber(line: String, number: Int, mention: String) throws {
        let facts = try StorekeeperCLI.temporaryFile(Data(line.utf8))
        let result = try run(["--catalog", try fixture("catalog.json"), "--facts", facts, "--at", "0"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(facts):\(number):"), "\(result.stderr)")
        #expect(result.stderr.contains(mention), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func anInvalidCatalogIsRejected() throws {
        let catalog = try StorekeeperCLI.temporaryFile(Data(#"{"products": [{"id": "m", "type": "autoRenewable", "period": "P1M"}]}"#.utf8))
        let facts = try StorekeeperCLI.temporaryFile(Data())
        let result = try run(["--catalog", catalog, "--facts", facts])
        #expect(result.status == 1)
        #expect(result.stderr.contains("needs its subscription group"), "\(result.stderr)")
        // A misspelt field is named, not read as a product that unlocks nothing.
        let misspelt = try StorekeeperCLI.temporaryFile(
            Data(#"{"products": [{"id": "l", "type": "nonConsumable", "entitlment": ["pro"]}]}"#.utf8))
        let refused = try run(["--catalog", misspelt, "--facts", facts])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("'products.[0].entitlment': 'entitlment' is not a field of a product"), "\(refused.stderr)")
    }

    @Test func missingFilesAndBadOptionsAreUsageErrors() throws {
        let missing = try run(["--catalog", "/nonexistent/catalog.json", "--facts", "/nonexistent/facts.jsonl"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("cannot read the catalog"))
        let environment = try run([
            "--catalog", try fixture("catalog.json"), "--facts", try fixture("trial-lifecycle.jsonl"), "--environment", "Staging",
        ])
        #expect(environment.status == 2)
    }
}
