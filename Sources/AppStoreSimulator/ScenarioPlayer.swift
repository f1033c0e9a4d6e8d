import Foundation

/// Plays a scenario: each step at its instant, the store's own renewals and expiries in between, and delivery of
/// everything the store sends. On a virtual clock time jumps from step to step; on sandbox time the player waits
/// for the wall clock, renewing on time, as the sandbox does.
public final class ScenarioPlayer {
    public enum Clock: Sendable, Hashable {
        /// Stepped: instants come from the scenario alone.
        case virtual
        /// The wall clock, with Apple's sandbox period table.
        case sandbox
    }

    public let store: SimulatedStore
    public var delivery: Delivery
    public let start: Int64
    public let clock: Clock
    /// Steps the store refused (an impossible step, in a generated population), with the reason.
    public private(set) var skipped: [(step: ScenarioStep, reason: String)] = []
    public private(set) var sent = 0

    public init(store: SimulatedStore, delivery: Delivery, start: Int64, clock: Clock) {
        self.store = store
        self.delivery = delivery
        self.start = start
        self.clock = clock
    }

    static var wallClock: Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// Performs one step and delivers what it produced. With `lenient`, a step the store refuses is recorded in
    /// `skipped`; otherwise the refusal is thrown.
    @discardableResult
    public func play(_ step: ScenarioStep, lenient: Bool = false) async throws -> [SimulatedNotification] {
        let start = self.start
        let instant = await store.with { $0.instant(day: step.day, from: start) }
        var produced: [SimulatedNotification] = []
        if clock == .sandbox { try await waitForWallClock(until: instant) }
        produced += try await store.with { try $0.advance(to: instant) }
        do {
            produced += try await store.with { try $0.act(step) }
        } catch let error as StoreError {
            guard lenient else { throw error }
            skipped.append((step, error.message))
        }
        await delivery.deliver(produced, store: store, now: instant)
        sent += produced.count
        return produced
    }

    /// Lets time pass to `instant` (renewals, failures, expiries) and delivers what it brings.
    @discardableResult
    public func advance(to instant: Int64) async throws -> [SimulatedNotification] {
        var produced: [SimulatedNotification] = []
        if clock == .sandbox { try await waitForWallClock(until: instant) }
        produced += try await store.with { try $0.advance(to: instant) }
        await delivery.deliver(produced, store: store, now: instant)
        sent += produced.count
        return produced
    }

    /// Sends what is still waiting (delayed or held back notifications, retries).
    public func drain() async {
        let now = await store.with { $0.now }
        await delivery.drain(store: store, now: now)
    }

    /// Sandbox time: follows the wall clock to `instant`, a second at a time, delivering renewals as they fall due.
    func waitForWallClock(until instant: Int64) async throws {
        while true {
            let now = Self.wallClock
            let produced = try await store.with { try $0.advance(to: min(now, instant)) }
            await delivery.deliver(produced, store: store, now: min(now, instant))
            sent += produced.count
            if now >= instant { return }
            try await Task.sleep(for: .milliseconds(min(1000, instant - now)))
        }
    }
}
