import Entitlements
import Foundation
import Storage

/// Which part of the event stream to read: after a cursor, at most `limit` events.
public struct EventQuery: Sendable {
    public static let limits = 1...1000
    public var after: EventCursor
    public var limit: Int

    /// Parses the query's text (`after`, `limit`), as the API takes it.
    public init(after: String?, limit: String?) throws(CoreError) {
        self.after = .start
        if let after {
            guard let cursor = EventCursor(after) else { throw .invalidInput(field: "after", "after must be a cursor from nextCursor") }
            self.after = cursor
        }
        self.limit = 100
        if let limit {
            guard let value = Int(limit), Self.limits.contains(value) else {
                throw .invalidInput(field: "limit", "limit is \(Self.limits.lowerBound) to \(Self.limits.upperBound)")
            }
            self.limit = value
        }
    }
}

/// A page of the event stream: `{"events": […], "nextCursor": "<cursor>"}`; pass `nextCursor` back as `after`.
public struct EventPage: Codable, Sendable {
    public var events: [StreamEvent]
    public var nextCursor: String

    private static let decoder = JSONDecoder()

    /// The page of `records`, each event with its customer and that customer's first app user id (`names`: every
    /// customer's app user ids, oldest first).
    init(_ records: [EventRecord], after: EventCursor, names: [String: [String]]) throws(CoreError) {
        let next = records.last.map { EventCursor(txOrder: $0.txOrder ?? 0, seq: $0.seq ?? 0) } ?? after
        events = try records.map { record throws(CoreError) in
            do {
                let event = try Self.decoder.decode(SubscriptionEvent.self, from: Data(record.payload.utf8))
                return StreamEvent(
                    event: event, cursor: EventCursor(txOrder: record.txOrder ?? 0, seq: record.seq ?? 0).description,
                    recordedAt: record.recordedAt, retractedAt: record.retractedAt, customerId: record.customerId,
                    appUserId: names[record.customerId]?.first)
            } catch {
                throw .internalError("stored event \(record.eventId) does not decode")
            }
        }
        nextCursor = next.description
    }

    /// The page of `records`, their customers' names read in `session`.
    static func read(_ records: [EventRecord], after: EventCursor, session: StorageSession) async throws -> EventPage {
        let names = try await session.appUserIds(customers: Array(Set(records.map(\.customerId))))
        return try EventPage(records, after: after, names: names)
    }
}

/// A stored event with its place in the stream and whose it is: the customer's id and first app user id (the one the
/// webhooks name too), so a consumer of the stream can tell whose event it is.
public struct StreamEvent: Codable, Sendable {
    public var event: SubscriptionEvent
    public var cursor: String
    public var recordedAt: Int64
    /// Set when later facts showed that the event did not happen: undo whatever it triggered.
    public var retractedAt: Int64?
    /// The customer's id: stable across the app user ids it goes by.
    public var customerId: String
    /// The customer's first app user id; nil for a customer known only by its purchases (not seen by the app yet).
    public var appUserId: String?

    init(event: SubscriptionEvent, cursor: String, recordedAt: Int64, retractedAt: Int64?, customerId: String, appUserId: String?) {
        self.event = event
        self.cursor = cursor
        self.recordedAt = recordedAt
        self.retractedAt = retractedAt
        self.customerId = customerId
        self.appUserId = appUserId
    }

    enum Extra: String, CodingKey { case cursor, recordedAt, retractedAt, customerId, appUserId }

    public init(from decoder: any Decoder) throws {
        event = try SubscriptionEvent(from: decoder)
        let container = try decoder.container(keyedBy: Extra.self)
        cursor = try container.decode(String.self, forKey: .cursor)
        recordedAt = try container.decode(Int64.self, forKey: .recordedAt)
        retractedAt = try container.decodeIfPresent(Int64.self, forKey: .retractedAt)
        customerId = try container.decode(String.self, forKey: .customerId)
        appUserId = try container.decodeIfPresent(String.self, forKey: .appUserId)
    }

    public func encode(to encoder: any Encoder) throws {
        try event.encode(to: encoder)
        var container = encoder.container(keyedBy: Extra.self)
        try container.encode(cursor, forKey: .cursor)
        try container.encode(recordedAt, forKey: .recordedAt)
        try container.encode(retractedAt, forKey: .retractedAt)
        try container.encode(customerId, forKey: .customerId)
        try container.encode(appUserId, forKey: .appUserId)
    }
}
