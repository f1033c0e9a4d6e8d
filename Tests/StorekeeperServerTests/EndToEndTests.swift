import Analytics
import AppStore
import AppStoreSimulator
import AppStoreSimulatorAPI
import Crypto
import Entitlements
import Experiments
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import StorekeeperCore
import TestSupport
import Testing

@testable import StorekeeperServer

/// The server against the simulator, in one process on a virtual clock: after every step of every library scenario,
/// each customer's state and events on the server equal the simulator's own ground truth.
@Suite("End to end: the server against the simulated App Store")
struct EndToEndTests {
    static let catalog = SimulatedApp.defaultCatalog

    static func simulatedApp(_ scenario: Scenario? = nil) -> SimulatedApp {
        var app = SimulatedApp(bundleId: bundleId, environment: .sandbox, catalog: catalog)
        if let days = scenario?.gracePeriodDays { app.gracePeriodDays = days == 0 ? nil : days }
        return app
    }

    static let library: [Scenario] = (try? ScenarioLibrary.all()) ?? []

    /// One server and one simulated store, joined by the in-process router.
    struct Rig {
        let harness: Harness
        let store: SimulatedStore
        let player: ScenarioPlayer

        var catalog: Catalog { EndToEndTests.catalog }

        /// Every customer's state and events, compared with the truth; the differences.
        func differences(_ client: any TestClientProtocol, events: Bool = true) async throws -> [String] {
            let model = await store.with { $0 }
            harness.clock.set(model.now)
            var found: [String] = []
            for name in model.customerNames {
                guard let appUserId = model.appUserId(of: name), let truth = model.truth(of: name) else { continue }
                let path = TruthCheck.customerPath(appUserId)
                let response = try await client.execute(uri: path, method: .get, headers: headers(harness.app.secretKey))
                guard response.status == .ok else {
                    found.append("\(name): HTTP \(response.status.code)")
                    continue
                }
                if let difference = TruthCheck.compare(customerBody: Data(response.body.readableBytesView), truth: truth, catalog: catalog)
                {
                    found.append("\(name) (\(appUserId)) at \(model.now):\n\(difference)")
                }
                // The RevenueCat shape a migrating team reads access from: RevenueCat's schema, and the same access.
                let subscriber = try await client.execute(
                    uri: "/v1/subscribers/" + path.dropFirst("/v1/customers/".count), method: .get, headers: headers(harness.app.secretKey))
                let shape = RevenueCatShape.problems(
                    subscriberBody: Data(subscriber.body.readableBytesView), customerBody: Data(response.body.readableBytesView))
                if !shape.isEmpty { found.append("\(name) (\(appUserId)) in the RevenueCat shape:\n\(shape.joined(separator: "\n"))") }
                guard events else { continue }
                // On PostgreSQL the stream shows a commit once no older transaction of the cluster is still running
                // (other tests' included): it may lag a moment. Read again for up to 5 s before calling it a difference.
                var difference: String?
                for attempt in 0..<50 {
                    if attempt > 0 { try await Task.sleep(for: .milliseconds(100)) }
                    var standing: [String: ExpectedEvent?] = [:]
                    var cursor = "0-0"
                    while true {
                        let page = try await client.execute(
                            uri: "\(path)/events?limit=1000&after=\(cursor)", method: .get, headers: headers(harness.app.secretKey))
                        let parsed = try TruthCheck.events(page: Data(page.body.readableBytesView))
                        standing.merge(parsed.events) { $1 }
                        if parsed.count < 1000 { break }
                        cursor = parsed.next
                    }
                    difference = TruthCheck.compare(events: standing.values.compactMap { $0 }, expected: model.events(of: name))
                    if difference == nil || harness.database != .postgres { break }
                }
                if let difference { found.append("\(name) (\(appUserId)): \(difference)") }
            }
            return found
        }
    }

    static func rig(
        scenario: Scenario?, client: any TestClientProtocol, harness: Harness,
        faults: FaultPlan = .none, seed: UInt64 = 1
    ) -> Rig {
        let model = StoreModel(app: simulatedApp(scenario), ca: testCA, runId: seed, start: at(0))
        let store = SimulatedStore(model)
        let appId = harness.app.appId
        let clock = harness.clock
        let sender: WebhookSender = { notification in
            clock.set(await store.with { $0.now })
            return try? await client.postNotification(appId, notification.signedPayload).status.code
        }
        let player = ScenarioPlayer(
            store: store, delivery: Delivery(send: sender, faults: faults, seed: seed), start: at(0), clock: .virtual)
        return Rig(harness: harness, store: store, player: player)
    }

    static var libraryCases: [(Scenario, TestDatabase)] {
        library.flatMap { scenario in TestDatabase.available.map { (scenario, $0) } }
    }

    @Test("the library makes the App Store send every (type, subtype) pair Apple defines")
    func coverage() throws {
        #expect(Self.library.count >= 20)
        var seen = Set<String>()
        for scenario in Self.library {
            var model = StoreModel(app: Self.simulatedApp(scenario), ca: testCA, runId: 7, start: at(0))
            for step in scenario.steps { seen.formUnion(try model.perform(step, start: at(0)).map(\.label)) }
        }
        let missing = Set(ScenarioLibrary.applePairs).subtracting(seen)
        #expect(missing.isEmpty, "no scenario sends \(missing.sorted())")
        #expect(
            seen.isSubset(of: Set(ScenarioLibrary.applePairs)),
            "labels outside Apple's list: \(seen.subtracting(ScenarioLibrary.applePairs).sorted())")
    }

    @Test("every library scenario: the server's states and events equal the ground truth after each step", arguments: libraryCases)
    func scenario(_ scenario: Scenario, database: TestDatabase) async throws {
        let h = try await Harness.make(database, catalog: Self.catalog)
        try await h.test { client in
            let rig = Self.rig(scenario: scenario, client: client, harness: h)
            for (index, step) in scenario.steps.enumerated() {
                try await rig.player.play(step)
                let differences = try await rig.differences(client)
                #expect(
                    differences.isEmpty,
                    "\(scenario.name), step \(index + 1) (\(step.action.rawValue) on day \(step.day)):\n\(differences.joined(separator: "\n"))"
                )
                if !differences.isEmpty { break }
            }
            #expect(rig.player.delivery.stats.failed == 0)
        }
    }

    @Test("duplicated, reordered and delayed deliveries give the same states and events", arguments: [UInt64(11), 12])
    func faults(seed: UInt64) async throws {
        for scenario in Self.library {
            let h = try await Harness.make(.sqlite, catalog: Self.catalog)
            try await h.test { client in
                let rig = Self.rig(
                    scenario: scenario, client: client, harness: h,
                    faults: FaultPlan(duplicate: 0.3, reorder: 0.3, delay: 0.2), seed: seed)
                for step in scenario.steps { try await rig.player.play(step) }
                await rig.player.drain()
                let differences = try await rig.differences(client)
                #expect(differences.isEmpty, "\(scenario.name) with faults (seed \(seed)):\n\(differences.joined(separator: "\n"))")
            }
        }
    }
}

/// Lost notifications, the fake App Store Server API, and a year of a population.
@Suite("End to end: reconciliation and load")
struct EndToEndReconciliationTests {
    static let signingKey = P256.Signing.PrivateKey()

    @Test(
        "with 10% of notifications dropped, reconciliation against the fake Server API brings every state back",
        arguments: TestDatabase.available)
    func drops(database: TestDatabase) async throws {
        let population = Population(customers: 120, days: 200, seed: 5).scenario(catalog: EndToEndTests.catalog)
        let store = SimulatedStore(StoreModel(app: EndToEndTests.simulatedApp(), ca: testCA, runId: 77, start: at(0)))
        let api = FakeServerAPI(store: store, bundleId: bundleId, publicKey: Self.signingKey.publicKey)
        try await ReceiptAndReconciliationTests.withFakeAppleAPI(api.router(), key: Self.signingKey) { credentials in
            let h = try await Harness.make(database, serverAPI: credentials, catalog: EndToEndTests.catalog)
            try await h.test { client in
                let appId = h.app.appId
                let clock = h.clock
                let sender: WebhookSender = { notification in
                    clock.set(await store.with { $0.now })
                    return try? await client.postNotification(appId, notification.signedPayload).status.code
                }
                let player = ScenarioPlayer(
                    store: store, delivery: Delivery(send: sender, faults: FaultPlan(drop: 0.1), seed: 9), start: at(0), clock: .virtual)
                for step in population.steps { try await player.play(step, lenient: true) }
                try await player.advance(to: at(200))
                let rig = EndToEndTests.Rig(harness: h, store: store, player: player)
                let before = try await rig.differences(client, events: false)
                #expect(player.delivery.stats.dropped > 10)
                #expect(!before.isEmpty, "dropping \(player.delivery.stats.dropped) notifications changed nothing: the check is blind")

                var reconciler = h.core.reconciler
                reconciler.lookback = .seconds(400 * 86_400)
                let report = await reconciler.run()
                #expect(report.errors.isEmpty, "\(report.errors)")
                #expect(report.notificationsNew == player.delivery.stats.dropped)
                let after = try await rig.differences(client)
                #expect(after.isEmpty, "after reconciliation:\n\(after.prefix(5).joined(separator: "\n"))")
                #expect((api.requests.withLockedValue { $0["notificationHistory"] } ?? 0) >= 1)
            }
        }
    }

    @Test("the App Store Server API client reads the fake API: history, statuses, notification history, test notification")
    func fakeAPI() async throws {
        var model = StoreModel(app: EndToEndTests.simulatedApp(), ca: testCA, runId: 3, start: at(0))
        try model.addCustomer("ann")
        _ = try model.subscribe("ann", product: "pro.monthly", offer: .freeTrial)
        _ = try model.buyOnce("ann", product: "coins.100")
        _ = try model.advance(to: at(70))
        let first = try #require(model.transactionOrder.first)
        let store = SimulatedStore(model)
        let received = NIOLockedValueBoxCounter()
        let api = FakeServerAPI(
            store: store, bundleId: bundleId, publicKey: Self.signingKey.publicKey,
            webhook: { _ in
                received.increment()
                return 200
            })
        let fake = Application(router: api.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await fake.test(.live) { fakeClient in
            let port = try #require(fakeClient.port)
            let key = try AppStoreSigningKey(
                pem: Self.signingKey.pemRepresentation, keyId: "SIMKEY", issuerId: "issuer", bundleId: bundleId)
            var configuration = AppStoreServerAPIClient.Configuration(key: key, environment: .sandbox)
            configuration.sandboxBaseURL = "http://127.0.0.1:\(port)"
            let verifier = try SignedDataVerifier(.init(rootCertificates: [testCA.rootDER], bundleId: bundleId, environment: .sandbox))
            let client = AppStoreServerAPIClient(configuration, verifier: verifier, httpClient: .shared)

            let history = try await client.allTransactionHistory(transactionId: first)
            #expect(history.count == 5)  // the week-long trial, three monthly renewals by day 70, the coins
            #expect(Set(history.compactMap(\.value.productId)) == ["pro.monthly", "coins.100"])
            let statuses = try await client.allSubscriptionStatuses(transactionId: first)
            #expect(statuses.groups.first?.lastTransactions.first?.status == .active)
            #expect(statuses.groups.first?.lastTransactions.first?.renewalInfo?.value.autoRenewStatus == .on)

            let page = try await client.notificationHistory(
                NotificationHistoryRequest(
                    startDate: Timestamp(millisecondsSince1970: at(0)), endDate: Timestamp(millisecondsSince1970: at(100))))
            #expect(page.items.count == 5)  // SUBSCRIBED, ONE_TIME_CHARGE, three DID_RENEW
            let failures = try await client.notificationHistory(
                NotificationHistoryRequest(
                    startDate: Timestamp(millisecondsSince1970: at(0)), endDate: Timestamp(millisecondsSince1970: at(100)),
                    onlyFailures: true))
            #expect(failures.items.count == 5)  // never delivered in this test

            let token = try await client.requestTestNotification()
            #expect(received.value == 1)
            let status = try await client.testNotificationStatus(token: token)
            #expect(status.notification?.value.payload.notificationType == .test)
            #expect(status.sendAttempts.first?.sendAttemptResult == "SUCCESS")

            // Pagination tokens and revisions come from outside: nonsense is a 400, never a crash.
            let bearer = try client.makeToken()
            var fields = headers(nil)
            fields[.authorization] = "Bearer \(bearer)"
            let badPage = try await fakeClient.execute(
                uri: "/inApps/v1/notifications/history?paginationToken=-1", method: .post, headers: fields,
                body: ByteBuffer(string: #"{"startDate": 0, "endDate": 1}"#))
            #expect(badPage.status == .badRequest)
            let badRevision = try await fakeClient.execute(uri: "/inApps/v2/history/\(first)?revision=x", method: .get, headers: fields)
            #expect(badRevision.status == .badRequest)

            // What Apple's own library sends: a token without iat, and Get Transaction History v1 (its default).
            var appleFields = headers(nil)
            appleFields[.authorization] =
                "Bearer \(try AppleLibraryToken.make(key: Self.signingKey, keyId: "SIMKEY", issuerId: "issuer", bundleId: bundleId))"
            let v1 = try await fakeClient.execute(uri: "/inApps/v1/history/\(first)", method: .get, headers: appleFields)
            #expect(v1.status == .ok)
            let v2 = try await fakeClient.execute(uri: "/inApps/v2/history/\(first)", method: .get, headers: appleFields)
            #expect(v2.status == .ok)
            #expect(String(buffer: v1.body) == String(buffer: v2.body))
            let v1Body = try JSONSerialization.jsonObject(with: Data(v1.body.readableBytesView)) as? [String: Any]
            #expect((v1Body?["signedTransactions"] as? [String])?.count == 5)
            #expect(v1Body?["revision"] as? String == "5")
            #expect(v1Body?["hasMore"] as? Bool == false)
            #expect(v1Body?["bundleId"] as? String == bundleId)

            // A token for another app is refused.
            let other = try AppStoreSigningKey(
                pem: Self.signingKey.pemRepresentation, keyId: "SIMKEY", issuerId: "issuer", bundleId: "com.other")
            var otherConfiguration = AppStoreServerAPIClient.Configuration(key: other, environment: .sandbox)
            otherConfiguration.sandboxBaseURL = "http://127.0.0.1:\(port)"
            let stranger = AppStoreServerAPIClient(otherConfiguration, verifier: verifier, httpClient: .shared)
            await #expect(throws: AppStoreServerAPIError.self) { _ = try await stranger.allTransactionHistory(transactionId: first) }
        }
    }

    @Test(
        "a population over a year (2,000 customers on SQLite, 1,000 on PostgreSQL): every state on the server equals the simulator's, every event reaches a webhook",
        arguments: TestDatabase.available)
    func population(database: TestDatabase) async throws {
        // The year's lifecycles are the same on both databases: SQLite gets the larger crowd, PostgreSQL enough to run
        // every path through its SQL (CI's time is the cost of each customer, twice).
        let customers = database == .sqlite ? 2000 : 1000
        let scenario = Population(customers: customers, days: 365, seed: 42).scenario(catalog: EndToEndTests.catalog)
        let h = try await Harness.make(database, catalog: EndToEndTests.catalog)
        let receiver = FakeDestination()
        try await receiver.serve { url in
            try await h.live { client in
                _ = try await client.createWebhook(h, url: url)
                let rig = EndToEndTests.rig(scenario: nil, client: client, harness: h, seed: 42)
                for step in scenario.steps { try await rig.player.play(step, lenient: true) }
                try await rig.player.advance(to: at(365))
                let summary = await rig.store.with { $0.summary() }
                #expect(summary.customers == customers)
                #expect(
                    summary.active > customers / 20 && summary.expired > customers / 20 && summary.billingRetry + summary.revoked > 0,
                    "\(summary)")
                #expect(rig.player.skipped.count < scenario.steps.count / 4)
                let differences = try await rig.differences(client, events: false)
                #expect(differences.isEmpty, "\(differences.count) customers differ:\n\(differences.prefix(5).joined(separator: "\n"))")
                try await Self.compareMetrics(client, harness: h, expected: await rig.store.with { $0.expectedMetrics() })

                // The webhook counted what it received: every event of the stream (each version: recordings and
                // retractions), each delivery once.
                let versions = try await h.core.database.reading { session in
                    try await session.sql.raw("SELECT COUNT(*) AS n FROM deliveries").first().map {
                        try $0.decode(column: "n", as: Int.self)
                    } ?? 0
                }
                let events = try await IntegrationTests.storedEvents(h)
                #expect(events.count > customers * 5 / 2, "the year records many events: \(events.count)")
                try await eventually("every delivery received", seconds: 120) {
                    Set(receiver.received.compactMap { $0.header("webhook-id") }).count >= versions
                }
                let received = receiver.received
                #expect(Set(received.compactMap { $0.header("webhook-id") }).count == versions)
                let eventIds = Set(
                    received.compactMap { try? (($0.json()["data"] as? [String: Any])?["event"] as? [String: Any])?["id"] as? String })
                #expect(
                    Set(events.map(\.eventId)).isSubset(of: eventIds),
                    "\(Set(events.map(\.eventId)).subtracting(eventIds).count) events never delivered")
            }
        }
    }

    /// The server's overview and revenue against what the simulator's own bookkeeping expects, at the rates its
    /// storefront prices imply.
    static func compareMetrics(_ client: any TestClientProtocol, harness h: Harness, expected: ExpectedMetrics) async throws {
        // Not blind: the year leaves paid subscribers, trials, revenue in several currencies.
        #expect(expected.activeSubscriptions > 50 && expected.trialsStarted > 100 && expected.revenueByCurrency.count > 2, "\(expected)")
        h.clock.set(at(365))
        let key = headers(h.app.secretKey)
        let loaded = try await client.execute(
            uri: "/v1/rates", method: .put, headers: operatorHeaders(), body: ByteBuffer(string: Storefront.ratesCSV()))
        #expect(loaded.status == .ok)
        let overview = try decode(
            MetricsOverview.self,
            try await client.execute(uri: "/v1/apps/\(h.app.appId)/metrics/overview?environment=Sandbox", method: .get, headers: key))
        #expect(overview.activeSubscriptions == expected.activeSubscriptions, "\(overview) vs \(expected)")
        #expect(overview.activeTrials == expected.activeTrials, "\(overview) vs \(expected)")
        // Each row's price per month is rounded to the milliunit, the total to the cent.
        #expect(abs(overview.mrr - expected.mrr) < 0.01 + 0.0005 * Double(expected.activeSubscriptions), "\(overview) vs \(expected)")
        #expect(overview.unconverted.isEmpty)
        let from = CalendarDay(containing: at(0)).description
        let to = CalendarDay(containing: at(366)).description
        let revenue = try decode(
            MetricSeries.Decoded.self,
            try await client.execute(
                uri: "/v1/apps/\(h.app.appId)/metrics/revenue?environment=Sandbox&interval=month&from=\(from)&to=\(to)", method: .get,
                headers: key))
        let net = revenue.points.reduce(0) { $0 + ($1[number: "net"] ?? 0) }
        #expect(abs(net - expected.netRevenue) < 0.01 * Double(revenue.points.count) + 0.01, "net \(net) vs \(expected)")
        #expect(revenue.unconverted.isEmpty)
        let trials = try decode(
            MetricSeries.Decoded.self,
            try await client.execute(
                uri: "/v1/apps/\(h.app.appId)/metrics/newTrials?environment=Sandbox&interval=month&from=\(from)&to=\(to)", method: .get,
                headers: key))
        #expect(Int(trials.points.reduce(0) { $0 + ($1[number: "value"] ?? 0) }) == expected.trialsStarted)
    }
}

extension MetricSeries {
    /// A series as the API writes it, read back.
    struct Decoded: Decodable {
        var points: [[String: JSONValue]]
        var unconverted: [String: Double]
    }
}

extension Dictionary where Key == String, Value == JSONValue {
    /// A point's numeric field.
    subscript(number key: String) -> Double? {
        if case .number(let value)? = self[key] { return value }
        return nil
    }
}

/// A counter a @Sendable closure can bump.
final class NIOLockedValueBoxCounter: Sendable {
    private let box = NIOLockedValueBox(0)
    func increment() { box.withLockedValue { $0 += 1 } }
    var value: Int { box.withLockedValue { $0 } }
}
