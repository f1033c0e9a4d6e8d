import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Storage
import StorekeeperCore
import TestSupport
import Testing

@testable import StorekeeperServer

/// Events out through webhooks, end to end: the live server (its delivery worker running) records events from
/// App Store notifications and delivers them to destinations served by the test.
@Suite("Integrations: webhooks")
struct IntegrationTests {
    static let token = WebhookTests.token.lowercased()

    /// The Standard Webhooks signature, computed here with HMAC directly (not the server's code): `v1,` and the
    /// base64 HMAC-SHA256 of `id.timestamp.body` under the secret's bytes.
    static func signatureIsValid(_ request: FakeDestination.Received, secret: String) throws -> Bool {
        let key = try #require(Data(base64Encoded: String(secret.dropFirst("whsec_".count))))
        let id = try #require(request.header("webhook-id"))
        let timestamp = try #require(request.header("webhook-timestamp"))
        var content = Data("\(id).\(timestamp).".utf8)
        content.append(contentsOf: request.body)
        let mac = HMAC<SHA256>.authenticationCode(for: content, using: SymmetricKey(data: key))
        let expected = "v1," + Data(mac).base64EncodedString()
        return (request.header("webhook-signature") ?? "").split(separator: " ").contains { $0 == expected }
    }

    /// The app's events as stored (every committed one).
    static func storedEvents(_ h: Harness) async throws -> [EventRecord] {
        try await h.core.database.reading { try await $0.events(app: h.app.appId, after: .start, limit: 10_000, settledOnly: false) }
    }

    /// The answer's body, which must not hold `secret`.
    static func text(_ response: TestResponse) -> String { String(buffer: response.body) }

    @Test(
        "every event reaches a webhook once, signed, with the customer and app, and its id stays the delivery's",
        arguments: TestDatabase.available)
    func delivered(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        h.clock.set(at(75))
        let receiver = FakeDestination()
        let authorization = "Bearer receiver-token-7f3a9c"
        try await receiver.serve { url in
            try await h.live { client in
                let created = try await client.createIntegration(
                    h,
                    [
                        "kind": "webhook", "name": "receiver", "config": ["url": url + "/hooks", "authorization": authorization],
                        "environments": ["Sandbox"],
                    ])
                #expect(created.status == .created)
                let view = try decode(IntegrationView.self, created)
                let secret = try #require(view.signingSecret)
                #expect(secret.hasPrefix("whsec_"))
                #expect(view.config == ["url": url + "/hooks"])
                #expect(view.secretsConfigured == ["authorization", "signingSecret"])
                #expect(!Self.text(created).contains(authorization))

                for signed in try WebhookTests.lifecycle() {
                    #expect(try await client.postNotification(h.app.appId, signed).status == .ok)
                }
                let events = try await Self.storedEvents(h)
                #expect(events.count >= 4)
                try await eventually("every event delivered") { receiver.received.count >= events.count }
                let received = receiver.received
                #expect(received.count == events.count)
                var ids = Set<String>()
                for request in received {
                    #expect(request.path == "/hooks")
                    #expect(try Self.signatureIsValid(request, secret: secret))
                    #expect(request.header("authorization") == authorization)
                    #expect(request.header("webhook-timestamp") == "\(at(75) / 1000)")
                    #expect(request.header("content-type") == "application/json")
                    let id = try #require(request.header("webhook-id"))
                    #expect(id.hasPrefix("msg_\(view.id)_"))
                    ids.insert(id)
                    let body = try request.json()
                    let data = try #require(body["data"] as? [String: Any])
                    let event = try #require(data["event"] as? [String: Any])
                    let stored = try #require(events.first { $0.eventId == event["id"] as? String })
                    #expect(body["type"] as? String == stored.type)
                    #expect(event["type"] as? String == stored.type)
                    #expect(event["recordedAt"] as? Int64 == stored.recordedAt)
                    #expect(event["retractedAt"] == nil)
                    let customer = try #require(data["customer"] as? [String: Any])
                    #expect(customer["appUserId"] as? String == Self.token)
                    #expect(customer["state"] as? String != nil)
                    #expect(customer["entitlements"] as? [String: Any] != nil)
                    #expect((data["app"] as? [String: Any])?["bundleId"] as? String == bundleId)
                    #expect(data["environment"] as? String == "Sandbox")
                }
                #expect(ids.count == received.count)
                #expect(
                    Set(
                        received.compactMap { try? ($0.json()["data"] as? [String: Any])?["event"] as? [String: Any] }.compactMap {
                            $0["id"] as? String
                        }) == Set(events.map(\.eventId)))

                // The deliveries say so (once the worker has recorded the answers it got: the receiver may see a request
                // before its outcome is written), and no answer of the API shows a secret.
                let uri = "/v1/apps/\(h.app.appId)/integrations/\(view.id)/deliveries"
                try await eventually("every outcome recorded") {
                    let page = try await client.execute(uri: uri, method: .get, headers: headers(h.app.secretKey))
                    return try decode(DeliveryPage.self, page).deliveries.allSatisfy { $0.status != "pending" }
                }
                let page = try await client.execute(uri: uri, method: .get, headers: headers(h.app.secretKey))
                let deliveries = try decode(DeliveryPage.self, page).deliveries
                #expect(deliveries.count == events.count)
                #expect(deliveries.allSatisfy { $0.status == "delivered" && $0.attempts == 1 && $0.lastStatus == 200 })
                #expect(Set(deliveries.map(\.id)) == ids)
                for uri in ["/v1/apps/\(h.app.appId)/integrations", "/v1/apps/\(h.app.appId)/integrations/\(view.id)"] {
                    let answer = try await client.execute(uri: uri, method: .get, headers: headers(h.app.secretKey))
                    #expect(answer.status == .ok)
                    #expect(!Self.text(answer).contains(authorization) && !Self.text(answer).contains(secret))
                }
                #expect(!Self.text(page).contains(authorization))

                // /metrics counts the deliveries by kind and outcome, and shows the queue.
                let metrics = Self.text(try await client.execute(uri: "/metrics", method: .get, headers: operatorHeaders()))
                #expect(metrics.contains(#"storekeeper_deliveries_total{kind="webhook",outcome="delivered"} \#(events.count)"#))
                #expect(metrics.contains(#"storekeeper_outbox_waiting{kind="webhook"}"#))
                #expect(metrics.contains(#"storekeeper_outbox_oldest_waiting_seconds{kind="webhook"}"#))
            }
        }
    }

    @Test(
        "a webhook that fails for a while gets every event once it is back, in the schedule's order, Retry-After honoured",
        arguments: TestDatabase.available)
    func failingThenBack(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        h.clock.set(at(75))
        let receiver = FakeDestination { _, _ in .init(status: 503, body: "down for maintenance") }
        try await receiver.serve { url in
            try await h.live { client in
                let view = try await client.createWebhook(h, url: url, ["retrySchedule": [10, 20, 40]])
                try await DestinationAPITests.purchase(client, h)
                let events = try await Self.storedEvents(h)
                #expect(events.count == 1)
                try await eventually("the first attempt") { receiver.received.count == 1 }
                let deliveries = { try await client.deliveries(h, view.id) }
                try await eventually("the failure recorded") { try await deliveries().first?.attempts == 1 }
                var delivery = try #require(try await deliveries().first)
                #expect(delivery.status == "retrying")
                #expect(delivery.lastStatus == 503)
                #expect(delivery.lastResponse == "down for maintenance")
                // 10 s ± 10% after the failure.
                let next = try #require(delivery.nextAttemptAt)
                #expect((at(75) + 9_000...at(75) + 11_000).contains(next))

                // Not before its time: a second of server time later, nothing more is sent.
                h.clock.set(at(75) + 1_000)
                try await Task.sleep(for: .milliseconds(1_500))
                #expect(receiver.received.count == 1)

                // The second attempt asks for an hour (Retry-After), which beats the schedule's 20 s: a wait, not a
                // failure, so not counted.
                receiver.respond { _, _ in .init(status: 429, headers: ["Retry-After": "3600"], body: "slow down") }
                h.clock.set(next)
                try await eventually("the second attempt") { try await deliveries().first?.lastStatus == 429 }
                delivery = try #require(try await deliveries().first)
                #expect(delivery.attempts == 1)
                #expect(try #require(delivery.nextAttemptAt) >= next + 3_600_000)
                h.clock.set(next + 60_000)
                try await Task.sleep(for: .milliseconds(1_500))
                #expect(receiver.received.count == 2)

                // Back: the third attempt delivers.
                receiver.respond { _, _ in .init(status: 204, body: "") }
                h.clock.set(next + 3_600_000)
                try await eventually("delivered") { try await deliveries().first?.status == "delivered" }
                delivery = try #require(try await deliveries().first)
                #expect(delivery.attempts == 2)
                #expect(delivery.lastStatus == 204)
                let sent = receiver.received
                #expect(sent.count == 3)
                #expect(Set(sent.compactMap { $0.header("webhook-id") }) == [delivery.id])
                #expect(
                    sent.compactMap { $0.header("webhook-timestamp").flatMap { Int64($0) } } == [
                        at(75) / 1000, next / 1000, (next + 3_600_000) / 1000,
                    ])
            }
        }
    }

    @Test("after the last attempt a delivery is dead; a replay sends it again with its id", arguments: TestDatabase.available)
    func deadAndReplayed(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        h.clock.set(at(75))
        let receiver = FakeDestination { _, _ in .init(status: 500, body: "broken") }
        try await receiver.serve { url in
            try await h.live { client in
                let view = try await client.createWebhook(h, url: url, ["retrySchedule": [5]])
                for signed in try WebhookTests.lifecycle() { _ = try await client.postNotification(h.app.appId, signed) }
                let count = try await Self.storedEvents(h).count
                try await eventually("first attempts recorded") {
                    let deliveries = try await client.deliveries(h, view.id)
                    return deliveries.count == count && deliveries.allSatisfy { $0.attempts == 1 }
                }
                #expect(receiver.received.count == count)
                h.clock.set(at(75) + 6_000)
                try await eventually("dead") { try await client.deliveries(h, view.id).allSatisfy { $0.status == "dead" } }
                #expect(receiver.received.count == 2 * count)
                let dead = try await client.deliveries(h, view.id, query: "?status=dead")
                #expect(dead.count == count)
                #expect(dead.allSatisfy { $0.attempts == 2 && $0.nextAttemptAt == nil && $0.lastStatus == 500 })

                receiver.respond { _, _ in .init(status: 200) }
                let replay = try await client.execute(
                    uri: "/v1/apps/\(h.app.appId)/integrations/\(view.id)/replay", method: .post, headers: headers(h.app.secretKey),
                    body: json(["from": at(74), "to": at(76), "status": "dead"]))
                #expect(replay.status == .ok)
                #expect(String(buffer: replay.body).contains("\"replayed\":\(count)"))
                try await eventually("replayed") { try await client.deliveries(h, view.id).allSatisfy { $0.status == "delivered" } }
                let received = receiver.received
                #expect(received.count == 3 * count)
                // The same ids as before: a receiver that saw them can deduplicate.
                #expect(Set(received.suffix(count).compactMap { $0.header("webhook-id") }) == Set(dead.map(\.id)))

                // One delivery retried by hand: sent once more, same id.
                let one = try #require(dead.first)
                let retried = try await client.execute(
                    uri: "/v1/apps/\(h.app.appId)/integrations/\(view.id)/deliveries/\(one.id)/retry", method: .post,
                    headers: headers(h.app.secretKey))
                #expect(retried.status == .ok)
                try await eventually("retried") { receiver.received.count == 3 * count + 1 }
                #expect(receiver.received.last?.header("webhook-id") == one.id)
                let unknown = try await client.execute(
                    uri: "/v1/apps/\(h.app.appId)/integrations/\(view.id)/deliveries/msg_nope_1/retry", method: .post,
                    headers: headers(h.app.secretKey))
                #expect(unknown.status == .notFound)
            }
        }
    }

    @Test(
        "410 disables a webhook with its reason while another keeps receiving; enabled again, it gets what waited",
        arguments: TestDatabase.available)
    func goneDisables(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        h.clock.set(at(75))
        let gone = FakeDestination { _, _ in .init(status: 410, body: "gone") }
        let healthy = FakeDestination()
        try await gone.serve { goneURL in
            try await healthy.serve { healthyURL in
                try await h.live { client in
                    let a = try await client.createWebhook(h, url: goneURL)
                    _ = try await client.createWebhook(h, url: healthyURL)
                    for signed in try WebhookTests.lifecycle() { _ = try await client.postNotification(h.app.appId, signed) }
                    let count = try await Self.storedEvents(h).count
                    try await eventually("the healthy one gets everything") { healthy.received.count == count }
                    try await eventually("the gone one disabled") {
                        try decode(IntegrationView.self, try await client.integration(h, a.id)).enabled == false
                    }
                    let disabled = try decode(IntegrationView.self, try await client.integration(h, a.id))
                    #expect(disabled.disabledReason?.contains("410") == true)
                    // Nothing waiting for it was lost: its deliveries wait, none dead.
                    let waiting = try await client.deliveries(h, a.id)
                    #expect(waiting.count == count)
                    #expect(waiting.allSatisfy { $0.status == "pending" || $0.status == "retrying" })
                    let before = gone.received.count
                    #expect(before >= 1)

                    gone.respond { _, _ in .init(status: 200) }
                    let enabled = try await client.execute(
                        uri: "/v1/apps/\(h.app.appId)/integrations/\(a.id)", method: .patch, headers: headers(h.app.secretKey),
                        body: json(["enabled": true]))
                    #expect(enabled.status == .ok)
                    #expect(try decode(IntegrationView.self, enabled).disabledReason == nil)
                    try await eventually("what waited is delivered") {
                        try await client.deliveries(h, a.id).allSatisfy { $0.status == "delivered" }
                    }
                    #expect(gone.received.count == before + count)
                }
            }
        }
    }

    @Test("an event retracted by later facts is delivered again with retractedAt", arguments: TestDatabase.available)
    func retraction(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        h.clock.set(at(75))
        let receiver = FakeDestination()
        try await receiver.serve { url in
            try await h.live { client in
                _ = try await client.createWebhook(h, url: url)
                // The first renewal before the purchase: it looks like a start until the purchase arrives.
                let signed = try WebhookTests.lifecycle()
                for index in [1, 0, 2, 3] { _ = try await client.postNotification(h.app.appId, signed[index]) }
                let events = try await Self.storedEvents(h)
                let retracted = events.filter { $0.retractedAt != nil }
                #expect(!retracted.isEmpty)
                let deliveries = try await h.core.database.reading { session in
                    try await session.sql.raw("SELECT COUNT(*) AS n FROM deliveries").first().map {
                        try $0.decode(column: "n", as: Int.self)
                    }
                }
                try await eventually("every version delivered") { receiver.received.count == deliveries }
                let messages = try receiver.received.map { try $0.json() }
                for event in retracted {
                    let versions = messages.compactMap { ($0["data"] as? [String: Any])?["event"] as? [String: Any] }
                        .filter { $0["id"] as? String == event.eventId }
                    #expect(versions.contains { $0["retractedAt"] as? Int64 == event.retractedAt }, "\(event.eventId)")
                    #expect(versions.contains { $0["retractedAt"] == nil }, "\(event.eventId) was first sent as recorded")
                }
            }
        }
    }

    @Test(
        "internal addresses are refused at creation unless allowed; a name that does not resolve is retried, never disabled",
        arguments: [TestDatabase.sqlite])
    func forgeryRefused(database: TestDatabase) async throws {
        let h = try await Harness.make(database, allowPrivateWebhooks: false)
        h.clock.set(at(75))
        let receiver = FakeDestination()
        try await receiver.serve { url in
            try await h.live { client in
                // A destination the server would never call is refused when it is made, naming the field and the setting.
                for kind in ["webhook", "slack"] {
                    let refused = try await client.createIntegration(
                        h, ["kind": kind, "config": ["url": url], "environments": ["Sandbox"]])
                    #expect(refused.status == .badRequest)
                    let text = String(buffer: refused.body)
                    #expect(text.contains(#""field":"config.url""#) && text.contains("STOREKEEPER_ALLOW_PRIVATE_WEBHOOKS"), "\(text)")
                }
                // A name that does not resolve now (.invalid never does) is accepted: DNS may be down for a moment.
                let view = try await client.createWebhook(h, url: "https://storekeeper-test.invalid/hook")
                let moved = try await client.execute(
                    uri: "/v1/apps/\(h.app.appId)/integrations/\(view.id)", method: .patch, headers: headers(h.app.secretKey),
                    body: try json(["config": ["url": url]]))
                #expect(moved.status == .badRequest)
                for signed in try WebhookTests.lifecycle() { _ = try await client.postNotification(h.app.appId, signed) }
                try await eventually("a retried delivery") {
                    try await client.deliveries(h, view.id).contains { $0.status == "retrying" }
                }
                let waiting = try await client.deliveries(h, view.id)
                #expect(waiting.allSatisfy { $0.status != "dead" })
                #expect(waiting.contains { $0.lastError?.contains("does not resolve") == true })
                let after = try decode(IntegrationView.self, try await client.integration(h, view.id))
                #expect(after.enabled && after.disabledReason == nil)
                #expect(receiver.received.isEmpty)
            }
        }
    }

    @Test(
        "a 429 holds the whole Slack hook for its Retry-After; when the wait ends the refused message goes first, in order",
        arguments: [TestDatabase.sqlite])
    func throttledLane(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        h.clock.set(at(75))
        let slack = FakeDestination { _, index in
            index == 0 ? .init(status: 429, headers: ["Retry-After": "2"], body: "rate_limited") : .init(status: 200)
        }
        try await slack.serve { url in
            try await h.live { client in
                let created = try await client.createIntegration(
                    h, ["kind": "slack", "config": ["url": url + "/hook"], "environments": ["Sandbox"]])
                #expect(created.status == .created)
                let view = try decode(IntegrationView.self, created)
                for signed in try WebhookTests.lifecycle() { _ = try await client.postNotification(h.app.appId, signed) }
                try await eventually("the first message, refused") { !slack.received.isEmpty }
                // The server's clock stays short of the wait: nothing more goes to the hook, however long it waits.
                try await Task.sleep(for: .seconds(2.5))
                #expect(slack.received.count == 1)
                let waiting = try await client.deliveries(h, view.id)
                #expect(waiting.count > 2 && waiting.allSatisfy { $0.status == "pending" && $0.attempts == 0 }, "\(waiting)")
                #expect(waiting.contains { $0.lastError?.contains("429") == true })
                h.clock.set(at(75) + 2_000)
                try await eventually("every message sent after the wait") {
                    try await client.deliveries(h, view.id).allSatisfy { $0.status == "delivered" }
                }
                let received = slack.received
                #expect(received.count == waiting.count + 1)
                // The refused message is the first after the wait, and all go in the stream's order.
                #expect(received.count > 1 && received[1].body == received[0].body)
                func eventId(_ request: FakeDestination.Received) -> String? {
                    guard let range = request.text.range(of: "event ") else { return nil }
                    return String(request.text[range.upperBound...].prefix { $0 != "\"" })
                }
                let stream = try await client.deliveries(h, view.id).sorted {
                    (DeliveryRecord.key(of: $0.id)?.eventSeq ?? 0) < (DeliveryRecord.key(of: $1.id)?.eventSeq ?? 0)
                }
                #expect(received.dropFirst().map(eventId) == stream.map(\.eventId), "not in the stream's order")
            }
        }
    }

    @Test("the test message, and what a destination's configuration refuses", arguments: [TestDatabase.sqlite])
    func testAndValidation(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        h.clock.set(at(75))
        let receiver = FakeDestination { _, _ in .init(status: 202, body: "accepted") }
        try await receiver.serve { url in
            try await h.live { client in
                let view = try await client.createWebhook(h, url: url)
                let test = try await client.execute(
                    uri: "/v1/apps/\(h.app.appId)/integrations/\(view.id)/test", method: .post, headers: headers(h.app.secretKey))
                let result = try decode(TestResult.self, test)
                #expect(result.delivered && result.status == 202 && result.response == "accepted")
                #expect(try receiver.received.first?.json()["type"] as? String == "test")
                #expect(try Self.signatureIsValid(try #require(receiver.received.first), secret: try #require(view.signingSecret)))

                // A stored configuration that no longer makes a destination (its url gone, as a hand edit or an old
                // version could leave it): the test answers 200, not delivered, with the reason, never a 500.
                try await h.core.database.writing { session in
                    try await session.sql.raw("UPDATE integrations SET config = '{}' WHERE id = \(bind: view.id)").run()
                }
                let broken = try await client.execute(
                    uri: "/v1/apps/\(h.app.appId)/integrations/\(view.id)/test", method: .post, headers: headers(h.app.secretKey))
                #expect(broken.status == .ok)
                let brokenResult = try decode(TestResult.self, broken)
                #expect(!brokenResult.delivered && receiver.received.count == 1)
                #expect(brokenResult.error?.contains("the stored configuration has no url") == true, "\(brokenResult)")

                let refused: [([String: Any], String)] = [
                    (["kind": "carrier-pigeon", "config": [:] as [String: String]], "kind"),
                    (["kind": "webhook", "config": [:] as [String: String]], "config.url"),
                    (["kind": "webhook", "config": ["url": "ftp://example.com"]], "config.url"),
                    (["kind": "webhook", "config": ["url": url, "colour": "red"]], "config.colour"),
                    (["kind": "webhook", "config": ["url": url], "events": ["subscription_teleported"]], "events"),
                    (["kind": "webhook", "config": ["url": url], "retrySchedule": [-1]], "retrySchedule"),
                    (["kind": "webhook", "config": ["url": url], "environments": ["Production"]], "environments"),
                    (["kind": "webhook", "config": ["url": url], "secret": "mine"], "secret"),
                    (["kind": "telegram", "config": ["chatId": "42"]], "config.botToken"),
                ]
                for (body, field) in refused {
                    let response = try await client.createIntegration(h, body)
                    #expect(response.status == .badRequest, "\(body)")
                    #expect(try decode(ErrorBody.self, response).error.field == field, "\(body)")
                }
                let missing = try await client.integration(h, "int_missing")
                #expect(missing.status == .notFound)
                let deleted = try await client.execute(
                    uri: "/v1/apps/\(h.app.appId)/integrations/\(view.id)", method: .delete, headers: headers(h.app.secretKey))
                #expect(deleted.status == .noContent)
                #expect(try await client.integration(h, view.id).status == .notFound)
            }
        }
    }
}

extension Harness {
    /// Runs `body` against the live application (its services, the delivery worker among them, running); the
    /// application's shutdown closes the database.
    @discardableResult
    func live<Value: Sendable>(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Value) async throws -> Value {
        let value: Value
        do {
            value = try await application().test(.live) { client in try await body(ConformingClient(base: client)) }
        } catch {
            await close()
            throw error
        }
        await close()
        return value
    }
}

/// A JSON body from a dictionary.
func json(_ object: [String: Any]) throws -> ByteBuffer {
    ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: object))
}

extension TestClientProtocol {
    func createIntegration(_ h: Harness, _ body: [String: Any]) async throws -> TestResponse {
        try await execute(
            uri: "/v1/apps/\(h.app.appId)/integrations", method: .post, headers: headers(h.app.secretKey), body: json(body))
    }

    /// A webhook destination of the harness's app (Sandbox events) at `url`, with `extra` fields; it must be created.
    func createWebhook(_ h: Harness, url: String, _ extra: [String: Any] = [:]) async throws -> IntegrationView {
        let body: [String: Any] = ["kind": "webhook", "config": ["url": url], "environments": ["Sandbox"]].merging(extra) { _, new in new }
        let response = try await createIntegration(h, body)
        #expect(response.status == .created)
        return try decode(IntegrationView.self, response)
    }

    func integration(_ h: Harness, _ id: String) async throws -> TestResponse {
        try await execute(uri: "/v1/apps/\(h.app.appId)/integrations/\(id)", method: .get, headers: headers(h.app.secretKey))
    }

    func deliveries(_ h: Harness, _ id: String, query: String = "") async throws -> [DeliveryView] {
        let response = try await execute(
            uri: "/v1/apps/\(h.app.appId)/integrations/\(id)/deliveries\(query)", method: .get, headers: headers(h.app.secretKey))
        return try decode(DeliveryPage.self, response).deliveries
    }
}

/// Two servers on one PostgreSQL database share the outbox: each delivery is claimed by one of them (SKIP LOCKED)
/// and sent once.
@Suite("Integrations: two servers")
struct TwoServerDeliveryTests {
    @Test("two servers on one PostgreSQL send every delivery once", .enabled(if: TestDatabase.available.contains(.postgres)))
    func sharedOutbox() async throws {
        let h = try await Harness.make(.postgres)
        h.clock.set(at(75))
        let second = try await Harness.openCore(h.core.database.location, clock: h.clock)
        // A slow receiver, so that the first server's claims are still being sent when the second one's poll (every
        // second) comes: at 50 ms, a loaded CI machine let the first server send everything alone.
        let receiver = FakeDestination(delay: .milliseconds(250))
        try await receiver.serve { url in
            // The second server: its delivery worker polls the shared outbox.
            let other = Task { try await Harness.application(second).runService(gracefulShutdownSignals: []) }
            defer { other.cancel() }
            try await h.live { client in
                let view = try await client.createWebhook(h, url: url)
                for i in 0..<120 {
                    let purchase = Purchase(
                        transactionId: "\(50_000 + i)", originalTransactionId: "\(50_000 + i)", purchase: at(74), expires: at(104),
                        signed: at(74), token: UUID().uuidString.lowercased())
                    _ = try await client.postNotification(
                        h.app.appId, try notification(.subscribed, .initialBuy, purchase: purchase, signed: at(74)))
                }
                let count = try await IntegrationTests.storedEvents(h).count
                #expect(count >= 120)
                try await eventually("every event delivered", seconds: 60) {
                    try await h.core.database.reading { session in
                        try await session.sql.raw("SELECT COUNT(*) AS n FROM deliveries WHERE status = 'delivered'").first()
                            .map { try $0.decode(column: "n", as: Int.self) } == count
                    }
                }
                let ids = receiver.received.compactMap { $0.header("webhook-id") }
                #expect(ids.count == count, "a delivery was sent twice")
                #expect(Set(ids).count == count)
                #expect(ids.allSatisfy { $0.hasPrefix("msg_\(view.id)_") })
                let sentBy = [h.core, second].map { core in
                    String(decoding: core.metrics.exposition(database: core.database), as: UTF8.self).split(separator: "\n")
                        .filter { $0.hasPrefix("storekeeper_deliveries_total") && $0.contains("outcome=\"delivered\"") }
                        .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
                }
                #expect(sentBy.reduce(0, +) == Double(count))
                #expect(sentBy.allSatisfy { $0 > 0 }, "one server did all the work: nothing was shared")
                print("two servers, one outbox: \(count) deliveries, sent by the first \(Int(sentBy[0])), by the second \(Int(sentBy[1]))")
            }
        }
    }
}

/// The dashboard's pages of destinations: what waits and died, and the replay button.
@Suite("Integrations: dashboard")
struct IntegrationDashboardTests {
    @Test(
        "a destination's page shows its failures without its secrets, and its replay form sends the dead again",
        arguments: [TestDatabase.sqlite])
    func page(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        h.clock.set(at(75))
        _ = try await DashboardTests.user(h)
        let receiver = FakeDestination { _, _ in .init(status: 500, body: "receiver broken") }
        try await receiver.serve { url in
            try await h.live { client in
                let view = try decode(
                    IntegrationView.self,
                    try await client.createIntegration(
                        h,
                        [
                            "kind": "webhook", "name": "Backend", "config": ["url": url, "authorization": "Bearer dash-secret-42"],
                            "environments": ["Sandbox"], "retrySchedule": [] as [Int],
                        ]))
                for signed in try WebhookTests.lifecycle() { _ = try await client.postNotification(h.app.appId, signed) }
                let count = try await IntegrationTests.storedEvents(h).count
                try await eventually("dead") {
                    let dead = try await client.deliveries(h, view.id, query: "?status=dead")
                    return dead.count == count
                }
                let (_, cookie) = try await DashboardTests.signIn(client, email: "ops@example.com", password: DashboardTests.password)
                let list = String(
                    buffer: try await DashboardTests.get(
                        client, "/dashboard/apps/\(h.app.appId)/integrations?environment=Sandbox", cookie: cookie
                    ).body)
                #expect(list.contains("Backend") && list.contains("webhook"))
                let path = "/dashboard/apps/\(h.app.appId)/integrations/\(view.id)"
                let page = String(buffer: try await DashboardTests.get(client, path + "?environment=Sandbox", cookie: cookie).body)
                #expect(page.contains(#"data-status="dead">\#(count)<"#))
                #expect(page.contains("receiver broken"))
                #expect(page.contains("authorization, signingSecret"))
                #expect(!page.contains("dash-secret-42"))
                let csrf = try #require(DashboardTests.csrf(page))
                let before = receiver.received.count
                receiver.respond { _, _ in .init(status: 200) }
                let (headers, body) = DashboardTests.form(
                    [("csrf", csrf), ("from", "2020-01-01"), ("to", "2099-01-01"), ("status", "dead")], cookie: cookie)
                let replay = try await client.execute(uri: path + "/replay", method: .post, headers: headers, body: body)
                #expect(replay.status == .seeOther)
                #expect(replay.headers[.location]?.contains("replayed=\(count)") == true)
                try await eventually("replayed") { receiver.received.count == before + count }
                let forged = DashboardTests.form([("csrf", "nope"), ("from", "2020-01-01"), ("to", "2099-01-01")], cookie: cookie)
                #expect(
                    try await client.execute(uri: path + "/replay", method: .post, headers: forged.0, body: forged.1).status == .forbidden)
            }
        }
    }
}

/// Every log line, at every level, kept for the test to search.
struct CapturingLogHandler: LogHandler {
    let lines: NIOLockedValueBox<[String]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
        lines.withLockedValue { $0.append("\(event.level) \(event.message) \(all)") }
    }
}

@Suite("Integrations: secrets")
struct IntegrationSecretTests {
    @Test(
        "secrets never reach the logs, the API's answers or the delivery records, even when a destination echoes them",
        arguments: TestDatabase.available)
    func secretsStaySecret(database: TestDatabase) async throws {
        let lines = NIOLockedValueBox<[String]>([])
        let logger = Logger(label: "secrets") { _ in CapturingLogHandler(lines: lines) }
        let h = try await Harness.make(database, logger: logger)
        h.clock.set(at(75))
        let token = "777:TELEGRAM-SECRET-TOKEN"
        let authorization = "Bearer WEBHOOK-SECRET-AUTH"
        // Both destinations echo what they were sent (the request's path, its Authorization) in their error bodies.
        let echo = FakeDestination { request, index in
            let echoed = "\(request.path) \(request.header("authorization") ?? "")"
            return index < 4
                ? .init(status: 500, body: echoed)
                : .init(status: 401, body: #"{"ok":false,"error_code":401,"description":"Unauthorized \#(echoed)"}"#)
        }
        try await echo.serve { url in
            try await h.live { client in
                var answers: [TestResponse] = []
                answers.append(
                    try await client.createIntegration(
                        h,
                        [
                            "kind": "telegram", "config": ["botToken": token, "chatId": "42", "baseURL": url], "environments": ["Sandbox"],
                            "retrySchedule": [1, 1, 1],
                        ]))
                answers.append(
                    try await client.createIntegration(
                        h,
                        [
                            "kind": "webhook", "config": ["url": url, "authorization": authorization], "environments": ["Sandbox"],
                            "retrySchedule": [1, 1, 1],
                        ]))
                let ids = try answers.map { try decode(IntegrationView.self, $0).id }
                for signed in try WebhookTests.lifecycle().prefix(1) { _ = try await client.postNotification(h.app.appId, signed) }
                try await eventually("attempted") { try await client.deliveries(h, ids[0]).first?.attempts ?? 0 >= 1 }
                for id in ids {
                    answers.append(try await client.integration(h, id))
                    answers.append(
                        try await client.execute(
                            uri: "/v1/apps/\(h.app.appId)/integrations/\(id)/deliveries", method: .get, headers: headers(h.app.secretKey)))
                    answers.append(
                        try await client.execute(
                            uri: "/v1/apps/\(h.app.appId)/integrations/\(id)/test", method: .post, headers: headers(h.app.secretKey)))
                }
                answers.append(
                    try await client.execute(uri: "/v1/apps/\(h.app.appId)/integrations", method: .get, headers: headers(h.app.secretKey)))
                #expect(echo.received.contains { $0.path.contains(token) })
                #expect(echo.received.contains { $0.header("authorization") == authorization })
                let stored = try await h.core.database.reading { session in
                    try await session.sql.raw(
                        "SELECT COALESCE(last_response, '') || ' ' || COALESCE(last_error, '') AS text FROM deliveries"
                    ).all().map { try $0.decode(column: "text", as: String.self) }
                }
                #expect(stored.contains { $0.contains("[redacted]") })
                let readable = try await h.core.database.reading { session in
                    try await session.sql.raw("SELECT config || COALESCE(disabled_reason, '') AS text FROM integrations").all()
                        .map { try $0.decode(column: "text", as: String.self) }
                }
                for secret in [token, authorization, "TELEGRAM-SECRET-TOKEN", "WEBHOOK-SECRET-AUTH"] {
                    for answer in answers { #expect(!IntegrationTests.text(answer).contains(secret)) }
                    #expect(!stored.contains { $0.contains(secret) })
                    #expect(!readable.contains { $0.contains(secret) })
                }
            }
        }
        let logged = lines.withLockedValue { $0 }
        #expect(!logged.isEmpty)
        for secret in ["TELEGRAM-SECRET-TOKEN", "WEBHOOK-SECRET-AUTH"] {
            #expect(!logged.contains { $0.contains(secret) }, "\(logged.filter { $0.contains(secret) }.prefix(2))")
        }
    }
}
