import Foundation
import Storage

/// Which customer a notification's transaction belongs to.
enum NotificationOwner {
    /// By appAccountToken (the app user id the server gave that token to, or the token as a lower-case app user id),
    /// then by the original transaction's owner; failing both, a new customer named by the token, or an anonymous one
    /// named `$anonymous:<originalTransactionId>` that the app's post of the transaction merges later. Runs inside
    /// the caller's transaction.
    /// `pending`: the sightings this server has not written yet, whose tokens resolve too (and are registered here).
    static func resolve(
        _ session: StorageSession, app: AppRuntime, appAccountToken: String?, originalTransactionId: String, now: Int64,
        pending: PendingSightings? = nil
    ) async throws -> String {
        let ownerRecord = try await session.ownerRecord(app: app.id, originalTransactionId: originalTransactionId)
        // An identified owner keeps its transaction: only the app's own post moves one between named customers.
        if let ownerRecord, !ownerRecord.anonymous { return ownerRecord.id }
        let owner = ownerRecord?.id
        if let token = appAccountToken?.lowercased(), !token.isEmpty {
            // The SDK's token of a non-UUID app user id names that app user id, whose customer may not exist yet.
            let named: CustomerRecord?
            var registered = try await session.appUserId(app: app.id, accountToken: token)
            if registered == nil, let sighted = pending?.appUserId(app: app.id, token: token) {
                try await session.registerAccountToken(app: app.id, token: token, appUserId: sighted, at: now)
                registered = sighted
            }
            if let registered {
                named = try await session.findOrCreateCustomer(
                    app: app.id, appUserId: registered, anonymous: false, newId: CustomerIds.new(), at: now)
            } else {
                named = try await session.customer(app: app.id, appUserId: token)
            }
            if let named {
                guard let owner else {
                    return try await session.link(app: app.id, originalTransactionId: originalTransactionId, customer: named.id, at: now)
                }
                if owner != named.id {
                    try await session.merge(customer: owner, into: named.id)
                    try await session.insertAudit(
                        AuditRecord(
                            appId: app.id, action: .merge, originalTransactionId: originalTransactionId, fromCustomer: owner,
                            toCustomer: named.id,
                            detail: "an anonymous customer's transactions joined the customer of appAccountToken \(token)", at: now))
                }
                return named.id
            }
            if let owner { return owner }
            let created = try await session.findOrCreateCustomer(
                app: app.id, appUserId: token, anonymous: false, newId: CustomerIds.new(), at: now)
            return try await session.link(app: app.id, originalTransactionId: originalTransactionId, customer: created.id, at: now)
        }
        if let owner { return owner }
        let anonymous = try await session.findOrCreateCustomer(
            app: app.id, appUserId: AppUserIds.anonymous(originalTransactionId: originalTransactionId), anonymous: true,
            newId: CustomerIds.new(), at: now)
        return try await session.link(app: app.id, originalTransactionId: originalTransactionId, customer: anonymous.id, at: now)
    }
}

/// The server's own ids of customers.
enum CustomerIds {
    static func new() -> String { "cus_" + APIKeys.randomToken(bytes: 12) }
}
