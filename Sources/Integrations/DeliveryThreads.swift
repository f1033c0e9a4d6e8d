import NIOCore
import NIOPosix

/// The threads deliveries run on, apart from those that answer requests: the event loops of the deliveries' HTTP
/// client (connections, parsing) and a task executor (`withTaskExecutorPreference`) for the delivery worker's own code.
/// Its tasks, their child tasks and the default actors they call run here, so a batch of deliveries never waits in the
/// cooperative pool's queue ahead of a request's work, nor a request's I/O behind a delivery's on an event loop; the
/// kernel shares the cores between the two. The database's own work (connections, SQLite's thread pool) stays where it
/// is.
///
/// Their priority is the server's. (A lower `nice` would be inherited by any thread they start, and the runtime starts
/// the cooperative pool's threads from whichever thread needs one: a request could then be served at the deliveries'
/// priority.)
public final class DeliveryThreads: TaskExecutor {
    /// The process's delivery threads, one per core, never shut down (like `HTTPClient.shared`).
    public static let shared = DeliveryThreads(threads: System.coreCount)

    public let group: MultiThreadedEventLoopGroup

    init(threads: Int) {
        // A group for the process's life, its threads named for what they do (`top -H`, `perf`).
        group = MultiThreadedEventLoopGroup._makePerpetualGroup(threadNamePrefix: "SK-deliveries-", numberOfThreads: max(1, threads))
    }

    /// Runs a job on the delivery thread it is enqueued from (a resumed request's continuation, say), or on the next.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        group.any().execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// Whether the calling thread is one of these.
    public var isCurrent: Bool {
        guard let current = MultiThreadedEventLoopGroup.currentEventLoop else { return false }
        return group.makeIterator().contains { $0 === current }
    }
}
