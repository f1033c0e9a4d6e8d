import Foundation

/// When a delivery is tried again after a failed attempt: a list of delays, the first after the first failure. The
/// default is the Standard Webhooks schedule (attempts immediately, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
/// 14 h, 20 h and 24 h: ten attempts over about three days). Each delay varies by up to ±10% (so that deliveries that
/// failed together do not all come back together), and a destination's own `Retry-After` is always waited for.
public struct RetrySchedule: Sendable, Hashable {
    /// Seconds to wait after each failed attempt; after the last, the delivery is dead.
    public let delays: [Int64]

    public static let standardWebhooks = RetrySchedule(
        validated: [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 14 * 3600, 20 * 3600, 24 * 3600])

    /// The most retries an operator may ask for, and the longest single delay (a week).
    public static let maximumRetries = 50
    public static let maximumDelay: Int64 = 7 * 24 * 3600

    /// An operator's schedule (seconds), checked.
    public init(seconds delays: [Int64]) throws(IntegrationError) {
        guard delays.count <= Self.maximumRetries else {
            throw IntegrationError(.invalidRetrySchedule, "a retry schedule has at most \(Self.maximumRetries) delays")
        }
        guard delays.allSatisfy({ (0...Self.maximumDelay).contains($0) }) else {
            throw IntegrationError(.invalidRetrySchedule, "each delay is between 0 and \(Self.maximumDelay) seconds")
        }
        self.delays = delays
    }

    private init(validated delays: [Int64]) { self.delays = delays }

    /// Attempts in all: the first and one per delay.
    public var attempts: Int { delays.count + 1 }

    /// The whole schedule without jitter, in milliseconds: how long a destination may be down and still receive
    /// every delivery.
    public var span: Int64 { delays.reduce(0, +) * 1000 }

    /// When to try again after attempt number `attempt` (1 for the first) failed at `now`, or nil when it was the
    /// last (the delivery is dead). Instants in milliseconds. `jitter` in [-1, 1] scales the delay by ±10%;
    /// `retryAfter` (milliseconds, from the destination's answer) is a floor. The last attempt is never made before
    /// `firstAttemptAt` + `span`, so jitter never shortens the time a destination has to come back.
    public func nextAttempt(afterFailed attempt: Int, firstAttemptAt: Int64, now: Int64, jitter: Double, retryAfter: Int64? = nil)
        -> Int64?
    {
        guard attempt >= 1, attempt <= delays.count else { return nil }
        let factor = 1 + 0.1 * max(-1, min(1, jitter.isFinite ? jitter : 0))
        var next = now + Int64((Double(delays[attempt - 1] * 1000) * factor).rounded())
        if attempt == delays.count { next = max(next, firstAttemptAt + span) }
        if let retryAfter, retryAfter > 0 { next = max(next, now + retryAfter) }
        return next
    }
}

/// A destination's request to wait: HTTP `Retry-After` (delay-seconds or an HTTP date) or a JSON body's
/// `retry_after` seconds (Telegram).
public enum RetryAfter {
    /// The wait in milliseconds from `now` (milliseconds since 1970), or nil when the value is neither form. A date
    /// in the past is no wait (0); a wait longer than `longest` (a week, beyond the whole default schedule) is cut to
    /// it, so that a destination's number can neither overflow nor park a delivery for years.
    public static func milliseconds(_ value: String, now: Int64) -> Int64? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard let seconds = Double(trimmed) ?? httpDate(trimmed).map({ $0 - Double(now) / 1000 }), !seconds.isNaN else { return nil }
        if seconds < 0 { return Double(trimmed) == nil ? 0 : nil }
        return Int64((min(seconds, Double(longest)) * 1000).rounded())
    }

    /// The longest wait a destination can ask for, in seconds.
    public static let longest = RetrySchedule.maximumDelay

    /// An HTTP date (IMF-fixdate), in seconds since 1970.
    private static func httpDate(_ trimmed: String) -> Double? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: trimmed)?.timeIntervalSince1970
    }
}
