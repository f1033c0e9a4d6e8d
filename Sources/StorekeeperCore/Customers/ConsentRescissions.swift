import AppStore
import Entitlements
import Foundation
import Storage

/// Apple's `RESCIND_CONSENT`: a parent or guardian withdrew consent for a minor's use of the app. The notification names
/// the customer by app transaction (its `appData.signedAppTransactionInfo`), which the customer's transactions carry.
///
/// In the transaction that stores the notification, the rescission is kept for that app transaction: every recompute of
/// a customer whose transactions carry it (those stored now, and any that arrive later, Apple's order being none) reads
/// it and withholds the access of the purchases made before it (``Entitlements/ConsentRescission``), with a
/// `consent_rescinded` event for the outbox; the customers it reaches now are recomputed at once, and what the app
/// reported about them under that consent (consumption reports, with the refund override) is deleted. Signed
/// transactions, the ledger and the app user ids stay: see the README's "Rescinded consent".
enum ConsentRescissions {
    /// Records the rescission and recomputes every customer it reaches; none when the notification names no app
    /// transaction or no stored purchase carries it.
    static func record(
        _ verified: VerifiedNotification, app: AppRuntime, session: StorageSession, recomputer: StateRecomputer, now: Int64
    ) async throws -> [RecomputedCustomer] {
        guard verified.payload.notificationType == .rescindConsent, let uuid = verified.payload.notificationUUID,
            let appTransactionId = verified.appTransactionInfo?.appTransactionId, let fact = NotificationFact(verified)
        else { return [] }
        let json: Data
        do { json = try JSONEncoder.sortedKeys.encode(fact) } catch {
            throw CoreError.internalError("a rescission does not encode: \(error)")
        }
        try await session.insert(
            ConsentRescissionRecord(
                appId: app.id, appTransactionId: appTransactionId, notificationUUID: uuid,
                rescindedAt: fact.signedDate.millisecondsSince1970, fact: String(decoding: json, as: UTF8.self), receivedAt: now))
        var recomputed: [RecomputedCustomer] = []
        for customer in try await session.customers(app: app.id, appTransactionId: appTransactionId) {
            recomputed.append(try await recomputer.lockAndRecompute(session, app: app, customerId: customer, now: now))
            try await session.deleteConsumptionReports(app: app.id, customer: customer)
        }
        return recomputed
    }
}
