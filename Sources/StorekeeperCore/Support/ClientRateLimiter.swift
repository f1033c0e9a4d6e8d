import Synchronization

/// A token bucket per client address: `perMinute` at once, refilled at `perMinute` a minute. Remembers at most
/// `maxTracked` clients (the least recently seen half is forgotten past it, which only ever gives a client more).
/// In memory, per server.
public final class ClientRateLimiter: Sendable {
    struct Bucket {
        var tokens: Double
        var at: Int64
    }

    public let perMinute: Int
    let maxTracked: Int
    private let buckets = Mutex<[String: Bucket]>([:])

    public init(perMinute: Int, maxTracked: Int = 100_000) {
        self.perMinute = max(1, perMinute)
        self.maxTracked = max(2, maxTracked)
    }

    /// The milliseconds until `client` has a token at `now`, nil when it has one now; takes nothing.
    func wait(client: String, now: Int64) -> Int64? {
        let rate = Double(perMinute) / 60_000
        return buckets.withLock { buckets -> Int64? in
            guard let bucket = buckets[client] else { return nil }
            let tokens = min(Double(perMinute), bucket.tokens + Double(max(0, now - bucket.at)) * rate)
            return tokens >= 1 ? nil : Int64(((1 - tokens) / rate).rounded(.up))
        }
    }

    /// Takes one token for `client` at `now` (ms): nil when there was one, else the milliseconds until there is.
    func take(client: String, now: Int64) -> Int64? {
        let rate = Double(perMinute) / 60_000
        return buckets.withLock { buckets in
            var bucket = buckets[client] ?? Bucket(tokens: Double(perMinute), at: now)
            bucket.tokens = min(Double(perMinute), bucket.tokens + Double(max(0, now - bucket.at)) * rate)
            bucket.at = now
            guard bucket.tokens >= 1 else {
                buckets[client] = bucket
                return Int64(((1 - bucket.tokens) / rate).rounded(.up))
            }
            bucket.tokens -= 1
            buckets[client] = bucket
            if buckets.count > maxTracked {
                let kept = buckets.sorted { $0.value.at > $1.value.at }.prefix(maxTracked / 2)
                buckets = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
            }
            return nil
        }
    }
}
