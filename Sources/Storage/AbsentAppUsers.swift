import Dispatch
import NIOConcurrencyHelpers

/// App user ids a read found naming no customer, remembered so that the next read of one costs no query: most
/// launches of an app are by people who never bought anything, and each reads its customer.
///
/// This process's own writes keep it right: a transaction that names a customer by an app user id (creating the
/// customer or adding an alias) forgets that id once it ends, and a read's finding is remembered only when no such
/// transaction was under way at any time during the read (one committing meanwhile could have added the name after
/// the read looked). Another process sharing the database is covered by the freshness rule readers pass to `contains`,
/// given when the read that found the id absent began (on the monotonic clock, `DispatchTime`'s nanoseconds).
public final class AbsentAppUsers: Sendable {
    /// Where the name writes stood when a read began: what `remember` compares with.
    public struct Mark: Sendable {
        let begun: UInt64
        let quiet: Bool
        /// When the read began (`DispatchTime.now().uptimeNanoseconds`): what the read found is as of then at least.
        public let readAt: UInt64
    }

    private struct State {
        /// Transactions that wrote a name: begun (at their first name write) and ended (committed or rolled back).
        var begun: UInt64 = 0
        var ended: UInt64 = 0
        /// When the read that found each absent began.
        var absent: [String: UInt64] = [:]
    }

    private let state = NIOLockedValueBox(State())
    /// Past this many entries the map is emptied (a bound on memory, not an LRU).
    static let capacity = 200_000

    init() {}

    fileprivate static func key(_ appId: String, _ appUserId: String) -> String { appId + "\u{0}" + appUserId }

    /// Taken before the read whose finding may be remembered.
    public func mark() -> Mark {
        let readAt = DispatchTime.now().uptimeNanoseconds
        return state.withLockedValue { Mark(begun: $0.begun, quiet: $0.begun == $0.ended, readAt: readAt) }
    }

    /// Whether `appUserId` was found naming no customer by a read begun at a time `isFresh` accepts, and not named
    /// since by this process.
    public func contains(app appId: String, appUserId: String, isFresh: (UInt64) -> Bool) -> Bool {
        guard let readAt = state.withLockedValue({ $0.absent[Self.key(appId, appUserId)] }) else { return false }
        return isFresh(readAt)
    }

    /// Remembers that a read begun at `mark` found no customer named `appUserId`, unless a transaction that names
    /// customers was under way when the read began or has begun since (its commit could have come after the read).
    /// Returns whether it was remembered.
    @discardableResult
    public func remember(app appId: String, appUserId: String, readSince mark: Mark) -> Bool {
        state.withLockedValue { state in
            guard mark.quiet, state.begun == mark.begun else { return false }
            if state.absent.count >= Self.capacity { state.absent.removeAll(keepingCapacity: true) }
            state.absent[Self.key(appId, appUserId)] = mark.readAt
            return true
        }
    }

    /// The first name a transaction writes: from now until it ends, no read's finding is remembered.
    fileprivate func nameWriteBegan() {
        state.withLockedValue { $0.begun += 1 }
    }

    /// A transaction that wrote names ended (committed or not): they are forgotten as absent.
    fileprivate func nameWritesEnded(_ keys: [String]) {
        state.withLockedValue { state in
            for key in keys { state.absent.removeValue(forKey: key) }
            state.ended += 1
        }
    }

    /// The record of one write transaction's names.
    func transactionLog() -> AppUserNameLog { AppUserNameLog(self) }
}

/// The app user ids one write transaction names customers by, reported to `AbsentAppUsers` when it ends.
final class AppUserNameLog: Sendable {
    private let absent: AbsentAppUsers
    private let keys = NIOLockedValueBox<[String]?>(nil)

    fileprivate init(_ absent: AbsentAppUsers) { self.absent = absent }

    /// Called before the statement that writes the name.
    func willName(app appId: String, appUserId: String) {
        let first = keys.withLockedValue { keys -> Bool in
            defer { keys = (keys ?? []) + [AbsentAppUsers.key(appId, appUserId)] }
            return keys == nil
        }
        if first { absent.nameWriteBegan() }
    }

    /// Called once the transaction has committed or rolled back.
    func ended() {
        guard
            let written = keys.withLockedValue({ keys in
                defer { keys = nil }
                return keys
            })
        else { return }
        absent.nameWritesEnded(written)
    }
}
