import AppStore
import Crypto
import Entitlements
import Foundation

/// A customer's state in one environment, encoded once: the JSON body, its ETag and when it next changes.
///
/// A state read back from the database is kept as its JSON (the customer API sends those bytes as they are) and
/// decoded only when something needs the values (the RevenueCat shape).
public struct StateSnapshot: Sendable {
    /// `CustomerState` as JSON with sorted keys.
    public let json: [UInt8]
    public let etag: String
    /// When the state next changes with time alone (ms since 1970), if it does.
    public let nextChangeAt: Int64?
    /// When what it holds was read from the database (computed in a write transaction: when it was computed), on the
    /// monotonic clock (the cache's lifetime).
    let madeAt: UInt64
    private let decoded: CustomerState?

    private static let decoder = JSONDecoder()

    init(state: CustomerState, madeAt: UInt64 = Freshness.now) throws(CoreError) {
        do { json = Array(try JSONEncoder.sortedKeys.encode(state)) } catch { throw .internalError("the state does not encode: \(error)") }
        decoded = state
        etag = Self.etag(json)
        nextChangeAt = state.nextChangeAt?.millisecondsSince1970
        self.madeAt = madeAt
    }

    /// The states of several environments (in `environments`' order) as one (``CustomerState/combining(_:current:)``),
    /// as fresh as the stalest of them.
    static func combining(_ parts: [StateSnapshot], environments: [Environment], current: Environment?) throws(CoreError) -> StateSnapshot {
        var states: [EnvironmentState] = []
        states.reserveCapacity(parts.count)
        for (part, environment) in zip(parts, environments) {
            states.append(EnvironmentState(environment: environment, state: try part.state()))
        }
        return try StateSnapshot(
            state: CustomerState.combining(states, current: current), madeAt: parts.map(\.madeAt).min() ?? Freshness.now)
    }

    /// A stored state: its JSON and the `nextChangeAt` stored beside it, read by a read begun at `readAt`.
    init(json: String, nextChangeAt: Int64?, readAt: UInt64) {
        self.json = Array(json.utf8)
        decoded = nil
        etag = Self.etag(self.json)
        self.nextChangeAt = nextChangeAt
        madeAt = readAt
    }

    private static func etag(_ json: [UInt8]) -> String {
        "\"" + Hex.encode(SHA256.hash(data: json).prefix(12)) + "\""
    }

    /// The state's values.
    public func state() throws(CoreError) -> CustomerState {
        if let decoded { return decoded }
        do {
            return try Self.decoder.decode(CustomerState.self, from: Data(json))
        } catch {
            throw .internalError("a stored state does not decode: \(DecodingErrorDescription.describe(error))")
        }
    }

    /// Still right at `now` (server time).
    func isCurrent(at now: Int64) -> Bool { nextChangeAt.map { now < $0 } ?? true }
}

/// A customer's states after a recomputation, one per environment of the app.
public struct RecomputedCustomer: Sendable {
    public var appId: String
    public var customerId: String
    public var states: [Environment: StateSnapshot]
}
