import SQLKit

/// One Get Retention Message request from Apple and the answer the server gave.
public struct RetentionRequestRecord: Sendable, Hashable {
    public var appId: String
    public var requestIdentifier: String
    public var environment: String
    public var originalTransactionId: String
    /// Nil when the server knows no customer owning the subscription.
    public var customerId: String?
    public var productId: String
    public var userLocale: String
    /// The answer's JSON (`{}` for none).
    public var answer: String
    public var messageIdentifier: String?
    /// `rule:<name>`, `default`, `experiment:<key>/<variant>` or `none`.
    public var decidedBy: String
    public var signedDate: Int64
    public var answeredAt: Int64

    public init(
        appId: String, requestIdentifier: String, environment: String, originalTransactionId: String, customerId: String?,
        productId: String, userLocale: String, answer: String, messageIdentifier: String?, decidedBy: String, signedDate: Int64,
        answeredAt: Int64
    ) {
        self.appId = appId
        self.requestIdentifier = requestIdentifier
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.customerId = customerId
        self.productId = productId
        self.userLocale = userLocale
        self.answer = answer
        self.messageIdentifier = messageIdentifier
        self.decidedBy = decidedBy
        self.signedDate = signedDate
        self.answeredAt = answeredAt
    }
}

extension StorageSession {
    /// Records a request's answer; when the request was answered before (Apple retried it), returns that first answer
    /// and records nothing.
    public func record(_ r: RetentionRequestRecord) async throws -> RetentionRequestRecord {
        let inserted = try await sql.raw(
            """
            INSERT INTO retention_requests (app_id, request_identifier, environment, original_transaction_id, customer_id, product_id,
                user_locale, answer, message_identifier, decided_by, signed_date, answered_at)
            VALUES (\(bind: r.appId), \(bind: r.requestIdentifier), \(bind: r.environment), \(bind: r.originalTransactionId),
                \(bind: r.customerId), \(bind: r.productId), \(bind: r.userLocale), \(bind: r.answer), \(bind: r.messageIdentifier),
                \(bind: r.decidedBy), \(bind: r.signedDate), \(bind: r.answeredAt))
            ON CONFLICT (app_id, request_identifier) DO NOTHING RETURNING request_identifier
            """
        ).all()
        if !inserted.isEmpty { return r }
        return try await retentionRequest(app: r.appId, requestIdentifier: r.requestIdentifier) ?? r
    }

    public func retentionRequest(app appId: String, requestIdentifier: String) async throws -> RetentionRequestRecord? {
        try await sql.raw(
            "SELECT * FROM retention_requests WHERE app_id = \(bind: appId) AND request_identifier = \(bind: requestIdentifier)"
        ).first().map(Self.retentionRequestRecord)
    }

    /// An app's requests in one environment, newest first.
    public func retentionRequests(app appId: String, environment: String, limit: Int) async throws -> [RetentionRequestRecord] {
        try await sql.raw(
            """
            SELECT * FROM retention_requests WHERE app_id = \(bind: appId) AND environment = \(bind: environment)
            ORDER BY answered_at DESC, request_identifier LIMIT \(bind: limit)
            """
        ).all().map(Self.retentionRequestRecord)
    }

    private static func retentionRequestRecord(_ row: any SQLRow) throws -> RetentionRequestRecord {
        RetentionRequestRecord(
            appId: try row.decode(column: "app_id", as: String.self),
            requestIdentifier: try row.decode(column: "request_identifier", as: String.self),
            environment: try row.decode(column: "environment", as: String.self),
            originalTransactionId: try row.decode(column: "original_transaction_id", as: String.self),
            customerId: try row.decode(column: "customer_id", as: String?.self),
            productId: try row.decode(column: "product_id", as: String.self),
            userLocale: try row.decode(column: "user_locale", as: String.self),
            answer: try row.decode(column: "answer", as: String.self),
            messageIdentifier: try row.decode(column: "message_identifier", as: String?.self),
            decidedBy: try row.decode(column: "decided_by", as: String.self),
            signedDate: try row.decode(column: "signed_date", as: Int64.self),
            answeredAt: try row.decode(column: "answered_at", as: Int64.self))
    }
}
