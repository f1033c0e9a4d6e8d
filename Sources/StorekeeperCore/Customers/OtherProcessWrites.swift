import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import Storage

/// Whether another process has written to a SQLite database lately, watched every `interval`: while none has, what
/// this process cached of its customers stays right past the cache's TTL (its own writes replace entries at once), so
/// that an app's launches are answered from memory.
///
/// Only SQLite tells (`PRAGMA data_version`, `StorageDatabase.sqliteOtherProcessesVersion`); on PostgreSQL, where
/// several servers share a database, the TTL alone rules. An entry is vouched for when what it holds was read at or
/// after the end of the last check that saw another process's commit (a read begun before a commit, remembered after
/// the check saw it, must not outlive it), and while the watch is current (its last check began within the TTL).
public final class OtherProcessWrites: Sendable {
    private struct State {
        var version: Int64?
        /// When the last check began (monotonic nanoseconds); nil before the first.
        var checkedAt: UInt64?
        /// Entries read before this are not vouched for.
        var invalidBefore: UInt64 = 0
    }

    private let state = NIOLockedValueBox(State())
    private let freshness: Freshness

    init(ttl: Duration) {
        freshness = Freshness(ttl)
    }

    /// Whether an entry read at `readAt` (monotonic nanoseconds) is still right as far as other processes go.
    func vouches(for readAt: UInt64) -> Bool {
        state.withLockedValue { state in
            guard let checkedAt = state.checkedAt, freshness.isFresh(checkedAt) else { return false }
            return readAt >= state.invalidBefore
        }
    }

    /// One check: `version` read between `began` and `ended` (monotonic nanoseconds).
    func observe(version: Int64, began: UInt64, ended: UInt64) {
        state.withLockedValue { state in
            // The first check vouches only for what is read after it.
            if state.version != version { state.invalidBefore = ended }
            state.version = version
            state.checkedAt = began
        }
    }

    /// Reads the version once (nothing on PostgreSQL: there is nothing to watch).
    func check(_ database: StorageDatabase) async throws {
        let began = Freshness.now
        guard let version = try await database.sqliteOtherProcessesVersion() else { return }
        observe(version: version, began: began, ended: Freshness.now)
    }
}

/// Runs the watch of `OtherProcessWrites` beside the server (SQLite only).
struct OtherProcessWatchService: Service {
    let watch: OtherProcessWrites
    let database: StorageDatabase
    let logger: Logger
    var interval: Duration = .milliseconds(250)

    func run() async throws {
        await everyUntilShutdown(interval, logger: logger, failure: "could not read whether another process wrote to the database") {
            try await watch.check(database)
        }
    }
}
