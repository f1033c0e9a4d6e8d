import AppStoreSimulator
import Crypto
import Foundation
import StorekeeperCore
import StorekeeperSDK
import StorekeeperSDKTesting
import Testing

@Suite("The SDK against the real server and the simulated App Store")
struct PurchaseFlowTests {
    @Test("first launch of a new customer: an anonymous id, state new, intro eligible, a UUID token, cached at once next launch")
    func firstLaunch() async throws {
        try await SDKRig.run { rig in
            let store = try rig.store()
            let sdk = Storekeeper(configuration: rig.configuration(), store: store)
            #expect(sdk.cachedCustomerInfo == nil)
            await sdk.waitUntilStarted()
            let info = try #require(sdk.cachedCustomerInfo)
            #expect(sdk.isAnonymous && sdk.appUserId.hasPrefix("$device:"))
            #expect(info.state.state == .new && info.source == .server)
            #expect(info.isEligibleForIntroOffer(group: "pro"))
            #expect(info.appAccountToken != nil && info.appId == rig.app.appId)
            #expect(!info.isActive("pro"))
            sdk.shutdown()

            // The next launch has the same anonymous id and the customer info before any request.
            let relaunched = Storekeeper(configuration: rig.configuration(), store: store)
            #expect(relaunched.appUserId == sdk.appUserId)
            #expect(relaunched.cachedCustomerInfo?.appUserId == sdk.appUserId)
            await relaunched.waitUntilStarted()
        }
    }

    @Test("a purchase entitles at once, records its event on the server, and is finished once")
    func purchase() async throws {
        try await SDKRig.run { rig in
            let store = try rig.store()
            let sdk = Storekeeper(configuration: rig.configuration(appUserId: "user-42"), store: store)
            await sdk.waitUntilStarted()
            let info = try await sdk.purchase("pro.monthly")
            #expect(info.source == .server && info.isActive("pro") && info.state.state == .active)
            let transaction = try #require(store.model.transactionOrder.last)
            #expect(store.finishCount(transaction) == 1)
            let events = try await rig.events(of: "user-42")
            #expect(events.map { $0["type"] as? String } == ["subscription_started"])
            // The transaction carries the customer's token, which the server resolves to user-42.
            let token = try #require(info.appAccountToken)
            #expect(store.model.transactions[transaction]?.value.appAccountToken?.lowercased() == token.uuidString.lowercased())
        }
    }

    @Test("Apple's notification of a purchase the server has not been posted reaches the right customer by its token")
    func notificationFindsCustomerByToken() async throws {
        try await SDKRig.run { rig in
            let store = try rig.store()
            let transport = FaultyTransport()
            let sdk = Storekeeper(configuration: rig.configuration(appUserId: "user-7", transport: transport), store: store)
            await sdk.waitUntilStarted()
            transport.set(.down)
            let offline = try await sdk.purchase("pro.monthly")
            #expect(offline.source == .device && offline.isActive("pro"))
            sdk.shutdown()
            // The app is gone; Apple's notification arrives with the token of user-7 (not a UUID).
            try await rig.deliver(store.takeNotifications())
            let state = try await rig.serverState(of: "user-7")
            #expect(state["state"] as? String == "active")
        }
    }

    @Test("killed between the purchase and the post: the next launch posts it, once, and finishes it once")
    func killedBeforePost() async throws {
        try await SDKRig.run { rig in
            let store = try rig.store()
            let transport = FaultyTransport()
            let first = Storekeeper(configuration: rig.configuration(appUserId: "user-9", transport: transport), store: store)
            await first.waitUntilStarted()
            transport.set(.down)
            _ = try await first.purchase("pro.monthly")
            first.shutdown()
            let transaction = try #require(store.model.transactionOrder.last)
            #expect(store.finishCount(transaction) == 0)

            let relaunched = Storekeeper(configuration: rig.configuration(appUserId: "user-9"), store: store)
            await relaunched.waitUntilStarted()
            #expect(store.finishCount(transaction) == 1)
            let info = try await relaunched.customerInfo(policy: .fetchCurrent)
            #expect(info.source == .server && info.isActive("pro"))
            let events = try await rig.events(of: "user-9")
            #expect(events.map { $0["type"] as? String } == ["subscription_started"])
            let subscriptions = try #require((try await rig.serverState(of: "user-9"))["subscriptions"] as? [[String: Any]])
            #expect(subscriptions.count == 1)
        }
    }

    @Test("server down: the device's own entitlements equal what the server says once it is back")
    func offlineEqualsServer() async throws {
        try await SDKRig.run { rig in
            let store = try rig.store()
            let transport = FaultyTransport()
            let sdk = Storekeeper(configuration: rig.configuration(appUserId: "user-3", transport: transport), store: store)
            await sdk.waitUntilStarted()
            transport.set(.down)
            _ = try await sdk.purchase("pro.yearly")
            _ = try await sdk.purchase("lifetime")
            let offline = try await sdk.customerInfo()
            #expect(offline.source == .device)
            // Read synchronously, the latest knowledge is the device's: the purchase counts at once.
            #expect(sdk.cachedCustomerInfo?.source == .device && sdk.cachedCustomerInfo?.isActive("pro") == true)
            transport.set(.pass)
            let online = try await sdk.customerInfo(policy: .fetchCurrent)
            #expect(online.source == .server && sdk.cachedCustomerInfo?.source == .server)
            #expect(offline.state.entitlements == online.state.entitlements)
            #expect(offline.state.products == online.state.products)
            #expect(offline.activeEntitlements == ["pro"])
        }
    }

    @Test("an answer the SDK cannot read (a newer server's value) counts as no answer: the cached info, else the device's")
    func unreadableAnswer() async throws {
        try await SDKRig.run { rig in
            let store = try rig.store()
            let transport = FaultyTransport()
            var configuration = rig.configuration(appUserId: "user-6", transport: transport)
            configuration.staleAfter = .zero  // Every read asks the server.
            let sdk = Storekeeper(configuration: configuration, store: store)
            await sdk.waitUntilStarted()
            #expect(try await sdk.purchase("pro.monthly").source == .server)
            transport.set(.newerServerReads)
            let cached = try await sdk.customerInfo()
            #expect(transport.rewrittenAnswers == 1)
            #expect(cached.source == .server && cached.isActive("pro"))
            // Asked for the server's current word, the SDK says it could not read it.
            do throws(StorekeeperError) {
                _ = try await sdk.customerInfo(policy: .fetchCurrent)
                Issue.record("a fetch of the current info read an answer it cannot read")
            } catch {
                guard case .server(200, "unreadable_answer", _, _) = error else {
                    Issue.record("not an unreadable answer: \(error)")
                    return
                }
            }
            sdk.shutdown()

            // Another device of the same Apple ID, nothing cached (the catalog comes with the app, as without a server on
            // a first launch): its own transactions.
            var other = rig.configuration(device: "tablet", appUserId: "user-6", transport: transport)
            other.staleAfter = .zero
            other.bundledCatalog = try JSONEncoder().encode(sdkCatalog)
            let tablet = Storekeeper(configuration: other, store: store)
            await tablet.waitUntilStarted()
            let device = try await tablet.customerInfo()
            #expect(transport.rewrittenAnswers >= 3)
            #expect(device.source == .device && device.isActive("pro"))
            tablet.shutdown()
        }
    }

    @Test("503s then recovery: the queue drains by itself, and the transaction is finished once")
    func queueDrainsAfterRecovery() async throws {
        try await SDKRig.run { rig in
            let store = try rig.store()
            let transport = FaultyTransport()
            let sdk = Storekeeper(configuration: rig.configuration(appUserId: "user-5", transport: transport), store: store)
            await sdk.waitUntilStarted()
            transport.set(.unavailable(4))
            let first = try await sdk.purchase("pro.monthly")
            #expect(first.source == .device)
            let transaction = try #require(store.model.transactionOrder.last)
            // Three more 503s, then the post: a second at most here, but CI runs every suite at once on two cores,
            // where this test's server once took 69 s in all; the backoff's sleeps stretch with it.
            let drained = try await eventually(60) { store.finishCount(transaction) == 1 }
            #expect(drained)
            let state = try await rig.serverState(of: "user-5")
            #expect(state["state"] as? String == "active")
            #expect(transport.postedPaths.filter { $0.hasSuffix("/transactions") }.count == 1)
        }
    }

    /// A store that signs for another app (the server refuses its transactions for good), and an SDK started on it.
    static func otherAppsStore(_ rig: SDKRig, appUserId: String) async throws -> (SimulatedStoreClient, FaultyTransport, Storekeeper) {
        let model = StoreModel(
            app: SimulatedApp(bundleId: "com.example.other", environment: .sandbox, catalog: sdkCatalog), ca: sdkCA, time: .calendar,
            runId: 7, start: rig.clock.now)
        let store = try SimulatedStoreClient(model: model)
        let transport = FaultyTransport()
        let sdk = Storekeeper(configuration: rig.configuration(appUserId: appUserId, transport: transport), store: store)
        await sdk.waitUntilStarted()
        return (store, transport, sdk)
    }

    @Test("a purchase the server refuses for good (signed for another app): an error, finished once, never posted again")
    func permanentRefusal() async throws {
        try await SDKRig.run { rig in
            let (store, transport, sdk) = try await Self.otherAppsStore(rig, appUserId: "user-p")
            do throws(StorekeeperError) {
                let info = try await sdk.purchase("pro.monthly")
                Issue.record("a transaction of another app was accepted: \(info.activeEntitlements)")
            } catch {
                guard case .server(let status, let code, _, let permanent) = error else {
                    Issue.record("not the server's refusal: \(error)")
                    return
                }
                #expect(permanent && (400..<500).contains(status), "\(status) \(code)")
            }
            let id = try #require(store.model.transactionOrder.last)
            #expect(store.finishCount(id) == 1)
            #expect(await store.unfinishedTransactions().isEmpty)
            let posts = transport.postedPaths.count
            sdk.shutdown()

            let relaunched = Storekeeper(configuration: rig.configuration(appUserId: "user-p", transport: transport), store: store)
            await relaunched.waitUntilStarted()
            #expect(transport.postedPaths.count == posts)
            #expect(store.finishCount(id) == 1)
            let subscriptions = (try await rig.serverState(of: "user-p"))["subscriptions"] as? [Any] ?? []
            #expect(subscriptions.isEmpty)
        }
    }

    @Test("bought offline, then refused for good by the server: the device's own count gives way, even to a 304")
    func offlineCountGivesWayToRefusal() async throws {
        try await SDKRig.run { rig in
            let (_, transport, sdk) = try await Self.otherAppsStore(rig, appUserId: "user-r")
            transport.set(.down)
            // Offline, the device counts its own purchase (the server has not seen it).
            #expect(try await sdk.purchase("pro.monthly").source == .device)
            #expect(sdk.cachedCustomerInfo?.isActive("pro") == true)

            transport.set(.pass)
            // The queued post is refused (another app's transaction); the server's answer is unchanged (304).
            let online = try await sdk.customerInfo(policy: .fetchCurrent)
            #expect(online.source == .server && !online.isActive("pro"))
            #expect(sdk.cachedCustomerInfo?.source == .server && sdk.cachedCustomerInfo?.isActive("pro") == false)
        }
    }

    @Test("restore on a device whose Apple ID bought for another user: moved under `transfer`, a conflict under `keep`")
    func restore() async throws {
        for policy in [AppConfiguration.TransferPolicy.transfer, .keep] {
            try await SDKRig.run(policy: policy) { rig in
                let store = try rig.store()
                let sdk = Storekeeper(configuration: rig.configuration(appUserId: "alice"), store: store)
                await sdk.waitUntilStarted()
                _ = try await sdk.purchase("pro.monthly")
                let original = try #require(store.model.transactionOrder.first)
                _ = try await sdk.logIn("bob")
                let restored = try await sdk.restorePurchases()
                #expect(store.syncCount == 1)
                switch policy {
                case .transfer:
                    #expect(restored.transferredFromAnotherCustomer && restored.conflicts.isEmpty)
                    #expect(restored.customerInfo.isActive("pro"))
                    #expect((try await rig.serverState(of: "alice"))["state"] as? String == "new")
                case .keep:
                    #expect(!restored.transferredFromAnotherCustomer && restored.conflicts == [original])
                    #expect(!restored.customerInfo.isActive("pro"))
                    #expect((try await rig.serverState(of: "alice"))["state"] as? String == "active")
                }
            }
        }
    }
}

@Suite("Promotional offers signed by the server")
struct PromotionalOfferTests {
    @Test("signed only for a subscriber of the group, with the app's key, over the customer's token; the purchase carries it")
    func promotionalOffer() async throws {
        try await SDKRig.run { rig in
            let key = P256.Signing.PrivateKey()
            let store = try rig.store()
            let sdk = Storekeeper(configuration: rig.configuration(appUserId: "user-12"), store: store)
            await sdk.waitUntilStarted()
            // No key yet: the server says so.
            await #expect(throws: StorekeeperError.self) {
                try await sdk.promotionalOffer(productId: "pro.yearly", offerId: "comeback")
            }
            let patched = try await rig.request(
                "PATCH", "/v1/apps/\(rig.app.appId)",
                body: ["offerSigningKey": ["keyId": "KEY123", "privateKey": key.pemRepresentation, "issuerId": "issuer-1"]])
            #expect(patched.0 == 200)
            #expect(String(describing: patched.1).contains("PRIVATE KEY") == false)

            // Never subscribed in `pro`: refused, for good.
            do {
                _ = try await sdk.promotionalOffer(productId: "pro.yearly", offerId: "comeback")
                Issue.record("a customer who never subscribed got an offer")
            } catch let error as StorekeeperError {
                guard case .server(409, _, _, true) = error else { throw error }
            }

            let subscribed = try await sdk.purchase("pro.monthly")
            // The subscriber turns auto-renew off and lapses: the offer is to win them back.
            try store.perform { model, customer in try model.setAutoRenew(customer, product: "pro.monthly", on: false) }
            rig.clock.set(rig.clock.now + 40 * 86_400_000)
            try store.advance(to: rig.clock.now)
            try await rig.deliver(store.takeNotifications())
            #expect(try await !sdk.customerInfo(policy: .fetchCurrent).isActive("pro"))
            let offer = try await sdk.promotionalOffer(productId: "pro.monthly", offerId: "comeback")
            #expect(offer.keyIdentifier == "KEY123" && offer.offerId == "comeback" && offer.jws?.split(separator: ".").count == 3)
            let token = try #require(subscribed.appAccountToken).uuidString.lowercased()
            let payload = [
                sdkBundleId, "KEY123", "pro.monthly", "comeback", token, offer.nonce.uuidString.lowercased(), String(offer.timestamp),
            ]
            .joined(separator: "\u{2063}")
            let signature = try P256.Signing.ECDSASignature(derRepresentation: try #require(Data(base64Encoded: offer.signature)))
            #expect(key.publicKey.isValidSignature(signature, for: Data(payload.utf8)))

            let back = try await sdk.purchase("pro.monthly", promotionalOffer: offer)
            #expect(back.isActive("pro"))
            let last = try #require(store.model.transactionOrder.last.flatMap { store.model.transactions[$0]?.value })
            #expect(last.offerIdentifier == "comeback" && last.offerType == .promotionalOffer)
        }
    }
}
