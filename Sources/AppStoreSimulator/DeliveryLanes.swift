import Synchronization

/// Sends notifications over several connections at once, as the App Store does for an app with many customers, while
/// each customer's go in the order given: a customer's notifications always take the same lane, and a lane sends
/// one at a time. What each attempt got back is kept for `Delivery` to take (`collect`), which records it and schedules
/// retries as it does for attempts made one at a time.
public final class DeliveryLanes: Sendable {
    /// One attempt made on a lane and its answer (nil: no response).
    struct Attempt: Sendable {
        var notification: SimulatedNotification
        var now: Int64
        var failures: Int
        var status: Int?
    }

    private struct Job: Sendable {
        var notification: SimulatedNotification
        var now: Int64
        var failures: Int
    }

    fileprivate struct State {
        /// Submitted and not yet answered.
        var inFlight = 0
        var finished: [Attempt] = []
        var waitingForRoom: [CheckedContinuation<Void, Never>] = []
        var waitingForIdle: [CheckedContinuation<Void, Never>] = []
    }

    public let count: Int
    /// The most attempts submitted and not yet answered: the player waits beyond it (memory stays bounded).
    let limit: Int
    private let lanes: [AsyncStream<Job>.Continuation]
    private let state = SharedState()

    /// `count` lanes (at least one) posting with `send`.
    public init(count: Int, send: @escaping WebhookSender) {
        let count = max(1, count)
        self.count = count
        limit = count * 32
        var lanes: [AsyncStream<Job>.Continuation] = []
        var streams: [AsyncStream<Job>] = []
        for _ in 0..<count {
            let (stream, continuation) = AsyncStream<Job>.makeStream()
            streams.append(stream)
            lanes.append(continuation)
        }
        self.lanes = lanes
        for stream in streams {
            Task { [state] in
                for await job in stream {
                    let status = await send(job.notification)
                    let waiters = state.mutex.withLock { state -> [CheckedContinuation<Void, Never>] in
                        state.finished.append(Attempt(notification: job.notification, now: job.now, failures: job.failures, status: status))
                        state.inFlight -= 1
                        var waiters: [CheckedContinuation<Void, Never>] = []
                        if !state.waitingForRoom.isEmpty { waiters.append(state.waitingForRoom.removeFirst()) }
                        if state.inFlight == 0 {
                            waiters += state.waitingForIdle
                            state.waitingForIdle = []
                        }
                        return waiters
                    }
                    for waiter in waiters { waiter.resume() }
                }
            }
        }
    }

    deinit {
        for lane in lanes { lane.finish() }
    }

    /// The lane of a notification: its customer's (or, for one about no customer, its transaction's or its own).
    func lane(of notification: SimulatedNotification) -> Int {
        let key = notification.customer ?? notification.originalTransactionId ?? notification.uuid
        // The same lane on every run (Swift's hashValue is seeded per process).
        var hash = StableHash()
        hash.add(key)
        return Int(hash.value % UInt64(count))
    }

    /// Queues an attempt on its customer's lane, once fewer than `limit` are under way.
    func submit(_ notification: SimulatedNotification, now: Int64, failures: Int) async {
        while true {
            let admitted = state.mutex.withLock { state -> Bool in
                guard state.inFlight < limit else { return false }
                state.inFlight += 1
                return true
            }
            if admitted { break }
            await withCheckedContinuation { continuation in
                let roomAlready = state.mutex.withLock { state -> Bool in
                    if state.inFlight < limit { return true }
                    state.waitingForRoom.append(continuation)
                    return false
                }
                if roomAlready { continuation.resume() }
            }
        }
        lanes[lane(of: notification)].yield(Job(notification: notification, now: now, failures: failures))
    }

    /// The attempts answered since the last call, in the order they were answered.
    func collect() -> [Attempt] {
        state.mutex.withLock { state in
            defer { state.finished = [] }
            return state.finished
        }
    }

    /// Waits until every submitted attempt has been answered.
    func idle() async {
        await withCheckedContinuation { continuation in
            let idleAlready = state.mutex.withLock { state -> Bool in
                if state.inFlight == 0 { return true }
                state.waitingForIdle.append(continuation)
                return false
            }
            if idleAlready { continuation.resume() }
        }
    }
}

/// The lanes' state behind a lock, in a class the lanes' tasks share (a `Mutex` itself cannot be captured).
private final class SharedState: Sendable {
    let mutex = Mutex(DeliveryLanes.State())
}
