import Foundation

/// One HTTP request to a destination.
public struct OutgoingRequest: Sendable, Hashable {
    public var method: String
    public var url: String
    public var headers: [Header]
    public var body: [UInt8]

    public struct Header: Sendable, Hashable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(method: String = "POST", url: String, headers: [Header], body: [UInt8]) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
}

/// What a destination keeps apart from its readable configuration: its secret fields, and for a webhook its signing
/// secrets (two during a rotation: the old one until `until`, then only the new one).
public struct DestinationSecrets: Sendable, Hashable, Codable {
    public struct Signing: Sendable, Hashable, Codable {
        public var secret: String
        /// When a rotated-out secret stops signing (ms since 1970); nil for the current one.
        public var until: Int64?
        public init(secret: String, until: Int64?) {
            self.secret = secret
            self.until = until
        }
    }
    public var fields: [String: String]
    public var signing: [Signing]

    public init(fields: [String: String], signing: [Signing] = []) {
        self.fields = fields
        self.signing = signing
    }

    /// The signing secrets in force at `now`, the current one first.
    public func signingSecrets(at now: Int64) throws(IntegrationError) -> [WebhookSecret] {
        var secrets: [WebhookSecret] = []
        for entry in signing.sorted(by: { ($0.until ?? .max) > ($1.until ?? .max) }) where (entry.until ?? .max) > now {
            secrets.append(try WebhookSecret(entry.secret))
        }
        return secrets
    }
}

/// What a destination renders beyond the stored event.
public struct MessageDetails: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `OutboundEvent.usdPrice`, from the stored exchange rates.
    public static let usdPrices = MessageDetails(rawValue: 1)
    /// `groupStatuses`, `paying` and `totalSpentUSD`: analytics user properties.
    public static let customerProfile = MessageDetails(rawValue: 2)
}

/// A destination's protocol: how a claim's events are grouped into requests, the requests each group becomes, and
/// what the answers mean for each event. No I/O: the worker sends and records.
public protocol Destination: Sendable {
    /// The most deliveries one claim takes (what can be sent within a lease).
    var claimLimit: Int { get }
    /// The most groups in flight at once to this destination.
    var concurrency: Int { get }
    /// The least time between two requests' starts (a destination's rate limit), if it has one.
    var minimumInterval: Duration? { get }
    /// What the messages must carry beyond the stored event (each costs reads per batch).
    var details: MessageDetails { get }
    /// The groups a claim's events are sent in (ranges of `events`, in order). Default: one event per request.
    func batches(_ events: [OutboundEvent]) -> [Range<Int>]
    /// The requests that send one group, in order (most destinations: one).
    func requests(for events: [OutboundEvent], now: Int64) throws(IntegrationError) -> [OutgoingRequest]
    /// Whether the next request of a group is sent after this answer. Default: after a 2xx.
    func proceeds(after answer: AttemptAnswer) -> Bool
    /// What the answers (one per request sent, in order) mean for each event of the group, in order.
    func verdicts(_ answers: [AttemptAnswer], for events: [OutboundEvent], now: Int64) -> [AttemptVerdict]
    /// The keys a 429 can hold an event back by, beside the whole destination (Amplitude: its user and device).
    /// Default: none.
    func laneKeys(_ event: OutboundEvent) -> [String]
}

extension Destination {
    public var concurrency: Int { 1 }
    public var minimumInterval: Duration? { nil }
    public var details: MessageDetails { [] }
    public func batches(_ events: [OutboundEvent]) -> [Range<Int>] { events.indices.map { $0..<($0 + 1) } }
    public func proceeds(after answer: AttemptAnswer) -> Bool { answer.status.map { (200..<300).contains($0) } ?? false }
    public func laneKeys(_ event: OutboundEvent) -> [String] { [] }

    /// Groups of at most `count` events and `bytes` bytes (each event's size as `size` measures it).
    public func batches(_ events: [OutboundEvent], count: Int, bytes: Int, size: (OutboundEvent) -> Int) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start = 0
        var total = 0
        for (index, event) in events.enumerated() {
            let eventSize = size(event)
            if index > start && (index - start >= count || total + eventSize > bytes) {
                ranges.append(start..<index)
                start = index
                total = 0
            }
            total += eventSize
        }
        if start < events.count { ranges.append(start..<events.count) }
        return ranges
    }
}

/// A Standard Webhooks (v1) endpoint: one signed POST per event.
public struct WebhookDestination: Destination {
    public let url: String
    public let secrets: [WebhookSecret]
    public let authorization: String?

    public init(url: String, secrets: [WebhookSecret], authorization: String?) {
        self.url = url
        self.secrets = secrets
        self.authorization = authorization
    }

    /// Six rounds of 16 requests: even if every one waits its full 15 s, the batch ends within the lease (120 s).
    public var claimLimit: Int { 96 }
    public var concurrency: Int { 16 }

    public func requests(for events: [OutboundEvent], now: Int64) throws(IntegrationError) -> [OutgoingRequest] {
        try events.map { event throws(IntegrationError) in
            let body = Array(WebhookDelivery.body(event).utf8)
            let headers = WebhookDelivery.headers(
                id: event.deliveryId, timestamp: now / 1000, body: body, secrets: secrets, authorization: authorization)
            return OutgoingRequest(url: url, headers: headers.map { .init($0.name, $0.value) }, body: body)
        }
    }

    public func verdicts(_ answers: [AttemptAnswer], for events: [OutboundEvent], now: Int64) -> [AttemptVerdict] {
        events.indices.map { index in
            index < answers.count ? WebhookDelivery.verdict(answers[index], now: now) : .retry(reason: "not sent", retryAfter: nil)
        }
    }
}
