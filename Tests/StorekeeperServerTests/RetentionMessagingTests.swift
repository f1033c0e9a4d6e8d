import AppStore
import AppStoreSimulator
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import Storage
import TestSupport
import Testing

@testable import AppStoreSimulatorAPI
@testable import StorekeeperCore
@testable import StorekeeperServer

/// Apple's Retention Messaging API: the client against the fake (images, messages within Apple's limits, default
/// messages, the real-time URL), and the server's Get Retention Message endpoint answering by policy or by a split
/// test on the placement `cancel`, which Apple's performance test (the fake's) calls as Apple would.
@Suite("Retention messaging")
struct RetentionMessagingTests {
    static let welcome = "a1b2c3d4-e5f6-4890-a1b2-c3d4e5f67890"
    static let stay = "b2c3d4e5-f6a7-4901-b2c3-d4e5f6a78901"
    static let discount = "c3d4e5f6-a789-4012-c3d4-e5f6a7890123"
    static let yearly = "d4e5f6a7-8901-4123-d4e5-f6a789012345"

    struct RequestList: Decodable { var requests: [RetentionRequestView] }

    static func base64URL(_ text: String) -> Data? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return Data(base64Encoded: standard)
    }

    /// The server, the simulated store with `ann` in a free trial of pro.monthly and `bob` paying for pro.monthly since
    /// day 0, and the fake Server API, whose performance test calls the server in process.
    struct Rig {
        let harness: Harness
        let client: any TestClientProtocol
        let store: SimulatedStore
        let player: ScenarioPlayer
        let api: FakeServerAPI
        var admin: HTTPFields { headers(harness.app.secretKey) }
        var path: String { "/v1/apps/\(harness.app.appId)/retention/appstore" }

        func original(_ name: String) async throws -> String {
            try #require(await store.with { $0.subscriptionOriginalTransactionIds(of: name) }.first)
        }

        /// Apple's request about the customer's subscription, and the server's answer.
        func ask(_ name: String, locale: String = "en-US", id: UUID = UUID()) async throws -> TestResponse {
            let original = try await original(name)
            let body = try #require(
                try await store.with { try $0.retentionRequest(originalTransactionId: original, userLocale: locale, requestIdentifier: id) }
            )
            return try await client.execute(uri: path, method: .post, headers: headers(nil), body: ByteBuffer(string: body))
        }

        func answer(_ name: String, locale: String = "en-US") async throws -> RealtimeResponseBody {
            let response = try await ask(name, locale: locale)
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            return try decode(RealtimeResponseBody.self, response)
        }

        func setPolicy(_ json: String) async throws -> TestResponse {
            try await client.execute(
                uri: "/v1/apps/\(harness.app.appId)/retention-policy", method: .put, headers: admin, body: ByteBuffer(string: json))
        }

        func requests() async throws -> [RetentionRequestView] {
            let response = try await client.execute(
                uri: "/v1/apps/\(harness.app.appId)/retention-requests?environment=Sandbox", method: .get, headers: admin)
            #expect(response.status == .ok)
            return try decode(RequestList.self, response).requests
        }
    }

    static func withRig(_ database: TestDatabase, _ body: @escaping @Sendable (Rig) async throws -> Void) async throws {
        let store = SimulatedStore(StoreModel(app: EndToEndTests.simulatedApp(), ca: testCA, runId: 46, start: at(0)))
        // The performance test's calls reach the server through the test client, set once the server runs.
        let server = NIOLockedValueBox<(any TestClientProtocol)?>(nil)
        let caller: RealtimeCaller = { url, body in
            let clock = ContinuousClock()
            let start = clock.now
            guard let client = server.withLockedValue({ $0 }), let path = URL(string: url)?.path,
                let response = try? await client.execute(uri: path, method: .post, headers: headers(nil), body: ByteBuffer(string: body))
            else { return RealtimeCallResult(status: nil, body: [], milliseconds: 0) }
            let elapsed = clock.now - start
            return RealtimeCallResult(
                status: Int(response.status.code), body: Array(response.body.readableBytesView),
                milliseconds: Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
        }
        var fake = FakeServerAPI(
            store: store, bundleId: bundleId, publicKey: EndToEndReconciliationTests.signingKey.publicKey, realtimeCaller: caller)
        // Tests check what the performance test does, not how fast the server is (Benchmarks/server.sh measures that):
        // a minute passes on any machine.
        fake.performanceTest.responseTimeThreshold = 60_000
        let api = fake
        try await ReceiptAndReconciliationTests.withFakeAppleAPI(api.router(), key: EndToEndReconciliationTests.signingKey) { credentials in
            let h = try await Harness.make(database, serverAPI: credentials, catalog: EndToEndTests.catalog)
            try await h.test { client in
                server.withLockedValue { $0 = client }
                let appId = h.app.appId
                let clock = h.clock
                let sender: WebhookSender = { notification in
                    clock.set(await store.with { $0.now })
                    return try? await client.postNotification(appId, notification.signedPayload).status.code
                }
                let player = ScenarioPlayer(store: store, delivery: Delivery(send: sender, seed: 5), start: at(0), clock: .virtual)
                var trial = ScenarioStep(day: 0, .subscribe, customer: "ann", product: "pro.monthly")
                trial.offer = .freeTrial
                try await player.play(trial)
                try await player.play(ScenarioStep(day: 0, .subscribe, customer: "bob", product: "pro.monthly"))
                try await player.play(ScenarioStep(day: 40, .wait))
                clock.set(await store.with { $0.now })
                try await body(Rig(harness: h, client: client, store: store, player: player, api: api))
            }
        }
    }

    @Test(
        "the client: images, messages, default messages and the real-time URL; over Apple's limits refused, the field named, before any call"
    )
    func client() async throws {
        try await Self.withRig(.sqlite) { rig in
            let app = try await rig.harness.core.apps.app(id: rig.harness.app.appId)
            let apple = try await rig.harness.core.retention.appleClient(app: app, environment: .sandbox)
            let image = UUID()
            let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13]
            try await apple.uploadRetentionImage(identifier: image, png: png)
            #expect(try await apple.retentionImages().map(\.imageIdentifier) == [image.uuidString.lowercased()])
            await #expect(throws: AppStoreServerAPIError.self) { try await apple.uploadRetentionImage(identifier: UUID(), png: [1, 2, 3]) }

            // At Apple's limits exactly: accepted.
            let message = UUID()
            try await apple.uploadRetentionMessage(
                identifier: message,
                UploadMessageRequestBody(
                    header: String(repeating: "h", count: 66), body: String(repeating: "b", count: 144),
                    image: .init(imageIdentifier: image.uuidString, altText: "A calendar"), headerPosition: .aboveImage))
            #expect(try await apple.retentionMessages().map(\.messageIdentifier) == [message.uuidString.lowercased()])

            // One character over: refused by name, and Apple is never asked.
            let asked = rig.api.requests.withLockedValue { $0["uploadMessage"] ?? 0 }
            for (header, body, field) in [
                (String(repeating: "h", count: 67), "Stay", "header"), ("Stay", String(repeating: "b", count: 145), "body"),
            ] {
                let error = await #expect(throws: AppStoreServerAPIError.self) {
                    try await apple.uploadRetentionMessage(identifier: UUID(), UploadMessageRequestBody(header: header, body: body))
                }
                #expect(error?.kind == .invalidRequest)
                #expect(
                    error?.message.hasPrefix("\(field): is \(field == "header" ? 67 : 145) characters") == true,
                    "\(String(describing: error))")
            }
            #expect(rig.api.requests.withLockedValue { $0["uploadMessage"] ?? 0 } == asked)
            // The fake refuses the same with Apple's code when a client does not check.
            #expect(throws: RetentionMessageFieldError.self) {
                try UploadMessageRequestBody(
                    header: "Stay", body: "b",
                    bulletPoints: Array(repeating: .init(text: "t", imageIdentifier: image.uuidString, altText: "a"), count: 6)
                ).validate()
            }

            // Default message per product and locale.
            try await apple.configureDefaultRetentionMessage(productId: "pro.monthly", locale: "en-US", messageIdentifier: message)
            #expect(try await apple.defaultRetentionMessage(productId: "pro.monthly", locale: "en-US") == message.uuidString.lowercased())
            try await apple.deleteDefaultRetentionMessage(productId: "pro.monthly", locale: "en-US")
            let missing = await #expect(throws: AppStoreServerAPIError.self) {
                _ = try await apple.defaultRetentionMessage(productId: "pro.monthly", locale: "en-US")
            }
            #expect(missing?.apiErrorName == "DefaultMessageNotFoundError")

            // An image a message uses cannot go; the message first.
            let inUse = await #expect(throws: AppStoreServerAPIError.self) { try await apple.deleteRetentionImage(identifier: image) }
            #expect(inUse?.apiErrorName == "ImageInUseError")
            try await apple.deleteRetentionMessage(identifier: message)
            try await apple.deleteRetentionImage(identifier: image)
            let messagesLeft = try await apple.retentionMessages()
            let imagesLeft = try await apple.retentionImages()
            #expect(messagesLeft.isEmpty && imagesLeft.isEmpty)

            // The real-time URL.
            try await apple.configureRealtimeURL("https://keeper.example.com/v1/apps/app_1/retention/appstore")
            #expect(try await apple.realtimeURL() == "https://keeper.example.com/v1/apps/app_1/retention/appstore")
            try await apple.deleteRealtimeURL()
            let noURL = await #expect(throws: AppStoreServerAPIError.self) { _ = try await apple.realtimeURL() }
            #expect(noURL?.apiErrorName == "RealtimeUrlNotFoundError")
        }
    }

    @Test(
        "the real-time endpoint answers by the policy's rules over the customer's state; a repeated request gets its first answer",
        arguments: TestDatabase.available)
    func rules(database: TestDatabase) async throws {
        try await Self.withRig(database) { rig in
            // No policy: an empty answer (Apple's default message).
            #expect(try await rig.answer("bob") == RealtimeResponseBody())

            let set = try await rig.setPolicy(
                """
                {"rules": [
                    {"name": "german", "locales": ["de"], "answer": {"type": "message", "messageIdentifier": "\(Self.welcome)"}},
                    {"name": "trial", "periodTypes": ["trial"], "answer": {"type": "message", "messageIdentifier": "\(Self.stay)"}},
                    {"name": "loyal", "minDaysSubscribed": 30, "productIds": ["pro.monthly"],
                     "answer": {"type": "alternateProduct", "messageIdentifier": "\(Self.yearly)", "productId": "pro.yearly"}}
                 ],
                 "defaultAnswer": {"type": "message", "messageIdentifier": "\(Self.discount)"}}
                """)
            #expect(set.status == .ok, "\(String(buffer: set.body))")

            // ann is 40 days in: her trial became a paid month, which is not a trial; bob has paid 40 days: both loyal.
            #expect(try await rig.answer("bob").alternateProduct == .init(messageIdentifier: Self.yearly, productId: "pro.yearly"))
            #expect(try await rig.answer("bob", locale: "de-DE").message?.messageIdentifier == Self.welcome)

            // A new trial: carl, on day 40.
            var trial = ScenarioStep(day: 40, .subscribe, customer: "carl", product: "pro.weekly")
            trial.offer = .freeTrial
            try await rig.player.play(trial)
            #expect(try await rig.answer("carl").message?.messageIdentifier == Self.stay)

            // Apple repeats a request: the first answer, recorded once, even after the policy changed.
            let id = UUID()
            let first = try await rig.ask("carl", id: id)
            #expect(try decode(RealtimeResponseBody.self, first).message?.messageIdentifier == Self.stay)
            #expect(try await rig.setPolicy(#"{"rules": []}"#).status == .ok)
            let again = try await rig.ask("carl", id: id)
            #expect(try decode(RealtimeResponseBody.self, again).message?.messageIdentifier == Self.stay)
            #expect(try await rig.answer("carl") == RealtimeResponseBody())

            let requests = try await rig.requests()
            #expect(requests.count == 6)
            #expect(requests.filter { $0.requestIdentifier == id.uuidString.lowercased() }.count == 1)
            #expect(Set(requests.map(\.decidedBy)) == ["none", "rule:loyal", "rule:german", "rule:trial"])
            #expect(requests.allSatisfy { $0.customerId != nil })
        }
    }

    @Test(
        "bad requests: a foreign signature, a missing field, an unknown app; a policy Apple could not show is refused by field",
        arguments: [TestDatabase.sqlite])
    func refusals(database: TestDatabase) async throws {
        try await Self.withRig(database) { rig in
            // Signed by another CA.
            let other = try SimulatorCA(
                name: "Not Apple", validity: Date(timeIntervalSince1970: 1_600_000_000)...Date(timeIntervalSince1970: 2_100_000_000))
            var request = DecodedRealtimeRequestBody()
            request.originalTransactionId = try await rig.original("bob")
            request.productId = "pro.monthly"
            request.userLocale = "en-US"
            request.requestIdentifier = UUID().uuidString
            request.environment = .sandbox
            request.signedDate = Timestamp(millisecondsSince1970: at(40))
            let foreign = try await rig.client.execute(
                uri: rig.path, method: .post, headers: headers(nil),
                body: ByteBuffer(string: #"{"signedPayload":"\#(try other.sign(request))"}"#))
            #expect(foreign.status == .badRequest)
            // Apple's CA, no locale.
            request.userLocale = nil
            let missing = try await rig.client.execute(
                uri: rig.path, method: .post, headers: headers(nil),
                body: ByteBuffer(string: #"{"signedPayload":"\#(try testCA.sign(request))"}"#))
            #expect(missing.status == .badRequest)
            #expect(String(buffer: missing.body).contains("userLocale"))
            // From Production, which the app does not accept.
            request.userLocale = "en-US"
            request.environment = .production
            let production = try await rig.client.execute(
                uri: rig.path, method: .post, headers: headers(nil),
                body: ByteBuffer(string: #"{"signedPayload":"\#(try testCA.sign(request))"}"#))
            #expect(production.status == .forbidden)
            let unknownApp = try await rig.client.execute(
                uri: "/v1/apps/app_nope/retention/appstore", method: .post, headers: headers(nil), body: ByteBuffer(string: "{}"))
            #expect(unknownApp.status == .notFound)
            #expect(try await rig.requests().isEmpty, "nothing is recorded for a refused request")

            for (policy, field) in [
                (#"{"rules": [{"name": "a", "answer": {"type": "message"}}]}"#, "rules[0].answer.messageIdentifier"),
                (
                    #"{"rules": [{"name": "a", "answer": {"type": "message", "messageIdentifier": "x"}}]}"#,
                    "rules[0].answer.messageIdentifier"
                ),
                (
                    #"{"rules": [{"name": "a", "answer": {"type": "message", "messageIdentifier": "\#(Self.stay)", "colour": 1}}]}"#,
                    "rules[0].answer.colour"
                ),
                (
                    #"{"defaultAnswer": {"type": "promotionalOffer", "messageIdentifier": "\#(Self.stay)", "offerIdentifier": "half"}}"#,
                    "defaultAnswer.offerIdentifier"
                ),
                (#"{"defaultAnswer": {"type": "alternateProduct", "messageIdentifier": "\#(Self.stay)"}}"#, "defaultAnswer.productId"),
                (
                    #"{"rules": [{"name": "a", "minDaysSubscribed": 9, "maxDaysSubscribed": 3, "answer": {"type": "none"}}]}"#,
                    "rules[0].minDaysSubscribed"
                ),
            ] {
                let response = try await rig.setPolicy(policy)
                #expect(response.status == .badRequest, "\(policy)")
                #expect(String(buffer: response.body).contains(field), "\(String(buffer: response.body))")
            }
        }
    }

    @Test("a promotional offer is signed with the app's offer key for the subscription's product")
    func promotionalOffer() async throws {
        try await Self.withRig(.sqlite) { rig in
            let key = P256.Signing.PrivateKey()
            let patched = try await rig.client.execute(
                uri: "/v1/apps/\(rig.harness.app.appId)", method: .patch, headers: rig.admin,
                body: ByteBuffer(
                    data: try JSONSerialization.data(withJSONObject: [
                        "offerSigningKey": ["keyId": "OFFER1", "privateKey": key.pemRepresentation, "issuerId": "issuer-1"]
                    ])))
            #expect(patched.status == .ok, "\(String(buffer: patched.body))")
            let set = try await rig.setPolicy(
                #"{"defaultAnswer": {"type": "promotionalOffer", "messageIdentifier": "\#(Self.discount)", "offerIdentifier": "half-off"}}"#
            )
            #expect(set.status == .ok, "\(String(buffer: set.body))")
            let offer = try #require(try await rig.answer("bob").promotionalOffer)
            #expect(offer.messageIdentifier == Self.discount)
            let parts = offer.promotionalOfferSignatureV2.split(separator: ".").map(String.init)
            #expect(parts.count == 3)
            let header = try #require(Self.base64URL(parts[0]))
            let claims = try #require(Self.base64URL(parts[1]))
            let headerJSON = try #require(try JSONSerialization.jsonObject(with: header) as? [String: Any])
            let claimsJSON = try #require(try JSONSerialization.jsonObject(with: claims) as? [String: Any])
            #expect(headerJSON["kid"] as? String == "OFFER1")
            #expect(claimsJSON["aud"] as? String == "promotional-offer")
            #expect(claimsJSON["offerIdentifier"] as? String == "half-off")
            #expect(claimsJSON["productId"] as? String == "pro.monthly")
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Self.base64URL(parts[2])))
            #expect(key.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
        }
    }

    @Test(
        "a split test on the placement cancel: each customer gets the arm's answer, is exposed once, and the results count the revenue kept",
        arguments: TestDatabase.available)
    func splitTest(database: TestDatabase) async throws {
        try await Self.withRig(database) { rig in
            let base = "/v1/apps/\(rig.harness.app.appId)"
            let key = rig.harness.app.secretKey
            #expect(
                try await rig.setPolicy(#"{"defaultAnswer": {"type": "message", "messageIdentifier": "\#(Self.welcome)"}}"#).status == .ok)
            // The control paywall has no retention answer (the policy decides); the treatment offers the yearly plan.
            for (paywall, config) in [
                ("keep-policy", "{}"),
                (
                    "offer-yearly",
                    #"{"retention": {"type": "alternateProduct", "messageIdentifier": "\#(Self.yearly)", "productId": "pro.yearly"}}"#
                ),
            ] {
                let put = try await rig.client.send(
                    .put, base + "/paywalls/\(paywall)", key, #"{"products": ["pro.monthly"], "config": \#(config)}"#)
                #expect(put.status == .created || put.status == .ok, "\(String(buffer: put.body))")
            }
            #expect(
                try await rig.client.send(.put, base + "/placements/cancel", key, #"{"defaultPaywall": "keep-policy"}"#).status == .created)
            let created = try await rig.client.send(
                .post, base + "/experiments", key,
                #"{"key": "save-offer", "placement": "cancel", "status": "running", "variants": [{"key": "control", "paywall": "keep-policy"}, {"key": "yearly", "paywall": "offer-yearly"}]}"#
            )
            #expect(created.status == .created, "\(String(buffer: created.body))")

            // Twenty subscribers open the cancellation screen, twice each.
            let names = (0..<20).map { "s\($0)" }
            for name in names { try await rig.player.play(ScenarioStep(day: 40, .subscribe, customer: name, product: "pro.monthly")) }
            try await rig.player.play(ScenarioStep(day: 45, .wait))
            rig.harness.clock.set(await rig.store.with { $0.now })
            var arms: [String: Int] = [:]
            for name in names {
                let first = try await rig.answer(name)
                let second = try await rig.answer(name)
                #expect(first == second, "an assignment is sticky")
                if first.alternateProduct?.productId == "pro.yearly" {
                    arms["yearly", default: 0] += 1
                } else {
                    #expect(first.message?.messageIdentifier == Self.welcome, "the control arm leaves the answer to the policy")
                    arms["control", default: 0] += 1
                }
            }
            #expect(arms["yearly", default: 0] > 0 && arms["control", default: 0] > 0, "\(arms)")
            let requests = try await rig.requests().filter { $0.decidedBy.hasPrefix("experiment:") }
            #expect(requests.count == 40)
            #expect(requests.filter { $0.decidedBy == "experiment:save-offer/control+default" }.count == 2 * arms["control", default: 0])

            // The control's customers cancel; the treatment's stay and renew: the results count the revenue each arm kept.
            for name in names {
                let answer = try await rig.answer(name)
                if answer.alternateProduct == nil { try await rig.player.play(ScenarioStep(day: 46, .autoRenewOff, customer: name)) }
            }
            try await rig.player.play(ScenarioStep(day: 75, .wait))
            rig.harness.clock.set(await rig.store.with { $0.now })
            try await ExperimentEndToEndTests.loadRates(client: rig.client, harness: rig.harness)
            let results = try await ExperimentEndToEndTests.results("save-offer", client: rig.client, harness: rig.harness)
            let byKey = Dictionary(uniqueKeysWithValues: results.arms.map { ($0.key, $0) })
            #expect(byKey["control"]?.exposed == arms["control"])
            #expect(byKey["yearly"]?.exposed == arms["yearly"])
            #expect(byKey["control"]?.paid == 0, "no control customer paid after the exposure: they cancelled")
            #expect(byKey["yearly"]?.paid == arms["yearly"], "every treated customer renewed")
            #expect((byKey["yearly"]?.grossUSD ?? 0) > 0)

            // The team ships the winner: everyone gets its answer, and no one is exposed any more.
            let shipped = try await rig.client.send(.patch, base + "/experiments/save-offer", key, #"{"winner": "yearly"}"#)
            #expect(shipped.status == .ok, "\(String(buffer: shipped.body))")
            try await rig.player.play(ScenarioStep(day: 75, .subscribe, customer: "late", product: "pro.monthly"))
            #expect(try await rig.answer("late").alternateProduct?.productId == "pro.yearly")
            #expect(try await rig.requests().first?.decidedBy == "placement:cancel/yearly")
            let after = try await ExperimentEndToEndTests.results("save-offer", client: rig.client, harness: rig.harness)
            #expect(after.arms.map(\.exposed).reduce(0, +) == names.count)
        }
    }

    @Test("Apple's performance test of the endpoint: 100 signed requests, 10 at a time, pass; the result has Apple's response times")
    func performanceTest() async throws {
        try await Self.withRig(.sqlite) { rig in
            let app = try await rig.harness.core.apps.app(id: rig.harness.app.appId)
            let apple = try await rig.harness.core.retention.appleClient(app: app, environment: .sandbox)
            #expect(try await rig.setPolicy(#"{"defaultAnswer": {"type": "message", "messageIdentifier": "\#(Self.stay)"}}"#).status == .ok)
            try await apple.configureRealtimeURL("http://127.0.0.1\(rig.path)")
            let started = try await apple.startRetentionPerformanceTest(originalTransactionId: try await rig.original("bob"))
            let requestId = try #require(started.requestId)
            var result = try await apple.retentionPerformanceTestResult(requestId: requestId)
            for _ in 0..<600 where result.result == "PENDING" {
                try await Task.sleep(for: .milliseconds(50))
                result = try await apple.retentionPerformanceTestResult(requestId: requestId)
            }
            #expect(result.result == "PASS", "\(result)")
            #expect(result.successRate == 100)
            #expect(result.failures == [:])
            let times = try #require(result.responseTimes)
            #expect((times.p50 ?? -1) >= 0 && (times.p50 ?? 0) <= (times.p99 ?? -1))
            #expect(result.config?.totalRequests == 100 && result.config?.maxConcurrentRequests == 10)
            #expect(try await rig.requests().count == 100)
        }
    }

    @Test(
        "the fake's performance test result: a slow answer is TIMED_OUT, none is NO_RESPONSE, a bad body INVALID_RESPONSE, and under 95% fails"
    )
    func performanceTestResult() throws {
        let ok = Array(#"{"message":{"messageIdentifier":"\#(Self.stay)"}}"#.utf8)
        let config = PerformanceTestConfig(
            maxConcurrentRequests: 10, totalRequests: 100, totalDuration: 60_000, responseTimeThreshold: 700, successRateThreshold: 95)
        let answered = (0..<96).map { RealtimeCallResult(status: 200, body: ok, milliseconds: Double($0)) }
        let slow = RealtimeCallResult(status: 200, body: ok, milliseconds: 701)
        let failures = [
            slow, RealtimeCallResult(status: nil, body: [], milliseconds: 5_000),
            RealtimeCallResult(status: 200, body: Array("not json".utf8), milliseconds: 3),
            RealtimeCallResult(status: 500, body: [], milliseconds: 3),
        ]
        // 60 answered in time and 4 failures: 93%, under Apple's 95.
        let failed = FakeServerAPI.result(Array(answered.prefix(60)) + failures, config: config, target: "http://x")
        #expect(failed.result == "FAIL" && failed.successRate == 93)
        #expect(failed.failures == ["TIMED_OUT": 1, "NO_RESPONSE": 1, "INVALID_RESPONSE": 1, "UNSUCCESSFUL_HTTP_RESPONSE_CODE": 1])
        #expect(failed.responseTimes?.p50 == 29 && failed.responseTimes?.p99 == 5_000)
        // 96 in time and one slow: 98%.
        let passed = FakeServerAPI.result(answered + [slow], config: config, target: "http://x")
        #expect(passed.result == "PASS" && passed.successRate == 98 && passed.failures == ["TIMED_OUT": 1])
        #expect(passed.responseTimes?.p99 == 701)
    }
}
