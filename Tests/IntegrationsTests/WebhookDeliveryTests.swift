import Foundation
import Integrations
import Testing

@Suite struct WebhookDeliveryTests {
    @Test func headersCarryTheIdTheAttemptsTimestampAndEverySecretsSignature() throws {
        let old = WebhookSecret.generate()
        let new = WebhookSecret.generate()
        let body = Data(#"{"type":"subscription.started"}"#.utf8)
        let headers = WebhookDelivery.headers(
            id: "msg_9", timestamp: 1_800_000_000, body: body, secrets: [new, old], authorization: "Bearer x")
        let named = Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
        #expect(named["webhook-id"] == "msg_9")
        #expect(named["webhook-timestamp"] == "1800000000")
        #expect(named["authorization"] == "Bearer x")
        #expect(named["content-type"] == "application/json")
        let signature = try #require(named["webhook-signature"])
        for secret in [old, new] {
            try WebhookSignature.verify(
                id: "msg_9", timestamp: "1800000000", signature: signature, body: body, secret: secret, now: 1_800_000_000)
        }
        let withoutAuthorization = WebhookDelivery.headers(id: "msg_9", timestamp: 1, body: body, secrets: [new])
        #expect(!withoutAuthorization.contains { $0.name == "authorization" })
    }

    @Test func whatAnAnswerMeans() {
        let now: Int64 = 1_000_000
        #expect(WebhookDelivery.verdict(AttemptAnswer(status: 200), now: now) == .delivered)
        #expect(WebhookDelivery.verdict(AttemptAnswer(status: 204), now: now) == .delivered)
        #expect(
            WebhookDelivery.verdict(AttemptAnswer(status: 410), now: now) == .disableDestination(reason: "the webhook answered 410 Gone"))
        #expect(
            WebhookDelivery.verdict(AttemptAnswer(status: 301, headers: ["Location": "http://elsewhere"]), now: now)
                == .retry(reason: "the webhook answered a redirect (301), which is not followed", retryAfter: nil))
        #expect(
            WebhookDelivery.verdict(AttemptAnswer(status: 429, headers: ["Retry-After": "30"]), now: now)
                == .throttled(reason: "the webhook answered 429", retryAfter: 30_000, lane: .destination))
        #expect(
            WebhookDelivery.verdict(AttemptAnswer(status: 500), now: now) == .retry(reason: "the webhook answered 500", retryAfter: nil))
        #expect(
            WebhookDelivery.verdict(AttemptAnswer(status: 400), now: now) == .retry(reason: "the webhook answered 400", retryAfter: nil))
        #expect(
            WebhookDelivery.verdict(AttemptAnswer(failure: "timed out after 15 s"), now: now)
                == .retry(reason: "timed out after 15 s", retryAfter: nil))
    }

    @Test func onlyTheFirstKilobyteOfAnAnswerIsKept() {
        let answer = AttemptAnswer(status: 500, body: Array(repeating: UInt8(ascii: "x"), count: 5000))
        #expect(answer.body.count == 1024)
    }
}
