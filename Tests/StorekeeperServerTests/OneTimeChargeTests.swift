import Analytics
import AppStore
import AppStoreSimulator
import Foundation
import Hummingbird
import HummingbirdTesting
import SQLKit
import Storage
import TestSupport
import Testing

@testable import StorekeeperCore
@testable import StorekeeperServer

/// Apple's ONE_TIME_CHARGE for each product type that is not an auto-renewable subscription (the library's
/// `one-time-purchases`: a consumable bought twice over, a non-consumable refunded, a non-renewing pass) reaches the
/// ledger as its own kind at its price, and the revenue metric equals the simulated store's own sum.
@Suite("One-time charges in the ledger and the metrics")
struct OneTimeChargeTests {
    struct Row: Hashable {
        var kind: String
        var price: Int64?
        var refund: Int64?
    }

    @Test(
        "each product type's ONE_TIME_CHARGE is a ledger row of its kind; net revenue equals the store's", arguments: TestDatabase.available
    )
    func everyType(database: TestDatabase) async throws {
        let h = try await Harness.make(database, catalog: EndToEndTests.catalog)
        try await h.test { client in
            let rig = EndToEndTests.rig(scenario: nil, client: client, harness: h)
            for step in try ScenarioLibrary.named("one-time-purchases").steps { try await rig.player.play(step) }
            let model = await rig.store.with { $0 }
            #expect(model.history.filter { $0.notification.type == .oneTimeCharge }.count == 3)

            let rows = try await h.core.database.reading { session in
                try await session.sql.raw("SELECT kind, price, refund_amount FROM ledger WHERE app_id = \(bind: h.app.appId) ORDER BY kind")
                    .all().map { row in
                        Row(
                            kind: try row.decode(column: "kind", as: String.self), price: try row.decode(column: "price", as: Int64?.self),
                            refund: try row.decode(column: "refund_amount", as: Int64?.self))
                    }
            }
            let kinds = Dictionary(grouping: rows, by: \.kind)
            // One row each, at the price Apple signed (the consumable's covers its quantity); the refunded
            // non-consumable gives all of it back.
            #expect(Set(kinds.keys) == ["consumable", "nonConsumable", "nonRenewing"], "\(rows)")
            #expect(rows.allSatisfy { ($0.price ?? 0) > 0 }, "\(rows)")
            #expect(kinds["nonConsumable"]?.first?.refund == kinds["nonConsumable"]?.first?.price)
            #expect(kinds["consumable"]?.first?.refund == nil && kinds["nonRenewing"]?.first?.refund == nil)

            try await Self.expectNetRevenue(equalTo: model, client: client, harness: h)
        }
    }

    /// Net revenue from the metrics API, with the storefronts' rates loaded, equals the simulated store's own sum.
    static func expectNetRevenue(equalTo model: StoreModel, client: any TestClientProtocol, harness h: Harness) async throws {
        let expected = model.expectedMetrics()
        let key = headers(h.app.secretKey)
        let loaded = try await client.execute(
            uri: "/v1/rates", method: .put, headers: operatorHeaders(), body: ByteBuffer(string: Storefront.ratesCSV()))
        #expect(loaded.status == .ok)
        let from = CalendarDay(containing: at(0)).description
        let to = CalendarDay(containing: at(120)).description
        let revenue = try decode(
            MetricSeries.Decoded.self,
            try await client.execute(
                uri: "/v1/apps/\(h.app.appId)/metrics/revenue?environment=Sandbox&interval=month&from=\(from)&to=\(to)", method: .get,
                headers: key))
        let net = revenue.points.reduce(0) { $0 + ($1[number: "net"] ?? 0) }
        #expect(expected.netRevenue > 0)
        #expect(abs(net - expected.netRevenue) < 0.01, "net \(net) vs \(expected.netRevenue)")
        #expect(revenue.unconverted.isEmpty)
    }

    @Test(
        "offer codes on every one-time product type: the transaction keeps Apple's offer, the ledger the discounted price, revenue equals the store's",
        arguments: TestDatabase.available)
    func offerCodes(database: TestDatabase) async throws {
        let h = try await Harness.make(database, catalog: EndToEndTests.catalog)
        try await h.test { client in
            let rig = EndToEndTests.rig(scenario: nil, client: client, harness: h)
            for step in try ScenarioLibrary.named("one-time-offer-codes").steps { try await rig.player.play(step) }
            let model = await rig.store.with { $0 }
            let stored = try await h.core.database.reading { session in
                try await session.sql.raw(
                    "SELECT payload FROM transactions WHERE app_id = \(bind: h.app.appId) ORDER BY transaction_id"
                ).all().map { try $0.decode(column: "payload", as: String.self) }
            }
            let transactions = try stored.map { try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: Data($0.utf8)) }
            #expect(transactions.count == 3)
            #expect(Set(transactions.compactMap(\.type)) == [.consumable, .nonConsumable, .nonRenewing])
            #expect(transactions.allSatisfy { $0.offerType == .offerCode && $0.offerDiscountType == .oneTime })
            #expect(Set(transactions.compactMap(\.offerIdentifier)) == ["COINS-HALF", "LIFETIME-HALF", "PASS-HALF"])

            // The ledger's prices are the discounted ones Apple signed: half the catalog's.
            let prices = try await h.core.database.reading { session in
                try await session.sql.raw("SELECT transaction_id, price FROM ledger WHERE app_id = \(bind: h.app.appId)").all()
                    .map { (try $0.decode(column: "transaction_id", as: String.self), try $0.decode(column: "price", as: Int64.self)) }
            }
            let signed = Dictionary(uniqueKeysWithValues: transactions.compactMap { t in t.transactionId.map { ($0, t.price ?? -1) } })
            #expect(prices.count == 3)
            for (id, price) in prices { #expect(signed[id] == price, "\(id)") }

            // Access: the non-consumable's entitlement is kept, the pass (three months) ran out by day 100.
            let bea = try #require(await rig.store.with { $0.appUserId(of: "bea") })
            h.clock.set(await rig.store.with { $0.now })
            let state = try decode(
                RescindedConsentTests.Customer.self,
                try await client.execute(uri: TruthCheck.customerPath(bea), method: .get, headers: headers(h.app.secretKey)))
            #expect(state.entitlements["pro"]?.active == true, "\(state.entitlements)")
            #expect(state.entitlements["season"]?.active == false, "\(state.entitlements)")

            try await Self.expectNetRevenue(equalTo: model, client: client, harness: h)
        }
    }
}
