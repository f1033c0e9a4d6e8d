import Foundation

/// A value behind a lock, for the state the SDK reads synchronously (the cached customer info) and writes from tasks.
/// `Synchronization.Mutex` needs iOS 18; apps support older systems.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched inside `withLock`, under `lock`, so no two threads ever see it at once.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var current: Value { withLock { $0 } }
}
