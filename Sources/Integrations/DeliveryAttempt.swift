/// A destination's answer to one attempt, as the worker saw it: the HTTP status and headers, and the first bytes of
/// the body, or the transport's failure (refused connection, timeout, TLS) when there was no answer.
public struct AttemptAnswer: Sendable, Hashable {
    public var status: Int?
    public var headers: [String: String]
    public var body: [UInt8]
    public var failure: String?

    /// How much of an answer's body is kept with the delivery.
    public static let keptBodyBytes = 1024

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = Array(body.prefix(Self.keptBodyBytes))
        self.failure = nil
    }

    /// No answer: `failure` says why. `permanent` when no attempt can succeed as configured (an address the policy
    /// refuses): the destination is disabled rather than retried.
    public init(failure: String, permanent: Bool = false) {
        self.status = nil
        self.headers = [:]
        self.body = []
        self.failure = failure
        self.permanent = permanent
    }

    public var permanent = false

    /// The kept body as text (invalid UTF-8 repaired).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

extension AttemptAnswer {
    /// What an attempt without an answer means: the destination disabled when no attempt can succeed (an address the
    /// policy refuses), a retry otherwise (no connection, a timeout).
    public var unanswered: AttemptVerdict {
        permanent ? .disableDestination(reason: failure ?? "refused") : .retry(reason: failure ?? "no answer", retryAfter: nil)
    }
}

/// What an attempt's answer means.
public enum AttemptVerdict: Sendable, Hashable {
    case delivered
    /// A failure that may pass: try again when the schedule says, and not before `retryAfter` (milliseconds).
    case retry(reason: String, retryAfter: Int64?)
    /// This delivery can never succeed (the destination refused this event alone): it is dead, the others go on.
    case rejected(reason: String)
    /// The destination itself is gone or refuses us: it is disabled with this reason until the operator enables it
    /// again; the delivery waits for that, its attempt not counted.
    case disableDestination(reason: String)
    /// Not this event's fault (another event of its batch was refused): try again at once, the attempt not counted.
    case retryNow(reason: String)
    /// The destination moved (Telegram's `migrate_to_chat_id`): these readable configuration fields replace the
    /// stored ones, and the delivery is tried again at once, the attempt not counted.
    case moved(reason: String, config: [String: String])
    /// The destination asked to slow down (a 429): the delivery is tried again after `retryAfter` milliseconds, the
    /// attempt not counted, and everything else of `lane` waits as long, in order (the whole destination: a Slack hook,
    /// a Telegram chat, a Mixpanel project; or some of its keys: Amplitude's users and devices).
    case throttled(reason: String, retryAfter: Int64, lane: ThrottleLane)

    /// The same verdict with its reason rewritten (secrets removed before it is stored or shown).
    public func mapReason(_ transform: (String) -> String) -> AttemptVerdict {
        switch self {
        case .delivered: .delivered
        case .retry(let reason, let retryAfter): .retry(reason: transform(reason), retryAfter: retryAfter)
        case .rejected(let reason): .rejected(reason: transform(reason))
        case .disableDestination(let reason): .disableDestination(reason: transform(reason))
        case .retryNow(let reason): .retryNow(reason: transform(reason))
        case .moved(let reason, let config): .moved(reason: transform(reason), config: config)
        case .throttled(let reason, let retryAfter, let lane): .throttled(reason: transform(reason), retryAfter: retryAfter, lane: lane)
        }
    }

    public var reason: String? {
        switch self {
        case .delivered: nil
        case .retry(let reason, _), .rejected(let reason), .disableDestination(let reason), .retryNow(let reason),
            .moved(let reason, _), .throttled(let reason, _, _):
            reason
        }
    }
}

/// What a 429 holds back: the whole destination, or some of its keys (``Destination/laneKeys(_:)``).
public enum ThrottleLane: Sendable, Hashable {
    case destination
    case keys(Set<String>)
}

/// The waits a destination's 429s asked for, while they last: until when the whole destination waits, and until when
/// each throttled key does (instants in milliseconds). What one lane holds is sent after the wait in its order.
public struct ThrottleHolds: Sendable, Hashable {
    public private(set) var destinationUntil: Int64?
    public private(set) var keys: [String: Int64] = [:]

    public init() {}

    /// Holds `lane` until `until` (a later hold of the same lane wins).
    public mutating func hold(_ lane: ThrottleLane, until: Int64) {
        switch lane {
        case .destination: destinationUntil = max(destinationUntil ?? until, until)
        case .keys(let held): for key in held { keys[key] = max(keys[key] ?? until, until) }
        }
    }

    /// Until when something with `eventKeys` must wait at `now`: the destination's hold or its keys' latest; nil when
    /// it may go now.
    public func heldUntil(_ eventKeys: [String], now: Int64) -> Int64? {
        let until = ([destinationUntil] + eventKeys.map { keys[$0] }).compactMap { $0 }.max()
        return until.flatMap { $0 > now ? $0 : nil }
    }

    /// Whether the whole destination waits at `now`.
    public func destinationHeld(now: Int64) -> Bool { (destinationUntil ?? .min) > now }

    /// Forgets the holds that are over at `now`.
    public mutating func expire(now: Int64) {
        if let until = destinationUntil, until <= now { destinationUntil = nil }
        keys = keys.filter { $0.value > now }
    }

    public var isEmpty: Bool { destinationUntil == nil && keys.isEmpty }
}
