import Foundation

extension Duration {
    /// The duration in whole nanoseconds, saturating at zero for negative durations (cache lifetimes, timers).
    public var wholeNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole &+ UInt64(attoseconds / 1_000_000_000)
    }

    /// The duration in whole milliseconds (Apple's and the database's unit of time).
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

extension Date {
    /// Milliseconds since the Unix epoch, rounded: how every instant is stored.
    public var millisecondsSince1970: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
}

/// Entries that expire a fixed time after they were made, on the monotonic clock (a wall-clock jump neither keeps
/// nor drops them).
struct Freshness: Sendable {
    let lifetimeNanoseconds: UInt64

    init(_ lifetime: Duration) { lifetimeNanoseconds = lifetime.wholeNanoseconds }

    static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

    func isFresh(_ madeAt: UInt64) -> Bool { Self.now &- madeAt < lifetimeNanoseconds }
}
