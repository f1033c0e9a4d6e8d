import AppStore
import Crypto
import Entitlements
import Foundation
import NIOConcurrencyHelpers
import Storage

/// A customer's state in one environment, encoded once: the JSON body, its ETag and when it next changes.
///
/// A state read back from the database is kept as its JSON (the customer API sends those bytes as they are) and
/// decoded only when something needs the values (the RevenueCat shape).
public struct StateSnapshot: Sendable {
    /// `CustomerState` as JSON with sorted keys.
    public let json: [UInt8]
    public let etag: String
    public let nextChangeAt: Int64?
    let cachedAt: UInt64
    private let decoded: CustomerState?

    init(state: CustomerState, now: UInt64 = DispatchTime.now().uptimeNanoseconds) throws(APIError) {
        do { json = Array(try JSONEncoder.api.encode(state)) } catch { throw .internalError("the state does not encode: \(error)") }
        decoded = state
        etag = Self.etag(json)
        nextChangeAt = state.nextChangeAt?.millisecondsSince1970
        cachedAt = now
    }

    /// A stored state: its JSON and the `nextChangeAt` stored beside it.
    init(json: String, nextChangeAt: Int64?, now: UInt64 = DispatchTime.now().uptimeNanoseconds) {
        self.json = Array(json.utf8)
        decoded = nil
        etag = Self.etag(self.json)
        self.nextChangeAt = nextChangeAt
        cachedAt = now
    }

    private static func etag(_ json: [UInt8]) -> String {
        "\"" + Hex.encode(SHA256.hash(data: json).prefix(12)) + "\""
    }

    /// The state's values.
    func state() throws(APIError) -> CustomerState {
        if let decoded { return decoded }
        do {
            return try RequestBody.decoder.decode(CustomerState.self, from: Data(json))
        } catch {
            throw .internalError("a stored state does not decode: \(DecodingErrorDescription.describe(error))")
        }
    }

    /// Still right at `now` (server time).
    func isCurrent(at now: Int64) -> Bool { nextChangeAt.map { now < $0 } ?? true }
}

/// Computes customers' states from their stored facts, records their events, and keeps the latest states in memory.
///
/// The memory cache holds a state for `ttl` at most (another process sharing the database may have written since)
/// and never past its `nextChangeAt`; this process's own writes replace entries at once.
public final class CustomerStates: Sendable {
    let ttlNanoseconds: UInt64
    let cache = NIOLockedValueBox<[String: StateSnapshot]>([:])
    private let userIds = NIOLockedValueBox<[String: (customerId: String, at: UInt64)]>([:])
    private let capacity = 200_000
    private let newCustomers = NIOLockedValueBox<[String: StateSnapshot]>([:])

    public init(ttl: Duration = .seconds(1)) {
        ttlNanoseconds = UInt64(ttl.components.seconds) * 1_000_000_000 + UInt64(ttl.components.attoseconds / 1_000_000_000)
    }

    private static func key(_ customerId: String, _ environment: Environment) -> String { customerId + "|" + environment.rawValue }

    private func fresh(_ at: UInt64) -> Bool { DispatchTime.now().uptimeNanoseconds &- at < ttlNanoseconds }

    func cached(customer customerId: String, environment: Environment, now: Int64) -> StateSnapshot? {
        guard let hit = cache.withLockedValue({ $0[Self.key(customerId, environment)] }), fresh(hit.cachedAt), hit.isCurrent(at: now)
        else { return nil }
        return hit
    }

    func remember(customer customerId: String, environment: Environment, _ snapshot: StateSnapshot) {
        cache.withLockedValue { cache in
            if cache.count >= capacity { cache.removeAll(keepingCapacity: true) }
            cache[Self.key(customerId, environment)] = snapshot
        }
    }

    func cachedCustomerId(app appId: String, appUserId: String) -> String? {
        guard let hit = userIds.withLockedValue({ $0[appId + "|" + appUserId] }), fresh(hit.at) else { return nil }
        return hit.customerId
    }

    func rememberCustomerId(app appId: String, appUserId: String, _ customerId: String) {
        userIds.withLockedValue { ids in
            if ids.count >= capacity { ids.removeAll(keepingCapacity: true) }
            ids[appId + "|" + appUserId] = (customerId, DispatchTime.now().uptimeNanoseconds)
        }
    }

    /// After a merge, names may lead to another customer: drop the app's cached names (a rare, whole-cache pass).
    func forgetCustomerIds(app appId: String) {
        userIds.withLockedValue { $0 = $0.filter { !$0.key.hasPrefix(appId + "|") } }
    }

    /// The state of a customer the server has never heard of (no facts), per app and environment.
    func newCustomer(_ app: AppRuntime, environment: Environment) throws(APIError) -> StateSnapshot {
        // Keyed by the configuration's version, not by when it was loaded: a reload every second must not add entries.
        let key = app.id + "|" + environment.rawValue + "|" + String(app.updatedAt)
        if let hit = newCustomers.withLockedValue({ $0[key] }) { return hit }
        let snapshot = try StateSnapshot(state: EntitlementEngine.state(
            catalog: app.config.catalog, facts: [], now: Timestamp(millisecondsSince1970: 0), environment: environment))
        newCustomers.withLockedValue { $0[key] = snapshot }
        return snapshot
    }

    /// Computes the customer's state in each of the app's environments from every stored fact it owns, records the
    /// events not recorded yet, and stores the states. Runs inside the caller's transaction.
    func recompute(
        _ session: StorageSession, app: AppRuntime, customerId: String, now: Int64
    ) async throws -> [Environment: StateSnapshot] {
        let originals = try await session.originalTransactionIds(customer: customerId)
        let facts = try FactCoding.facts(try await session.facts(app: app.id, originalTransactionIds: originals))
        var snapshots: [Environment: StateSnapshot] = [:]
        for environment in app.config.allowedEnvironments {
            let evaluation = PreparedCustomer(catalog: app.config.catalog, facts: facts, environment: environment)
                .evaluate(at: Timestamp(millisecondsSince1970: now))
            var records: [EventRecord] = []
            records.reserveCapacity(evaluation.events.count)
            for event in evaluation.events {
                let payload: Data
                do { payload = try JSONEncoder.api.encode(event) } catch { throw APIError.internalError("an event does not encode: \(error)") }
                records.append(EventRecord(
                    appId: app.id, eventId: event.id, originalTransactionId: event.originalTransactionId, customerId: customerId,
                    environment: event.environment?.rawValue ?? environment.rawValue, type: event.type.rawValue,
                    effectiveAt: event.effectiveAt.millisecondsSince1970, payload: String(decoding: payload, as: UTF8.self),
                    recordedAt: now))
            }
            try await session.syncEvents(app: app.id, environment: environment.rawValue, originalTransactionIds: originals,
                                         derived: records, at: now)
            let snapshot = try StateSnapshot(state: evaluation.state)
            try await session.upsert(StateRecord(
                customerId: customerId, environment: environment.rawValue, state: String(decoding: snapshot.json, as: UTF8.self),
                nextChangeAt: snapshot.nextChangeAt, computedAt: now))
            snapshots[environment] = snapshot
        }
        return snapshots
    }

    /// After a commit: the new states (one per environment of the app) replace the cached ones.
    func committed(customer customerId: String, _ snapshots: [Environment: StateSnapshot]) {
        for (environment, snapshot) in snapshots { remember(customer: customerId, environment: environment, snapshot) }
    }
}

extension CustomerStates {
    /// Drops every cached state (after a catalog or configuration change).
    func forgetAll() {
        cache.withLockedValue { $0.removeAll() }
    }
}
