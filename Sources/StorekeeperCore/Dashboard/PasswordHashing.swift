import Foundation
import HummingbirdBcrypt
import NIOPosix
import Synchronization

/// Where bcrypt runs: threads of its own (never those SQLite's reads and everything else blocking use), at most
/// `threads` hashes at once and `queue` waiting; any more is refused at once with `CoreError.tooManyRequests`, so that
/// a flood of sign-ins costs the flood its own time and nobody else's.
public final class PasswordHashing: Sendable {
    /// bcrypt's threads, shared by every core in the process: half the cores (at least one), started on first use and
    /// kept for the life of the process.
    static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: threads)
        pool.start()
        return pool
    }()
    public static let threads = max(1, ProcessInfo.processInfo.activeProcessorCount / 2)

    /// How many may wait for a thread beyond those hashing.
    public let queue: Int
    private let admitted = Atomic<Int>(0)
    private let completed = Atomic<Int>(0)

    /// How many are admitted now (hashing or waiting), and how many have run since the start.
    public var inFlight: Int { admitted.load(ordering: .relaxed) }
    public var runs: Int { completed.load(ordering: .relaxed) }

    public init(queue: Int) { self.queue = max(0, queue) }

    /// Runs `work` on bcrypt's threads, or refuses it when `threads + queue` are already admitted.
    public func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async throws -> T {
        try await reserve { try await self.onThreads(work) }
    }

    /// Holds one of the `threads + queue` places while `body` runs (which then hashes with `onThreads`), or refuses at
    /// once when none is free: a sign-in reserves its place before it reads the database, so that a flood past the
    /// queue costs neither a read nor a hash.
    public func reserve<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        let count = admitted.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue
        defer { admitted.wrappingSubtract(1, ordering: .acquiringAndReleasing) }
        guard count <= Self.threads + queue else {
            throw CoreError.tooManyRequests("too many sign-ins are being checked at once: try again in a second", retryAfter: 1)
        }
        return try await body()
    }

    /// Runs `work` on bcrypt's threads, inside a place `reserve` holds.
    func onThreads<T: Sendable>(_ work: @escaping @Sendable () -> T) async throws -> T {
        defer { completed.wrappingAdd(1, ordering: .relaxed) }
        return try await Self.pool.runIfActive(work)
    }

    func hash(_ password: String, cost: UInt8) async throws -> String {
        try await run { Bcrypt.hash(password, cost: cost) }
    }

    func verify(_ password: String, hash: String) async throws -> Bool {
        try await run { Bcrypt.verify(password, hash: hash) }
    }
}
