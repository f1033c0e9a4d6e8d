import Foundation

/// One delivery's message, whatever the destination: the stored event, who it is about, and the few fields the
/// readable and analytics destinations render.
public struct OutboundEvent: Sendable, Hashable {
    /// The delivery's id: the same on every attempt and replay.
    public var deliveryId: String
    public var eventId: String
    public var type: String
    public var effectiveAt: Int64
    public var recordedAt: Int64
    /// Set when this message retracts the event (later facts showed it did not happen).
    public var retractedAt: Int64?
    public var environment: String
    public var productId: String?
    /// Milliunits of `currency`.
    public var price: Int64?
    public var currency: String?
    /// The price in US dollars, when a rate for its currency and day is stored.
    public var usdPrice: Double?
    /// The money the event moves, in milliunits of `currency` (``revenueUSD`` in its own currency).
    public var revenue: Int64?
    /// The money the event moves in US dollars, as the ledger books it (its rate, a refund's share, negative for
    /// money returned): nil when it moves none or no rate is stored. Analytics destinations report this as revenue.
    public var revenueUSD: Double?
    public var appId: String
    public var bundleId: String
    public var customerId: String
    /// The customer's first app user id, and the others.
    public var appUserId: String?
    public var aliases: [String]
    /// The stored event, a JSON object.
    public var eventJSON: String
    /// The customer's last computed state in the event's environment, a JSON object, when one is stored.
    public var stateJSON: String?
    /// From that state, for analytics user properties: each subscription group's status (`active`, `trial`,
    /// `grace_period`, `billing_retry`, `expired`, `refunded`), and whether a paid period gives access now.
    public var groupStatuses: [String: String] = [:]
    /// The period type of the period the event is about (`trial`, `intro`, `promo`, `offerCode`, `winBack`, `regular`).
    public var periodType: String?
    /// Each group's latest subscription's period type (`trial`, `intro`, `promo`, `offerCode`, `winBack`, `regular`).
    public var groupPeriodTypes: [String: String] = [:]
    /// The subscription the event is about, as it stands now (nil for a one-time purchase or without a state).
    public var subscription: SubscriptionStanding?
    public var paying: Bool?
    /// Whether the event is about a one-time purchase (a non-consumable, consumable or non-renewing subscription).
    public var isOneTimePurchase = false
    /// Everything the customer paid in this environment, refunds taken off, in USD (purchases with a rate only).
    public var totalSpentUSD: Double?

    public init(
        deliveryId: String, eventId: String, type: String, effectiveAt: Int64, recordedAt: Int64, retractedAt: Int64?,
        environment: String, productId: String?, price: Int64?, currency: String?, usdPrice: Double?, appId: String, bundleId: String,
        customerId: String, appUserId: String?, aliases: [String], eventJSON: String, stateJSON: String?
    ) {
        self.deliveryId = deliveryId
        self.eventId = eventId
        self.type = type
        self.effectiveAt = effectiveAt
        self.recordedAt = recordedAt
        self.retractedAt = retractedAt
        self.environment = environment
        self.productId = productId
        self.price = price
        self.currency = currency
        self.usdPrice = usdPrice
        self.appId = appId
        self.bundleId = bundleId
        self.customerId = customerId
        self.appUserId = appUserId
        self.aliases = aliases
        self.eventJSON = eventJSON
        self.stateJSON = stateJSON
    }

    /// The event type a test message (`POST …/test`) has.
    public static let testType = "test"
}

/// Where one subscription stands, for analytics user properties: its renewal state (`active`, `gracePeriod`,
/// `billingRetry`, `expired`, `revoked`), period type and whether it will renew.
public struct SubscriptionStanding: Sendable, Hashable {
    public var status: String
    public var periodType: String
    public var willRenew: Bool?

    public init(status: String, periodType: String, willRenew: Bool?) {
        self.status = status
        self.periodType = periodType
        self.willRenew = willRenew
    }
}

/// Writing JSON text around JSON already written (stored events and states are kept as text and sent as they are).
enum JSONText {
    /// A JSON string literal. A text with nothing to escape (ids, types, most names) is copied whole.
    static func string(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 < 0x20 }) else {
            return "\"" + text + "\""
        }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func optional(_ text: String?) -> String { text.map(string) ?? "null" }

    static func array(_ texts: [String]) -> String { "[" + texts.map(string).joined(separator: ",") + "]" }

    /// An object of `members` (values already JSON), followed by the members of `object` (a JSON object's text) when
    /// given: `{"a":1}` and `{"b":2}` give `{"a":1,"b":2}`.
    static func object(_ members: [(String, String)], then object: String? = nil) -> String {
        var out = "{"
        for (index, (name, value)) in members.enumerated() {
            if index > 0 { out += "," }
            out += string(name)
            out += ":"
            out += value
        }
        if let object, let inner = innerMembers(of: object) {
            if !members.isEmpty { out += "," }
            out += inner
        }
        return out + "}"
    }

    /// What lies between the braces of a JSON object's text (JSON's whitespace allowed around it), or nil when the
    /// object has no members or the text is not an object. Found on the text's bytes: the stored state and event are
    /// kilobytes, copied once.
    private static func innerMembers(of object: String) -> Substring? {
        let bytes = object.utf8
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }
        guard let open = bytes.firstIndex(where: { !isSpace($0) }), bytes[open] == UInt8(ascii: "{"),
            let close = bytes.lastIndex(where: { !isSpace($0) }), close > open, bytes[close] == UInt8(ascii: "}")
        else { return nil }
        let inner = bytes[bytes.index(after: open)..<close]
        return inner.contains(where: { !isSpace($0) }) ? Substring(inner) : nil
    }

    /// An instant (ms since 1970) as ISO 8601 with milliseconds, UTC (a format style is a value: one serves every call).
    static func isoTime(_ milliseconds: Int64) -> String {
        iso8601.format(Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    private static let iso8601 = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
}
