import Foundation

/// A Standard Webhooks (v1) delivery: the request's headers, and what its answer means.
public enum WebhookDelivery {
    /// The headers of one attempt: `webhook-id` (the delivery's id, the same on every attempt and replay, so the
    /// receiver can deduplicate), `webhook-timestamp` (this attempt, Unix seconds), `webhook-signature` (one per
    /// secret: two during a rotation), and the operator's static `Authorization` if any.
    public static func headers(
        id: String, timestamp: Int64, body: some DataProtocol, secrets: [WebhookSecret], authorization: String? = nil
    ) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = [
            ("content-type", "application/json"),
            ("webhook-id", id),
            ("webhook-timestamp", "\(timestamp)"),
            ("webhook-signature", WebhookSignature.header(id: id, timestamp: timestamp, body: body, secrets: secrets)),
        ]
        if let authorization, !authorization.isEmpty { headers.append(("authorization", authorization)) }
        return headers
    }

    /// The body: `{"type", "timestamp", "data": {"event", "customer", "app", "environment"}}`. `type` is the event's
    /// type; `timestamp` (ISO 8601) is when it was recorded, the same on every attempt; `data.event` is the stored
    /// event with `recordedAt` (and `retractedAt` on a retraction); `data.customer` is the customer's names and last
    /// computed state in the event's environment.
    public static func body(_ event: OutboundEvent) -> String {
        var eventMembers = [("recordedAt", "\(event.recordedAt)")]
        if let retractedAt = event.retractedAt { eventMembers.append(("retractedAt", "\(retractedAt)")) }
        let customer = JSONText.object(
            [
                ("customerId", JSONText.string(event.customerId)), ("appUserId", JSONText.optional(event.appUserId)),
                ("aliases", JSONText.array(event.aliases)),
            ], then: event.stateJSON)
        let data = JSONText.object([
            ("event", JSONText.object(eventMembers, then: event.eventJSON)),
            ("customer", customer),
            ("app", JSONText.object([("id", JSONText.string(event.appId)), ("bundleId", JSONText.string(event.bundleId))])),
            ("environment", JSONText.string(event.environment)),
        ])
        return JSONText.object([
            ("type", JSONText.string(event.type)), ("timestamp", JSONText.string(JSONText.isoTime(event.recordedAt))), ("data", data),
        ])
    }

    /// A 2xx is delivered; 410 Gone disables the webhook; 429 holds the whole webhook for its `Retry-After`; anything else (another status, a redirect, which is never
    /// followed, a timeout or no connection) is a failed attempt, retried after the `Retry-After` it asked for if any.
    public static func verdict(_ answer: AttemptAnswer, now: Int64) -> AttemptVerdict {
        guard let status = answer.status else { return answer.unanswered }
        switch status {
        case 200..<300:
            return .delivered
        case 410:
            return .disableDestination(reason: "the webhook answered 410 Gone")
        case 300..<400:
            return .retry(reason: "the webhook answered a redirect (\(status)), which is not followed", retryAfter: nil)
        case 429:
            // The endpoint asked to slow down: everything to it waits, in order (at least a second without a
            // Retry-After).
            return .throttled(
                reason: "the webhook answered 429",
                retryAfter: answer.header("retry-after").flatMap { RetryAfter.milliseconds($0, now: now) } ?? 1000,
                lane: .destination)
        default:
            return .retry(
                reason: "the webhook answered \(status)",
                retryAfter: answer.header("retry-after").flatMap { RetryAfter.milliseconds($0, now: now) })
        }
    }
}
