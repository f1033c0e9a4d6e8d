import AppStore
import Foundation
import Storage

/// A customer's state as read: the customer behind the name (nil for one never seen) and the state.
public struct CustomerRead: Sendable {
    public var customerId: String?
    public var snapshot: StateSnapshot
}

/// What the customer API reads: states (from memory, from the stored state while it is current, or computed anew),
/// events, and when a customer was first seen.
public struct CustomerReads: Sendable {
    let database: StorageDatabase
    let cache: CustomerStateCache
    let recomputer: StateRecomputer
    let clock: @Sendable () -> Date

    /// The state of the customer an app user id names, for a caller allowed to read it, with one database read at
    /// most when the memory caches cannot answer (they also remember app user ids that name no one): the customer
    /// API's read path.
    public func state(of appUserId: String, caller: Caller, environment: Environment) async throws -> CustomerRead {
        let appUserId = try AppUserIds.validate(appUserId)
        try AppUserIds.checkReadable(appUserId, by: caller.keyKind)
        let app = caller.app
        let now = clock().millisecondsSince1970
        if let customerId = cache.customerId(app: app.id, appUserId: appUserId),
            let cached = cache.state(customer: customerId, environment: environment, now: now)
        {
            return CustomerRead(customerId: customerId, snapshot: cached)
        }
        let absent = database.absentAppUsers
        if absent.contains(app: app.id, appUserId: appUserId, isFresh: cache.isFresh) {
            return CustomerRead(customerId: nil, snapshot: try cache.newCustomer(app, environment: environment))
        }
        // One instant for both: what this read finds is as of then at least.
        let mark = absent.mark()
        let readAt = mark.readAt
        guard
            let found = try await database.reading({
                try await $0.customerAndState(app: app.id, appUserId: appUserId, environment: environment.rawValue)
            })
        else {
            absent.remember(app: app.id, appUserId: appUserId, readSince: mark)
            return CustomerRead(customerId: nil, snapshot: try cache.newCustomer(app, environment: environment))
        }
        cache.remember(app: app.id, appUserId: appUserId, customerId: found.customerId, readAt: readAt)
        let snapshot = try await current(
            app: app, customerId: found.customerId, stored: found.state, readAt: readAt, environment: environment, now: now)
        return CustomerRead(customerId: found.customerId, snapshot: snapshot)
    }

    /// The state of the customer an app user id names, as `view` covers it: one environment (the read above), or every
    /// environment of the app combined (each read as above, the combination cached until any of them changes).
    public func state(of appUserId: String, caller: Caller, view: StateView) async throws -> CustomerRead {
        guard case .every(let environments, let current) = view, let first = environments.first else {
            return try await state(of: appUserId, caller: caller, environment: view.environment)
        }
        let read = try await state(of: appUserId, caller: caller, environment: first)
        guard let customerId = read.customerId else {
            return CustomerRead(customerId: nil, snapshot: try cache.newCustomer(caller.app, view: view))
        }
        // The first environment's state is in the cache now: the combination reads it from there.
        return CustomerRead(
            customerId: customerId,
            snapshot: try await combined(customerId: customerId, app: caller.app, environments: environments, current: current))
    }

    /// The state of a known customer (nil: one never seen), as `view` covers it.
    public func state(customerId: String?, app: AppRuntime, view: StateView) async throws -> StateSnapshot {
        guard case .every(let environments, let current) = view, let customerId else {
            guard let customerId else { return try cache.newCustomer(app, view: view) }
            return try await state(customerId: customerId, app: app, environment: view.environment)
        }
        return try await combined(customerId: customerId, app: app, environments: environments, current: current)
    }

    /// Every environment's state of a customer as one.
    private func combined(customerId: String, app: AppRuntime, environments: [Environment], current: Environment?) async throws
        -> StateSnapshot
    {
        let now = clock().millisecondsSince1970
        if let hit = cache.combinedState(customer: customerId, current: current, now: now) { return hit }
        let writesBefore = cache.stateWrites
        var parts: [StateSnapshot] = []
        parts.reserveCapacity(environments.count)
        for environment in environments { parts.append(try await state(customerId: customerId, app: app, environment: environment)) }
        let snapshot = try StateSnapshot.combining(parts, environments: environments, current: current)
        cache.rememberCombined(customer: customerId, current: current, snapshot, writesBefore: writesBefore)
        return snapshot
    }

    /// The state of a known customer (nil: one never seen).
    public func state(customerId: String?, app: AppRuntime, environment: Environment) async throws -> StateSnapshot {
        let now = clock().millisecondsSince1970
        guard let customerId else { return try cache.newCustomer(app, environment: environment) }
        if let cached = cache.state(customer: customerId, environment: environment, now: now) { return cached }
        let readAt = Freshness.now
        let stored = try await database.reading { try await $0.state(customer: customerId, environment: environment.rawValue) }
        return try await current(app: app, customerId: customerId, stored: stored, readAt: readAt, environment: environment, now: now)
    }

    /// The customer behind an app user id, or nil for one the server has never seen.
    public func customerId(of appUserId: String, app: AppRuntime) async throws -> String? {
        let appUserId = try AppUserIds.validate(appUserId)
        if let cached = cache.customerId(app: app.id, appUserId: appUserId) { return cached }
        let readAt = Freshness.now
        guard let customer = try await database.reading({ try await $0.customer(app: app.id, appUserId: appUserId) }) else {
            return nil
        }
        cache.remember(app: app.id, appUserId: appUserId, customerId: customer.id, readAt: readAt)
        return customer.id
    }

    /// When a customer was first seen (created), ms since 1970.
    public func firstSeen(customerId: String) async throws -> Int64? {
        try await database.reading { try await $0.customer(id: customerId)?.createdAt }
    }

    /// A page of the events of the customer an app user id names (an empty page for one never seen).
    public func events(of appUserId: String, app: AppRuntime, query: EventQuery) async throws -> EventPage {
        guard let customerId = try await customerId(of: appUserId, app: app) else {
            return try EventPage([], after: query.after, names: [:])
        }
        return try await database.reading { session in
            let originals = try await session.originalTransactionIds(customer: customerId)
            let records = try await session.events(app: app.id, originalTransactionIds: originals, after: query.after, limit: query.limit)
            return try await EventPage.read(records, after: query.after, session: session)
        }
    }

    /// A stored state if it is still right (current at `now`, computed after the app's configuration last changed),
    /// otherwise one computed anew (recording the events that time brought, such as an expiry).
    private func current(
        app: AppRuntime, customerId: String, stored: StateRecord?, readAt: UInt64, environment: Environment, now: Int64
    ) async throws -> StateSnapshot {
        if let stored, stored.nextChangeAt.map({ now < $0 }) ?? true, stored.computedAt <= now, stored.computedAt >= app.updatedAt {
            let snapshot = StateSnapshot(json: stored.state, nextChangeAt: stored.nextChangeAt, readAt: readAt)
            cache.remember(customer: customerId, environment: environment, snapshot)
            return snapshot
        }
        let recomputed = try await recomputer.refresh(app: app, customerId: customerId, now: now)
        return try recomputed.states[environment] ?? cache.newCustomer(app, environment: environment)
    }
}
