import AppStore
import Foundation
import TestSupport
import Testing

@testable import Entitlements

/// `CustomerState.combining`: one answer for an app that takes Production and Sandbox.
@Suite("States across environments")
struct EnvironmentsTests {
    /// Each environment's state at `day`, from the facts signed for it.
    func states(_ facts: [Fact], atDay day: Int64) -> [EnvironmentState] {
        [Environment.production, .sandbox].map { environment in
            EnvironmentState(
                environment: environment,
                state: EntitlementEngine.state(catalog: testCatalog, facts: facts, now: ts(Double(day)), environment: environment))
        }
    }

    @Test("a sandbox purchase makes the entitlement active, with the per-environment view beside it")
    func sandboxPurchaseIsAccess() throws {
        let facts: [Fact] = [.transaction(transaction("s1", start: 0, expires: 30, environment: .sandbox))]
        let parts = states(facts, atDay: 10)
        #expect(parts[0].state.state == .new && parts[1].state.state == .active)
        let combined = CustomerState.combining(parts, current: .production)
        #expect(combined.state == .active)
        let pro = try #require(combined.entitlements["pro"])
        #expect(pro.active && pro.environment == .sandbox && pro.productId == "pro.monthly")
        #expect(pro.environments?["Sandbox"]?.active == true && pro.environments?["Production"] == nil)
        #expect(pro.activeInCurrentEnvironment == false)
        #expect(CustomerState.combining(parts, current: .sandbox).entitlements["pro"]?.activeInCurrentEnvironment == true)
        #expect(CustomerState.combining(parts, current: nil).entitlements["pro"]?.activeInCurrentEnvironment == nil)
        #expect(combined.subscriptions.map(\.environment) == [.sandbox])
        #expect(combined.groups["pro"]?.environment == .sandbox && combined.groups["pro"]?.active == true)
        #expect(combined.products["pro.monthly"]?.active == true)
    }

    @Test("both environments: the longer access is shown, both histories listed, eligibility is the current environment's")
    func bothEnvironments() throws {
        let facts: [Fact] = [
            .transaction(transaction("s1", start: 0, expires: 30, period: .trial, price: 0, environment: .sandbox)),
            .transaction(transaction("p1", product: "pro.yearly", start: 5, expires: 370, environment: .production)),
        ]
        let parts = states(facts, atDay: 10)
        let combined = CustomerState.combining(parts, current: .production)
        let pro = try #require(combined.entitlements["pro"])
        #expect(pro.active && pro.environment == .production && pro.productId == "pro.yearly")
        #expect(pro.environments?.keys.sorted() == ["Production", "Sandbox"] && pro.activeInCurrentEnvironment == true)
        #expect(Set(combined.subscriptions.compactMap(\.environment)) == [.production, .sandbox])
        // The trial was taken in the Sandbox: Production's eligibility stands; the Sandbox's does not.
        #expect(combined.introEligibility["pro"]?.eligible == true)
        #expect(CustomerState.combining(parts, current: .sandbox).introEligibility["pro"]?.eligible == false)
        #expect(combined.nextChangeAt == [parts[0].state.nextChangeAt, parts[1].state.nextChangeAt].compactMap { $0 }.min())
    }

    @Test("nothing in either environment: new, every entitlement inactive and listed; an expired one makes inactive")
    func newAndInactive() throws {
        let empty = CustomerState.combining(states([], atDay: 1), current: nil)
        #expect(empty.state == .new && empty.entitlements["pro"]?.active == false && empty.entitlements["pro"]?.productId == nil)
        #expect(empty.subscriptions.isEmpty && empty.nextChangeAt == nil)
        let lapsed: [Fact] = [.transaction(transaction("s1", start: 0, expires: 30, environment: .sandbox))]
        let combined = CustomerState.combining(states(lapsed, atDay: 200), current: nil)
        #expect(combined.state == .inactive && combined.entitlements["pro"]?.active == false)
        #expect(combined.entitlements["pro"]?.productId == "pro.monthly" && combined.entitlements["pro"]?.environment == .sandbox)
    }

    @Test("a one-environment state carries none of the combined fields (apps of one environment answer as before)")
    func oneEnvironmentUnchanged() throws {
        let facts: [Fact] = [.transaction(transaction("p1", start: 0, expires: 30, environment: .production))]
        let state = EntitlementEngine.state(catalog: testCatalog, facts: facts, now: ts(10), environment: .production)
        let json = String(decoding: try JSONEncoder().encode(state), as: UTF8.self)
        #expect(!json.contains("activeInCurrentEnvironment") && !json.contains("\"environments\""))
    }
}
