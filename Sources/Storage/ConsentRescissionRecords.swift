import SQLKit

/// A parent's withdrawn consent (`RESCIND_CONSENT`) for the customer of one app transaction.
public struct ConsentRescissionRecord: Sendable, Hashable {
    public var appId: String
    public var appTransactionId: String
    public var notificationUUID: String
    public var rescindedAt: Int64
    /// The engine's notification fact.
    public var fact: String
    public var receivedAt: Int64

    public init(appId: String, appTransactionId: String, notificationUUID: String, rescindedAt: Int64, fact: String, receivedAt: Int64) {
        self.appId = appId
        self.appTransactionId = appTransactionId
        self.notificationUUID = notificationUUID
        self.rescindedAt = rescindedAt
        self.fact = fact
        self.receivedAt = receivedAt
    }
}

extension StorageSession {
    /// The customers owning a purchase whose transactions carry the app transaction, sorted.
    public func customers(app appId: String, appTransactionId: String) async throws -> [String] {
        try await sql.raw(
            """
            SELECT DISTINCT o.customer_id FROM transactions t
            JOIN ownership o ON o.app_id = t.app_id AND o.original_transaction_id = t.original_transaction_id
            WHERE t.app_id = \(bind: appId) AND t.app_transaction_id = \(bind: appTransactionId)
            ORDER BY o.customer_id
            """
        ).all().map { try $0.decode(column: "customer_id", as: String.self) }
    }

    /// Records a rescission; false when it was recorded before. A customer's facts include it through any transaction
    /// carrying its app transaction, stored before or after it.
    @discardableResult
    public func insert(_ r: ConsentRescissionRecord) async throws -> Bool {
        !(try await sql.raw(
            """
            INSERT INTO consent_rescissions (app_id, app_transaction_id, notification_uuid, rescinded_at, fact, received_at)
            VALUES (\(bind: r.appId), \(bind: r.appTransactionId), \(bind: r.notificationUUID), \(bind: r.rescindedAt), \(bind: r.fact),
                \(bind: r.receivedAt))
            ON CONFLICT (app_id, app_transaction_id, notification_uuid) DO NOTHING RETURNING notification_uuid
            """
        ).all().isEmpty)
    }

    /// Deletes what the app reported about the customer's people (consent to share consumption data, usage, delivery,
    /// the team's refund override): what was collected under the consent withdrawn. Returns how many reports went.
    @discardableResult
    public func deleteConsumptionReports(app appId: String, customer customerId: String) async throws -> Int {
        try await sql.raw(
            """
            DELETE FROM consumption_reports WHERE app_id = \(bind: appId)
            AND app_user_id IN (SELECT app_user_id FROM app_users WHERE customer_id = \(bind: customerId))
            RETURNING app_user_id
            """
        ).all().count
    }
}
