import AppStore
import Foundation
import StorekeeperSDK
import StorekeeperSDKTesting
import Synchronization
import TestSupport
import Testing

/// An app that takes both Production and Sandbox, as every app that ships must (TestFlight and App Review buy in the
/// Sandbox against the production build), on each database.
@Suite("Environments: App Review and TestFlight against a production app build")
struct AppReviewTests {
    /// Every answer the SDK published, for checking that access was never taken away.
    final class Published: Sendable {
        private let infos = Mutex<[CustomerInfo]>([])
        func add(_ info: CustomerInfo) { infos.withLock { $0.append(info) } }
        var all: [CustomerInfo] { infos.withLock { $0 } }
    }

    /// The reviewer's store, kept across the server's restart.
    final class Device: Sendable {
        private let kept = Mutex<SimulatedStoreClient?>(nil)
        var store: SimulatedStoreClient? {
            get { kept.withLock { $0 } }
            set { kept.withLock { $0 = newValue } }
        }
    }

    /// The app user ids of the environment's customer list (the dashboard's), and its lifetime-value cohort's size.
    static func counted(in environment: AppStore.Environment, rig: SDKRig) async throws -> (listed: Set<String>, ltvCustomers: Int) {
        let app = try await rig.core.apps.app(id: rig.app.appId)
        let listed = try await rig.core.inspection.customers(app: app, environment: environment, status: nil, after: nil, limit: 50)
        let (status, json) = try await rig.request(
            "GET", "/v1/apps/\(rig.app.appId)/metrics/ltv?environment=\(environment.rawValue)&from=2026-01-01&to=2026-01-10")
        let points = try #require((json as? [String: Any])?["points"] as? [[String: Any]], "ltv answered \(status)")
        let customers = points.reduce(0) { $0 + (($1["customers"] as? Int) ?? 0) }
        return (Set(listed.compactMap(\.appUserId)), customers)
    }

    static func listen(_ sdk: Storekeeper, into published: Published) -> Task<Void, Never> {
        Task {
            for await info in sdk.customerInfoUpdates { published.add(info) }
        }
    }

    @Test(
        "App Review's sandbox purchase keeps its access: at once, after a cold start, a refresh past the staleness window and a server restart",
        arguments: TestDatabase.available)
    func appReview(database: TestDatabase) async throws {
        let setup = try await SDKRig.setUp(policy: .transfer, database: database, environments: ["Production", "Sandbox"])
        defer { try? FileManager.default.removeItem(at: setup.directory) }
        let published = Published()
        let device = Device()

        try await SDKRig.serve(setup) { rig in
            // The reviewer's device: the production build, buying in the Sandbox.
            let reviewer = try rig.store(customer: "reviewer")
            device.store = reviewer
            let sdk = Storekeeper(configuration: rig.configuration(device: "review-phone"), store: reviewer)
            let listening = Self.listen(sdk, into: published)
            await sdk.waitUntilStarted()
            #expect(await sdk.storeEnvironment() == .sandbox)
            let bought = try await sdk.purchase("pro.monthly")
            #expect(bought.source == .server && bought.isActive("pro"))
            #expect(bought.environments == [.production, .sandbox])
            #expect(bought.environment == .sandbox && bought.currentEnvironment == .sandbox)
            #expect(bought.activeInAnyEnvironment == ["pro"] && bought.activeInCurrentEnvironment == ["pro"])
            #expect(bought.entitlements["pro"]?.environment == .sandbox)
            #expect(bought.subscriptions.map(\.environment) == [.sandbox])

            // The next read (no purchase in it) answers for both environments: still active.
            let read = try await sdk.customerInfo(policy: .fetchCurrent)
            #expect(read.isActive("pro") && read.status == .active)
            sdk.shutdown()
            listening.cancel()

            // A cold start: the cached answer at once, and the server's after the launch.
            var configuration = rig.configuration(device: "review-phone")
            configuration.staleAfter = .milliseconds(1)
            let relaunched = Storekeeper(configuration: configuration, store: reviewer)
            let relaunchListening = Self.listen(relaunched, into: published)
            #expect(relaunched.cachedCustomerInfo?.isActive("pro") == true)
            await relaunched.waitUntilStarted()
            #expect(relaunched.cachedCustomerInfo?.source == .server && relaunched.cachedCustomerInfo?.isActive("pro") == true)

            // Past the staleness window, a plain read goes to the server: still active.
            try await Task.sleep(for: .milliseconds(20))
            rig.clock.set(rig.clock.now + 3_600_000)
            let refreshed = try await relaunched.customerInfo()
            #expect(refreshed.isActive("pro") && refreshed.activeInCurrentEnvironment == ["pro"])
            relaunched.shutdown()
            relaunchListening.cancel()

            // Narrowed to Production, the same customer has bought nothing there (the raw API, secret key).
            let encoded = try #require(read.appUserId.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
            let (status, json) = try await rig.request("GET", "/v1/customers/\(encoded)?environment=Production")
            let production = try #require(json as? [String: Any])
            #expect(status == 200 && production["state"] as? String == "new" && production["environments"] as? [String] == ["Production"])

            // The reviewer is the Sandbox's customer: not in Production's list or lifetime value.
            let inProduction = try await Self.counted(in: .production, rig: rig)
            let inSandbox = try await Self.counted(in: .sandbox, rig: rig)
            #expect(inProduction.listed.isEmpty && inProduction.ltvCustomers == 0)
            #expect(inSandbox.listed == [read.appUserId] && inSandbox.ltvCustomers == 1)
        }

        // The server restarts (a new process on the same database, a new port): the app launches again and reads.
        try await SDKRig.serve(setup) { rig in
            let reviewer = try #require(device.store)
            let afterRestart = Storekeeper(configuration: rig.configuration(device: "review-phone"), store: reviewer)
            let listening = Self.listen(afterRestart, into: published)
            await afterRestart.waitUntilStarted()
            let info = try await afterRestart.customerInfo(policy: .fetchCurrent)
            #expect(info.source == .server && info.isActive("pro") && info.environments == [.production, .sandbox])
            afterRestart.shutdown()
            listening.cancel()
        }

        // Every answer published after the purchase gave access: it was never taken away.
        let afterPurchase = published.all.drop(while: { !$0.isActive("pro") })
        #expect(afterPurchase.count >= 2)
        #expect(afterPurchase.allSatisfy { $0.isActive("pro") }, "\(afterPurchase.map { ($0.source, $0.isActive("pro")) })")
    }

    @Test(
        "a TestFlight tester who later buys on the App Store: one customer, both histories, Production metrics count the Production purchase only",
        arguments: TestDatabase.available)
    func testFlightThenAppStore(database: TestDatabase) async throws {
        try await SDKRig.run(database: database, environments: ["Production", "Sandbox"]) { rig in
            // The TestFlight build: a signed-in user buys the monthly plan in the Sandbox.
            let testFlight = try rig.store(customer: "tester", environment: .sandbox, runId: 11)
            let beta = Storekeeper(configuration: rig.configuration(device: "beta", appUserId: "user-tf"), store: testFlight)
            await beta.waitUntilStarted()
            let sandboxPurchase = try await beta.purchase("pro.monthly")
            #expect(sandboxPurchase.isActive("pro") && sandboxPurchase.activeInCurrentEnvironment == ["pro"])
            beta.shutdown()

            // The App Store build: the same user buys the yearly plan in Production.
            let appStore = try rig.store(customer: "tester", environment: .production, runId: 12)
            let shipped = Storekeeper(configuration: rig.configuration(device: "shipped", appUserId: "user-tf"), store: appStore)
            await shipped.waitUntilStarted()
            #expect(await shipped.storeEnvironment() == .production)
            let before = try await shipped.customerInfo(policy: .fetchCurrent)
            // The sandbox plan gives access everywhere, but not in the App Store build's own environment.
            #expect(before.isActive("pro") && before.activeInCurrentEnvironment.isEmpty && !before.isActiveInCurrentEnvironment("pro"))
            let productionPurchase = try await shipped.purchase("pro.yearly")
            #expect(productionPurchase.isActive("pro") && productionPurchase.isActiveInCurrentEnvironment("pro"))
            #expect(Set(productionPurchase.subscriptions.compactMap(\.environment)) == [.sandbox, .production])
            #expect(productionPurchase.entitlements["pro"]?.environment != nil)
            shipped.shutdown()

            // One customer on the server, both histories.
            let state = try await rig.serverState(of: "user-tf")
            let subscriptions = try #require(state["subscriptions"] as? [[String: Any]])
            #expect(Set(subscriptions.compactMap { $0["environment"] as? String }) == ["Production", "Sandbox"])
            let pro = try #require((state["entitlements"] as? [String: Any])?["pro"] as? [String: Any])
            let perEnvironment = try #require(pro["environments"] as? [String: Any])
            #expect(Set(perEnvironment.keys) == ["Production", "Sandbox"])

            // Production's metrics see the Production subscription alone; the Sandbox's, the Sandbox one.
            for (environment, product) in [("Production", "pro.yearly"), ("Sandbox", "pro.monthly")] {
                let (status, json) = try await rig.request("GET", "/v1/apps/\(rig.app.appId)/metrics/overview?environment=\(environment)")
                let overview = try #require(json as? [String: Any])
                #expect(status == 200 && overview["activeSubscriptions"] as? Int == 1, "\(environment): \(overview)")
                let (_, listed) = try await rig.request("GET", "/v1/customers/user-tf?environment=\(environment)")
                let narrowed = try #require(listed as? [String: Any])
                let products = (narrowed["subscriptions"] as? [[String: Any]])?.compactMap { $0["productId"] as? String }
                #expect(products == [product], "\(environment)")
            }
            // The tester belongs to both environments' customer lists and lifetime values.
            for environment in [AppStore.Environment.production, .sandbox] {
                let counted = try await Self.counted(in: environment, rig: rig)
                #expect(counted.listed == ["user-tf"] && counted.ltvCustomers == 1, "\(environment.rawValue)")
            }
        }
    }

    @Test(
        "a sandbox tester's placement and exposure count in the Sandbox's results and customer list only", arguments: TestDatabase.available
    )
    func testerExposure(database: TestDatabase) async throws {
        try await SDKRig.run(database: database, environments: ["Production", "Sandbox"]) { rig in
            try await SplitTestTests.setUp(rig)
            let sdk = Storekeeper(configuration: rig.configuration(device: "tester", appUserId: "tester-1"), store: try rig.store())
            await sdk.waitUntilStarted()
            let assigned = await sdk.splitTest(ButtonColorTest.self)
            #expect(assigned.source == .server && assigned.inExperiment)
            await assigned.hit()
            sdk.shutdown()
            for (environment, exposed) in [("Production", 0), ("Sandbox", 1)] {
                let (status, json) = try await rig.request(
                    "GET", "/v1/apps/\(rig.app.appId)/experiments/\(ButtonColorTest.identifier)/results?environment=\(environment)")
                let results = try #require(json as? [String: Any], "results answered \(status)")
                let arms = try #require(results["arms"] as? [[String: Any]], "\(environment): \(results)")
                #expect(arms.reduce(0) { $0 + (($1["exposed"] as? Int) ?? 0) } == exposed, "\(environment): \(arms)")
            }
            // Made by the placement read in the Sandbox, before any purchase: the Sandbox's customer only.
            #expect(try await Self.counted(in: .production, rig: rig).listed.isEmpty)
            #expect(try await Self.counted(in: .sandbox, rig: rig).listed == ["tester-1"])
        }
    }
}
