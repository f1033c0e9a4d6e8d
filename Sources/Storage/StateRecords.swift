import SQLKit

/// A customer's last computed state in one environment, as JSON.
public struct StateRecord: Sendable, Hashable {
    public var customerId: String
    public var environment: String
    public var state: String
    public var nextChangeAt: Int64?
    public var computedAt: Int64

    public init(customerId: String, environment: String, state: String, nextChangeAt: Int64?, computedAt: Int64) {
        self.customerId = customerId
        self.environment = environment
        self.state = state
        self.nextChangeAt = nextChangeAt
        self.computedAt = computedAt
    }
}

extension StorageSession {
    public func upsert(_ s: StateRecord) async throws {
        try await sql.raw(
            """
            INSERT INTO \(unsafeRaw: Self.stateColumnList)
            VALUES (\(bind: s.customerId), \(bind: s.environment), \(bind: s.state), \(bind: s.nextChangeAt), \(bind: s.computedAt))
            \(unsafeRaw: Self.stateOnConflict)
            """
        ).run()
    }

    /// PostgreSQL's upsert of a state, its columns in `$1`…`$5` as text (`stateBinds`): for a statement that writes it
    /// beside something else (a `FixedQuery`, whose values are bound as text, so the numbers are cast from text).
    public static let postgresStateUpsert =
        "INSERT INTO \(stateColumnList) VALUES ($1, $2, $3, $4::text::bigint, $5::text::bigint) \(stateOnConflict)"
    /// A state's values for `postgresStateUpsert`.
    public static func stateBinds(_ s: StateRecord) -> [String?] {
        [s.customerId, s.environment, s.state, s.nextChangeAt.map { String($0) }, String(s.computedAt)]
    }
    private static let stateColumnList = "customer_states (customer_id, environment, state, next_change_at, computed_at)"
    private static let stateOnConflict = """
        ON CONFLICT (customer_id, environment) DO UPDATE SET
            state = excluded.state, next_change_at = excluded.next_change_at, computed_at = excluded.computed_at
        """

    public func state(customer customerId: String, environment: String) async throws -> StateRecord? {
        try await sql.select().columns(Self.stateColumns)
            .from("customer_states").where("customer_id", .equal, customerId).where("environment", .equal, environment)
            .first().map(Self.stateRecord)
    }

    /// The stored states of several customers, in every environment.
    public func states(customers ids: [String]) async throws -> [StateRecord] {
        guard !ids.isEmpty else { return [] }
        return try await sql.select().columns(Self.stateColumns).from("customer_states").where("customer_id", .in, ids).all()
            .map(Self.stateRecord)
    }

    private static let stateColumns = ["customer_id", "environment", "state", "next_change_at", "computed_at"]

    private static func stateRecord(_ row: any SQLRow) throws -> StateRecord {
        StateRecord(
            customerId: try row.decode(column: "customer_id", as: String.self),
            environment: try row.decode(column: "environment", as: String.self),
            state: try row.decode(column: "state", as: String.self),
            nextChangeAt: try row.decode(column: "next_change_at", as: Int64?.self),
            computedAt: try row.decode(column: "computed_at", as: Int64.self))
    }
}

extension StorageSession {
    /// Customers whose stored state changes by `now` with no new fact (an expiry, a grace period's end), oldest first.
    public func customersDue(at now: Int64, limit: Int) async throws -> [DueCustomer] {
        try await sql.select()
            .column(SQLColumn("customer_id", table: "customer_states")).column(SQLColumn("app_id", table: "customers"))
            .from("customer_states")
            .join("customers", on: SQLColumn("customer_id", table: "customer_states"), .equal, SQLColumn("id", table: "customers"))
            .where(SQLColumn("next_change_at", table: "customer_states"), .lessThanOrEqual, SQLBind(now))
            .orderBy(SQLColumn("next_change_at", table: "customer_states"))
            .limit(limit).all()
            .map {
                DueCustomer(
                    customerId: try $0.decode(column: "customer_id", as: String.self),
                    appId: try $0.decode(column: "app_id", as: String.self))
            }
    }
}

/// A customer whose state changes by itself (an expiry, a grace period's end), and its app.
public struct DueCustomer: Sendable, Hashable {
    public var customerId: String
    public var appId: String
}

extension StorageSession {
    /// Drops the stored states of an app's customers in environments it no longer accepts.
    public func deleteStates(app appId: String, keeping environments: [String]) async throws {
        try await sql.raw(
            """
            DELETE FROM customer_states WHERE customer_id IN (SELECT id FROM customers WHERE app_id = \(bind: appId))
            AND environment NOT IN (\(SQLList(environments.map { SQLBind($0) })))
            """
        ).run()
    }
}
