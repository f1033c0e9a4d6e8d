import Foundation

/// A Slack incoming webhook: one readable message per event (a `text` fallback and blocks), at most one a second, a
/// 429's `Retry-After` honoured. Slack's answers that mean the webhook is gone or refused disable the destination.
public struct SlackDestination: Destination {
    public let url: String

    public init(url: String) { self.url = url }

    public var claimLimit: Int { 8 }
    public var details: MessageDetails { .usdPrices }
    public var minimumInterval: Duration? { .seconds(1) }

    /// Slack's error bodies that no retry can fix: the hook, its channel or its workspace is gone or refuses posts.
    public static let permanentErrors: Set<String> = [
        "invalid_token", "channel_not_found", "channel_is_archived", "no_service", "no_team", "team_disabled",
        "action_prohibited", "no_active_hooks", "posting_to_general_channel_denied", "user_not_found",
    ]

    public func requests(for events: [OutboundEvent], now: Int64) throws(IntegrationError) -> [OutgoingRequest] {
        events.map { event in
            let fields = EventText.facts(event).map {
                JSONText.object([
                    ("type", JSONText.string("mrkdwn")), ("text", JSONText.string("*\($0.label)*\n\(EventText.escaped($0.value))")),
                ])
            }
            let blocks = [
                JSONText.object([
                    ("type", JSONText.string("header")),
                    (
                        "text",
                        JSONText.object([("type", JSONText.string("plain_text")), ("text", JSONText.string(EventText.title(event)))])
                    ),
                ]),
                JSONText.object([("type", JSONText.string("section")), ("fields", "[" + fields.joined(separator: ",") + "]")]),
                JSONText.object([
                    ("type", JSONText.string("context")),
                    (
                        "elements",
                        "["
                            + JSONText.object([
                                ("type", JSONText.string("mrkdwn")), ("text", JSONText.string(EventText.escaped("event \(event.eventId)"))),
                            ])
                            + "]"
                    ),
                ]),
            ]
            let body = JSONText.object([
                ("text", JSONText.string(EventText.escaped(EventText.line(event)))), ("blocks", "[" + blocks.joined(separator: ",") + "]"),
            ])
            return OutgoingRequest(url: url, headers: [.init("content-type", "application/json")], body: Array(body.utf8))
        }
    }

    public func verdicts(_ answers: [AttemptAnswer], for events: [OutboundEvent], now: Int64) -> [AttemptVerdict] {
        events.indices.map { index in
            guard index < answers.count else { return .retry(reason: "not sent", retryAfter: nil) }
            return Self.verdict(answers[index], now: now)
        }
    }

    static func verdict(_ answer: AttemptAnswer, now: Int64) -> AttemptVerdict {
        guard let status = answer.status else { return answer.unanswered }
        let error = answer.bodyText.trimmingCharacters(in: .whitespacesAndNewlines)
        switch status {
        case 200..<300:
            return .delivered
        case 429:
            // The hook's limit: the wait holds every message to it, in order.
            return .throttled(
                reason: "Slack answered 429 (rate limited)",
                retryAfter: answer.header("retry-after").flatMap { RetryAfter.milliseconds($0, now: now) } ?? 1000, lane: .destination)
        case _ where permanentErrors.contains(error):
            return .disableDestination(reason: "Slack answered \(status) \(error)")
        case 403, 404, 410:
            return .disableDestination(reason: "Slack answered \(status) \(error)")
        case 400:
            return .rejected(reason: "Slack refused this message: \(status) \(error)")
        default:
            return .retry(
                reason: "Slack answered \(status) \(error)",
                retryAfter: answer.header("retry-after").flatMap { RetryAfter.milliseconds($0, now: now) })
        }
    }
}
