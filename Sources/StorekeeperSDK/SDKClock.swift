import Foundation

/// The two clocks the SDK knows. Entitlements are checked against the server's time advanced by `monotonic`, which the
/// user cannot set; `wall` (the device clock, which the user can set) is read only when no server time and no signed
/// transaction tells the time, and to date what the SDK logs.
public struct SDKClock: Sendable {
    /// Time elapsed since an arbitrary fixed origin, never going back (`ContinuousClock`, which counts sleep too).
    public var monotonic: @Sendable () -> Duration
    /// The device's wall clock.
    public var wall: @Sendable () -> Date

    /// A clock from two functions (tests move them by hand).
    public init(monotonic: @escaping @Sendable () -> Duration, wall: @escaping @Sendable () -> Date) {
        self.monotonic = monotonic
        self.wall = wall
    }

    /// The device's clocks: `ContinuousClock` and `Date()`.
    public static let system: SDKClock = {
        let origin = ContinuousClock.now
        return SDKClock(monotonic: { ContinuousClock.now - origin }, wall: { Date() })
    }()
}

extension Duration {
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
