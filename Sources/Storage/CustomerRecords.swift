import Foundation
import SQLKit

/// A customer: the owner of original transactions, named by one or more app user ids.
public struct CustomerRecord: Sendable, Hashable {
    public var id: String
    public var appId: String
    /// Created from a notification that named neither a known app user nor a known transaction; merged when the app
    /// posts that transaction for a real app user id.
    public var anonymous: Bool
    public var createdAt: Int64

    public init(id: String, appId: String, anonymous: Bool, createdAt: Int64) {
        self.id = id
        self.appId = appId
        self.anonymous = anonymous
        self.createdAt = createdAt
    }
}

/// What an audit row records (the `action` column).
public enum AuditAction: String, Sendable, Hashable, CaseIterable {
    /// One customer's transactions and names joined another customer.
    case merge
    /// An original transaction moved to another named customer (the app's transfer policy).
    case transfer
    /// A customer got another app user id.
    case alias
    /// A paywall was created, changed or deleted (`detail` says which and how).
    case paywall
    /// A placement was created or changed.
    case placement
    /// An experiment was created, changed, started, paused, stopped, rolled back or given its winner.
    case experiment
}

/// One merge, transfer or alias, kept for audit.
public struct AuditRecord: Sendable, Hashable {
    public var seq: Int64?
    public var appId: String
    public var action: AuditAction
    public var originalTransactionId: String?
    public var fromCustomer: String?
    public var toCustomer: String?
    public var detail: String
    public var at: Int64

    public init(
        seq: Int64? = nil, appId: String, action: AuditAction, originalTransactionId: String? = nil,
        fromCustomer: String? = nil, toCustomer: String? = nil, detail: String, at: Int64
    ) {
        self.seq = seq
        self.appId = appId
        self.action = action
        self.originalTransactionId = originalTransactionId
        self.fromCustomer = fromCustomer
        self.toCustomer = toCustomer
        self.detail = detail
        self.at = at
    }
}

extension StorageSession {
    /// The customer an app user id names.
    ///
    /// This and `ownerRecord` look the customer up through a subquery, not a join: SQLite propagates a join's
    /// constants into its plan, which marks the statement to be compiled again whenever its binds change (SQLite's
    /// statement status REPREPARE counted one for every call), so a kept statement (`SQLiteHandle`) was compiled anew
    /// each time.
    public func customer(app appId: String, appUserId: String) async throws -> CustomerRecord? {
        try await sql.raw(
            """
            SELECT id, app_id, anonymous, created_at FROM customers WHERE id =
            (SELECT customer_id FROM app_users WHERE app_id = \(bind: appId) AND app_user_id = \(bind: appUserId))
            """
        ).first().map(Self.customerRecord)
    }

    public func customer(id: String) async throws -> CustomerRecord? {
        try await sql.select().columns("id", "app_id", "anonymous", "created_at").from("customers")
            .where("id", .equal, id).first().map(Self.customerRecord)
    }

    /// Creates a customer named `appUserId`, or returns the one that name already points to (another writer may have
    /// created it first).
    /// `environment`: where the customer is first seen, when no fact of it tells (a placement read); facts tell their
    /// own (`CustomerEnvironments`).
    public func findOrCreateCustomer(
        app appId: String, appUserId: String, anonymous: Bool, newId: String, at now: Int64, environment: String? = nil
    ) async throws -> CustomerRecord {
        if let existing = try await customer(app: appId, appUserId: appUserId) { return existing }
        names?.willName(app: appId, appUserId: appUserId)
        try await sql.insert(into: "customers").columns("id", "app_id", "anonymous", "created_at", "first_environment")
            .values(SQLBind(newId), SQLBind(appId), SQLBind(anonymous ? 1 : 0), SQLBind(now), SQLBind(environment)).run()
        try await sql.insert(into: "app_users").columns("app_id", "app_user_id", "customer_id", "created_at")
            .values(SQLBind(appId), SQLBind(appUserId), SQLBind(newId), SQLBind(now))
            .ignoringConflicts(with: ["app_id", "app_user_id"]).run()
        guard let resolved = try await customer(app: appId, appUserId: appUserId) else {
            throw StorageError(.corrupt, "app user \(appUserId) vanished while it was created")
        }
        if resolved.id != newId {
            try await sql.delete(from: "customers").where("id", .equal, newId).run()
        }
        return resolved
    }

    /// Holds the customer's row until the transaction ends (PostgreSQL), so that two writers computing the same
    /// customer's state take turns. SQLite's single writer takes turns already.
    public func lockCustomer(id: String) async throws {
        guard kind == .postgres else { return }
        try await sql.raw("SELECT id FROM customers WHERE id = \(bind: id) FOR UPDATE").run()
    }

    /// Names the customer by another app user id too (an alias); false if that id already names someone.
    @discardableResult
    public func addAppUserId(app appId: String, appUserId: String, customer customerId: String, at now: Int64) async throws -> Bool {
        names?.willName(app: appId, appUserId: appUserId)
        let rows = try await sql.insert(into: "app_users").columns("app_id", "app_user_id", "customer_id", "created_at")
            .values(SQLBind(appId), SQLBind(appUserId), SQLBind(customerId), SQLBind(now))
            .ignoringConflicts(with: ["app_id", "app_user_id"])
            .returning("app_user_id").all()
        return !rows.isEmpty
    }

    /// The customer that owns an original transaction, and whether that customer is anonymous, in one query.
    public func ownerRecord(app appId: String, originalTransactionId: String) async throws -> CustomerRecord? {
        try await sql.raw(
            """
            SELECT id, app_id, anonymous, created_at FROM customers WHERE id =
            (SELECT customer_id FROM ownership WHERE app_id = \(bind: appId) AND original_transaction_id = \(bind: originalTransactionId))
            """
        ).first().map(Self.customerRecord)
    }

    /// The customer that owns an original transaction.
    public func owner(app appId: String, originalTransactionId: String) async throws -> String? {
        try await sql.select().column("customer_id").from("ownership")
            .where("app_id", .equal, appId).where("original_transaction_id", .equal, originalTransactionId)
            .first().map { try $0.decode(column: "customer_id", as: String.self) }
    }

    /// Gives an unowned original transaction to a customer; returns the owner afterwards (the first link wins).
    public func link(app appId: String, originalTransactionId: String, customer customerId: String, at now: Int64) async throws -> String {
        try await sql.insert(into: "ownership").columns("app_id", "original_transaction_id", "customer_id", "linked_at")
            .values(SQLBind(appId), SQLBind(originalTransactionId), SQLBind(customerId), SQLBind(now))
            .ignoringConflicts(with: ["app_id", "original_transaction_id"]).run()
        guard let owner = try await owner(app: appId, originalTransactionId: originalTransactionId) else {
            throw StorageError(.corrupt, "the ownership of \(originalTransactionId) vanished while it was linked")
        }
        return owner
    }

    /// Moves one original transaction to another customer (a transfer).
    public func transfer(app appId: String, originalTransactionId: String, to customerId: String, at now: Int64) async throws {
        try await sql.update("ownership").set("customer_id", to: customerId).set("linked_at", to: now)
            .where("app_id", .equal, appId).where("original_transaction_id", .equal, originalTransactionId).run()
        try await sql.update(Self.refundRequests).set("customer_id", to: customerId)
            .where("app_id", .equal, appId).where("original_transaction_id", .equal, originalTransactionId).run()
    }

    /// Everything `from` owns and every name it has moves to `into`; `from`'s derived state is dropped.
    public func merge(customer from: String, into: String) async throws {
        try await sql.update("ownership").set("customer_id", to: into).where("customer_id", .equal, from).run()
        try await sql.update("app_users").set("customer_id", to: into).where("customer_id", .equal, from).run()
        try await sql.delete(from: "customer_states").where("customer_id", .equal, from).run()
        try await sql.update(Self.refundRequests).set("customer_id", to: into).where("customer_id", .equal, from).run()
        try await mergeExperiments(customer: from, into: into)
    }

    public func originalTransactionIds(customer customerId: String) async throws -> [String] {
        try await originalTransactionIds(customer: customerId, with: OriginalTransactions.self).originals
    }

    /// The customer's original transactions (in order) and what else `Query` reads beside them in the same row: a
    /// query made by `originalTransactionsQuery(_:beside:)`, run with the customer's id as its one parameter.
    public func originalTransactionIds<Query: FixedQuery>(customer customerId: String, with query: Query.Type) async throws -> (
        originals: [String], beside: String?
    ) {
        guard let row = try await run(query, [customerId]).first else { return ([], nil) }
        let text = try row.decode(column: "originals", as: String.self)
        let originals: [String]
        do { originals = try JSONDecoder().decode([String].self, from: Data(text.utf8)) } catch {
            throw StorageError(.corrupt, "the original transactions of \(customerId) do not read back: \(error)")
        }
        return (originals.sorted(), try row.decode(column: "beside", as: String?.self))
    }

    /// The text of a query for `originalTransactionIds(customer:with:)`: one row of the customer's (`$1`) original
    /// transactions as one JSON array (`originals`) and `beside`, a scalar subquery that may read `$1` too.
    public static func originalTransactionsQuery(_ kind: StorageDatabase.Kind, beside: String) -> String {
        let originals =
            kind == .postgres ? "COALESCE(json_agg(original_transaction_id), '[]')::text" : "json_group_array(original_transaction_id)"
        return "SELECT (SELECT \(originals) FROM ownership WHERE customer_id = $1) AS originals, \(beside) AS beside"
    }

    public func insertAudit(_ record: AuditRecord) async throws {
        try await sql.insert(into: "audit_log")
            .columns("app_id", "action", "original_transaction_id", "from_customer", "to_customer", "detail", "at")
            .values(
                SQLBind(record.appId), SQLBind(record.action.rawValue), SQLBind(record.originalTransactionId),
                SQLBind(record.fromCustomer), SQLBind(record.toCustomer), SQLBind(record.detail), SQLBind(record.at)
            )
            .run()
    }

    /// The latest merge or alias of an app (0: none yet): while it stays the same, every app user id names the customer
    /// it named before.
    public func identityGeneration(app appId: String) async throws -> Int64 {
        try await sql.raw(
            """
            SELECT seq FROM audit_log WHERE app_id = \(bind: appId) AND action IN ('merge', 'alias') ORDER BY seq DESC LIMIT 1
            """
        ).first()?.decode(column: "seq", as: Int64.self) ?? 0
    }

    public func audit(app appId: String, limit: Int = 100) async throws -> [AuditRecord] {
        try await sql.select()
            .columns("seq", "app_id", "action", "original_transaction_id", "from_customer", "to_customer", "detail", "at")
            .from("audit_log").where("app_id", .equal, appId).orderBy("seq").limit(limit).all()
            .map { row in
                let action = try row.decode(column: "action", as: String.self)
                guard let known = AuditAction(rawValue: action) else {
                    throw StorageError(.corrupt, "an audit row has the unknown action '\(action)'")
                }
                return AuditRecord(
                    seq: try row.decode(column: "seq", as: Int64.self),
                    appId: try row.decode(column: "app_id", as: String.self),
                    action: known,
                    originalTransactionId: try row.decode(column: "original_transaction_id", as: String?.self),
                    fromCustomer: try row.decode(column: "from_customer", as: String?.self),
                    toCustomer: try row.decode(column: "to_customer", as: String?.self),
                    detail: try row.decode(column: "detail", as: String.self),
                    at: try row.decode(column: "at", as: Int64.self))
            }
    }

    private static func customerRecord(_ row: any SQLRow) throws -> CustomerRecord {
        CustomerRecord(
            id: try row.decode(column: "id", as: String.self),
            appId: try row.decode(column: "app_id", as: String.self),
            anonymous: try row.decode(column: "anonymous", as: Int64.self) != 0,
            createdAt: try row.decode(column: "created_at", as: Int64.self))
    }
}

extension StorageSession {
    /// The customer an app user id names and its stored state in one environment, in one query (the customer API's
    /// read path).
    public func customerAndState(app appId: String, appUserId: String, environment: String) async throws -> (
        customerId: String, state: StateRecord?
    )? {
        guard
            let row = try await sql.raw(
                """
                SELECT u.customer_id, s.state, s.next_change_at, s.computed_at FROM app_users u
                LEFT JOIN customer_states s ON s.customer_id = u.customer_id AND s.environment = \(bind: environment)
                WHERE u.app_id = \(bind: appId) AND u.app_user_id = \(bind: appUserId)
                """
            ).first()
        else { return nil }
        let customerId = try row.decode(column: "customer_id", as: String.self)
        guard let json = try row.decode(column: "state", as: String?.self) else { return (customerId, nil) }
        return (
            customerId,
            StateRecord(
                customerId: customerId, environment: environment, state: json,
                nextChangeAt: try row.decode(column: "next_change_at", as: Int64?.self),
                computedAt: try row.decode(column: "computed_at", as: Int64.self))
        )
    }
}

extension StorageSession {
    /// An app's customer ids after `after`, in order: pages for jobs that visit every customer.
    public func customerIds(app appId: String, after: String?, limit: Int) async throws -> [String] {
        var query = sql.select().column("id").from("customers").where("app_id", .equal, appId)
        if let after { query = query.where("id", .greaterThan, after) }
        return try await query.orderBy("id").limit(limit).all().map { try $0.decode(column: "id", as: String.self) }
    }
}

/// A customer's original transactions alone.
enum OriginalTransactions: FixedQuery {
    static let name = "storekeeper_original_transactions"
    static let postgres = StorageSession.originalTransactionsQuery(.postgres, beside: "NULL")
    static let sqlite: String? = StorageSession.originalTransactionsQuery(.sqlite, beside: "NULL")
}
