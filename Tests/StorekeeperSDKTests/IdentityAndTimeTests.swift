import AppStoreSimulator
import Foundation
import StorekeeperSDK
import StorekeeperSDKTesting
import Synchronization
import Testing

@Suite("Identity, refreshes and time in the SDK")
struct IdentityAndTimeTests {
    @Test("logIn merges the anonymous customer's purchases into the named one; logOut starts an anonymous customer who owns nothing")
    func logInAndOut() async throws {
        try await SDKRig.run { rig in
            let store = try rig.store()
            let sdk = Storekeeper(configuration: rig.configuration(), store: store)
            await sdk.waitUntilStarted()
            let anonymous = sdk.appUserId
            #expect(try await sdk.purchase("pro.monthly").isActive("pro"))

            let named = try await sdk.logIn("user-42")
            #expect(named.appUserId == "user-42" && named.isActive("pro") && sdk.appUserId == "user-42")
            // One customer now answers to both names.
            #expect((try await rig.serverState(of: anonymous))["state"] as? String == "active")

            let out = try await sdk.logOut()
            #expect(sdk.isAnonymous && sdk.appUserId != anonymous)
            #expect(out.state.state == .new && !out.isActive("pro"))

            // The named user's purchase is still theirs.
            #expect((try await rig.serverState(of: "user-42"))["state"] as? String == "active")
            // The choice survives a relaunch.
            let relaunched = Storekeeper(configuration: rig.configuration(), store: store)
            #expect(relaunched.appUserId == sdk.appUserId)
            await relaunched.waitUntilStarted()
        }
    }

    @Test("a refund delivered by notification: the next refresh emits an inactive customer on customerInfoUpdates")
    func refundReachesUpdates() async throws {
        try await SDKRig.run { rig in
            let store = try rig.store()
            let sdk = Storekeeper(configuration: rig.configuration(appUserId: "user-8"), store: store)
            await sdk.waitUntilStarted()
            _ = try await sdk.purchase("pro.monthly")
            try await rig.deliver(store.takeNotifications())

            let seen = Mutex<[CustomerInfo]>([])
            let listener = Task {
                for await info in sdk.customerInfoUpdates {
                    seen.withLock { $0.append(info) }
                    if info.state.state == .inactive { return }
                }
            }
            // The stream replays the latest value at once.
            #expect(try await eventually { seen.withLock { $0.first?.isActive("pro") == true } })

            rig.clock.set(rig.clock.now + 3_600_000)
            try store.perform { model, customer in
                _ = try model.advance(to: rig.clock.now)
                return try model.refund(customer, product: "pro.monthly", appIssue: true)
            }
            try await rig.deliver(store.takeNotifications())
            let refreshed = try await sdk.customerInfo(policy: .fetchCurrent)
            #expect(refreshed.state.state == .inactive && !refreshed.isActive("pro"))
            #expect(try await eventually { seen.withLock { $0.last?.state.state == .inactive } })
            listener.cancel()
            // Emitted on change only: the active value once, then the inactive one.
            #expect(seen.withLock { $0.map(\.state.state) } == [.active, .inactive])
        }
    }

    @Test("the device clock set a year ahead: a live subscription stays active, online, cached after a relaunch, and offline")
    func deviceClockAhead() async throws {
        try await SDKRig.run { rig in
            let store = try rig.store()
            let transport = FaultyTransport()
            var configuration = rig.configuration(appUserId: "user-1", transport: transport)
            let system = SDKClock.system
            configuration.clock = SDKClock(monotonic: system.monotonic, wall: { Date().addingTimeInterval(365 * 86_400) })
            let sdk = Storekeeper(configuration: configuration, store: store)
            await sdk.waitUntilStarted()
            let info = try await sdk.purchase("pro.monthly")
            #expect(info.isActive("pro"))
            #expect(abs(info.now.timeIntervalSince1970 * 1000 - Double(rig.clock.now)) < 60_000)
            sdk.shutdown()

            // Relaunched with the server unreachable: the cached answer, on server time.
            transport.set(.down)
            let relaunched = Storekeeper(configuration: configuration, store: store)
            #expect(relaunched.cachedCustomerInfo?.isActive("pro") == true)
            await relaunched.waitUntilStarted()
            #expect(try await relaunched.customerInfo().isActive("pro"))

            // A new purchase that cannot be posted: computed on the device at the transactions' time, not the clock's.
            let offline = try await relaunched.purchase("news.monthly")
            #expect(offline.source == .device && offline.isActive("pro") && offline.isActive("news"))
        }
    }

    @Test("a purchase the user cancels is an error of its own and posts nothing")
    func cancelled() async throws {
        try await SDKRig.run { rig in
            let store = try rig.store()
            let transport = FaultyTransport()
            let sdk = Storekeeper(configuration: rig.configuration(appUserId: "user-2", transport: transport), store: store)
            await sdk.waitUntilStarted()
            store.setNextPurchaseOutcome(.userCancelled)
            await #expect(throws: StorekeeperError.purchaseCancelled) { try await sdk.purchase("pro.monthly") }
            #expect(transport.postedPaths.isEmpty)
        }
    }
}
