import NIOConcurrencyHelpers

/// How busy the server is recording what Apple and the apps tell it: the time during which at least one notification
/// or purchase post was being ingested. The delivery worker reads it to give way to ingest (`DeliveryWorker.yield`):
/// an event's delivery can wait a moment, the notification it comes from should not.
final class IngestActivity: Sendable {
    private struct State {
        var inFlight = 0
        var busySince: ContinuousClock.Instant?
        var busyBefore: Duration = .zero
    }
    private let state = NIOLockedValueBox(State())
    /// The clock busy time is measured with (tests set it), which the delivery worker times its batches with too.
    let now: @Sendable () -> ContinuousClock.Instant

    /// `now` is the clock busy time is measured with.
    init(now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.now = now
    }

    /// Runs one ingest, counted as busy time while it runs.
    func measure<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        enter()
        defer { leave() }
        return try await body()
    }

    private func enter() {
        state.withLockedValue { state in
            if state.inFlight == 0 { state.busySince = now() }
            state.inFlight += 1
        }
    }

    private func leave() {
        state.withLockedValue { state in
            state.inFlight -= 1
            guard state.inFlight == 0, let since = state.busySince else { return }
            state.busyBefore += now() - since
            state.busySince = nil
        }
    }

    /// A reading of the busy time, to compare a later one with.
    struct Reading: Sendable {
        let at: ContinuousClock.Instant
        /// The busy time since the server started, up to `at`.
        let busy: Duration
    }

    func read() -> Reading {
        let now = now()
        return Reading(at: now, busy: state.withLockedValue { $0.busyBefore + ($0.busySince.map { now - $0 } ?? .zero) })
    }

    /// The share of the time between `earlier` and now during which something was ingested, from 0 to 1.
    func busyShare(since earlier: Reading) -> Double {
        let now = read()
        let wall = now.at - earlier.at
        guard wall > .zero else { return 0 }
        return min(1, max(0, (now.busy - earlier.busy) / wall))
    }
}
