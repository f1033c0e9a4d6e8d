import Foundation
import Synchronization

/// Sign-in attempts, limited before any password is checked, the same way for accounts that exist and those that
/// do not (so that neither the answer nor its timing tells which emails have an account):
/// - per client address, a token bucket (`perMinute` attempts a minute, as many at once);
/// - per account *and* client address, after `freeFailures` wrong passwords each further one makes the next attempt
///   wait twice as long (`firstDelay`, doubling, at most `maxDelay`). Never a hard lock, and never one that another
///   address can cause: someone guessing a user's password from elsewhere does not keep the user out. The failures
///   are forgotten `failureMemory` after the last, and at once on a success.
/// Held in memory, per server: a restart forgets it.
public final class SignInThrottle: Sendable {
    public struct Policy: Sendable {
        public var perMinute: Int
        public var freeFailures = 5
        public var firstDelay: Int64 = 1_000
        public var maxDelay: Int64 = 15 * 60_000
        public var failureMemory: Int64 = 60 * 60_000
        /// Addresses and account-address pairs remembered at most; the least recently seen are forgotten beyond it.
        public var maxTracked = 100_000

        public init(perMinute: Int = 10) { self.perMinute = max(1, perMinute) }
    }

    struct Failures {
        var count: Int
        var last: Int64
        var until: Int64
    }

    struct Key: Hashable {
        var account: String
        var client: String
    }

    public let policy: Policy
    private let clients: ClientRateLimiter
    private let failures = Mutex<[Key: Failures]>([:])

    public init(policy: Policy) {
        self.policy = policy
        clients = ClientRateLimiter(perMinute: policy.perMinute, maxTracked: policy.maxTracked)
    }

    /// How an attempt may go on: nil, or the milliseconds to wait before the next one is considered.
    func admit(account: String, client: String, now: Int64) -> Int64? {
        let key = Key(account: Self.accountKey(account), client: client)
        if let failed = failures.withLock({ $0[key] }), now < failed.until { return failed.until - now }
        return clients.take(client: client, now: now)
    }

    /// The milliseconds until `client` may try again, nil when it may now: looked at before anything of the attempt is
    /// read (nothing is taken).
    func clientWait(client: String, now: Int64) -> Int64? { clients.wait(client: client, now: now) }

    /// Records how an admitted attempt ended.
    func record(account: String, client: String, succeeded: Bool, now: Int64) {
        let key = Key(account: Self.accountKey(account), client: client)
        failures.withLock { failures in
            guard !succeeded else {
                failures[key] = nil
                return
            }
            var failed = failures[key] ?? Failures(count: 0, last: now, until: now)
            if now - failed.last > policy.failureMemory { failed.count = 0 }
            failed.count += 1
            failed.last = now
            let over = failed.count - policy.freeFailures
            if over >= 0 {
                let delay = over >= 30 ? policy.maxDelay : min(policy.maxDelay, policy.firstDelay << Int64(over))
                failed.until = now + delay
            }
            failures[key] = failed
            if failures.count > policy.maxTracked {
                let memory = policy.failureMemory
                failures = failures.filter { now - $0.value.last <= memory }
                if failures.count > policy.maxTracked {
                    let kept = failures.sorted { $0.value.last > $1.value.last }.prefix(policy.maxTracked / 2)
                    failures = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
                }
            }
        }
    }

    /// Accounts as typed, trimmed, lowercased and cut to 320 bytes (the longest email), so that a long one costs no
    /// memory.
    static func accountKey(_ email: String) -> String {
        let trimmed = email.trimmingCharacters(in: .whitespaces).lowercased()
        guard trimmed.utf8.count > 320 else { return trimmed }
        return String(decoding: trimmed.utf8.prefix(320), as: UTF8.self)
    }
}
