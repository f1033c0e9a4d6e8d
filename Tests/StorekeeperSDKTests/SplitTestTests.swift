import Experiments
import Foundation
import StorekeeperSDKTesting
import Synchronization
import Testing

@testable import StorekeeperSDK

enum ButtonColorTest: SplitTest {
    static let identifier = "button-color"
    /// The server's experiment also has `green`, which this version of the app does not know.
    enum Group: String, SplitTestGroup { case control, red, blue }
}

@Suite("Split tests through the SDK")
struct SplitTestTests {
    /// A running experiment on the `onboarding` placement: control, red, blue and green, equal weights.
    static func setUp(_ rig: SDKRig) async throws {
        let base = "/v1/apps/\(rig.app.appId)"
        #expect(try await rig.request("PUT", base + "/paywalls/plain", body: ["products": ["pro.monthly"]]).0 == 201)
        #expect(try await rig.request("PUT", base + "/placements/onboarding", body: ["defaultPaywall": "plain"]).0 == 201)
        let variants = ["control", "red", "blue", "green"].map { ["key": $0] }
        let created = try await rig.request(
            "POST", base + "/experiments",
            body: ["key": ButtonColorTest.identifier, "placement": "onboarding", "variants": variants, "status": "running"] as [String: Any]
        )
        #expect(created.0 == 201, "\(String(describing: created.1))")
    }

    @Test(
        "the group is the server's, sticky across launches; the exposure is recorded once across relaunches; a variant the enum lacks is the control"
    )
    func stickyAndExposedOnce() async throws {
        try await SDKRig.run { rig in
            try await Self.setUp(rig)
            let store = try rig.store()
            let transport = FaultyTransport()
            let messages = Mutex<[String]>([])
            var configuration = rig.configuration(appUserId: "user-11", transport: transport)
            configuration.log = { message in messages.withLock { $0.append(message) } }
            let sdk = Storekeeper(configuration: configuration, store: store)
            await sdk.waitUntilStarted()
            let first = await sdk.splitTest(ButtonColorTest.self)
            #expect(first.source == .server && first.inExperiment)
            let placement = try await sdk.placement("onboarding")
            #expect(placement.experiment?.variant == first.variant)
            await first.hit()
            await first.hit()
            sdk.shutdown()

            let relaunched = Storekeeper(configuration: configuration, store: store)
            await relaunched.waitUntilStarted()
            let again = await relaunched.splitTest(ButtonColorTest.self)
            #expect(again.variant == first.variant && again.group == first.group)
            await again.hit()
            #expect(transport.postedPaths.filter { $0.hasSuffix("/exposures") }.count == 1)

            // Offline, the stored group.
            transport.set(.down)
            let offline = await relaunched.splitTest(ButtonColorTest.self)
            #expect(offline.source == .stored && offline.variant == first.variant)

            // A user the server puts in `green`: the control, and a log line saying so.
            transport.set(.pass)
            let green = try #require(
                (0..<500).map { "green-\($0)" }.first {
                    GrowthBookHashing.hash(seed: ButtonColorTest.identifier, value: $0).map { $0 >= 0.75 } ?? false
                })
            let greenDevice = Storekeeper(
                configuration: rig.configuration(device: "green", appUserId: green, transport: transport), store: store)
            await greenDevice.waitUntilStarted()
            var greenConfiguration = rig.configuration(device: "green", appUserId: green)
            greenConfiguration.log = configuration.log
            let greenSDK = Storekeeper(configuration: greenConfiguration, store: store)
            let assigned = await greenSDK.splitTest(ButtonColorTest.self)
            #expect(assigned.variant == "green" && assigned.group == .control)
            #expect(messages.withLock { $0.contains { $0.contains("'green' is not a case") } })
        }
    }

    @Test("the server's kill switch: rolled back, every customer gets the control on the next fetch, and hit() records nothing")
    func killSwitch() async throws {
        try await SDKRig.run { rig in
            try await Self.setUp(rig)
            let store = try rig.store()
            let transport = FaultyTransport()
            let red = try #require(
                (0..<500).map { "red-\($0)" }.first {
                    GrowthBookHashing.hash(seed: ButtonColorTest.identifier, value: $0).map { (0.25..<0.5).contains($0) } ?? false
                })
            let sdk = Storekeeper(configuration: rig.configuration(appUserId: red, transport: transport), store: store)
            await sdk.waitUntilStarted()
            #expect(await sdk.splitTest(ButtonColorTest.self).group == .red)
            let patched = try await rig.request(
                "PATCH", "/v1/apps/\(rig.app.appId)/experiments/\(ButtonColorTest.identifier)", body: ["status": "rolledBack"])
            #expect(patched.0 == 200)
            // The server caches its serving catalog for up to a second.
            #expect(try await eventually { await sdk.splitTest(ButtonColorTest.self).group == .control })
            let killed = await sdk.splitTest(ButtonColorTest.self)
            #expect(!killed.inExperiment && killed.source == .server)
            await killed.hit()
            #expect(transport.postedPaths.filter { $0.hasSuffix("/exposures") }.isEmpty)
        }
    }

    @Test("server unreachable: the device assigns as the server does, for 1,000 customers")
    func localEqualsServer() async throws {
        try await SDKRig.run { rig in
            try await Self.setUp(rig)
            let store = try rig.store()
            let transport = FaultyTransport()
            let sdk = Storekeeper(configuration: rig.configuration(appUserId: "probe", transport: transport), store: store)
            await sdk.waitUntilStarted()
            _ = await sdk.splitTest(ButtonColorTest.self)
            let definition = try #require(sdk.cachedDefinitions?.experiments.first { $0.key == ButtonColorTest.identifier })
            var differences: [String] = []
            var variants: Set<String> = []
            for index in 0..<1_000 {
                let user = "customer-\(index)"
                let server = try await sdk.api.placement("onboarding", for: user, environment: .sandbox)
                let local = try #require(sdk.localAssignment(definition, appUserId: user))
                variants.insert(local.variant)
                if server.experiment?.variant != local.variant { differences.append(user) }
            }
            #expect(differences.isEmpty, "\(differences.count) differ, e.g. \(differences.prefix(3))")
            #expect(variants == ["control", "red", "blue", "green"])

            // And through the public API on a new device that never reached the server for this test.
            transport.set(.down)
            let offline = await sdk.splitTest(ButtonColorTest.self)
            #expect(offline.source == .stored)
        }
    }
}
