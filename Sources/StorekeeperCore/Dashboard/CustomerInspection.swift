import AppStore
import Entitlements
import Foundation
import Storage

/// One line of a customer's timeline: an event, a transaction version or a notification, at its instant.
public struct TimelineEntry: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable { case event, transaction, notification }
    public var at: Int64
    public var kind: Kind
    public var title: String
    public var detail: String
    /// The money it names, in milliunits of `currency` (a purchase's or an event's price).
    public var price: Int64?
    public var currency: String?
    public var environment: String
    /// The transaction id or notification UUID whose raw signed data can be shown.
    public var rawId: String?
    public var retracted: Bool
}

/// Everything known about one customer: names, state per environment, timeline.
public struct CustomerDossier: Sendable {
    public var customerId: String
    public var appUserIds: [String]
    public var firstSeen: Int64?
    public var anonymous: Bool
    public var state: CustomerState
    public var timeline: [TimelineEntry]
}

/// A stored fact with its raw signed data, as received.
public struct RawFact: Sendable {
    public var title: String
    public var environment: String
    public var receivedAt: Int64
    /// The decoded payload, pretty-printed JSON.
    public var json: String
    /// The JWS (or receipt) as Apple signed it; nil for facts that came without one.
    public var signed: String?
}

/// A customer a search found: its id and every app user id it goes by.
public struct CustomerMatch: Sendable, Hashable {
    public var customerId: String
    public var appUserIds: [String]
}

/// A line of the customer list: who, their status and main product in one environment, what they spent there (USD,
/// net of refunds), when they last bought, and since when they are known.
public struct CustomerListing: Sendable, Hashable {
    public var customerId: String
    public var appUserId: String?
    public var anonymous: Bool
    public var firstSeen: Int64
    public var status: CustomerStatus
    /// The product of the subscription that gives access now, else the latest subscription's, else the latest other
    /// purchase's.
    public var productId: String?
    public var spentUSD: Double?
    public var lastPurchaseAt: Int64?
    /// Where the next page starts.
    public var cursor: CustomerListCursor { CustomerListCursor(createdAt: firstSeen, customerId: customerId) }
}

/// One of an app's latest events, with where it stands in the stream and whether later facts retracted it.
public struct EventListing: Sendable {
    public var seq: Int64
    public var event: SubscriptionEvent
    public var customerId: String
    public var recordedAt: Int64
    public var retracted: Bool
}

/// What the dashboard shows of an app's customers and events, for people who can see the app: search by any name,
/// a customer's dossier, a fact's raw signed data, the latest events.
public struct CustomerInspection: Sendable {
    /// The most timeline entries a customer page shows (newest kept).
    public static let timelineLimit = 500

    let database: StorageDatabase
    let reads: CustomerReads

    /// Customers named by a customer id, app user id, alias, original transaction id or transaction id.
    public func find(_ text: String, app: AppRuntime) async throws -> [CustomerMatch] {
        let text = text.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return [] }
        return try await database.reading { session in
            var found: [CustomerMatch] = []
            for id in try await session.findCustomers(app: app.id, text: text) {
                found.append(CustomerMatch(customerId: id, appUserIds: try await session.appUserIds(customer: id)))
            }
            return found
        }
    }

    /// Whether the app has any customer yet (a new app's overview says what to do first).
    public func hasCustomers(app: AppRuntime) async throws -> Bool {
        try await database.reading { try await $0.hasCustomers(app: app.id) }
    }

    /// An app's customers, newest first, with their status in `environment` (only those of `status`, when given);
    /// `after` pages on from the previous page's last line.
    public func customers(
        app: AppRuntime, environment: Environment, status: CustomerStatus?, after: CustomerListCursor?, limit: Int
    ) async throws -> [CustomerListing] {
        let rows = try await database.reading {
            try await $0.customerList(
                app: app.id, environment: environment.rawValue, status: status?.rawValue, after: after, limit: limit)
        }
        return try rows.map { row in
            var listing = CustomerListing(
                customerId: row.customerId, appUserId: row.appUserId, anonymous: row.anonymous, firstSeen: row.createdAt,
                status: .new, productId: nil, spentUSD: row.spentUSD, lastPurchaseAt: row.lastPurchaseAt)
            if let json = row.state {
                let state: CustomerState
                do { state = try Self.decoder.decode(CustomerState.self, from: Data(json.utf8)) } catch {
                    throw CoreError.internalError("customer \(row.customerId)'s stored state does not decode")
                }
                listing.status = state.state
                let subscription =
                    state.subscriptions.first { $0.grantsAccess } ?? state.subscriptions.max { $0.purchaseDate < $1.purchaseDate }
                listing.productId =
                    subscription?.productId ?? state.nonSubscriptions.max { $0.purchaseDate < $1.purchaseDate }?.productId
            }
            return listing
        }
    }

    /// The customer's names, state in `environment` and timeline (all environments, newest first); nil for a
    /// customer of another app or none.
    public func dossier(customerId: String, app: AppRuntime, environment: Environment) async throws -> CustomerDossier? {
        let stored = try await database.reading {
            session -> (CustomerRecord, [String], [String], [TransactionRecord], [NotificationRecord], [EventRecord])? in
            guard let customer = try await session.customer(id: customerId), customer.appId == app.id else { return nil }
            let originals = try await session.originalTransactionIds(customer: customerId)
            return (
                customer, try await session.appUserIds(customer: customerId), originals,
                try await session.transactionVersions(app: app.id, originalTransactionIds: originals),
                try await session.notifications(app: app.id, originalTransactionIds: originals),
                try await session.latestEvents(app: app.id, originalTransactionIds: originals, limit: Self.timelineLimit)
            )
        }
        guard let (customer, names, _, transactions, notifications, events) = stored else { return nil }
        let state = try await reads.state(customerId: customerId, app: app, environment: environment).state()
        var timeline: [TimelineEntry] = []
        for event in events {
            let decoded = try? Self.decoder.decode(SubscriptionEvent.self, from: Data(event.payload.utf8))
            let detail = [decoded?.productId, decoded?.reason, decoded?.fromProductId.map { "from \($0)" }].compactMap { $0 }
            timeline.append(
                TimelineEntry(
                    at: event.effectiveAt, kind: .event, title: event.type, detail: detail.joined(separator: " · "),
                    price: decoded?.price, currency: decoded?.currency, environment: event.environment, rawId: nil,
                    retracted: event.retractedAt != nil))
        }
        for transaction in transactions {
            var detail = [transaction.productId, "via \(transaction.source.rawValue)"]
            if transaction.revocationDate != nil { detail.append("revoked") }
            timeline.append(
                TimelineEntry(
                    at: transaction.purchaseDate ?? transaction.signedDate, kind: .transaction,
                    title: "transaction \(transaction.transactionId)", detail: detail.joined(separator: " · "),
                    price: transaction.price, currency: transaction.currency, environment: transaction.environment,
                    rawId: transaction.transactionId, retracted: false))
        }
        for notification in notifications {
            timeline.append(
                TimelineEntry(
                    at: notification.signedDate, kind: .notification,
                    title: [notification.notificationType, notification.subtype].compactMap { $0 }.joined(separator: " / "),
                    detail: notification.notificationUUID, price: nil, currency: nil, environment: notification.environment,
                    rawId: notification.notificationUUID, retracted: false))
        }
        timeline.sort { ($0.at, $0.kind.rawValue) > ($1.at, $1.kind.rawValue) }
        return CustomerDossier(
            customerId: customer.id, appUserIds: names, firstSeen: customer.createdAt, anonymous: customer.anonymous, state: state,
            timeline: Array(timeline.prefix(Self.timelineLimit)))
    }

    /// Every stored version of a transaction of the app, or the notification with this UUID, raw.
    public func rawFacts(id: String, app: AppRuntime) async throws -> [RawFact] {
        let (transactions, notification) = try await database.reading { session in
            (
                try await session.transactionVersions(app: app.id, transactionId: id),
                try await session.notification(app: app.id, uuid: id)
            )
        }
        var facts = transactions.map { version in
            RawFact(
                title: "transaction \(version.transactionId) (version \(version.version.prefix(12)), via \(version.source.rawValue))",
                environment: version.environment, receivedAt: version.receivedAt, json: Self.pretty(version.payload), signed: version.signed
            )
        }
        if let notification {
            facts.append(
                RawFact(
                    title: "notification \(notification.notificationType) \(notification.subtype ?? "")",
                    environment: notification.environment, receivedAt: notification.receivedAt, json: Self.pretty(notification.fact),
                    signed: notification.signed))
        }
        return facts
    }

    /// The latest events of an app in one environment, newest first; `before` pages back (a `seq`).
    public func latestEvents(app: AppRuntime, environment: Environment, type: SubscriptionEventType?, before: Int64?, limit: Int)
        async throws -> [EventListing]
    {
        let records = try await database.reading {
            try await $0.latestEvents(app: app.id, environment: environment.rawValue, type: type?.rawValue, before: before, limit: limit)
        }
        return try records.map { record in
            do {
                let event = try Self.decoder.decode(SubscriptionEvent.self, from: Data(record.payload.utf8))
                return EventListing(
                    seq: record.seq ?? 0, event: event, customerId: record.customerId, recordedAt: record.recordedAt,
                    retracted: record.retractedAt != nil)
            } catch {
                throw CoreError.internalError("stored event \(record.eventId) does not decode")
            }
        }
    }

    /// Stored events decode with one decoder (it holds no state between calls).
    private static let decoder = JSONDecoder()

    /// JSON with sorted keys and indentation; the text itself when it is not JSON.
    static func pretty(_ json: String) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)),
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        else { return json }
        return String(decoding: data, as: UTF8.self)
    }
}
