import AppStore
import Entitlements
import Foundation
import NIOConcurrencyHelpers

/// The latest customers' states and app user ids, in memory.
///
/// An entry lives for `ttl` at most (another process sharing the database may have written since), or longer while
/// `otherProcesses` vouches that none has, and a state never past its `nextChangeAt`; this process's own writes
/// replace entries at once. Entries are timed by when what they hold was read (the monotonic clock).
public final class CustomerStateCache: Sendable {
    private let freshness: Freshness
    /// The SQLite watch for other processes' writes (idle on PostgreSQL).
    let otherProcesses: OtherProcessWrites
    private let states = NIOLockedValueBox<[String: StateSnapshot]>([:])
    private let customerIds = NIOLockedValueBox<[String: (customerId: String, at: UInt64)]>([:])
    private let newCustomers = NIOLockedValueBox<[String: StateSnapshot]>([:])
    /// States that cover several environments, per customer and then per the caller's environment ("" when unsaid):
    /// dropped whole with any of the customer's states.
    private let combined = NIOLockedValueBox<CombinedStates>(CombinedStates())

    /// The combined states, and a count of this process's state writes: a combination read from parts before a write
    /// and stored after it would outlive the write, so it is stored only if no write came between.
    struct CombinedStates {
        var byCustomer: [String: [String: StateSnapshot]] = [:]
        var writes: UInt64 = 0
    }
    /// Past this many entries a map is emptied (a bound on memory, not an LRU).
    private let capacity = 200_000

    public init(ttl: Duration) {
        freshness = Freshness(ttl)
        otherProcesses = OtherProcessWrites(ttl: ttl)
    }

    /// Whether what was read at `readAt` (monotonic nanoseconds) may still be trusted.
    func isFresh(_ readAt: UInt64) -> Bool {
        freshness.isFresh(readAt) || otherProcesses.vouches(for: readAt)
    }

    private static func key(_ customerId: String, _ environment: Environment) -> String { customerId + "|" + environment.rawValue }
    private static func key(app appId: String, appUserId: String) -> String { appId + "|" + appUserId }

    /// A state still fresh and current at `now` (server time).
    func state(customer customerId: String, environment: Environment, now: Int64) -> StateSnapshot? {
        guard let hit = states.withLockedValue({ $0[Self.key(customerId, environment)] }), isFresh(hit.madeAt),
            hit.isCurrent(at: now)
        else { return nil }
        return hit
    }

    func remember(customer customerId: String, environment: Environment, _ snapshot: StateSnapshot) {
        states.withLockedValue { cache in
            if cache.count >= capacity { cache.removeAll(keepingCapacity: true) }
            cache[Self.key(customerId, environment)] = snapshot
        }
    }

    /// After a commit: the new states (one per environment of the app) replace the cached ones, and the states that
    /// combined the old ones are dropped.
    func remember(_ recomputed: RecomputedCustomer) {
        combined.withLockedValue {
            $0.writes &+= 1
            _ = $0.byCustomer.removeValue(forKey: recomputed.customerId)
        }
        for (environment, snapshot) in recomputed.states {
            remember(customer: recomputed.customerId, environment: environment, snapshot)
        }
    }

    /// Drops every cached state (after a catalog or configuration change).
    func forgetStates() {
        states.withLockedValue { $0.removeAll() }
        combined.withLockedValue {
            $0.writes &+= 1
            $0.byCustomer.removeAll()
        }
    }

    /// A state covering several environments, still fresh and current at `now`.
    func combinedState(customer customerId: String, current: Environment?, now: Int64) -> StateSnapshot? {
        guard let hit = combined.withLockedValue({ $0.byCustomer[customerId]?[current?.rawValue ?? ""] }), isFresh(hit.madeAt),
            hit.isCurrent(at: now)
        else { return nil }
        return hit
    }

    /// The count of state writes so far, read before the parts of a combination are.
    var stateWrites: UInt64 { combined.withLockedValue { $0.writes } }

    /// Keeps a combination, unless a state was written since `writesBefore` (it may be older than that write).
    func rememberCombined(customer customerId: String, current: Environment?, _ snapshot: StateSnapshot, writesBefore: UInt64) {
        combined.withLockedValue { cache in
            guard cache.writes == writesBefore else { return }
            if cache.byCustomer.count >= capacity { cache.byCustomer.removeAll(keepingCapacity: true) }
            cache.byCustomer[customerId, default: [:]][current?.rawValue ?? ""] = snapshot
        }
    }

    func customerId(app appId: String, appUserId: String) -> String? {
        guard let hit = customerIds.withLockedValue({ $0[Self.key(app: appId, appUserId: appUserId)] }), isFresh(hit.at)
        else { return nil }
        return hit.customerId
    }

    /// What a read begun at `readAt` found an app user id naming.
    func remember(app appId: String, appUserId: String, customerId: String, readAt: UInt64) {
        customerIds.withLockedValue { ids in
            if ids.count >= capacity { ids.removeAll(keepingCapacity: true) }
            ids[Self.key(app: appId, appUserId: appUserId)] = (customerId, readAt)
        }
    }

    /// After a merge, names may lead to another customer: drop the app's cached names (a rare, whole-cache pass).
    func forgetCustomerIds(app appId: String) {
        customerIds.withLockedValue { $0 = $0.filter { !$0.key.hasPrefix(appId + "|") } }
        settledNames.withLockedValue { $0[appId] = (generation: -1, customers: [:]) }
    }

    // MARK: settled names

    /// Names kept past the TTL (the placement route's): valid while the app's identity generation (its latest merge or
    /// alias, which anyone can read from the database) is the one last seen. A merge on this server empties the app's
    /// names at once; one on another server, when the generation is next read (the placement catalog, every second).
    /// Otherwise an app user id never changes its customer, so assigned customers cost no query.
    private let settledNames = NIOLockedValueBox<[String: (generation: Int64, customers: [String: String])]>([:])

    func settledCustomerId(app appId: String, appUserId: String) -> String? {
        settledNames.withLockedValue { $0[appId]?.customers[appUserId] }
    }

    func rememberSettled(app appId: String, appUserId: String, customerId: String) {
        settledNames.withLockedValue { names in
            var entry = names.removeValue(forKey: appId) ?? (generation: -1, customers: [:])
            if entry.customers.count >= capacity { entry.customers.removeAll(keepingCapacity: true) }
            entry.customers[appUserId] = customerId
            names[appId] = entry
        }
    }

    /// The app's identity generation as just read: a new one empties the app's settled names.
    func observeIdentityGeneration(_ generation: Int64, app appId: String) {
        settledNames.withLockedValue { names in
            if names[appId]?.generation != generation { names[appId] = (generation, [:]) }
        }
    }

    /// The state of a customer the server has never heard of, as `view` covers it.
    func newCustomer(_ app: AppRuntime, view: StateView) throws(CoreError) -> StateSnapshot {
        guard case .every(let environments, let current) = view else { return try newCustomer(app, environment: view.environment) }
        let key = app.id + "|*" + (current?.rawValue ?? "") + "|" + String(app.updatedAt)
        if let hit = newCustomers.withLockedValue({ $0[key] }) { return hit }
        var parts: [StateSnapshot] = []
        for environment in environments { parts.append(try newCustomer(app, environment: environment)) }
        let snapshot = try StateSnapshot.combining(parts, environments: environments, current: current)
        newCustomers.withLockedValue { $0[key] = snapshot }
        return snapshot
    }

    /// The state of a customer the server has never heard of (no facts), per app configuration and environment.
    func newCustomer(_ app: AppRuntime, environment: Environment) throws(CoreError) -> StateSnapshot {
        // Keyed by the configuration's version, not by when it was loaded: a reload every second must not add entries.
        let key = app.id + "|" + environment.rawValue + "|" + String(app.updatedAt)
        if let hit = newCustomers.withLockedValue({ $0[key] }) { return hit }
        let snapshot = try StateSnapshot(
            state: EntitlementEngine.state(
                catalog: app.config.catalog, facts: [], now: Timestamp(millisecondsSince1970: 0), environment: environment))
        newCustomers.withLockedValue { $0[key] = snapshot }
        return snapshot
    }
}
