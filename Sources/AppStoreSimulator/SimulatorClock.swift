import Foundation

/// The simulator's time, in epoch milliseconds. Apple's dates in what it signs come from here.
public protocol SimulatorClock: Sendable {
    var now: Int64 { get }
}

/// Stepped, deterministic time for tests: it moves only when told to.
public final class VirtualClock: SimulatorClock, @unchecked Sendable {
    // @unchecked: `instant` is read and written only under `lock`. An NSLock, not `Mutex`, and no NIO: the simulator
    // also runs in an app's tests (StorekeeperSDKTesting), on systems older than Mutex and without the server's packages.
    private let lock = NSLock()
    private var instant: Int64

    public init(start: Int64) { instant = start }

    public var now: Int64 { withLock { $0 } }

    private func withLock<T>(_ body: (inout Int64) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&instant)
    }

    /// Moves time forward (never back: signed dates only grow; a negative step does nothing).
    public func advance(byMilliseconds milliseconds: Int64) {
        guard milliseconds > 0 else { return }
        withLock { $0 = $0 &+ milliseconds }
    }

    /// Moves time forward to `instant`; an earlier instant leaves it where it is.
    public func advance(to instant: Int64) {
        withLock { $0 = max($0, instant) }
    }
}

/// Apple's sandbox time: a subscription period lasts minutes of real time, by Apple's table (1 week → 3 minutes,
/// 1 month → 5, 2 months → 10, 3 months → 15, 6 months → 30, 1 year → 1 hour), and a sandbox subscription renews at
/// most 12 times when `renewalLimit` is on.
public struct SandboxTime: Sendable, Hashable {
    /// Renewals after which a sandbox subscription stops renewing; nil for no limit.
    public var renewalLimit: Int?

    public init(renewalLimit: Int? = 12) { self.renewalLimit = renewalLimit }

    /// The real duration of one subscription period (an ISO 8601 period: `P1W`, `P7D`, `P1M`, `P2M`, `P3M`, `P6M`, `P1Y`,
    /// `P12M`), or nil for a period Apple's table does not list.
    public static func realDuration(ofPeriod period: String) -> Duration? {
        switch period.uppercased() {
        case "P1W", "P7D": return .seconds(3 * 60)
        case "P1M": return .seconds(5 * 60)
        case "P2M": return .seconds(10 * 60)
        case "P3M": return .seconds(15 * 60)
        case "P6M": return .seconds(30 * 60)
        case "P1Y", "P12M": return .seconds(60 * 60)
        default: return nil
        }
    }

    /// Whether a subscription that has renewed `renewals` times renews again.
    public func renewsAgain(after renewals: Int) -> Bool {
        renewalLimit.map { renewals < $0 } ?? true
    }
}

/// Compressed real time: simulated time runs `factor` times faster than the wall clock, from `start`.
public final class CompressedClock: SimulatorClock {
    public let start: Int64
    public let factor: Double
    private let origin: ContinuousClock.Instant

    /// A clock on which `simulated` passes in `real`: for example a month (30 days) in 5 minutes.
    public init(start: Int64, simulated: Duration, real: Duration) {
        self.start = start
        self.factor = Self.seconds(simulated) / Self.seconds(real)
        self.origin = ContinuousClock.now
    }

    public var now: Int64 {
        start + Int64(Self.seconds(ContinuousClock.now - origin) * factor * 1000)
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
