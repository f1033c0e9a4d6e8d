/// Spaces calls evenly at a rate: each caller takes the next free slot, `1/perSecond` after the one before.
public actor SlotPacer {
    let interval: Duration
    var next = ContinuousClock.now

    /// `perSecond` must be positive.
    public init(perSecond: Double) { interval = .nanoseconds(Int64(1e9 / max(perSecond, 1e-9))) }

    /// Waits for the next free slot. The slot is taken before the sleep: callers waiting at once get one slot each,
    /// not the same one.
    public func wait() async {
        let now = ContinuousClock.now
        let slot = max(next, now)
        next = slot + interval
        if slot > now { try? await Task.sleep(until: slot) }
    }
}
