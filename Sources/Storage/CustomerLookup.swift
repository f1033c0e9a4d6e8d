import SQLKit

/// What the dashboard's customer pages read: a customer found by any name it goes by, its names, and its facts with
/// their raw signed data.
extension StorageSession {
    /// The customers one text names in an app: as a customer id, an app user id or alias, an original transaction
    /// id, or a transaction id. At most a few (a text can be one customer's alias and another's transaction id).
    public func findCustomers(app appId: String, text: String) async throws -> [String] {
        try await sql.raw(
            """
            SELECT id AS customer_id FROM customers WHERE app_id = \(bind: appId) AND id = \(bind: text)
            UNION SELECT customer_id FROM app_users WHERE app_id = \(bind: appId) AND app_user_id = \(bind: text)
            UNION SELECT customer_id FROM ownership WHERE app_id = \(bind: appId) AND original_transaction_id = \(bind: text)
            UNION SELECT o.customer_id FROM transactions t JOIN ownership o
                ON o.app_id = t.app_id AND o.original_transaction_id = t.original_transaction_id
                WHERE t.app_id = \(bind: appId) AND t.transaction_id = \(bind: text)
            """
        ).all().map { try $0.decode(column: "customer_id", as: String.self) }.sorted()
    }

    /// Every app user id (the first name and its aliases) of a customer, oldest first.
    public func appUserIds(customer customerId: String) async throws -> [String] {
        try await sql.select().column("app_user_id").from("app_users").where("customer_id", .equal, customerId)
            .orderBy("created_at").orderBy("app_user_id").all().map { try $0.decode(column: "app_user_id", as: String.self) }
    }

    /// The app user ids of several customers at once, each list oldest first.
    public func appUserIds(customers ids: [String]) async throws -> [String: [String]] {
        guard !ids.isEmpty else { return [:] }
        var names: [String: [String]] = [:]
        for row in try await sql.select().columns("customer_id", "app_user_id").from("app_users").where("customer_id", .in, ids)
            .orderBy("created_at").orderBy("app_user_id").all()
        {
            names[try row.decode(column: "customer_id", as: String.self), default: []]
                .append(try row.decode(column: "app_user_id", as: String.self))
        }
        return names
    }

    /// Every stored version of the transactions of these original transactions, by signing date.
    public func transactionVersions(app appId: String, originalTransactionIds ids: [String]) async throws -> [TransactionRecord] {
        guard !ids.isEmpty else { return [] }
        return try await sql.select().columns(Self.transactionColumns).from("transactions").where("app_id", .equal, appId)
            .where("original_transaction_id", .in, ids).orderBy("signed_date").orderBy("transaction_id").all()
            .map(Self.transactionRecord)
    }

    /// Every stored version of one transaction, by signing date.
    public func transactionVersions(app appId: String, transactionId: String) async throws -> [TransactionRecord] {
        try await sql.select().columns(Self.transactionColumns).from("transactions").where("app_id", .equal, appId)
            .where("transaction_id", .equal, transactionId).orderBy("signed_date").all().map(Self.transactionRecord)
    }

    /// The notifications about these original transactions, by signing date.
    public func notifications(app appId: String, originalTransactionIds ids: [String]) async throws -> [NotificationRecord] {
        guard !ids.isEmpty else { return [] }
        return try await sql.select().columns(Self.notificationColumns).from("notifications").where("app_id", .equal, appId)
            .where("original_transaction_id", .in, ids).orderBy("signed_date").all().map(Self.notificationRecord)
    }

    /// One notification.
    public func notification(app appId: String, uuid: String) async throws -> NotificationRecord? {
        try await sql.select().columns(Self.notificationColumns).from("notifications").where("app_id", .equal, appId)
            .where("notification_uuid", .equal, uuid).first().map(Self.notificationRecord)
    }

    private static let transactionColumns = [
        "app_id", "transaction_id", "version", "original_transaction_id", "environment", "product_id", "signed_date",
        "purchase_date", "expires_date", "revocation_date", "price", "currency", "source", "payload", "signed", "received_at",
    ]

    private static func transactionRecord(_ row: any SQLRow) throws -> TransactionRecord {
        let source = try row.decode(column: "source", as: String.self)
        guard let kind = TransactionSource(rawValue: source) else {
            throw StorageError(.corrupt, "a stored transaction has the unknown source '\(source)'")
        }
        return TransactionRecord(
            appId: try row.decode(column: "app_id", as: String.self),
            transactionId: try row.decode(column: "transaction_id", as: String.self),
            version: try row.decode(column: "version", as: String.self),
            originalTransactionId: try row.decode(column: "original_transaction_id", as: String.self),
            environment: try row.decode(column: "environment", as: String.self),
            productId: try row.decode(column: "product_id", as: String.self),
            signedDate: try row.decode(column: "signed_date", as: Int64.self),
            purchaseDate: try row.decode(column: "purchase_date", as: Int64?.self),
            expiresDate: try row.decode(column: "expires_date", as: Int64?.self),
            revocationDate: try row.decode(column: "revocation_date", as: Int64?.self),
            price: try row.decode(column: "price", as: Int64?.self), currency: try row.decode(column: "currency", as: String?.self),
            source: kind, payload: try row.decode(column: "payload", as: String.self),
            signed: try row.decode(column: "signed", as: String?.self),
            receivedAt: try row.decode(column: "received_at", as: Int64.self))
    }

    private static let notificationColumns = [
        "app_id", "notification_uuid", "notification_type", "subtype", "environment", "signed_date", "original_transaction_id",
        "fact", "signed", "received_at",
    ]

    private static func notificationRecord(_ row: any SQLRow) throws -> NotificationRecord {
        NotificationRecord(
            appId: try row.decode(column: "app_id", as: String.self),
            notificationUUID: try row.decode(column: "notification_uuid", as: String.self),
            notificationType: try row.decode(column: "notification_type", as: String.self),
            subtype: try row.decode(column: "subtype", as: String?.self),
            environment: try row.decode(column: "environment", as: String.self),
            signedDate: try row.decode(column: "signed_date", as: Int64.self),
            originalTransactionId: try row.decode(column: "original_transaction_id", as: String?.self),
            fact: try row.decode(column: "fact", as: String.self), signed: try row.decode(column: "signed", as: String.self),
            receivedAt: try row.decode(column: "received_at", as: Int64.self))
    }
}

/// A line of an app's customer list: who, since when, their state in one environment (its JSON, as stored), what
/// they spent there and when they last bought.
public struct CustomerListRow: Sendable, Hashable {
    public var customerId: String
    /// The first app user id, nil for a customer known only from Apple's notifications.
    public var appUserId: String?
    public var anonymous: Bool
    public var createdAt: Int64
    /// The stored state of the environment, nil before any was computed there.
    public var state: String?
    /// Σ (price − refund) × USD rate over the paid, not family-shared ledger rows of the environment; nil: none, or
    /// none with a rate.
    public var spentUSD: Double?
    public var lastPurchaseAt: Int64?
}

/// Where a customer list page starts: after this customer, in the list's order (newest first).
public struct CustomerListCursor: Sendable, Hashable {
    public var createdAt: Int64
    public var customerId: String

    public init(createdAt: Int64, customerId: String) {
        self.createdAt = createdAt
        self.customerId = customerId
    }
}

extension StorageSession {
    /// Whether an app has any customer at all (one indexed row read, not the list's sort and sums).
    public func hasCustomers(app appId: String) async throws -> Bool {
        try await sql.select().column("id").from("customers").where("app_id", .equal, appId).limit(1).first() != nil
    }

    /// An app's customers that belong to `environment` (`CustomerEnvironments`), newest first, with their state there;
    /// only those whose state's `state` is
    /// `status` when given (`new` also takes customers without a computed state); after `cursor` when given.
    public func customerList(
        app appId: String, environment: String, status: String?, after cursor: CustomerListCursor?, limit: Int
    ) async throws -> [CustomerListRow] {
        let stateField: SQLQueryString =
            kind == .postgres ? "(s.state::jsonb ->> 'state')" : "json_extract(s.state, '$.state')"
        var filter: SQLQueryString = "c.app_id = \(bind: appId) AND \(CustomerEnvironments.contains(environment))"
        if let cursor {
            filter =
                "\(filter) AND (c.created_at < \(bind: cursor.createdAt) OR (c.created_at = \(bind: cursor.createdAt) AND c.id < \(bind: cursor.customerId)))"
        }
        if let status {
            filter =
                status == "new"
                ? "\(filter) AND (s.state IS NULL OR \(stateField) = \(bind: status))" : "\(filter) AND \(stateField) = \(bind: status)"
        }
        let query: SQLQueryString = """
            SELECT c.id AS customer_id, c.anonymous, c.created_at, s.state,
                (SELECT u.app_user_id FROM app_users u WHERE u.customer_id = c.id ORDER BY u.created_at, u.app_user_id LIMIT 1) AS app_user_id,
                (SELECT SUM((l.price - COALESCE(l.refund_amount, 0)) * l.usd_rate / 1000.0) FROM ledger l
                    WHERE l.customer_id = c.id AND l.environment = \(bind: environment) AND l.price > 0 AND l.family_shared = 0
                    AND l.usd_rate IS NOT NULL) AS spent_usd,
                (SELECT MAX(l.start_at) FROM ledger l WHERE l.customer_id = c.id AND l.environment = \(bind: environment)) AS last_purchase_at
            FROM customers c LEFT JOIN customer_states s ON s.customer_id = c.id AND s.environment = \(bind: environment)
            WHERE \(filter)
            ORDER BY c.created_at DESC, c.id DESC LIMIT \(bind: limit)
            """
        return try await sql.raw(query).all().map { row in
            CustomerListRow(
                customerId: try row.decode(column: "customer_id", as: String.self),
                appUserId: try row.decode(column: "app_user_id", as: String?.self),
                anonymous: try row.decode(column: "anonymous", as: Int64.self) != 0,
                createdAt: try row.decode(column: "created_at", as: Int64.self),
                state: try row.decode(column: "state", as: String?.self),
                spentUSD: try row.decode(column: "spent_usd", as: Double?.self),
                lastPurchaseAt: try row.decode(column: "last_purchase_at", as: Int64?.self))
        }
    }
}
