import Analytics
import AppStore
import Entitlements
import Foundation
import Storage

/// Computes customers' states from their stored facts with the entitlement engine, records the events not recorded
/// yet, and stores the states: the derived data, always written in the same transaction as the facts it comes from.
public struct StateRecomputer: Sendable {
    let database: StorageDatabase
    let cache: CustomerStateCache
    /// Woken after each commit of an app with an enabled destination: the events it recorded may have deliveries to send.
    let outbox: OutboxSignal

    /// Recomputes one customer in each of the app's environments, inside the caller's transaction (which must have
    /// locked the customer). Once that transaction commits, hand the result to `committed(_:)`.
    func recompute(_ session: StorageSession, app: AppRuntime, customerId: String, now: Int64) async throws -> RecomputedCustomer {
        // The customer's stored ledger comes with its original transactions, in the same query.
        let read = try await session.originalTransactionIdsAndLedger(customer: customerId)
        let originals = read.originals
        let storedLedger = read.ledger
        let facts = try FactCoding.facts(try await session.facts(app: app.id, originalTransactionIds: originals))
        var states: [Environment: StateSnapshot] = [:]
        let ledger = LedgerBuilder(appId: app.id, catalog: app.config.catalog, proceeds: app.config.proceeds ?? ProceedsSettings())
        for environment in app.config.allowedEnvironments {
            let prepared = PreparedCustomer(catalog: app.config.catalog, facts: facts, environment: environment)
            let evaluation = prepared.evaluate(at: Timestamp(millisecondsSince1970: now))
            let records = try evaluation.events.map { event throws(CoreError) in
                try Self.record(event, app: app, customerId: customerId, environment: environment, now: now)
            }
            let snapshot = try StateSnapshot(state: evaluation.state)
            let state = StateRecord(
                customerId: customerId, environment: environment.rawValue, state: String(decoding: snapshot.json, as: UTF8.self),
                nextChangeAt: snapshot.nextChangeAt, computedAt: now)
            let events: @Sendable () async throws -> Void = {
                try await session.syncEvents(
                    app: app.id, environment: environment.rawValue, originalTransactionIds: originals, derived: records, at: now)
            }
            // The money ledger, in the same transaction: never behind the state.
            try await session.storeRecomputed(
                state,
                ledger: {
                    ledger.entries(
                        customerId: customerId, environment: environment, purchases: prepared.purchases, state: evaluation.state,
                        events: evaluation.events)
                }, stored: storedLedger.rows(in: environment.rawValue), after: events)
            states[environment] = snapshot
        }
        return RecomputedCustomer(appId: app.id, customerId: customerId, states: states)
    }

    /// Locks and recomputes a customer inside the caller's transaction.
    func lockAndRecompute(_ session: StorageSession, app: AppRuntime, customerId: String, now: Int64) async throws -> RecomputedCustomer {
        try await session.lockCustomer(id: customerId)
        return try await recompute(session, app: app, customerId: customerId, now: now)
    }

    /// After the commit: the new states replace the cached ones.
    func committed(_ recomputed: RecomputedCustomer) {
        cache.remember(recomputed)
        outbox.poke(app: recomputed.appId)
    }

    /// Recomputes one customer now, in a transaction of its own.
    @discardableResult
    public func refresh(app: AppRuntime, customerId: String, now: Int64) async throws -> RecomputedCustomer {
        let recomputed = try await database.writing { session in
            try await lockAndRecompute(session, app: app, customerId: customerId, now: now)
        }
        committed(recomputed)
        return recomputed
    }

    private static func record(
        _ event: SubscriptionEvent, app: AppRuntime, customerId: String, environment: Environment, now: Int64
    ) throws(CoreError) -> EventRecord {
        let payload: Data
        do { payload = try JSONEncoder.sortedKeys.encode(event) } catch { throw .internalError("an event does not encode: \(error)") }
        return EventRecord(
            appId: app.id, eventId: event.id, originalTransactionId: event.originalTransactionId, customerId: customerId,
            environment: event.environment?.rawValue ?? environment.rawValue, type: event.type.rawValue,
            effectiveAt: event.effectiveAt.millisecondsSince1970, payload: String(decoding: payload, as: UTF8.self),
            recordedAt: now)
    }
}
