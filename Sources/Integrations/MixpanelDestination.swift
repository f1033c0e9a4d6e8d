import Crypto
import Foundation

/// Mixpanel: events through `/import?strict=1` (a service account, or the project token, as Basic credentials),
/// `$insert_id` derived from the delivery id (Mixpanel takes up to 36 letters, digits and dashes) and `time` the
/// event's instant, so retries deduplicate; then the customers' profiles through `/engage` (whose body `0` is a
/// failure). Batches of up to 2,000 events or 2 MB. A 401 or 403 disables the destination; `failed_records` refuses
/// those events only.
public struct MixpanelDestination: Destination {
    public let baseURL: String
    public let projectToken: String
    public let projectId: String?
    public let serviceAccount: ServiceAccount?
    public let naming: AnalyticsNaming

    public static func baseURL(region: String?, override: String?) -> String {
        let host =
            override
            ?? ["eu": "https://api-eu.mixpanel.com", "in": "https://api-in.mixpanel.com"][region ?? "us"] ?? "https://api.mixpanel.com"
        return host.hasSuffix("/") ? String(host.dropLast()) : host
    }

    public init(
        baseURL: String, projectToken: String, projectId: String?, serviceAccount: ServiceAccount?,
        naming: AnalyticsNaming
    ) {
        self.baseURL = baseURL
        self.projectToken = projectToken
        self.projectId = projectId
        self.serviceAccount = serviceAccount
        self.naming = naming
    }

    public static let maxEvents = 2_000
    public static let maxBytes = 2_000_000

    public var claimLimit: Int { Self.maxEvents }
    public var details: MessageDetails { [.usdPrices, .customerProfile] }

    public func batches(_ events: [OutboundEvent]) -> [Range<Int>] {
        batches(events, count: Self.maxEvents, bytes: Self.maxBytes - 200) { event($0).utf8.count + 1 }
    }

    /// The delivery id as Mixpanel's `$insert_id`: 32 hex digits of its SHA-256, the same on every attempt.
    public static func insertId(_ deliveryId: String) -> String {
        SHA256.hash(data: Data(deliveryId.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    func event(_ event: OutboundEvent) -> String {
        var properties: [(String, String)] = [
            ("time", "\(event.effectiveAt)"), ("distinct_id", JSONText.string(event.appUserId ?? event.customerId)),
            ("$insert_id", JSONText.string(Self.insertId(event.deliveryId))), ("token", JSONText.string(projectToken)),
        ]
        properties += naming.eventProperties(event)
        if let revenue = AnalyticsNaming.revenueUSD(event) { properties.append(("revenue", "\(revenue)")) }
        return JSONText.object([("event", JSONText.string(naming.eventName(event))), ("properties", JSONText.object(properties))])
    }

    var authorization: String {
        let credentials = serviceAccount.map { "\($0.username):\($0.secret)" } ?? "\(projectToken):"
        return "Basic " + Data(credentials.utf8).base64EncodedString()
    }

    public func requests(for events: [OutboundEvent], now: Int64) throws(IntegrationError) -> [OutgoingRequest] {
        var url = "\(baseURL)/import?strict=1"
        if let projectId, let escaped = projectId.addingPercentEncoding(withAllowedCharacters: .alphanumerics) {
            url += "&project_id=\(escaped)"
        }
        let headers: [OutgoingRequest.Header] = [.init("content-type", "application/json"), .init("authorization", authorization)]
        let imported = OutgoingRequest(url: url, headers: headers, body: Array(("[" + events.map(event).joined(separator: ",") + "]").utf8))
        // Each customer's latest properties, once per batch.
        var profiles: [String: String] = [:]
        var order: [String] = []
        for event in events {
            let id = event.appUserId ?? event.customerId
            if profiles[id] == nil { order.append(id) }
            profiles[id] = JSONText.object([
                ("$token", JSONText.string(projectToken)), ("$distinct_id", JSONText.string(id)),
                ("$set", JSONText.object(Self.profileProperties(event, naming: naming))),
            ])
        }
        let engage = OutgoingRequest(
            // ip=0: Mixpanel would otherwise place every profile where the server is.
            url: "\(baseURL)/engage?ip=0", headers: [.init("content-type", "application/json")],
            body: Array(("[" + order.compactMap { profiles[$0] }.joined(separator: ",") + "]").utf8))
        return [imported, engage]
    }

    /// A profile's `$set`: the preset's user properties, never empty, since Mixpanel refuses an empty `$set` ("$set
    /// is not a non-empty object") and the customer would get no profile. A preset with nothing to say of this event
    /// (RevenueCat's sets only `rc_subscription_status`, which a one-time purchase has none of) sets the customer's
    /// Storekeeper id, which no preset names otherwise.
    static func profileProperties(_ event: OutboundEvent, naming: AnalyticsNaming) -> [(String, String)] {
        let properties = naming.userProperties(event)
        return properties.isEmpty ? [("storekeeper_customer_id", JSONText.string(event.customerId))] : properties
    }

    /// The profiles are sent after an import that took at least some events.
    public func proceeds(after answer: AttemptAnswer) -> Bool {
        guard let status = answer.status else { return false }
        return (200..<300).contains(status) || (status == 400 && Self.failedRecords(answer) != nil)
    }

    static func failedRecords(_ answer: AttemptAnswer) -> [Int: String]? {
        guard let records = AnswerJSON.object(answer)?["failed_records"] as? [[String: Any]], !records.isEmpty else { return nil }
        var failed: [Int: String] = [:]
        for record in records {
            if let index = AnswerJSON.int(record["index"]) {
                failed[index] = [record["field"] as? String, record["message"] as? String].compactMap { $0 }.joined(separator: ": ")
            }
        }
        return failed.isEmpty ? nil : failed
    }

    public func verdicts(_ answers: [AttemptAnswer], for events: [OutboundEvent], now: Int64) -> [AttemptVerdict] {
        guard let imported = answers.first, let status = imported.status else {
            let verdict = answers.first?.unanswered ?? .retry(reason: "not sent", retryAfter: nil)
            return events.map { _ in verdict }
        }
        let error = AnswerJSON.object(imported)?["error"] as? String ?? imported.bodyText
        let failed = status == 400 ? Self.failedRecords(imported) : nil
        switch status {
        case 200..<300,
            400 where failed != nil:
            break
        case 401, 403:
            return events.map { _ in .disableDestination(reason: "Mixpanel answered \(status): \(error)") }
        case 400:
            return events.map { _ in .rejected(reason: "Mixpanel refused the batch: \(error)") }
        case 429:
            // The project's limit: the wait holds every import to it, in order.
            let wait = imported.header("retry-after").flatMap { RetryAfter.milliseconds($0, now: now) } ?? 60_000
            return events.map { _ in .throttled(reason: "Mixpanel answered 429: \(error)", retryAfter: wait, lane: .destination) }
        default:
            return events.map { _ in .retry(reason: "Mixpanel answered \(status): \(error)", retryAfter: nil) }
        }
        // The import took the events not in failed_records; the profiles must take too.
        let profiles = answers.count > 1 ? answers[1] : nil
        let profileFailure: String? = {
            guard let profiles else { return "the profiles were not sent" }
            guard let code = profiles.status, (200..<300).contains(code) else {
                return "Mixpanel /engage answered \(profiles.status.map(String.init) ?? profiles.failure ?? "nothing")"
            }
            let body = profiles.bodyText.trimmingCharacters(in: .whitespacesAndNewlines)
            if body == "1" || AnswerJSON.int(AnswerJSON.object(profiles)?["status"]) == 1 { return nil }
            return "Mixpanel /engage answered \(body.isEmpty ? "an empty body" : body) (0 is a failure)"
        }()
        return events.indices.map { index in
            if let reason = failed?[index] { return .rejected(reason: "Mixpanel refused this event (\(reason))") }
            if let profileFailure { return .retry(reason: profileFailure, retryAfter: nil) }
            return .delivered
        }
    }
}

/// A Mixpanel service account (its username and secret), which the import endpoint authenticates with.
public struct ServiceAccount: Sendable, Hashable {
    public var username: String
    public var secret: String

    public init(username: String, secret: String) {
        self.username = username
        self.secret = secret
    }
}
