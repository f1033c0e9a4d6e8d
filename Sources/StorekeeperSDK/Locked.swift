import Foundation

/// A value behind a lock, for the state the SDK reads synchronously (the cached customer info) and writes from tasks.
/// `Synchronization.Mutex` needs iOS 18; apps support older systems. `package`: the simulator's store uses it too.
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched inside `withLock`, under `lock`, so no two threads ever see it at once.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    package var current: Value { withLock { $0 } }
}
