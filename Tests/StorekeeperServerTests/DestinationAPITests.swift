import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import Storage
import StorekeeperCore
import TestSupport
import Testing

@testable import StorekeeperServer

/// Slack, Telegram, Amplitude and Mixpanel, each faked by the test with its API's paths, answers and error bodies.
@Suite("Integrations: Slack, Telegram, Amplitude, Mixpanel")
struct DestinationAPITests {
    /// One purchase (a subscription started), so the destination has one event to deliver.
    static func purchase(_ client: any TestClientProtocol, _ h: Harness) async throws {
        let purchase = Purchase(
            transactionId: "1000", originalTransactionId: "1000", purchase: at(74), expires: at(104), signed: at(74),
            token: WebhookTests.token)
        let signed = try notification(
            .subscribed, .initialBuy, purchase: purchase, renewal: renewalInfo(original: "1000", signed: at(74)), signed: at(74))
        #expect(try await client.postNotification(h.app.appId, signed).status == .ok)
    }

    /// Waits for the one delivery's first attempt to be recorded, then moves the server's clock past its retry.
    static func afterFirstFailure(_ client: any TestClientProtocol, _ h: Harness, _ id: String) async throws -> DeliveryView {
        try await eventually("the failure recorded") { try await client.deliveries(h, id).first?.attempts == 1 }
        let delivery = try #require(try await client.deliveries(h, id).first)
        h.clock.set(try #require(delivery.nextAttemptAt))
        return delivery
    }

    @Test("Slack: a readable message, a 429's Retry-After honoured", arguments: TestDatabase.available)
    func slack(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        h.clock.set(at(75))
        let slack = FakeDestination { _, index in
            index == 0 ? .init(status: 429, headers: ["Retry-After": "30"], body: "rate_limited") : .init(status: 200, body: "ok")
        }
        try await slack.serve { url in
            try await h.live { client in
                let hook = url + "/services/T000/B000/XXXXSECRET"
                let view = try decode(
                    IntegrationView.self,
                    try await client.createIntegration(h, ["kind": "slack", "config": ["url": hook], "environments": ["Sandbox"]]))
                #expect(view.config.isEmpty && view.secretsConfigured == ["url"])
                try await Self.purchase(client, h)
                // A 429 is a wait, not a failure: the attempt is not counted, and the hook waits the 30 s it asked for.
                try await eventually("the wait recorded") { try await client.deliveries(h, view.id).first?.lastStatus == 429 }
                let failed = try #require(try await client.deliveries(h, view.id).first)
                #expect(failed.lastStatus == 429 && failed.lastResponse == "rate_limited" && failed.attempts == 0)
                #expect(try #require(failed.nextAttemptAt) >= at(75) + 30_000)
                h.clock.set(try #require(failed.nextAttemptAt))
                try await eventually("delivered") { try await client.deliveries(h, view.id).first?.status == "delivered" }
                let message = try #require(slack.received.last).json()
                #expect((message["text"] as? String)?.hasPrefix("Subscription started · \(IntegrationTests.token) · pro.monthly") == true)
                #expect(slack.received.allSatisfy { $0.path == "/services/T000/B000/XXXXSECRET" })
                let shown = IntegrationTests.text(try await client.integration(h, view.id))
                #expect(!shown.contains("XXXXSECRET"))
            }
        }
    }

    @Test("Telegram: HTML through sendMessage, a migrated group followed, the token never shown", arguments: TestDatabase.available)
    func telegram(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        h.clock.set(at(75))
        let telegram = FakeDestination { _, index in
            index == 0
                ? .init(
                    status: 400,
                    body:
                        #"{"ok":false,"error_code":400,"description":"Bad Request: group chat was upgraded to a supergroup chat","parameters":{"migrate_to_chat_id":-1009}}"#
                )
                : .init(status: 200, body: #"{"ok":true,"result":{"message_id":1}}"#)
        }
        try await telegram.serve { url in
            try await h.live { client in
                let view = try decode(
                    IntegrationView.self,
                    try await client.createIntegration(
                        h,
                        [
                            "kind": "telegram", "config": ["botToken": "4242:SECRETTOKEN", "chatId": -1001, "baseURL": url],
                            "environments": ["Sandbox"],
                        ]))
                #expect(view.config == ["chatId": "-1001", "baseURL": url])
                try await Self.purchase(client, h)
                try await eventually("delivered") { try await client.deliveries(h, view.id).first?.status == "delivered" }
                let requests = telegram.received
                #expect(requests.count == 2)
                #expect(requests.allSatisfy { $0.path == "/bot4242:SECRETTOKEN/sendMessage" })
                #expect(try requests.map { try $0.json()["chat_id"] as? Int } == [-1001, -1009])
                let body = try requests[1].json()
                #expect(body["parse_mode"] as? String == "HTML")
                #expect((body["text"] as? String)?.hasPrefix("<b>Subscription started</b>\nCustomer: \(IntegrationTests.token)") == true)
                let moved = try decode(IntegrationView.self, try await client.integration(h, view.id))
                #expect(moved.config["chatId"] == "-1009")
                // The migration did not count as an attempt.
                #expect(try await client.deliveries(h, view.id).first?.attempts == 1)
                for answer in [
                    try await client.integration(h, view.id),
                    try await client.execute(
                        uri: "/v1/apps/\(h.app.appId)/integrations/\(view.id)/deliveries", method: .get, headers: headers(h.app.secretKey)),
                ] {
                    #expect(!IntegrationTests.text(answer).contains("SECRETTOKEN"))
                }
            }
        }
    }

    @Test("Amplitude: one batch through HTTP V2 with insert ids, times and revenue", arguments: TestDatabase.available)
    func amplitude(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        h.clock.set(at(75))
        let amplitude = FakeDestination { request, _ in
            let count = ((try? request.json())?["events"] as? [Any])?.count ?? 0
            return .init(status: 200, body: #"{"code":200,"events_ingested":\#(count),"payload_size_bytes":1,"server_upload_time":1}"#)
        }
        try await amplitude.serve { url in
            try await h.live { client in
                let view = try decode(
                    IntegrationView.self,
                    try await client.createIntegration(
                        h,
                        [
                            "kind": "amplitude", "config": ["apiKey": "amp-key-secret", "baseURL": url, "preset": "apphud"],
                            "environments": ["Sandbox"],
                        ]))
                try await Self.purchase(client, h)
                try await eventually("delivered") {
                    let deliveries = try await client.deliveries(h, view.id)
                    return !deliveries.isEmpty && deliveries.allSatisfy { $0.status == "delivered" }
                }
                let request = try #require(amplitude.received.first)
                #expect(request.path == "/2/httpapi")
                let body = try request.json()
                #expect(body["api_key"] as? String == "amp-key-secret")
                let events = try #require(body["events"] as? [[String: Any]])
                let deliveries = try await client.deliveries(h, view.id)
                #expect(Set(events.compactMap { $0["insert_id"] as? String }) == Set(deliveries.map(\.id)))
                #expect(events.allSatisfy { ($0["event_type"] as? String)?.hasPrefix("[Apphud] ") == true })
                #expect(events.allSatisfy { $0["user_id"] as? String == IntegrationTests.token })
                #expect(events.contains { $0["time"] as? Int64 == at(74) })
            }
        }
    }

    @Test("Mixpanel: strict import then profiles; a profile answer of 0 is retried", arguments: TestDatabase.available)
    func mixpanel(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        h.clock.set(at(75))
        let engaged = NIOLockedBox(0)
        let mixpanel = FakeDestination { request, _ in
            if request.path.hasPrefix("/import") {
                let count = ((try? JSONSerialization.jsonObject(with: Data(request.body))) as? [Any])?.count ?? 0
                return .init(status: 200, body: #"{"code":200,"num_records_imported":\#(count),"status":"OK"}"#)
            }
            let first = engaged.withLock { count -> Bool in
                count += 1
                return count == 1
            }
            return .init(status: 200, body: first ? "0" : "1")
        }
        try await mixpanel.serve { url in
            try await h.live { client in
                let view = try decode(
                    IntegrationView.self,
                    try await client.createIntegration(
                        h,
                        [
                            "kind": "mixpanel", "config": ["projectToken": "mp-token-secret", "baseURL": url, "preset": "revenuecat"],
                            "environments": ["Sandbox"], "retrySchedule": [1],
                        ]))
                try await Self.purchase(client, h)
                let failed = try await Self.afterFirstFailure(client, h, view.id)
                #expect(failed.lastError?.contains("0 is a failure") == true)
                try await eventually("delivered") { try await client.deliveries(h, view.id).first?.status == "delivered" }
                let requests = mixpanel.received
                #expect(requests.map { String($0.path.prefix(while: { $0 != "?" })) } == ["/import", "/engage", "/import", "/engage"])
                #expect(requests[0].path == "/import?strict=1")
                #expect(requests[0].header("authorization") == "Basic " + Data("mp-token-secret:".utf8).base64EncodedString())
                // The same insert id on the retry: Mixpanel keeps the event once.
                let ids = try [requests[0], requests[2]].map {
                    try #require(
                        (try JSONSerialization.jsonObject(with: Data($0.body)) as? [[String: Any]])?.first?["properties"] as? [String: Any])[
                            "$insert_id"]
                        as? String
                }
                #expect(ids[0] != nil && ids[0] == ids[1])
                let profiles = try #require(try JSONSerialization.jsonObject(with: Data(requests[1].body)) as? [[String: Any]])
                #expect((profiles.first?["$set"] as? [String: Any])?["rc_subscription_status"] != nil)
            }
        }
    }
}

/// A value behind a lock, for fakes' counters.
final class NIOLockedBox<Value: Sendable>: Sendable {
    private let box: NIOLockedValueBox<Value>
    init(_ value: Value) { box = NIOLockedValueBox(value) }
    func withLock<T>(_ body: (inout Value) -> T) -> T { box.withLockedValue(body) }
}
