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

/// A destination's protocol: the requests a batch of events becomes, and what an answer means for each event. No
/// I/O: the worker sends and records.
public protocol Destination: Sendable {
    /// The most events one request carries (1 for webhooks and messages, thousands for analytics imports).
    var batchLimit: Int { get }
    /// The most requests in flight at once to this destination.
    var concurrency: Int { get }
    /// The least time between two requests' starts (a destination's rate limit), if it has one.
    var minimumInterval: Duration? { get }
    /// The request that sends these events (at most `batchLimit`), made at `now` (ms since 1970).
    func request(for events: [OutboundEvent], now: Int64) throws(IntegrationError) -> OutgoingRequest
    /// What the answer means for each event of the request, in order.
    func verdicts(_ answer: AttemptAnswer, for events: [OutboundEvent], now: Int64) -> [AttemptVerdict]
}

extension Destination {
    public var concurrency: Int { 1 }
    public var minimumInterval: Duration? { nil }
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

    public var batchLimit: Int { 1 }
    public var concurrency: Int { 16 }

    public func request(for events: [OutboundEvent], now: Int64) throws(IntegrationError) -> OutgoingRequest {
        guard let event = events.first, events.count == 1 else {
            throw IntegrationError(.invalidConfiguration, "a webhook request carries one event")
        }
        let body = Array(WebhookDelivery.body(event).utf8)
        let headers = WebhookDelivery.headers(
            id: event.deliveryId, timestamp: now / 1000, body: body, secrets: secrets, authorization: authorization)
        return OutgoingRequest(url: url, headers: headers.map { .init($0.name, $0.value) }, body: body)
    }

    public func verdicts(_ answer: AttemptAnswer, for events: [OutboundEvent], now: Int64) -> [AttemptVerdict] {
        events.map { _ in WebhookDelivery.verdict(answer, now: now) }
    }
}
