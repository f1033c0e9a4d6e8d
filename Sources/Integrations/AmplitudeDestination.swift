import Foundation

/// Amplitude's HTTP V2 API: one event per subscription event (`insert_id` the delivery id, so retries deduplicate;
/// `time` the event's instant, the same on every attempt), with revenue fields and user properties, in batches of up
/// to 2,000 events or 1 MB. An invalid API key disables the destination; a 400 that lists events refuses those only.
public struct AmplitudeDestination: Destination {
    public let url: String
    public let apiKey: String
    public let naming: AnalyticsNaming

    public static func url(region: String?, baseURL: String?) -> String {
        let host = baseURL ?? (region == "eu" ? "https://api.eu.amplitude.com" : "https://api2.amplitude.com")
        return (host.hasSuffix("/") ? String(host.dropLast()) : host) + "/2/httpapi"
    }

    public init(url: String, apiKey: String, naming: AnalyticsNaming) {
        self.url = url
        self.apiKey = apiKey
        self.naming = naming
    }

    public static let maxEvents = 2_000
    public static let maxBytes = 1_000_000

    public var claimLimit: Int { Self.maxEvents }
    public var details: MessageDetails { [.usdPrices, .customerProfile] }

    public func batches(_ events: [OutboundEvent]) -> [Range<Int>] {
        batches(events, count: Self.maxEvents, bytes: Self.maxBytes - 200) { event($0).utf8.count + 1 }
    }

    func event(_ event: OutboundEvent) -> String {
        var members: [(String, String)] = [
            ("user_id", JSONText.string(event.appUserId ?? event.customerId)), ("event_type", JSONText.string(naming.eventName(event))),
            ("time", "\(event.effectiveAt)"), ("insert_id", JSONText.string(event.deliveryId)),
            ("event_properties", JSONText.object(naming.eventProperties(event))),
            ("user_properties", JSONText.object(naming.userProperties(event))),
        ]
        if let revenue = AnalyticsNaming.revenueUSD(event) {
            members += [
                ("price", "\(revenue)"), ("quantity", "1"), ("revenue", "\(revenue)"), ("productId", JSONText.optional(event.productId)),
                ("revenueType", JSONText.string(naming.revenueType(event))),
            ]
        }
        return JSONText.object(members)
    }

    /// An event's lanes: its user (the user id Amplitude is sent); Amplitude throttles users and devices.
    public func laneKeys(_ event: OutboundEvent) -> [String] { ["user:" + (event.appUserId ?? event.customerId)] }

    /// A 429: Amplitude throttles the users and devices that send too fast (`throttled_users`, `throttled_devices`,
    /// and the batch's `throttled_events` by index) and asks for about 30 s. Those users wait, in order; the batch's
    /// other events were not taken either and go again at once. Without that detail, the whole destination waits.
    static func throttled(_ answer: AttemptAnswer, json: [String: Any]?, error: String, events: [OutboundEvent], now: Int64)
        -> [AttemptVerdict]
    {
        let wait = answer.header("retry-after").flatMap { RetryAfter.milliseconds($0, now: now) } ?? 30_000
        let users = Set(((json?["throttled_users"] as? [String: Any]) ?? [:]).keys.map { "user:" + $0 })
        let indices = Set((json?["throttled_events"] as? [Any] ?? []).compactMap(AnswerJSON.int))
        let reason = "Amplitude answered 429: \(error)"
        guard !users.isEmpty || !indices.isEmpty else {
            return events.map { _ in .throttled(reason: reason, retryAfter: wait, lane: .destination) }
        }
        return events.enumerated().map { index, event in
            let user = "user:" + (event.appUserId ?? event.customerId)
            guard users.contains(user) || indices.contains(index) else {
                return .retryNow(reason: "Amplitude throttled other users of the batch")
            }
            return .throttled(reason: reason, retryAfter: wait, lane: .keys([user]))
        }
    }

    public func requests(for events: [OutboundEvent], now: Int64) throws(IntegrationError) -> [OutgoingRequest] {
        let body = JSONText.object([
            ("api_key", JSONText.string(apiKey)), ("events", "[" + events.map(event).joined(separator: ",") + "]"),
            ("options", JSONText.object([("min_id_length", "1")])),
        ])
        return [OutgoingRequest(url: url, headers: [.init("content-type", "application/json")], body: Array(body.utf8))]
    }

    public func verdicts(_ answers: [AttemptAnswer], for events: [OutboundEvent], now: Int64) -> [AttemptVerdict] {
        guard let answer = answers.first, let status = answer.status else {
            let verdict = answers.first?.unanswered ?? .retry(reason: "not sent", retryAfter: nil)
            return events.map { _ in verdict }
        }
        let json = AnswerJSON.object(answer)
        let error = json?["error"] as? String ?? answer.bodyText
        switch status {
        case 200..<300:
            return events.map { _ in .delivered }
        case 400:
            if error.lowercased().contains("api key") {
                return events.map { _ in .disableDestination(reason: "Amplitude answered 400: \(error)") }
            }
            var refused: [Int: String] = [:]
            for key in ["events_with_invalid_fields", "events_with_missing_fields"] {
                for (field, indices) in json?[key] as? [String: Any] ?? [:] {
                    for index in indices as? [Any] ?? [] {
                        if let index = AnswerJSON.int(index) {
                            refused[index] = "\(key.replacingOccurrences(of: "_", with: " ")): \(field)"
                        }
                    }
                }
            }
            guard !refused.isEmpty else { return events.map { _ in .retry(reason: "Amplitude answered 400: \(error)", retryAfter: nil) } }
            return events.indices.map { index in
                refused[index].map { .rejected(reason: "Amplitude refused this event (\($0))") }
                    ?? .retryNow(reason: "Amplitude refused other events of the batch")
            }
        case 401, 403:
            return events.map { _ in .disableDestination(reason: "Amplitude answered \(status): \(error)") }
        case 429:
            return Self.throttled(answer, json: json, error: error, events: events, now: now)
        default:
            return events.map { _ in .retry(reason: "Amplitude answered \(status): \(error)", retryAfter: nil) }
        }
    }
}
