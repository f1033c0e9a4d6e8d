import Foundation

/// The customer info as it changes: every new stream gets the latest value at once, then each change (an answer
/// that differs only in its time is not a change).
final class CustomerInfoBroadcaster: Sendable {
    private struct State {
        var last: CustomerInfo?
        var continuations: [UUID: AsyncStream<CustomerInfo>.Continuation] = [:]
    }

    private let state = Locked(State())

    func stream() -> AsyncStream<CustomerInfo> {
        let (stream, continuation) = AsyncStream<CustomerInfo>.makeStream(bufferingPolicy: .bufferingNewest(8))
        let id = UUID()
        state.withLock {
            if let last = $0.last { continuation.yield(last) }
            $0.continuations[id] = continuation
        }
        continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.continuations.removeValue(forKey: id) } }
        return stream
    }

    /// Sends `info` to every stream when it differs from the last one sent.
    func publish(_ info: CustomerInfo) {
        let targets = state.withLock { state -> [AsyncStream<CustomerInfo>.Continuation] in
            defer { state.last = info }
            if let last = state.last, last.sameContent(as: info) { return [] }
            return Array(state.continuations.values)
        }
        for continuation in targets { continuation.yield(info) }
    }
}
