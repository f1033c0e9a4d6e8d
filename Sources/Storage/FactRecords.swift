import SQLKit

/// Where a stored transaction came from (the `source` column).
public enum TransactionSource: String, Sendable, Hashable, CaseIterable {
    /// An App Store Server Notification.
    case notification
    /// A StoreKit 2 signed transaction the app posted.
    case sdk
    /// An entry of an app receipt the app posted, verified on this server.
    case receipt
    /// The App Store Server API (history, statuses).
    case serverAPI
    /// Apple's verifyReceipt endpoint (latest receipt info).
    case verifyReceipt
}

/// A verified transaction, as stored: the decoded payload as JSON, the raw JWS when it came signed, and the columns
/// that queries need.
public struct TransactionRecord: Sendable, Hashable {
    public var appId: String
    public var transactionId: String
    /// The digest of this version's payload: a refund or an upgrade is a new version of the same transaction.
    public var version: String
    public var originalTransactionId: String
    public var environment: String
    public var productId: String
    public var signedDate: Int64
    public var purchaseDate: Int64?
    public var expiresDate: Int64?
    public var revocationDate: Int64?
    public var price: Int64?
    public var currency: String?
    /// Where it came from.
    public var source: TransactionSource
    public var payload: String
    public var signed: String?
    public var receivedAt: Int64
    /// The customer's app transaction, which Apple's notifications about the customer (`RESCIND_CONSENT`) name.
    public var appTransactionId: String?

    public init(
        appId: String, transactionId: String, version: String, originalTransactionId: String, environment: String,
        productId: String, signedDate: Int64, purchaseDate: Int64?, expiresDate: Int64?, revocationDate: Int64?,
        price: Int64?, currency: String?, source: TransactionSource, payload: String, signed: String?, receivedAt: Int64,
        appTransactionId: String? = nil
    ) {
        self.appId = appId
        self.transactionId = transactionId
        self.version = version
        self.originalTransactionId = originalTransactionId
        self.environment = environment
        self.productId = productId
        self.signedDate = signedDate
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.price = price
        self.currency = currency
        self.source = source
        self.payload = payload
        self.signed = signed
        self.receivedAt = receivedAt
        self.appTransactionId = appTransactionId
    }
}

public struct RenewalInfoRecord: Sendable, Hashable {
    public var appId: String
    public var originalTransactionId: String
    public var version: String
    public var environment: String
    public var signedDate: Int64
    public var payload: String
    public var signed: String?
    public var receivedAt: Int64

    public init(
        appId: String, originalTransactionId: String, version: String, environment: String, signedDate: Int64,
        payload: String, signed: String?, receivedAt: Int64
    ) {
        self.appId = appId
        self.originalTransactionId = originalTransactionId
        self.version = version
        self.environment = environment
        self.signedDate = signedDate
        self.payload = payload
        self.signed = signed
        self.receivedAt = receivedAt
    }
}

public struct NotificationRecord: Sendable, Hashable {
    public var appId: String
    public var notificationUUID: String
    public var notificationType: String
    public var subtype: String?
    public var environment: String
    public var signedDate: Int64
    public var originalTransactionId: String?
    /// What the engine reads (the notification's type, subtype, date and the transaction it is about), as JSON.
    public var fact: String
    /// The `signedPayload` exactly as it arrived: the whole notification can be verified and decoded again from it.
    public var signed: String
    public var receivedAt: Int64

    public init(
        appId: String, notificationUUID: String, notificationType: String, subtype: String?, environment: String,
        signedDate: Int64, originalTransactionId: String?, fact: String, signed: String, receivedAt: Int64
    ) {
        self.appId = appId
        self.notificationUUID = notificationUUID
        self.notificationType = notificationType
        self.subtype = subtype
        self.environment = environment
        self.signedDate = signedDate
        self.originalTransactionId = originalTransactionId
        self.fact = fact
        self.signed = signed
        self.receivedAt = receivedAt
    }
}

/// The stored facts of some original transactions, as the JSON the engine's models decode from.
public struct StoredFacts: Sendable, Hashable {
    public var transactions: [String] = []
    public var renewalInfos: [String] = []
    public var notifications: [String] = []

    public init(transactions: [String] = [], renewalInfos: [String] = [], notifications: [String] = []) {
        self.transactions = transactions
        self.renewalInfos = renewalInfos
        self.notifications = notifications
    }

    public var count: Int { transactions.count + renewalInfos.count + notifications.count }
}

extension StorageSession {
    // The statements on the ingest path are literal SQL with binds: SQLKit's builders re-escape every identifier on
    // every call, which was the largest cost of a notification after the signature checks. The SQL is the subset
    // SQLite and PostgreSQL share (`ON CONFLICT … DO NOTHING RETURNING`).

    /// Stores a transaction version once; true if it was new.
    @discardableResult
    public func insert(_ t: TransactionRecord) async throws -> Bool {
        !(try await sql.raw(
            """
            INSERT INTO transactions (app_id, transaction_id, version, original_transaction_id, environment, product_id,
                signed_date, purchase_date, expires_date, revocation_date, price, currency, source, payload, signed, received_at,
                app_transaction_id)
            VALUES (\(bind: t.appId), \(bind: t.transactionId), \(bind: t.version), \(bind: t.originalTransactionId),
                \(bind: t.environment), \(bind: t.productId), \(bind: t.signedDate), \(bind: t.purchaseDate), \(bind: t.expiresDate),
                \(bind: t.revocationDate), \(bind: t.price), \(bind: t.currency), \(bind: t.source.rawValue), \(bind: t.payload),
                \(bind: t.signed), \(bind: t.receivedAt), \(bind: t.appTransactionId))
            ON CONFLICT (app_id, transaction_id, version) DO NOTHING RETURNING version
            """
        ).all().isEmpty)
    }

    @discardableResult
    public func insert(_ r: RenewalInfoRecord) async throws -> Bool {
        !(try await sql.raw(
            """
            INSERT INTO renewal_infos (app_id, original_transaction_id, version, environment, signed_date, payload, signed, received_at)
            VALUES (\(bind: r.appId), \(bind: r.originalTransactionId), \(bind: r.version), \(bind: r.environment),
                \(bind: r.signedDate), \(bind: r.payload), \(bind: r.signed), \(bind: r.receivedAt))
            ON CONFLICT (app_id, original_transaction_id, version) DO NOTHING RETURNING version
            """
        ).all().isEmpty)
    }

    /// Stores a notification once (by its UUID); true if it was new.
    @discardableResult
    public func insert(_ n: NotificationRecord) async throws -> Bool {
        !(try await sql.raw(
            """
            INSERT INTO notifications (app_id, notification_uuid, notification_type, subtype, environment, signed_date,
                original_transaction_id, fact, signed, received_at)
            VALUES (\(bind: n.appId), \(bind: n.notificationUUID), \(bind: n.notificationType), \(bind: n.subtype),
                \(bind: n.environment), \(bind: n.signedDate), \(bind: n.originalTransactionId), \(bind: n.fact),
                \(bind: n.signed), \(bind: n.receivedAt))
            ON CONFLICT (app_id, notification_uuid) DO NOTHING RETURNING notification_uuid
            """
        ).all().isEmpty)
    }

    public func notificationCount(app appId: String) async throws -> Int {
        try await sql.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("notifications")
            .where("app_id", .equal, appId).first()?.decode(column: "n", as: Int.self) ?? 0
    }

    public func notificationUUIDs(app appId: String) async throws -> [String] {
        try await sql.select().column("notification_uuid").from("notifications").where("app_id", .equal, appId)
            .all().map { try $0.decode(column: "notification_uuid", as: String.self) }
    }

    /// Every stored fact about these original transactions, in one query.
    public func facts(app appId: String, originalTransactionIds ids: [String]) async throws -> StoredFacts {
        guard !ids.isEmpty else { return StoredFacts() }
        let list = SQLList(ids.map { SQLBind($0) })
        let query = SQLQueryString(
            """
            SELECT 0 AS kind, payload AS json FROM transactions WHERE app_id = \(bind: appId) AND original_transaction_id IN (\(list))
            UNION ALL
            SELECT 1 AS kind, payload AS json FROM renewal_infos WHERE app_id = \(bind: appId) AND original_transaction_id IN (\(list))
            UNION ALL
            SELECT 2 AS kind, fact AS json FROM notifications WHERE app_id = \(bind: appId) AND original_transaction_id IN (\(list))
            UNION ALL
            SELECT 2 AS kind, fact AS json FROM consent_rescissions WHERE app_id = \(bind: appId) AND app_transaction_id IN (
                SELECT app_transaction_id FROM transactions WHERE app_id = \(bind: appId) AND original_transaction_id IN (\(list)))
            """)
        // No `app_transaction_id IS NOT NULL` in the subquery (a NULL never matches IN anyway): with it SQLite walked
        // the app_transaction_id index over every transaction of the app that has one, for each notification, which
        // took a simulated population's ingest down to 44 a second as the table grew.
        var facts = StoredFacts()
        for row in try await sql.raw(query).all() {
            let json = try row.decode(column: "json", as: String.self)
            switch try row.decode(column: "kind", as: Int.self) {
            case 0: facts.transactions.append(json)
            case 1: facts.renewalInfos.append(json)
            default: facts.notifications.append(json)
            }
        }
        return facts
    }

    /// Original transactions whose latest stored expiry falls in `[from, to)`: what reconciliation asks Apple about.
    public func originalTransactionsExpiring(app appId: String, from: Int64, to: Int64, limit: Int) async throws -> [String] {
        try await sql.select().distinct().column("original_transaction_id").from("transactions")
            .where("app_id", .equal, appId).where("expires_date", .greaterThanOrEqual, from).where("expires_date", .lessThan, to)
            .orderBy("original_transaction_id").limit(limit).all()
            .map { try $0.decode(column: "original_transaction_id", as: String.self) }
    }
}
