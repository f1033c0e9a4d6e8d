import Foundation

/// A Telegram chat through the Bot API's `sendMessage`: the same readable content as HTML (`&`, `<`, `>` escaped),
/// link previews off; at most one message a second to a chat and twenty a minute to a group (a chat id starting with
/// `-`); `retry_after` honoured; a group upgraded to a supergroup followed (`migrate_to_chat_id` becomes the chat id).
public struct TelegramDestination: Destination {
    public let baseURL: String
    public let botToken: String
    public let chatId: String

    public init(baseURL: String, botToken: String, chatId: String) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.botToken = botToken
        self.chatId = chatId
    }

    public var claimLimit: Int { 8 }
    public var details: MessageDetails { .usdPrices }
    public var minimumInterval: Duration? { chatId.hasPrefix("-") ? .seconds(3) : .seconds(1) }

    public static func html(_ event: OutboundEvent) -> String {
        (["<b>\(EventText.escaped(EventText.title(event)))</b>"]
            + EventText.facts(event).map { "\($0.label): \(EventText.escaped($0.value))" })
            .joined(separator: "\n")
    }

    public func requests(for events: [OutboundEvent], now: Int64) throws(IntegrationError) -> [OutgoingRequest] {
        let chat = Int64(chatId).map { "\($0)" } ?? JSONText.string(chatId)
        return events.map { event in
            let body = JSONText.object([
                ("chat_id", chat), ("text", JSONText.string(Self.html(event))), ("parse_mode", JSONText.string("HTML")),
                ("link_preview_options", JSONText.object([("is_disabled", "true")])),
            ])
            return OutgoingRequest(
                url: "\(baseURL)/bot\(botToken)/sendMessage", headers: [.init("content-type", "application/json")], body: Array(body.utf8))
        }
    }

    public func verdicts(_ answers: [AttemptAnswer], for events: [OutboundEvent], now: Int64) -> [AttemptVerdict] {
        events.indices.map { index in
            guard index < answers.count else { return .retry(reason: "not sent", retryAfter: nil) }
            return Self.verdict(answers[index])
        }
    }

    static func verdict(_ answer: AttemptAnswer) -> AttemptVerdict {
        guard let status = answer.status else { return answer.unanswered }
        let json = AnswerJSON.object(answer)
        if (200..<300).contains(status), json?["ok"] as? Bool != false { return .delivered }
        let description = json?["description"] as? String ?? answer.bodyText
        let parameters = json?["parameters"] as? [String: Any]
        if let migrated = AnswerJSON.int(parameters?["migrate_to_chat_id"]) {
            return .moved(reason: "Telegram: the group became supergroup \(migrated)", config: ["chatId": String(migrated)])
        }
        if let seconds = AnswerJSON.int(parameters?["retry_after"]) {
            // The chat's limit: the wait holds every message to it, in order.
            return .throttled(
                reason: "Telegram answered \(status): \(description)", retryAfter: Int64(max(0, min(seconds, 7 * 86_400))) * 1000,
                lane: .destination)
        }
        let lowered = description.lowercased()
        switch status {
        case 401, 403:
            return .disableDestination(reason: "Telegram answered \(status): \(description)")
        case 400 where lowered.contains("chat not found") || lowered.contains("bot was blocked") || lowered.contains("kicked"):
            return .disableDestination(reason: "Telegram answered \(status): \(description)")
        case 400:
            return .rejected(reason: "Telegram refused this message: \(description)")
        default:
            return .retry(reason: "Telegram answered \(status): \(description)", retryAfter: nil)
        }
    }
}
