import NIOConcurrencyHelpers

/// A first-come, first-served lock for async code: one holder at a time, the others suspended (not blocking a thread).
///
/// SQLite allows one writer; the SQLite store holds this around each write transaction so that its statements never
/// interleave with another task's on the shared connection.
final class AsyncLock: Sendable {
    private struct State {
        var locked = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = NIOLockedValueBox(State())

    func withLock<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await acquire()
        do {
            let value = try await body()
            release()
            return value
        } catch {
            release()
            throw error
        }
    }

    private func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLockedValue { state -> Bool in
                if state.locked {
                    state.waiters.append(continuation)
                    return false
                }
                state.locked = true
                return true
            }
            if resumeNow { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.locked = false
                return nil
            }
            // The lock passes straight to the next waiter: it stays locked.
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
