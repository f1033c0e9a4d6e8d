import SQLKit

/// Where a delivery stands: waiting for its first attempt, waiting for a retry, done, or given up.
public enum DeliveryStatus: String, Sendable, Hashable, CaseIterable, Codable {
    case pending, retrying, delivered, dead
}

/// One event (one version of it: a recording or a retraction) for one destination, as the outbox holds it.
public struct DeliveryRecord: Sendable, Hashable {
    public var integrationId: String
    /// The `events.seq` of the version this delivery sends; unique per destination.
    public var eventSeq: Int64
    public var appId: String
    public var eventId: String
    /// Whether this delivery sends the event's retraction.
    public var retraction: Bool
    public var status: DeliveryStatus
    public var attempts: Int
    /// When the next attempt is due (pending, retrying), or when a claim's lease ends; nil once delivered or dead.
    public var nextAttemptAt: Int64?
    public var firstAttemptAt: Int64?
    public var createdAt: Int64
    public var updatedAt: Int64
    /// The last attempt: the answer's status, its first bytes, how long it took, or why there was no answer.
    public var lastStatus: Int?
    public var lastResponse: String?
    public var lastLatencyMs: Int64?
    public var lastError: String?

    /// The delivery's id, the same on every attempt and replay (Standard Webhooks' `webhook-id`, Amplitude's and
    /// Mixpanel's insert id): `msg_<integration id>_<event seq>`.
    public var id: String { Self.id(integrationId: integrationId, eventSeq: eventSeq) }

    public static func id(integrationId: String, eventSeq: Int64) -> String { "msg_\(integrationId)_\(eventSeq)" }

    /// What a delivery id names: its destination and the event's seq.
    public struct Key: Sendable, Hashable {
        public var integrationId: String
        public var eventSeq: Int64
    }

    /// The destination and seq a delivery id names, or nil when it is not one.
    public static func key(of id: String) -> Key? {
        guard id.hasPrefix("msg_"), let separator = id.lastIndex(of: "_") else { return nil }
        let integrationId = String(id[id.index(id.startIndex, offsetBy: 4)..<separator])
        let digits = id[id.index(after: separator)...]
        guard !integrationId.isEmpty, (1...18).contains(digits.count), digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
            let seq = Int64(digits)
        else { return nil }
        return Key(integrationId: integrationId, eventSeq: seq)
    }
}

/// What one attempt of a destination's delivery came to, for `recordAttempts`.
public struct AttemptRecord: Sendable, Hashable {
    public var eventSeq: Int64
    /// delivered, retrying (at `nextAttemptAt`) or dead.
    public var status: DeliveryStatus
    public var attempts: Int
    public var nextAttemptAt: Int64?
    public var firstAttemptAt: Int64?
    public var lastStatus: Int?
    public var lastResponse: String?
    public var lastLatencyMs: Int64?
    public var lastError: String?
    public var at: Int64

    public init(
        eventSeq: Int64, status: DeliveryStatus, attempts: Int, nextAttemptAt: Int64?, firstAttemptAt: Int64?,
        lastStatus: Int?, lastResponse: String?, lastLatencyMs: Int64?, lastError: String?, at: Int64
    ) {
        self.eventSeq = eventSeq
        self.status = status
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.firstAttemptAt = firstAttemptAt
        self.lastStatus = lastStatus
        self.lastResponse = lastResponse
        self.lastLatencyMs = lastLatencyMs
        self.lastError = lastError
        self.at = at
    }
}

/// The outbox's queue by destination kind: how many deliveries wait and since when (for `/metrics`).
public struct OutboxDepth: Sendable, Hashable {
    public var kind: String
    public var waiting: Int
    public var oldestCreatedAt: Int64?
}

extension StorageSession {
    private static let deliveryColumns = [
        "integration_id", "event_seq", "app_id", "event_id", "retraction", "status", "attempts", "next_attempt_at",
        "first_attempt_at", "created_at", "updated_at", "last_status", "last_response", "last_latency_ms", "last_error",
    ]

    /// Claims up to `limit` of a destination's due deliveries for `token` until `leaseUntil`, in event order (the
    /// stream's: what a destination's wait held back goes before what came after it), and returns them in that order;
    /// none once the destination is disabled (a lane stops there). A claimed row is due again when the lease ends (its
    /// holder died); on PostgreSQL rows another server is claiming are skipped, never waited for.
    public func claimDeliveries(integration id: String, now: Int64, leaseUntil: Int64, token: String, limit: Int) async throws
        -> [DeliveryRecord]
    {
        let skipLocked = kind == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        return try await sql.raw(
            """
            UPDATE deliveries SET lease = \(bind: token), next_attempt_at = \(bind: leaseUntil)
            WHERE integration_id = \(bind: id) AND event_seq IN (
                SELECT event_seq FROM deliveries
                WHERE integration_id = \(bind: id) AND status IN ('pending', 'retrying') AND next_attempt_at <= \(bind: now)
                AND EXISTS (SELECT 1 FROM integrations WHERE id = \(bind: id) AND enabled = 1)
                ORDER BY event_seq LIMIT \(literal: limit)\(unsafeRaw: skipLocked))
            RETURNING \(unsafeRaw: Self.deliveryColumns.joined(separator: ", "))
            """
        ).all().map(Self.deliveryRecord).sorted { $0.eventSeq < $1.eventSeq }
    }

    /// Records attempts' outcomes of one destination in one statement, each only if its claim still holds (`token`: a
    /// delivery reset or claimed again meanwhile keeps its new state). Returns how many were recorded.
    @discardableResult
    public func recordAttempts(_ attempts: [AttemptRecord], integration id: String, token: String) async throws -> Int {
        guard !attempts.isEmpty else { return 0 }
        let rows = SQLList(
            attempts.map { a in
                SQLGroupExpression(
                    SQLList([
                        SQLBind(a.eventSeq), SQLBind(a.status.rawValue), SQLBind(Int64(a.attempts)), SQLBind(a.nextAttemptAt),
                        SQLBind(a.firstAttemptAt), SQLBind(a.at), SQLBind(a.lastStatus.map(Int64.init)), SQLBind(a.lastResponse),
                        SQLBind(a.lastLatencyMs), SQLBind(a.lastError),
                    ]))
            })
        // VALUES' columns are column1… on both databases; the first row's binds type them on PostgreSQL.
        return try await sql.raw(
            """
            UPDATE deliveries SET status = v.status, attempts = v.attempts, next_attempt_at = v.next_attempt_at,
                first_attempt_at = v.first_attempt_at, lease = NULL, updated_at = v.at, last_status = v.last_status,
                last_response = v.last_response, last_latency_ms = v.last_latency_ms, last_error = v.last_error
            FROM (SELECT column1 AS event_seq, column2 AS status, column3 AS attempts, column4 AS next_attempt_at,
                column5 AS first_attempt_at, column6 AS at, column7 AS last_status, column8 AS last_response,
                column9 AS last_latency_ms, column10 AS last_error FROM (VALUES \(rows)) AS t) AS v
            WHERE deliveries.integration_id = \(bind: id) AND deliveries.event_seq = v.event_seq AND deliveries.lease = \(bind: token)
            RETURNING deliveries.event_seq
            """
        ).all().count
    }

    /// Gives claimed deliveries back untried (a shutdown, a destination disabled meanwhile): due at once.
    public func releaseDeliveries(integration id: String, eventSeqs: [Int64], token: String, at now: Int64) async throws {
        guard !eventSeqs.isEmpty else { return }
        try await sql.update("deliveries").set("lease", to: SQLLiteral.null).set("next_attempt_at", to: now)
            .where("integration_id", .equal, id).where("event_seq", .in, eventSeqs).where("lease", .equal, token).run()
    }

    /// Every lease given up at once: for a SQLite server starting, the only process that can have held them.
    public func releaseAllDeliveryLeases(at now: Int64) async throws {
        try await sql.update("deliveries").set("lease", to: SQLLiteral.null).set("next_attempt_at", to: now)
            .where("lease", .isNot, SQLLiteral.null).where("status", .in, ["pending", "retrying"]).run()
    }

    /// A destination's deliveries, newest event first, optionally in one status and after a seq of a previous page.
    public func deliveries(integration id: String, status: DeliveryStatus?, beforeSeq: Int64?, limit: Int) async throws
        -> [DeliveryRecord]
    {
        var query = sql.select().columns(Self.deliveryColumns).from("deliveries").where("integration_id", .equal, id)
        if let status { query = query.where("status", .equal, status.rawValue) }
        if let beforeSeq { query = query.where("event_seq", .lessThan, beforeSeq) }
        return try await query.orderBy("event_seq", .descending).limit(limit).all().map(Self.deliveryRecord)
    }

    /// How many of a destination's deliveries are in each status.
    public func deliveryCounts(integration id: String) async throws -> [DeliveryStatus: Int] {
        var counts: [DeliveryStatus: Int] = [:]
        for row in try await sql.raw(
            "SELECT status, COUNT(*) AS n FROM deliveries WHERE integration_id = \(bind: id) GROUP BY status"
        ).all() {
            if let status = DeliveryStatus(rawValue: try row.decode(column: "status", as: String.self)) {
                counts[status] = try row.decode(column: "n", as: Int.self)
            }
        }
        return counts
    }

    public func delivery(integration id: String, eventSeq: Int64) async throws -> DeliveryRecord? {
        try await sql.select().columns(Self.deliveryColumns).from("deliveries").where("integration_id", .equal, id)
            .where("event_seq", .equal, eventSeq).first().map(Self.deliveryRecord)
    }

    /// Makes deliveries due now with a fresh schedule (a retry or a replay): the same rows, so the same ids. With
    /// `eventSeq`, that one; otherwise those created in `[from, to)`, of `status` if given. Returns how many.
    @discardableResult
    public func resetDeliveries(
        integration id: String, eventSeq: Int64? = nil, createdFrom from: Int64? = nil, to: Int64? = nil, status: DeliveryStatus? = nil,
        at now: Int64
    ) async throws -> Int {
        var conditions: [any SQLExpression] = [SQLBinaryExpression(SQLColumn("integration_id"), .equal, SQLBind(id))]
        if let eventSeq { conditions.append(SQLBinaryExpression(SQLColumn("event_seq"), .equal, SQLBind(eventSeq))) }
        if let from { conditions.append(SQLBinaryExpression(SQLColumn("created_at"), .greaterThanOrEqual, SQLBind(from))) }
        if let to { conditions.append(SQLBinaryExpression(SQLColumn("created_at"), .lessThan, SQLBind(to))) }
        if let status { conditions.append(SQLBinaryExpression(SQLColumn("status"), .equal, SQLBind(status.rawValue))) }
        return try await sql.raw(
            """
            UPDATE deliveries SET status = 'pending', attempts = 0, first_attempt_at = NULL, next_attempt_at = \(bind: now),
                lease = NULL, updated_at = \(bind: now)
            WHERE \(SQLList(conditions, separator: SQLRaw(" AND "))) RETURNING event_seq
            """
        ).all().count
    }

    /// The USD rate the ledger converts a purchase of a day (days since 1970) with, with the rate's own day, if any: the
    /// latest stored on or before it, else the currency's first (a purchase older than every stored rate).
    public func usdRate(currency: String, onOrBefore day: Int64) async throws -> StoredRate? {
        var row = try await sql.select().columns("usd_per_unit", "day").from("exchange_rates").where("currency", .equal, currency)
            .where("day", .lessThanOrEqual, day).orderBy("day", .descending).limit(1).first()
        if row == nil {
            row = try await sql.select().columns("usd_per_unit", "day").from("exchange_rates").where("currency", .equal, currency)
                .orderBy("day", .ascending).limit(1).first()
        }
        return try row.map {
            StoredRate(rate: try $0.decode(column: "usd_per_unit", as: Double.self), day: try $0.decode(column: "day", as: Int64.self))
        }
    }

    /// The USD rate the ledger converted each of these purchases with (rows that have one), by environment and
    /// transaction: what the events about them are converted with when they leave, so that their sum is the ledger's.
    public func ledgerUSDRates(app appId: String, transactionIds ids: [String]) async throws -> [LedgerRateKey: Double] {
        guard !ids.isEmpty else { return [:] }
        var rates: [LedgerRateKey: Double] = [:]
        for row in try await sql.select().columns("environment", "transaction_id", "usd_rate").from("ledger")
            .where("app_id", .equal, appId).where("transaction_id", .in, ids).where("usd_rate", .isNot, SQLLiteral.null).all()
        {
            let key = LedgerRateKey(
                environment: try row.decode(column: "environment", as: String.self),
                transactionId: try row.decode(column: "transaction_id", as: String.self))
            rates[key] = try row.decode(column: "usd_rate", as: Double.self)
        }
        return rates
    }

    /// What each customer paid per environment, refunds taken off, in USD: the ledger's revenue rows (the summary's
    /// predicate: paid, not family-shared) that have a rate. Keyed `<customer id>\n<environment>`.
    public func spentUSD(customers ids: [String]) async throws -> [String: Double] {
        guard !ids.isEmpty else { return [:] }
        var spent: [String: Double] = [:]
        for row in try await sql.raw(
            """
            SELECT customer_id, environment, SUM(\(unsafeRaw: LedgerSummary.usd("(price - COALESCE(refund_amount, 0))"))) AS usd
            FROM ledger WHERE customer_id IN (\(SQLList(ids.map { SQLBind($0) })))
            AND \(unsafeRaw: LedgerSummary.revenue) AND usd_rate IS NOT NULL
            GROUP BY customer_id, environment
            """
        ).all() {
            let key =
                try row.decode(column: "customer_id", as: String.self) + "\n" + (try row.decode(column: "environment", as: String.self))
            spent[key] = try row.decode(column: "usd", as: Double?.self) ?? 0
        }
        return spent
    }

    /// Deliveries waiting (pending or retrying), by destination kind.
    public func outboxDepth() async throws -> [OutboxDepth] {
        try await sql.raw(
            """
            SELECT i.kind AS kind, COUNT(*) AS waiting, MIN(d.created_at) AS oldest FROM deliveries d
            JOIN integrations i ON i.id = d.integration_id
            WHERE d.status IN ('pending', 'retrying') GROUP BY i.kind
            """
        ).all().map {
            OutboxDepth(
                kind: try $0.decode(column: "kind", as: String.self), waiting: try $0.decode(column: "waiting", as: Int.self),
                oldestCreatedAt: try $0.decode(column: "oldest", as: Int64?.self))
        }
    }

    static func deliveryRecord(_ row: any SQLRow) throws -> DeliveryRecord {
        let status = try row.decode(column: "status", as: String.self)
        guard let parsed = DeliveryStatus(rawValue: status) else { throw StorageError(.corrupt, "deliveries.status holds '\(status)'") }
        return DeliveryRecord(
            integrationId: try row.decode(column: "integration_id", as: String.self),
            eventSeq: try row.decode(column: "event_seq", as: Int64.self),
            appId: try row.decode(column: "app_id", as: String.self),
            eventId: try row.decode(column: "event_id", as: String.self),
            retraction: try row.decode(column: "retraction", as: Int64.self) != 0,
            status: parsed,
            attempts: try row.decode(column: "attempts", as: Int.self),
            nextAttemptAt: try row.decode(column: "next_attempt_at", as: Int64?.self),
            firstAttemptAt: try row.decode(column: "first_attempt_at", as: Int64?.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self),
            updatedAt: try row.decode(column: "updated_at", as: Int64.self),
            lastStatus: try row.decode(column: "last_status", as: Int?.self),
            lastResponse: try row.decode(column: "last_response", as: String?.self),
            lastLatencyMs: try row.decode(column: "last_latency_ms", as: Int64?.self),
            lastError: try row.decode(column: "last_error", as: String?.self))
    }
}

/// One ledger row's key within an app: its environment and transaction.
public struct LedgerRateKey: Hashable, Sendable {
    public var environment: String
    public var transactionId: String

    public init(environment: String, transactionId: String) {
        self.environment = environment
        self.transactionId = transactionId
    }
}

/// A stored USD rate and the day it is of (days since 1970).
public struct StoredRate: Sendable, Hashable {
    public var rate: Double
    public var day: Int64
}
