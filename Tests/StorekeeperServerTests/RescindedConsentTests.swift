import Analytics
import AppStore
import AppStoreSimulator
import Entitlements
import Foundation
import Hummingbird
import HummingbirdTesting
import SQLKit
import Storage
import TestSupport
import Testing

@testable import StorekeeperCore
@testable import StorekeeperServer

/// Apple's RESCIND_CONSENT: a parent withdrew consent for a minor. The library's `consent-rescinded` scenario checks the
/// states and events step by step (EndToEndTests); this checks what it does beyond them: the data deleted and kept, the
/// money unchanged, a repeat, and a rescission that names no one the server knows.
@Suite("Rescinded consent")
struct RescindedConsentTests {
    struct Customer: Decodable {
        var state: String
        var entitlements: [String: AccessState]
        var consentRescinded: ConsentRescission?
    }

    struct Overview: Decodable {
        var mrr: Double
        var activeSubscriptions: Int
    }

    struct Events: Decodable {
        struct Event: Decodable {
            var type: String
            var originalTransactionId: String?
        }
        var events: [Event]
    }

    @Test(
        "access withheld at once, one consent_rescinded per purchase, the app's reports deleted, ledger and MRR unchanged, a repeat changes nothing",
        arguments: TestDatabase.available)
    func rescinded(database: TestDatabase) async throws {
        let h = try await Harness.make(database, catalog: EndToEndTests.catalog)
        try await h.test { client in
            let rig = EndToEndTests.rig(scenario: nil, client: client, harness: h)
            let admin = headers(h.app.secretKey)
            let steps = try ScenarioLibrary.named("consent-rescinded").steps
            let rescind = try #require(steps.firstIndex { $0.action == .rescindConsent })
            for step in steps[..<rescind] { try await rig.player.play(step) }
            let ann = try #require(await rig.store.with { $0.appUserId(of: "ann") })
            let bob = try #require(await rig.store.with { $0.appUserId(of: "bob") })

            // The app reported consent and usage for ann and bob.
            for name in [ann, bob] {
                let reported = try await client.execute(
                    uri: TruthCheck.customerPath(name) + "/consumption", method: .post, headers: headers(h.app.publicKey),
                    body: ByteBuffer(string: #"{"customerConsented": true, "entitlementUsed": true}"#))
                #expect(reported.status == .ok)
            }
            func customer(_ appUserId: String) async throws -> Customer {
                try decode(Customer.self, try await client.execute(uri: TruthCheck.customerPath(appUserId), method: .get, headers: admin))
            }
            func overview() async throws -> Overview {
                try decode(
                    Overview.self,
                    try await client.execute(
                        uri: "/v1/apps/\(h.app.appId)/metrics/overview?environment=Sandbox", method: .get, headers: admin))
            }
            let before = try await customer(ann)
            #expect(before.state == "active" && before.entitlements["pro"]?.active == true && before.consentRescinded == nil)
            let mrrBefore = try await overview()
            let ledgerBefore = try await Self.ledger(h)

            // Consent withdrawn for ann.
            try await rig.player.play(steps[rescind])
            let after = try await customer(ann)
            #expect(after.state == "inactive")
            #expect(after.entitlements.values.allSatisfy { !$0.active }, "\(after.entitlements)")
            let withheld = try #require(after.consentRescinded)
            let model = await rig.store.with { $0 }
            let annPurchases = model.customerIds().first { $0.name == "ann" }?.transactionIds ?? []
            #expect(withheld.withheld.count == 2 && Set(withheld.withheld).isSubset(of: Set(annPurchases)), "\(withheld)")
            #expect(withheld.rescindedAt.millisecondsSince1970 == model.now)
            let untouched = try await customer(bob)
            #expect(untouched.state == "active" && untouched.consentRescinded == nil)

            // One event per purchase reached, in the customer's stream.
            let events = try decode(
                Events.self, try await client.execute(uri: TruthCheck.customerPath(ann) + "/events?limit=100", method: .get, headers: admin)
            )
            #expect(events.events.filter { $0.type == "consent_rescinded" }.count == 2)

            // What the app reported about ann is gone; bob's stays.
            let reports = try await h.core.database.reading { session in
                [
                    try await session.consumptionReport(app: h.app.appId, appUserId: ann),
                    try await session.consumptionReport(app: h.app.appId, appUserId: bob),
                ]
            }
            #expect(reports[0] == nil && reports[1]?.consented == true)

            // The money is Apple's record: the ledger and MRR are as they were (ann is still billed).
            let ledgerAfter = try await Self.ledger(h)
            #expect(ledgerAfter == ledgerBefore)
            let mrrAfter = try await overview()
            #expect(mrrAfter.mrr == mrrBefore.mrr && mrrAfter.activeSubscriptions == mrrBefore.activeSubscriptions)

            // Apple's retry of the same notification: a duplicate, nothing changes.
            let sent = try #require(model.history.last?.notification)
            #expect(sent.type == .rescindConsent)
            let again = try await client.postNotification(h.app.appId, sent.signedPayload)
            #expect(again.status == .ok)
            #expect(try await customer(ann) == after)
        }
    }

    @Test("a rescission naming an app transaction no stored purchase carries is kept and changes no one", arguments: TestDatabase.available)
    func unknown(database: TestDatabase) async throws {
        let h = try await Harness.make(database, catalog: EndToEndTests.catalog)
        try await h.test { client in
            let rig = EndToEndTests.rig(scenario: nil, client: client, harness: h)
            let steps = try ScenarioLibrary.named("consent-rescinded").steps
            try await rig.player.play(steps[0])
            // A customer who never bought: her app transaction names nothing the server holds.
            try await rig.store.with { try $0.addCustomer("cleo") }
            let notification = try await rig.store.with { try $0.rescindConsent(customer: "cleo") }
            let response = try await client.postNotification(h.app.appId, notification.signedPayload)
            #expect(response.status == .ok)
            let stored = try await h.core.database.reading { try await $0.notification(app: h.app.appId, uuid: notification.uuid) }
            #expect(stored?.notificationType == "RESCIND_CONSENT")
            let ann = try #require(await rig.store.with { $0.appUserId(of: "ann") })
            let state = try decode(
                Customer.self,
                try await client.execute(uri: TruthCheck.customerPath(ann), method: .get, headers: headers(h.app.secretKey)))
            #expect(state.state == "active" && state.consentRescinded == nil)
        }
    }
}

extension RescindedConsentTests.Customer: Equatable {}

extension RescindedConsentTests {
    /// Every ledger row of the app, as text, in a fixed order.
    static func ledger(_ h: Harness) async throws -> [String] {
        try await h.core.database.reading { session in
            try await session.sql.raw(
                "SELECT transaction_id, environment, price, currency, start_at, active_until, refund_amount, monthly_price FROM ledger ORDER BY transaction_id, environment"
            ).all().map { row in
                [
                    try row.decode(column: "transaction_id", as: String.self),
                    try row.decode(column: "environment", as: String.self),
                    String(describing: try row.decode(column: "price", as: Int64?.self)),
                    String(describing: try row.decode(column: "currency", as: String?.self)),
                    String(describing: try row.decode(column: "start_at", as: Int64?.self)),
                    String(describing: try row.decode(column: "active_until", as: Int64?.self)),
                    String(describing: try row.decode(column: "refund_amount", as: Int64?.self)),
                    String(describing: try row.decode(column: "monthly_price", as: Int64?.self)),
                ].joined(separator: " ")
            }
        }
    }
}
