import AppStore
import AppStoreSimulator
import Entitlements
import Foundation
import Testing

/// Scenarios and actions come from files people write: out-of-range values are refused with the reason, never a trap.
@Suite("Simulator input")
struct SimulatorInputTests {
    func decode(_ json: String) throws -> Scenario { try Scenario.decode(Data(json.utf8), source: "test.json") }

    @Test("days, grace periods and step order are checked when a scenario is read")
    func scenarioBounds() throws {
        #expect(throws: StoreError.self) { try decode(#"{"name": "x", "steps": [{"day": 1e300, "do": "wait"}]}"#) }
        #expect(throws: StoreError.self) { try decode(#"{"name": "x", "steps": [{"day": -1, "do": "wait"}]}"#) }
        #expect(throws: StoreError.self) { try decode(#"{"name": "x", "gracePeriodDays": 100000000000, "steps": []}"#) }
        #expect(throws: StoreError.self) { try decode(#"{"name": "x", "steps": [{"day": 2, "do": "wait"}, {"day": 1, "do": "wait"}]}"#) }
        #expect(try decode(#"{"name": "x", "steps": [{"day": 36500, "do": "wait"}]}"#).span == 36_500)
    }

    @Test("a free trial lasts what the catalog's offer gives (a week, a month), not the product's whole period")
    func freeTrialLengths() throws {
        let ca = try SimulatorCA(validity: Date(timeIntervalSince1970: 1_700_000_000)...Date(timeIntervalSince1970: 2_100_000_000))
        let start: Int64 = 1_767_225_600_000
        var model = StoreModel(
            app: SimulatedApp(bundleId: "com.example", catalog: SimulatedApp.defaultCatalog), ca: ca, runId: 1, start: start)
        try model.addCustomer("ann")
        try model.addCustomer("bob")
        _ = try model.subscribe("ann", product: "pro.yearly", offer: .freeTrial)
        _ = try model.subscribe("bob", product: "pro.monthly", offer: .freeTrial)
        let day: Int64 = 86_400_000
        #expect(model.truth(of: "ann")?.subscriptions.first?.expiresDate == start + 31 * day)  // P1M from January 1st
        #expect(model.truth(of: "bob")?.subscriptions.first?.expiresDate == start + 7 * day)  // P1W
        // A catalog without trials gives a week (a month for a year or more); a trial is Apple's 3 days to a year.
        let plain = try #require(try? ISO8601Duration("P1Y"))
        #expect(StoreModel.freeTrialLength(of: CatalogProduct(id: "y", type: .autoRenewable, group: "g", period: plain))?.text == "P1M")
        #expect(throws: CatalogError.self) {
            try Catalog(products: [CatalogProduct(id: "c", type: .consumable, freeTrial: try ISO8601Duration("P1W"))])
        }
        #expect(throws: CatalogError.self) {
            try Catalog(products: [
                CatalogProduct(
                    id: "m", type: .autoRenewable, group: "g", period: try ISO8601Duration("P1M"), freeTrial: try ISO8601Duration("P1D"))
            ])
        }
    }

    @Test("introductory periods, prices and quantities beyond Apple's limits are refused")
    func actionBounds() throws {
        let ca = try SimulatorCA(validity: Date(timeIntervalSince1970: 1_700_000_000)...Date(timeIntervalSince1970: 2_100_000_000))
        var model = StoreModel(
            app: SimulatedApp(bundleId: "com.example", catalog: SimulatedApp.defaultCatalog), ca: ca, runId: 1,
            start: 1_767_225_600_000)
        let start: Int64 = 1_767_225_600_000
        let steps = try decode(
            #"""
            {"name": "x", "steps": [
              {"day": 0, "do": "subscribe", "customer": "ann", "product": "pro.monthly", "offer": "payUpFront", "periods": 1000000000},
              {"day": 0, "do": "buyOnce", "customer": "ann", "product": "coins.100", "quantity": 2000000000},
              {"day": 0, "do": "priceIncrease", "product": "pro.monthly", "usd": 9223372036854775807}]}
            """#
        ).steps
        for step in steps {
            #expect(throws: StoreError.self, "\(step.action)") { _ = try model.perform(step, start: start) }
        }
        // The same steps within the limits work.
        var ok = steps
        ok[0].periods = 3
        ok[1].quantity = 2
        ok[2].usd = 12_990
        for step in ok { _ = try model.perform(step, start: start) }
        #expect(model.truth(of: "ann")?.state == .active)
    }
}
