import AppStore
import AppStoreSimulator
import Foundation
import Hummingbird
import HummingbirdTesting
import Storage
import TestSupport
import Testing

@testable import AppStoreSimulatorAPI
@testable import StorekeeperCore
@testable import StorekeeperServer

/// Apple's refund requests answered by the app's policy: recorded with their answer in the notification's transaction,
/// sent by the worker to the (fake) App Store Server API only with the customer's consent, retried, held for a person,
/// and linked to Apple's decision, which the simulated App Store takes by the preference it received.
@Suite("Refund requests answered by policy")
struct RefundRequestTests {
    /// Declines a used auto-renewable subscription asked about within three days; grants the rest.
    static var policy: [String: Any] {
        [
            "rules": [
                [
                    "name": "used-subscription", "preference": "DECLINE", "productTypes": ["Auto-Renewable Subscription"],
                    "maxHoursSincePurchase": 72, "entitlementUsed": true,
                ] as [String: Any]
            ],
            "defaultPreference": "GRANT_FULL",
        ]
    }

    /// A server with the fake Server API, a scenario of the library played against both, and what the test does.
    struct Rig {
        let harness: Harness
        let api: FakeServerAPI
        let store: SimulatedStore
        let player: ScenarioPlayer
        let client: any TestClientProtocol

        var appId: String { harness.app.appId }
        var admin: HTTPFields { headers(harness.app.secretKey) }

        func appUserId(_ name: String) async throws -> String {
            try #require(await store.with { $0.appUserId(of: name) })
        }

        func report(_ name: String, _ body: [String: Any]) async throws -> TestResponse {
            try await client.execute(
                uri: TruthCheck.customerPath(try await appUserId(name)) + "/consumption", method: .post,
                headers: headers(harness.app.publicKey), body: try jsonBody(body))
        }

        func requests(status: String? = nil) async throws -> [RefundRequestView] {
            let response = try await client.execute(
                uri: "/v1/apps/\(appId)/refund-requests?environment=Sandbox" + (status.map { "&status=\($0)" } ?? ""), method: .get,
                headers: admin)
            #expect(response.status == .ok)
            return try JSONDecoder().decode(RequestList.self, from: Data(response.body.readableBytesView)).requests
        }

        /// Runs the worker until it sends nothing more (the server's own service does this every second).
        func answer() async throws {
            harness.clock.set(await store.with { $0.now })
            while try await harness.core.refundAnswers.pass() > 0 {}
        }
    }

    struct RequestList: Decodable { var requests: [RefundRequestView] }

    static func jsonBody(_ object: Any) throws -> ByteBuffer { ByteBuffer(data: try JSONSerialization.data(withJSONObject: object)) }

    static func withRig(
        _ database: TestDatabase, policy: [String: Any]? = RefundRequestTests.policy, _ body: @escaping @Sendable (Rig) async throws -> Void
    ) async throws {
        let policyBody = try policy.map { try JSONSerialization.data(withJSONObject: $0) }
        let store = SimulatedStore(StoreModel(app: EndToEndTests.simulatedApp(), ca: testCA, runId: 45, start: at(0)))
        let api = FakeServerAPI(store: store, bundleId: bundleId, publicKey: EndToEndReconciliationTests.signingKey.publicKey)
        try await ReceiptAndReconciliationTests.withFakeAppleAPI(api.router(), key: EndToEndReconciliationTests.signingKey) { credentials in
            let h = try await Harness.make(database, serverAPI: credentials, catalog: EndToEndTests.catalog)
            try await h.test { client in
                let appId = h.app.appId
                let clock = h.clock
                let sender: WebhookSender = { notification in
                    clock.set(await store.with { $0.now })
                    return try? await client.postNotification(appId, notification.signedPayload).status.code
                }
                let player = ScenarioPlayer(store: store, delivery: Delivery(send: sender, seed: 3), start: at(0), clock: .virtual)
                if let policyBody {
                    let set = try await client.execute(
                        uri: "/v1/apps/\(appId)/refund-policy", method: .put, headers: headers(h.app.secretKey),
                        body: ByteBuffer(data: policyBody))
                    #expect(set.status == .ok, "\(String(buffer: set.body))")
                }
                try await body(Rig(harness: h, api: api, store: store, player: player, client: client))
            }
        }
    }

    /// Plays a library scenario; before Apple decides a refund, the worker answers what is due.
    static func play(_ name: String, _ rig: Rig, beforeEachStep: (ScenarioStep) async throws -> Void = { _ in }) async throws {
        for step in try ScenarioLibrary.named(name).steps {
            try await beforeEachStep(step)
            if step.action == .decideRefund {
                try await rig.player.advance(to: at(0) + Int64(step.day * 86_400_000))
                try await rig.answer()
            }
            try await rig.player.play(step)
        }
    }

    @Test(
        "refund-request-declined: the policy's DECLINE reaches Apple, which declines; the request shows the rule and the outcome",
        arguments: TestDatabase.available)
    func declined(database: TestDatabase) async throws {
        try await Self.withRig(database) { rig in
            try await Self.play("refund-request-declined", rig) { (step: ScenarioStep) async throws in
                // Once subscribed, the app reports consent and use.
                if step.action == .consumptionRequest {
                    let reported = try await rig.report("dee", ["customerConsented": true, "entitlementUsed": true])
                    #expect(reported.status == .ok)
                }
            }
            let requests = try await rig.requests()
            let request = try #require(requests.first)
            #expect(requests.count == 1)
            #expect(request.status == "sent")
            #expect(request.preference == "DECLINE")
            #expect(request.decidedBy == "rule:used-subscription")
            #expect(request.reason == "UNSATISFIED_WITH_PURCHASE")
            #expect(request.outcome == "declined")
            let sent = try JSONSerialization.jsonObject(with: Data((request.body ?? "").utf8)) as? [String: Any]
            #expect(sent?["customerConsented"] as? Bool == true)
            #expect(sent?["consumptionPercentage"] == nil, "never a percentage for an auto-renewable subscription")
            let received = await rig.store.with { $0.consumptionAnswers[request.transactionId] }
            #expect(received?.refundPreference == .decline)
            // Still subscribed: Apple declined.
            let state = try await rig.client.customer(try await rig.appUserId("dee"), key: rig.harness.app.secretKey)
            #expect(try customer(state).customer.entitlements["pro"]?.active == true)
        }
    }

    @Test(
        "refund-request-granted: GRANT_FULL for a consumable and a subscription; Apple refunds both; the metric counts them",
        arguments: TestDatabase.available)
    func granted(database: TestDatabase) async throws {
        try await Self.withRig(database) { rig in
            try await Self.play("refund-request-granted", rig) { (step: ScenarioStep) async throws in
                // Before the first request (the coins'), the app reports consent and that the coins were delivered, unspent.
                if step.action == .consumptionRequest, step.product == "coins.100" {
                    let reported = try await rig.report(
                        "eve", ["customerConsented": true, "deliveryStatus": "DELIVERED", "consumptionPercentage": 0])
                    #expect(reported.status == .ok)
                }
            }
            let requests = try await rig.requests()
            #expect(requests.count == 2)
            #expect(requests.allSatisfy { $0.status == "sent" && $0.preference == "GRANT_FULL" && $0.decidedBy == "default" })
            #expect(requests.allSatisfy { $0.outcome == "refunded" })
            let coins = try #require(requests.first { $0.productId == "coins.100" })
            #expect(coins.body?.contains("\"consumptionPercentage\":0") == true)

            let metric = try await rig.client.execute(
                uri: "/v1/apps/\(rig.appId)/metrics/refundRequests?from=2025-12-01&to=2026-06-01&interval=month&environment=Sandbox",
                method: .get, headers: rig.admin)
            #expect(metric.status == .ok, "\(String(buffer: metric.body))")
            let series = try JSONSerialization.jsonObject(with: Data(metric.body.readableBytesView)) as? [String: Any]
            let points = series?["points"] as? [[String: Any]] ?? []
            func total(_ field: String) -> Double { points.compactMap { $0[field] as? Double }.reduce(0, +) }
            #expect(points.compactMap { $0["value"] as? Double }.reduce(0, +) == 2)
            #expect(total("answered") == 2)
            #expect(total("granted") == 2)
            #expect(total("grantedAsAnswered") == 2)
        }
    }

    @Test(
        "no answer without consent; consent given later sends it; a held answer waits for a person, who answers on the dashboard; Apple's 500 is retried",
        arguments: TestDatabase.available)
    func consentRetryAndHold(database: TestDatabase) async throws {
        var policy = Self.policy
        policy["holdMinutes"] = 120
        try await Self.withRig(database, policy: policy) { rig in
            try await rig.player.play(ScenarioStep(day: 0, .subscribe, customer: "fay", product: "pro.monthly"))
            var ask = ScenarioStep(day: 1, .consumptionRequest, customer: "fay")
            ask.reason = "OTHER"
            try await rig.player.play(ask)
            try await rig.answer()
            var request = try #require(try await rig.requests().first)
            #expect(request.status == "noConsent")
            #expect(rig.api.requests.withLockedValue { $0["consumption"] } == nil, "nothing may reach Apple without consent")

            // Consent arrives: the request waits again, held for two hours for a person.
            #expect(try await rig.report("fay", ["customerConsented": true]).status == .ok)
            request = try #require(try await rig.requests().first)
            #expect(request.status == "waiting")
            #expect(request.held)
            try await rig.answer()
            #expect(rig.api.requests.withLockedValue { $0["consumption"] } == nil, "a held answer waits")

            // The dashboard shows it held, with a form; a person answers there. Apple fails twice, then accepts.
            _ = try await DashboardTests.user(rig.harness)
            let (_, cookie) = try await DashboardTests.signIn(rig.client, email: "ops@example.com", password: DashboardTests.password)
            let pagePath = "/dashboard/apps/\(rig.appId)/refund-requests?environment=Sandbox"
            let page = try await DashboardTests.get(rig.client, pagePath, cookie: cookie)
            let html = String(buffer: page.body)
            #expect(page.status == .ok)
            #expect(html.contains("data-request=\"\(request.id)\"") && html.contains("held until"))
            #expect(html.contains("/refund-requests/\(request.id)/decision"))
            rig.api.consumptionFailures.withLockedValue { $0 = 2 }
            let (formHeaders, formBody) = DashboardTests.form(
                [("csrf", DashboardTests.csrf(html) ?? ""), ("preference", "GRANT_PRORATED")], cookie: cookie)
            let decided = try await rig.client.execute(
                uri: "/dashboard/apps/\(rig.appId)/refund-requests/\(request.id)/decision?environment=Sandbox", method: .post,
                headers: formHeaders, body: formBody)
            #expect(decided.status == .seeOther, "\(String(buffer: decided.body))")
            try await rig.answer()
            request = try #require(try await rig.requests().first)
            #expect(request.status == "waiting")
            #expect(request.appleStatus == 500)
            for _ in 0..<2 {
                rig.harness.clock.set(rig.harness.clock.now + 600_000)
                while try await rig.harness.core.refundAnswers.pass() > 0 {}
            }
            request = try #require(try await rig.requests().first)
            #expect(request.status == "sent")
            #expect(request.attempts == 3)
            #expect(request.decidedBy == "person:ops@example.com")
            #expect(request.preference == "GRANT_PRORATED")
            #expect(request.body?.contains("consumptionPercentage") == false)
            #expect(rig.api.requests.withLockedValue { $0["consumption"] } == 3)

            let answeredPage = String(buffer: try await DashboardTests.get(rig.client, pagePath, cookie: cookie).body)
            #expect(answeredPage.contains("person:ops@example.com") && !answeredPage.contains("held until"))

            // Deciding it again (with the API) is a conflict; an unknown request is 404.
            let again = try await rig.client.execute(
                uri: "/v1/apps/\(rig.appId)/refund-requests/\(request.id)/decision", method: .post, headers: rig.admin,
                body: try Self.jsonBody(["preference": "DECLINE"]))
            #expect(again.status == .conflict)
            let unknown = try await rig.client.execute(
                uri: "/v1/apps/\(rig.appId)/refund-requests/nope/decision", method: .post, headers: rig.admin,
                body: try Self.jsonBody(["preference": "DECLINE"]))
            #expect(unknown.status == .notFound)
        }
    }

    @Test("bad policies and reports are 400 naming the field; without a policy a request is only recorded")
    func badInput() async throws {
        try await Self.withRig(.sqlite, policy: nil) { rig in
            func put(_ body: [String: Any]) async throws -> (HTTPResponse.Status, String?) {
                let response = try await rig.client.execute(
                    uri: "/v1/apps/\(rig.appId)/refund-policy", method: .put, headers: rig.admin, body: try Self.jsonBody(body))
                return (response.status, try? decode(ErrorBody.self, response).error.field)
            }
            #expect(try await put(["holdMinutes": 700]) == (.badRequest, "holdMinutes"))
            #expect(try await put(["rules": [["name": "x", "productTypes": ["Subscription"]]]]) == (.badRequest, "rules[0].productTypes"))
            #expect(try await put(["rules": [["name": "x", "colour": "red"]]]) == (.badRequest, "rules[0].colour"))
            #expect(try await put(["rules": [["name": "x"], ["name": "x"]]]) == (.badRequest, "rules[1].name"))
            #expect(try await put(["defaultPreference": "MAYBE"]).0 == .badRequest)
            #expect(try await put(["holdMinutes": NSNull()]) == (.badRequest, "holdMinutes"))
            #expect(try await put(["rules": [["name": "x", "productIds": NSNull()]]]) == (.badRequest, "rules[0].productIds"))
            #expect(try await put(["defaultPreference": NSNull(), "rules": [["name": "x", "preference": NSNull()]]]).0 == .ok)
            let deleted = try await rig.client.execute(uri: "/v1/apps/\(rig.appId)/refund-policy", method: .delete, headers: rig.admin)
            #expect(deleted.status == .noContent)
            let missing = try await rig.client.execute(uri: "/v1/apps/\(rig.appId)/refund-policy", method: .get, headers: rig.admin)
            #expect(missing.status == .notFound)

            try await rig.player.play(ScenarioStep(day: 0, .subscribe, customer: "gus", product: "pro.monthly"))
            let tooMuch = try await rig.report("gus", ["consumptionPercentage": 100_001])
            #expect(tooMuch.status == .badRequest)
            #expect(try errorCode(tooMuch) != nil)
            #expect(try await rig.report("gus", ["refundPreferenceOverride": "DECLINE"]).status == .badRequest)
            let null = try await rig.report("gus", ["deliveryStatus": NSNull()])
            #expect(null.status == .badRequest)
            #expect(try decode(ErrorBody.self, null).error.field == "deliveryStatus")
            #expect(try await rig.report("gus", ["customerConsented": true]).status == .ok)
            try await rig.player.play(ScenarioStep(day: 1, .consumptionRequest, customer: "gus"))
            try await rig.answer()
            let request = try #require(try await rig.requests().first)
            #expect(request.status == "unanswered")
            #expect(request.note?.contains("no refund policy") == true)
            #expect(rig.api.requests.withLockedValue { $0["consumption"] } == nil)
        }
    }

    @Test("Apple's decision delivered before the refund request is linked to it, and no answer is sent", arguments: TestDatabase.available)
    func decisionBeforeRequest(database: TestDatabase) async throws {
        var model = StoreModel(app: EndToEndTests.simulatedApp(), ca: testCA, runId: 46, start: at(0))
        try model.addCustomer("hal")
        let bought = try model.subscribe("hal", product: "pro.monthly", offer: .none)
        _ = try model.advance(to: at(2))
        let asked = try model.requestConsumption("hal", product: nil, reason: .unintendedPurchase)
        _ = try model.advance(to: at(2.2))
        let declined = try model.declineRefund("hal", product: nil)
        let appUserId = try #require(model.appUserId(of: "hal"))
        try await Self.withRig(database) { rig in
            rig.harness.clock.set(at(2.2))
            for notification in bought + declined + asked {
                #expect(try await rig.client.postNotification(rig.appId, notification.signedPayload).status == .ok)
            }
            let consented = try await rig.client.execute(
                uri: TruthCheck.customerPath(appUserId) + "/consumption", method: .post, headers: headers(rig.harness.app.publicKey),
                body: try Self.jsonBody(["customerConsented": true]))
            #expect(consented.status == .ok)
            while try await rig.harness.core.refundAnswers.pass() > 0 {}
            let request = try #require(try await rig.requests().first)
            #expect(request.outcome == "declined")
            #expect(request.status == "unanswered")
            #expect(request.note?.contains("Apple decided") == true)
            #expect(rig.api.requests.withLockedValue { $0["consumption"] } == nil)
        }
    }

    @Test("an attempt's outcome is not written over a person's decision made while it was in flight")
    func staleAttempt() async throws {
        let h = try await Harness.make(.sqlite)
        let db = h.core.database
        var record = RefundRequestRecord(
            appId: h.app.appId, notificationUUID: "n1", environment: "Sandbox", customerId: "c1", transactionId: "t1",
            originalTransactionId: "t1", productId: "pro.monthly", productType: "Auto-Renewable Subscription", reason: nil,
            requestedAt: 0, deadlineAt: 43_200_000, status: .waiting, dueAt: 1_000, preference: "GRANT_FULL", decidedBy: "default",
            note: nil, createdAt: 0)
        record.nextAttemptAt = 1_000
        let inserted = record
        try await db.writing { try await $0.insert(inserted) }
        let claimed = try await db.writing {
            try await $0.claimRefundRequest(app: h.app.appId, notificationUUID: "n1", now: 1_000, lease: 60_000)
        }
        #expect(claimed?.attempts == 1)
        // A person decides while the attempt is with Apple; the attempt's late outcome must not replace theirs.
        let decided = try await db.writing {
            try await $0.decideRefundRequest(app: h.app.appId, notificationUUID: "n1", preference: "DECLINE", by: "ops", now: 2_000)
        }
        #expect(decided)
        try await db.writing {
            try await $0.finishRefundAnswer(
                app: h.app.appId, notificationUUID: "n1", claimedUntil: 61_000, status: .sent, body: "{}", preference: "GRANT_FULL",
                note: nil, appleStatus: 202, error: nil, nextAttemptAt: nil, now: 3_000)
        }
        var stored = try #require(try await db.refundRequest(app: h.app.appId, notificationUUID: "n1"))
        #expect(stored.status == .waiting)
        #expect(stored.preference == "DECLINE")
        #expect(stored.decidedBy == "person:ops")
        // The person's own attempt, under its own claim, is recorded.
        let again = try await db.writing {
            try await $0.claimRefundRequest(app: h.app.appId, notificationUUID: "n1", now: 4_000, lease: 60_000)
        }
        #expect(again?.preference == "DECLINE")
        try await db.writing {
            try await $0.finishRefundAnswer(
                app: h.app.appId, notificationUUID: "n1", claimedUntil: 64_000, status: .sent, body: "{}", preference: "DECLINE",
                note: nil, appleStatus: 202, error: nil, nextAttemptAt: nil, now: 5_000)
        }
        stored = try #require(try await db.refundRequest(app: h.app.appId, notificationUUID: "n1"))
        #expect(stored.status == .sent)
        #expect(stored.attempts == 2)
        await h.close()
    }

    @Test("the fake Server API validates a consumption body as Apple documents it")
    func fakeAPIValidation() throws {
        func check(_ body: FakeServerAPI.ConsumptionBody, _ type: String) -> Int64? {
            do {
                _ = try FakeServerAPI.consumption(body, productType: ProductType(rawValue: type), at: 0)
                return nil
            } catch {
                return error.code
            }
        }
        let renewable = "Auto-Renewable Subscription"
        var body = FakeServerAPI.ConsumptionBody(
            customerConsented: true, deliveryStatus: .delivered, sampleContentProvided: false, consumptionPercentage: nil,
            refundPreference: .grantProrated)
        #expect(check(body, renewable) == nil)
        body.customerConsented = false
        #expect(check(body, renewable) == 4_000_035)
        body.customerConsented = true
        body.consumptionPercentage = 10_000
        #expect(check(body, renewable) == 4_000_006, "no percentage for an auto-renewable subscription")
        #expect(check(body, "Consumable") == nil)
        body.consumptionPercentage = nil
        #expect(check(body, "Consumable") == 4_000_006, "GRANT_PRORATED needs a percentage for a consumable")
        body.deliveryStatus = .undeliveredOther
        body.consumptionPercentage = 5
        body.refundPreference = nil
        #expect(check(body, "Consumable") == 4_000_006, "not delivered: 0")
        body.deliveryStatus = PurchaseDeliveryStatus(rawValue: "LOST")
        #expect(check(body, "Consumable") == 4_000_036)
    }

    @Test("the policy: the first matching rule decides; unknown usage matches no rule about it; the override comes first")
    func policyRules() {
        var used = RefundRule(name: "used", preference: .decline)
        used.entitlementUsed = true
        var big = RefundRule(name: "big-spender", preference: .grantFull)
        big.minLifetimeSpendUSD = 100
        let policy = RefundPolicy(rules: [used, big], defaultPreference: .grantProrated)
        func facts(used: Bool?, spend: Double, override: RefundPreference? = nil) -> RefundRequestFacts {
            RefundRequestFacts(
                productId: "p", productType: .consumable, reason: nil, hoursSincePurchase: 1, lifetimeSpendUSD: spend, refundsBefore: 0,
                entitlementUsed: used, override: override)
        }
        #expect(policy.decide(facts(used: true, spend: 500)) == RefundDecision(preference: .decline, decidedBy: "rule:used"))
        #expect(policy.decide(facts(used: nil, spend: 500)) == RefundDecision(preference: .grantFull, decidedBy: "rule:big-spender"))
        #expect(policy.decide(facts(used: false, spend: 5)) == RefundDecision(preference: .grantProrated, decidedBy: "default"))
        #expect(
            policy.decide(facts(used: true, spend: 5, override: .grantFull))
                == RefundDecision(preference: .grantFull, decidedBy: "override"))

        // GRANT_PRORATED without a usable share is sent without a preference, and says why.
        let noShare = ConsumptionAnswer(preference: .grantProrated, productType: .consumable, report: nil, sampleContentProvided: true)
        #expect(noShare.preference == nil)
        #expect(noShare.note != nil)
        #expect(noShare.request.sampleContentProvided)
        let report = ConsumptionReportRecord(appId: "a", appUserId: "u", consented: true, consumptionPercentage: 40_000, updatedAt: 0)
        let share = ConsumptionAnswer(preference: .grantProrated, productType: .consumable, report: report, sampleContentProvided: false)
        #expect(share.request.refundPreference == .grantProrated)
        #expect(share.request.consumptionPercentage == 40_000)
        let renewable = ConsumptionAnswer(
            preference: .grantProrated, productType: .autoRenewable, report: report, sampleContentProvided: false)
        #expect(renewable.request.consumptionPercentage == nil)
        #expect(renewable.request.refundPreference == .grantProrated)
    }
}
