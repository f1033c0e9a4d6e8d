import NIOConcurrencyHelpers
import SQLKit

/// SQLite's one writer, with group commit: write transactions that wait for the writer while another runs share one
/// SQLite transaction, each in a savepoint of its own, and one commit.
///
/// A commit writes every page the transaction changed to the log, and the notifications' transactions change many of
/// the same pages (the indexes' newest leaves, the hour's summary rows, the tables' interior pages), so under ingest
/// the commit is the costliest statement (`Benchmarks/server.sh` measures it). Here each caller
/// still runs its own body in its own task (its cancellation and task-locals its own), one at a time:
/// - a body that returns has its savepoint released; one that throws, or whose task was cancelled, has its savepoint
///   rolled back and gets its error at once; it alone fails;
/// - then, while another transaction waits and the batch is under `maxBatch`, the writer passes to it with the
///   transaction still open, and a caller whose body returned waits for the commit; otherwise it commits, and every
///   caller of the batch is answered with the commit's outcome. Nothing is answered as done before its commit;
/// - should SQLite roll the whole transaction back by itself (after a full disk or an I/O error, which it may), every
///   caller waiting for that commit gets a retryable error.
/// Work that must run between transactions (`exclusive`: checkpoints, pragmas) waits for the batch to commit, and no
/// batch grows past it: it is taken in its turn.
final class SQLiteWriter: Sendable {
    let handle: SQLiteHandle
    private let database: SQLiteHandleDatabase
    private let state = NIOLockedValueBox(State())

    /// The most transactions one commit takes: a bound on how long the first of a batch waits for its answer.
    static let maxBatch = 16

    init(_ handle: SQLiteHandle, database: SQLiteHandleDatabase) {
        self.handle = handle
        self.database = database
    }

    private enum Turn {
        case transaction(CheckedContinuation<Void, Never>)
        case exclusive(CheckedContinuation<Void, Never>)

        func resume() {
            switch self {
            case .transaction(let continuation), .exclusive(let continuation): continuation.resume()
            }
        }
    }

    private struct State {
        var busy = false
        var waiting: [Turn] = []
        /// Whether a SQLite transaction is open (held by the batch being built).
        var open = false
        /// How many callers' bodies ran in the open transaction.
        var batched = 0
        /// How many of them returned (their savepoints released): counted as committed only once the commit succeeds.
        var released = 0
        /// Callers whose bodies returned, waiting for the open transaction's commit.
        var committing: [CheckedContinuation<Void, any Error>] = []
        var statistics = SQLiteCommitStatistics(transactions: 0, commits: 0)
    }

    /// How many callers' transactions committed, in how many commits, since the database opened.
    var statistics: SQLiteCommitStatistics { state.withLockedValue { $0.statistics } }

    /// Runs `body` in a write transaction (shared with others that wait, each in a savepoint); answers once its work
    /// is committed, or with its own error (its work rolled back), or the commit's.
    func transaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        await acquire(exclusive: false)
        do {
            if !state.withLockedValue({ $0.open }) {
                try run("BEGIN IMMEDIATE")
                state.withLockedValue { $0.open = true }
            }
            try run("SAVEPOINT storekeeper_item")
        } catch {
            // Nothing of this caller's is in the transaction; the batch goes on (or commits) as if it had not come.
            return try await finish(.failure(error))
        }
        let outcome: Result<T, any Error>
        do {
            let value = try await body(database)
            // A request given up (the caller went away) rolls back rather than commit behind an error.
            try Task.checkCancellation()
            try run("RELEASE storekeeper_item")
            state.withLockedValue { $0.released += 1 }
            outcome = .success(value)
        } catch {
            if handle.isInTransaction {
                try? run("ROLLBACK TO storekeeper_item")
                try? run("RELEASE storekeeper_item")
            }
            outcome = .failure(error)
        }
        return try await finish(outcome)
    }

    /// Runs `body` between transactions, none beginning until it returns.
    func exclusive<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await acquire(exclusive: true)
        defer { release() }
        return try await body()
    }

    /// After a caller's body: passes the open transaction on to the next waiting transaction, or commits it.
    private func finish<T>(_ outcome: Result<T, any Error>) async throws -> T {
        // SQLite ended the transaction by itself: what the batch did before is gone, and its callers must hear so.
        if state.withLockedValue({ $0.open }) && !handle.isInTransaction {
            end(with: StorageError(.unavailable, "SQLite rolled the write transaction back after a failure; try again"))
            return try outcome.get()
        }
        let next = state.withLockedValue { state -> Turn? in
            guard state.open, state.batched + 1 < Self.maxBatch, case .transaction = state.waiting.first else { return nil }
            state.batched += 1
            return state.waiting.removeFirst()
        }
        guard let next else {
            var failure: (any Error)?
            if state.withLockedValue({ $0.open }) {
                do {
                    try run("COMMIT")
                    state.withLockedValue { state in
                        state.statistics.commits += 1
                        state.statistics.transactions += state.released
                    }
                } catch {
                    try? run("ROLLBACK")
                    failure = error
                }
            }
            end(with: failure)
            if let failure { throw failure }
            return try outcome.get()
        }
        switch outcome {
        case .failure(let error):
            next.resume()
            throw error
        case .success(let value):
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                state.withLockedValue { $0.committing.append(continuation) }
                next.resume()
            }
            return value
        }
    }

    /// Closes the batch: answers the callers waiting for its commit (`failure` nil: committed), and passes the writer on.
    private func end(with failure: (any Error)?) {
        let committing = state.withLockedValue { state in
            defer {
                state.committing = []
                state.open = false
                state.batched = 0
                state.released = 0
            }
            return state.committing
        }
        release()
        for continuation in committing {
            if let failure { continuation.resume(throwing: failure) } else { continuation.resume() }
        }
    }

    private func run(_ statement: String) throws {
        try handle.execute(statement, binds: []) { _ in }
    }

    private func acquire(exclusive: Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLockedValue { state -> Bool in
                if state.busy {
                    state.waiting.append(exclusive ? .exclusive(continuation) : .transaction(continuation))
                    return false
                }
                state.busy = true
                return true
            }
            if now { continuation.resume() }
        }
    }

    /// Passes the writer to the first waiting (it stays busy), or frees it.
    private func release() {
        let next = state.withLockedValue { state -> Turn? in
            guard !state.waiting.isEmpty else {
                state.busy = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}

/// What group commit did: callers' transactions committed, and the commits that wrote them (a batch whose commit failed,
/// or that SQLite rolled back, counts in neither).
public struct SQLiteCommitStatistics: Sendable, Equatable {
    public var transactions: Int
    public var commits: Int
}
