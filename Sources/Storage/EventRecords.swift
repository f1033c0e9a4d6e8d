import SQLKit

/// A place in an app's event stream: events are read in `(txOrder, seq)` order.
///
/// On PostgreSQL, `seq` values are handed out when rows are inserted but become visible when their transactions
/// commit, which can be in another order; a reader that followed `seq` alone could pass an event that commits late.
/// So each event also carries the id of the transaction that wrote it, and readers see only events of transactions
/// older than every transaction still running (`txid_snapshot_xmin`): that prefix of the stream is final. On SQLite
/// the single writer commits in `seq` order and `txOrder` is 0.
public struct EventCursor: Sendable, Hashable, CustomStringConvertible {
    public var txOrder: Int64
    public var seq: Int64

    public static let start = EventCursor(txOrder: 0, seq: 0)

    /// The most digits either number may have: 18 never overflow an Int64. The OpenAPI pattern is built from it.
    public static let maxDigits = 18

    public init(txOrder: Int64, seq: Int64) {
        self.txOrder = txOrder
        self.seq = seq
    }

    /// Parses `description` (`<txOrder>-<seq>`), or `0` for the start.
    public init?(_ text: String) {
        if text == "0" {
            self = .start
            return
        }
        // Digits only (Int64 alone would take "+1"), at most `maxDigits` of them: the OpenAPI pattern.
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard
            parts.count == 2,
            parts.allSatisfy({ (1...Self.maxDigits).contains($0.utf8.count) && $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }),
            let t = Int64(parts[0]), let s = Int64(parts[1])
        else { return nil }
        self.init(txOrder: t, seq: s)
    }

    public var description: String { "\(txOrder)-\(seq)" }
}

/// A subscription event as stored, with its place in the app's stream.
public struct EventRecord: Sendable, Hashable {
    public var seq: Int64?
    public var txOrder: Int64?
    public var appId: String
    public var eventId: String
    public var originalTransactionId: String?
    public var customerId: String
    public var environment: String
    public var type: String
    public var effectiveAt: Int64
    /// The event as JSON.
    public var payload: String
    public var recordedAt: Int64
    /// Set when later facts showed the event did not happen (a renewal that arrived before its purchase looked like a
    /// start). A retracted event is recorded again, at the end of the stream, so that pullers see the correction.
    public var retractedAt: Int64?

    public init(
        seq: Int64? = nil, txOrder: Int64? = nil, appId: String, eventId: String, originalTransactionId: String?, customerId: String,
        environment: String, type: String, effectiveAt: Int64, payload: String, recordedAt: Int64, retractedAt: Int64? = nil
    ) {
        self.retractedAt = retractedAt
        self.seq = seq
        self.txOrder = txOrder
        self.appId = appId
        self.eventId = eventId
        self.originalTransactionId = originalTransactionId
        self.customerId = customerId
        self.environment = environment
        self.type = type
        self.effectiveAt = effectiveAt
        self.payload = payload
        self.recordedAt = recordedAt
    }
}

extension StorageSession {
    /// Makes the stored events of some original transactions in one environment match `derived`, the events the
    /// facts give now: new ones are recorded, stored ones that are no longer derived are retracted, and retracted ones
    /// derived again are restored. Each change is a new row at the end of the stream, recorded at `now`, and each gets
    /// a delivery for every destination of the app that takes it (the outbox, written by the statement that writes the
    /// event: ``OutboxTriggers``). Returns what changed.
    @discardableResult
    public func syncEvents(
        app appId: String, environment: String, originalTransactionIds: [String], derived: [EventRecord], at now: Int64
    ) async throws -> (recorded: Int, retracted: Int) {
        var existing: [String: EventRecord] = [:]
        if !originalTransactionIds.isEmpty {
            let list = SQLList(originalTransactionIds.map { SQLBind($0) })
            for row in try await sql.raw(
                """
                SELECT \(unsafeRaw: Self.eventColumns.joined(separator: ", ")) FROM events
                WHERE app_id = \(bind: appId) AND environment = \(bind: environment) AND original_transaction_id IN (\(list))
                """
            ).all() {
                let record = try Self.eventRecord(row)
                existing[record.eventId] = record
            }
        }
        var restored: [EventRecord] = []
        var fresh: [EventRecord] = []
        var derivedIds = Set<String>()
        for var event in derived {
            derivedIds.insert(event.eventId)
            event.recordedAt = now  // when this version is written, whatever the caller set: its deliveries are due then
            if let stored = existing[event.eventId] {
                if stored.retractedAt != nil { restored.append(event) }
            } else {
                fresh.append(event)
            }
        }
        let retractions = existing.values.filter { $0.retractedAt == nil && !derivedIds.contains($0.eventId) }.map { stored in
            var retraction = stored
            retraction.retractedAt = now
            retraction.recordedAt = now
            return retraction
        }
        var recorded = 0
        for event in restored { recorded += try await moveToEnd(event, counted: true) }
        recorded += try await insertEvents(fresh)
        for retraction in retractions { try await moveToEnd(retraction, counted: false) }
        return (recorded, retractions.count)
    }

    /// Writes a new version of a stored event (restored, or retracted) over its row, which moves to the end of the
    /// stream: a seq greater than any given before. (Deleting the row and inserting the version would not do on
    /// SQLite, where `seq` is the rowid: a deleted last row's seq is given again, and a reader or destination past it
    /// would never see the new version.) Answers how many rows it wrote when `counted`, 0 otherwise (without asking the
    /// database to return them).
    private func moveToEnd(_ event: EventRecord, counted: Bool) async throws -> Int {
        let seq: any SQLExpression = kind == .postgres ? SQLRaw("DEFAULT") : SQLRaw("(SELECT max(seq) + 1 FROM events)")
        let txOrder: any SQLExpression = kind == .postgres ? SQLRaw("txid_current()") : SQLLiteral.numeric("0")
        var update: SQLQueryString =
            """
            UPDATE events SET seq = \(seq), tx_order = \(txOrder), original_transaction_id = \(bind: event.originalTransactionId),
                customer_id = \(bind: event.customerId), environment = \(bind: event.environment), type = \(bind: event.type),
                effective_at = \(bind: event.effectiveAt), payload = \(bind: event.payload), recorded_at = \(bind: event.recordedAt),
                retracted_at = \(bind: event.retractedAt)
            WHERE app_id = \(bind: event.appId) AND event_id = \(bind: event.eventId)
            """
        guard counted else {
            try await sql.raw(update).run()
            return 0
        }
        update.appendInterpolation(unsafeRaw: " RETURNING seq")
        return try await writtenEvents(update)
    }

    /// Inserts events in one statement; those already stored (by id) are left alone. Returns how many were new.
    private func insertEvents(_ events: [EventRecord]) async throws -> Int {
        guard !events.isEmpty else { return 0 }
        let txOrder: any SQLExpression = kind == .postgres ? SQLRaw("txid_current()") : SQLLiteral.numeric("0")
        let rows = SQLList(
            events.map { e in
                SQLGroupExpression(
                    SQLList([
                        SQLBind(e.appId), SQLBind(e.eventId), SQLBind(e.originalTransactionId), SQLBind(e.customerId),
                        SQLBind(e.environment), SQLBind(e.type), SQLBind(e.effectiveAt), SQLBind(e.payload), SQLBind(e.recordedAt),
                        SQLBind(e.retractedAt), txOrder,
                    ]))
            })
        return try await writtenEvents(
            """
            INSERT INTO events (app_id, event_id, original_transaction_id, customer_id, environment, type, effective_at,
                payload, recorded_at, retracted_at, tx_order)
            VALUES \(rows) ON CONFLICT (app_id, event_id) DO NOTHING RETURNING seq
            """)
    }

    /// Runs a statement that writes events (`RETURNING seq`) and returns how many rows it wrote. Their deliveries are
    /// written by the statement itself (``OutboxTriggers``).
    private func writtenEvents(_ statement: SQLQueryString) async throws -> Int {
        try await sql.raw(statement).all().count
    }

    /// The current rows of these events of an app (by event id), whatever version the caller names them by.
    public func events(app appId: String, ids: [String]) async throws -> [EventRecord] {
        guard !ids.isEmpty else { return [] }
        return try await sql.select().columns(Self.eventColumns).from("events").where("app_id", .equal, appId)
            .where("event_id", .in, ids).all().map(Self.eventRecord)
    }

    /// The app's events after a cursor, in stream order; on PostgreSQL only those whose transactions can no longer
    /// be overtaken (see ``EventCursor``), unless `settledOnly` is false (every committed event, for audits and
    /// tests: a cursor must not be taken from such a read).
    public func events(app appId: String, after cursor: EventCursor, limit: Int, settledOnly: Bool = true) async throws -> [EventRecord] {
        try await streamQuery(app: appId, after: cursor, settledOnly: settledOnly).limit(limit).all().map(Self.eventRecord)
    }

    /// The events about these original transactions, in stream order.
    public func events(app appId: String, originalTransactionIds ids: [String], after cursor: EventCursor, limit: Int) async throws
        -> [EventRecord]
    {
        guard !ids.isEmpty else { return [] }
        return try await streamQuery(app: appId, after: cursor).where("original_transaction_id", .in, ids)
            .limit(limit).all().map(Self.eventRecord)
    }

    /// The app's latest events in one environment, newest first (by `seq`), optionally of one type and before a
    /// `seq`: the dashboard's event stream. Every committed event, settled or not.
    public func latestEvents(app appId: String, environment: String, type: String?, before: Int64?, limit: Int) async throws
        -> [EventRecord]
    {
        var query = sql.select().columns(Self.eventColumns).from("events")
            .where("app_id", .equal, appId).where("environment", .equal, environment)
        if let type { query = query.where("type", .equal, type) }
        if let before { query = query.where("seq", .lessThan, before) }
        return try await query.orderBy("seq", .descending).limit(limit).all().map(Self.eventRecord)
    }

    /// The latest events about these original transactions, newest first (every committed event).
    public func latestEvents(app appId: String, originalTransactionIds ids: [String], limit: Int) async throws -> [EventRecord] {
        guard !ids.isEmpty else { return [] }
        return try await sql.select().columns(Self.eventColumns).from("events").where("app_id", .equal, appId)
            .where("original_transaction_id", .in, ids).orderBy("seq", .descending).limit(limit).all().map(Self.eventRecord)
    }

    private func streamQuery(app appId: String, after cursor: EventCursor, settledOnly: Bool = true) -> SQLSelectBuilder {
        var query = sql.select().columns(Self.eventColumns).from("events")
            .where("app_id", .equal, appId)
            .where {
                $0.where("tx_order", .greaterThan, cursor.txOrder)
                    .orWhere { $0.where("tx_order", .equal, cursor.txOrder).where("seq", .greaterThan, cursor.seq) }
            }
        if kind == .postgres, settledOnly {
            query = query.where(SQLColumn("tx_order"), .lessThan, SQLRaw("txid_snapshot_xmin(txid_current_snapshot())"))
        }
        return query.orderBy("tx_order").orderBy("seq")
    }

    private static let eventColumns = [
        "seq", "tx_order", "app_id", "event_id", "original_transaction_id", "customer_id", "environment",
        "type", "effective_at", "payload", "recorded_at", "retracted_at",
    ]

    private static func eventRecord(_ row: any SQLRow) throws -> EventRecord {
        EventRecord(
            seq: try row.decode(column: "seq", as: Int64.self),
            txOrder: try row.decode(column: "tx_order", as: Int64.self),
            appId: try row.decode(column: "app_id", as: String.self),
            eventId: try row.decode(column: "event_id", as: String.self),
            originalTransactionId: try row.decode(column: "original_transaction_id", as: String?.self),
            customerId: try row.decode(column: "customer_id", as: String.self),
            environment: try row.decode(column: "environment", as: String.self),
            type: try row.decode(column: "type", as: String.self),
            effectiveAt: try row.decode(column: "effective_at", as: Int64.self),
            payload: try row.decode(column: "payload", as: String.self),
            recordedAt: try row.decode(column: "recorded_at", as: Int64.self),
            retractedAt: try row.decode(column: "retracted_at", as: Int64?.self))
    }
}
