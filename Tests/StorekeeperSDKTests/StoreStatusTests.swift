import AppStoreModels
import Foundation
import StorekeeperSDK
import StorekeeperSDKTesting
import Testing

@Suite("What else the store tells the SDK: subscription statuses and the app transaction")
struct StoreStatusTests {
    @Test("offline in the billing grace period: the renewal info keeps the customer entitled, as the server does")
    func offlineGracePeriod() async throws {
        try await SDKRig.run { rig in
            let store = try rig.store()
            let sdk = Storekeeper(configuration: rig.configuration(appUserId: "user-g"), store: store)
            await sdk.waitUntilStarted()
            _ = try await sdk.purchase("pro.monthly")
            try await rig.deliver(store.takeNotifications())
            sdk.shutdown()

            // The card fails at renewal; 35 days on, the month is over and the 16-day grace period runs.
            try store.perform { model, customer in
                try model.failPayments(customer)
                return []
            }
            rig.clock.set(rig.clock.now + 35 * 86_400_000)
            try store.advance(to: rig.clock.now)
            try await rig.deliver(store.takeNotifications())
            // The lapsed transaction is no current entitlement any more: only its status says the customer is in grace.
            #expect(await store.currentEntitlements().isEmpty)

            // A new device, the server unreachable, nothing cached: the device computes.
            let transport = FaultyTransport()
            transport.set(.down)
            var configuration = rig.configuration(device: "tablet", appUserId: "user-g", transport: transport)
            configuration.bundledCatalog = try JSONEncoder().encode(sdkCatalog)
            let offlineSDK = Storekeeper(configuration: configuration, store: store)
            await offlineSDK.waitUntilStarted()
            let offline = try await offlineSDK.customerInfo()
            #expect(offline.source == .device)
            #expect(offline.isActive("pro"))
            #expect(offline.state.subscriptions.first?.status == .gracePeriod)

            transport.set(.pass)
            let online = try await offlineSDK.customerInfo(policy: .fetchCurrent)
            #expect(online.source == .server && online.isActive("pro"))
            #expect(online.state.subscriptions.first?.status == .gracePeriod)
            #expect(offline.state.entitlements == online.state.entitlements)
            #expect(offline.state.subscriptions.first?.gracePeriodExpiresDate == online.state.subscriptions.first?.gracePeriodExpiresDate)
        }
    }

    @Test("the app transaction: the version the customer first got, and the environment an offline answer names")
    func appTransaction() async throws {
        try await SDKRig.run { rig in
            let store = try rig.store(originalApplicationVersion: "1.4")
            let transport = FaultyTransport()
            transport.set(.down)
            var configuration = rig.configuration(appUserId: "user-a", transport: transport)
            configuration.bundledCatalog = try JSONEncoder().encode(sdkCatalog)
            let sdk = Storekeeper(configuration: configuration, store: store)
            await sdk.waitUntilStarted()

            let app = try #require(await sdk.appTransaction())
            #expect(app.originalApplicationVersion == "1.4" && app.applicationVersion == "2.0")
            #expect(app.bundleId == sdkBundleId && app.receiptType == .sandbox)
            #expect(app.originalPurchaseDate?.millisecondsSince1970 == sdkStart)

            // No purchase and no server: the app transaction says which environment this is.
            let offline = try await sdk.customerInfo()
            #expect(offline.source == .device && offline.environment == .sandbox)
        }
    }
}
