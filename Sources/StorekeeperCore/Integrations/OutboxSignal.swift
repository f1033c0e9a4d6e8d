import NIOConcurrencyHelpers

/// Wakes the delivery worker when deliveries were just written (an ingest committed, an operator retried), so that
/// they leave at once rather than at the next poll. One waiter at a time; a poke with no waiter is kept for the next
/// wait.
public final class OutboxSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        /// The apps with an enabled destination as the worker last read them (nil before its first look).
        var delivering: Set<String>?
    }
    private let state = NIOLockedValueBox(State())

    public init() {}

    /// Wakes the worker for what an ingest of `app` recorded: only if the app has an enabled destination (or the
    /// worker has not looked yet). No other app's events have anything to send now; a destination enabled here pokes
    /// by itself (`poke()`), and one enabled by another server on the same database is found by the worker's next poll.
    public func poke(app: String) {
        wake { $0.delivering?.contains(app) ?? true }
    }

    /// What the worker read: the apps with an enabled destination.
    func delivering(to apps: Set<String>) {
        state.withLockedValue { $0.delivering = apps }
    }

    /// Whether a poke is kept for the next wait.
    var isPending: Bool { state.withLockedValue { $0.pending } }

    /// Wakes the worker whatever it last read (an operator's change, a lane done, a wait's end).
    public func poke() {
        wake { _ in true }
    }

    /// Wakes the waiter, or keeps the poke for the next wait, if `wanted` says so of the state (read under the lock).
    private func wake(if wanted: (State) -> Bool) {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            guard wanted(state) else { return nil }
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns when poked (at once if poked since the last wait) or after `timeout`.
    func wait(timeout: Duration) async {
        let timer = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self.poke()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLockedValue { state -> Bool in
                if state.pending {
                    state.pending = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
        timer.cancel()
    }
}
