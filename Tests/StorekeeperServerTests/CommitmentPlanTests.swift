import Analytics
import AppStore
import AppStoreSimulator
import Entitlements
import Foundation
import Hummingbird
import HummingbirdTesting
import TestSupport
import Testing

@testable import StorekeeperCore
@testable import StorekeeperServer

/// Monthly subscriptions with a 12-month commitment (App Store Server API 1.21). The library's `commitment-plan`
/// scenario checks states and events step by step against the simulated store (EndToEndTests); this checks what a
/// team reads of it: the commitment on the state, `willRenew` through a cancelled commitment, MRR at the monthly
/// payment, and the commitment's end and renewal in the event stream.
@Suite("Commitment plans")
struct CommitmentPlanTests {
    struct Customer: Decodable {
        struct Subscription: Decodable {
            var productId: String
            var status: String
            var willRenew: Bool?
            var commitment: BillingCommitment?
            var renewalPrice: Int64?
            var renewalCurrency: String?
        }
        var state: String
        var subscriptions: [Subscription]
    }

    struct Events: Decodable {
        struct Event: Decodable {
            var type: String
            var revenue: Int64?
        }
        var events: [Event]
    }

    @Test(
        "the commitment on the state, willRenew until its last payment, MRR monthly, its end and renewal as events",
        arguments: TestDatabase.available)
    func commitment(database: TestDatabase) async throws {
        let h = try await Harness.make(database, catalog: EndToEndTests.catalog)
        try await h.test { client in
            let rig = EndToEndTests.rig(scenario: nil, client: client, harness: h)
            let admin = headers(h.app.secretKey)
            let loaded = try await client.execute(
                uri: "/v1/rates", method: .put, headers: operatorHeaders(), body: ByteBuffer(string: Storefront.ratesCSV()))
            #expect(loaded.status == .ok)
            let steps = try ScenarioLibrary.named("commitment-plan").steps
            func customer(_ name: String) async throws -> Customer {
                let appUserId = try #require(await rig.store.with { $0.appUserId(of: name) })
                return try decode(
                    Customer.self, try await client.execute(uri: TruthCheck.customerPath(appUserId), method: .get, headers: admin))
            }
            func events(_ name: String) async throws -> [Events.Event] {
                let appUserId = try #require(await rig.store.with { $0.appUserId(of: name) })
                return try decode(
                    Events.self,
                    try await client.execute(uri: TruthCheck.customerPath(appUserId) + "/events?limit=1000", method: .get, headers: admin)
                ).events
            }

            // Day 200: ann turned auto-renew off on day 100, yet her commitment's payments go on.
            for step in steps.prefix { $0.day <= 200 } { try await rig.player.play(step) }
            let ann = try await customer("ann")
            let subscription = try #require(ann.subscriptions.first)
            #expect(ann.state == "active" && subscription.status == "active")
            #expect(subscription.willRenew == true, "the commitment's remaining payments come whatever auto-renew says")
            let commitment = try #require(subscription.commitment)
            #expect(commitment.totalBillingPeriods == 12 && (6...8).contains(commitment.billingPeriodNumber), "\(commitment)")
            #expect(commitment.willRenew == false, "no new commitment follows: auto-renew is off")
            // The next payment is the monthly one, as the renewal info says.
            let monthly = await rig.store.with { model in
                model.transactions.values.filter { $0.value.billingPlanType == "MONTHLY" }.map(\.value)
            }
            #expect(subscription.renewalPrice != nil && subscription.renewalPrice == monthly.first?.price)
            #expect(subscription.renewalCurrency == monthly.first?.currency)
            #expect(try await customer("bob").subscriptions.first?.commitment?.willRenew == true)

            // MRR counts each subscriber at the monthly payment, not a twelfth of it.
            let model = await rig.store.with { $0 }
            let expected = model.expectedMetrics()
            #expect(expected.activeSubscriptions == 2)
            h.clock.set(model.now)
            let overview = try decode(
                MetricsOverview.self,
                try await client.execute(uri: "/v1/apps/\(h.app.appId)/metrics/overview?environment=Sandbox", method: .get, headers: admin))
            #expect(overview.activeSubscriptions == 2)
            #expect(abs(overview.mrr - expected.mrr) < 0.01, "\(overview.mrr) vs \(expected.mrr)")

            // The year over: ann's commitment ended with her subscription; bob's renewed into a new one.
            for step in steps.drop(while: { $0.day <= 200 }) { try await rig.player.play(step) }
            #expect(try await customer("ann").subscriptions.first?.status == "expired")
            let annEvents = try await events("ann")
            #expect(annEvents.filter { $0.type == "commitment_ended" }.count == 1)
            #expect(annEvents.filter { $0.type == "subscription_renewed" }.count == 11)
            #expect(annEvents.compactMap(\.revenue).allSatisfy { $0 > 0 })
            let bobEvents = try await events("bob")
            #expect(bobEvents.filter { $0.type == "commitment_renewed" }.count == 1)
            #expect(bobEvents.filter { $0.type == "commitment_ended" }.isEmpty)
            let bob = try await customer("bob")
            #expect(bob.state == "active" && bob.subscriptions.first?.commitment?.billingPeriodNumber ?? 0 >= 1)
        }
    }
}
