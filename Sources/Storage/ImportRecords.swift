import SQLKit

/// An import of existing customers from Apple: the customers to import (parsed from the operator's file) and how far
/// it has come. A job is identified by its input (the app, the format and the file's digest), so running the same
/// file again resumes the job, and a finished job imports nothing twice.
public struct ImportJobRecord: Sendable, Hashable {
    public var id: String
    public var appId: String
    /// `plain`, `revenuecat` or `apphud`.
    public var format: String
    /// The file's name as given (for people reading the job).
    public var source: String
    /// The customers to import, as JSON (one array; the domain's `ImportCustomer`s).
    public var customers: String
    public var total: Int
    /// Rows of the file that name nothing to import, with their reasons, as JSON.
    public var dropped: String
    public var emitEvents: Bool
    /// `running`, `done`, or `failed` (stopped by an error that is not one customer's; `detail` says which).
    public var status: String
    public var detail: String?
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(
        id: String, appId: String, format: String, source: String, customers: String, total: Int, dropped: String,
        emitEvents: Bool, status: String, detail: String?, createdAt: Int64, updatedAt: Int64
    ) {
        self.id = id
        self.appId = appId
        self.format = format
        self.source = source
        self.customers = customers
        self.total = total
        self.dropped = dropped
        self.emitEvents = emitEvents
        self.status = status
        self.detail = detail
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// One customer of a job, done: written in the transaction that stores what was imported, so a crash never leaves
/// a customer imported but not marked done (or the reverse).
public struct ImportItemRecord: Sendable, Hashable {
    public var jobId: String
    /// The customer's position in the job's list.
    public var item: Int
    /// `imported`, `notFound` or `failed`.
    public var outcome: String
    public var appUserId: String
    public var transactionIds: String
    /// Why it was not imported, or what importing did.
    public var detail: String
    public var doneAt: Int64

    public init(jobId: String, item: Int, outcome: String, appUserId: String, transactionIds: String, detail: String, doneAt: Int64) {
        self.jobId = jobId
        self.item = item
        self.outcome = outcome
        self.appUserId = appUserId
        self.transactionIds = transactionIds
        self.detail = detail
        self.doneAt = doneAt
    }
}

/// How many customers of a job ended each way.
public struct ImportCounts: Sendable, Hashable, Codable {
    public var imported = 0
    public var notFound = 0
    public var failed = 0
    public var done: Int { imported + notFound + failed }

    public init(imported: Int = 0, notFound: Int = 0, failed: Int = 0) {
        self.imported = imported
        self.notFound = notFound
        self.failed = failed
    }
}

extension StorageSession {
    /// Creates the job, or returns the stored one with the same id (the same input: a resumed import).
    public func createImportJob(_ job: ImportJobRecord) async throws -> ImportJobRecord {
        try await sql.raw(
            """
            INSERT INTO import_jobs (id, app_id, format, source, customers, total, dropped, emit_events, status, detail, created_at,
                updated_at)
            VALUES (\(bind: job.id), \(bind: job.appId), \(bind: job.format), \(bind: job.source), \(bind: job.customers),
                \(bind: job.total), \(bind: job.dropped), \(bind: job.emitEvents ? 1 : 0), \(bind: job.status), \(bind: job.detail),
                \(bind: job.createdAt), \(bind: job.updatedAt))
            ON CONFLICT (id) DO NOTHING
            """
        ).run()
        return try await importJob(id: job.id) ?? job
    }

    public func importJob(id: String) async throws -> ImportJobRecord? {
        try await sql.raw("SELECT * FROM import_jobs WHERE id = \(bind: id)").first().map(Self.importJobRecord)
    }

    /// An app's jobs, newest first, without their customer lists.
    public func importJobs(app appId: String, limit: Int) async throws -> [ImportJobRecord] {
        try await sql.raw(
            """
            SELECT id, app_id, format, source, '[]' AS customers, total, dropped, emit_events, status, detail, created_at, updated_at
            FROM import_jobs WHERE app_id = \(bind: appId) ORDER BY created_at DESC, id LIMIT \(bind: limit)
            """
        ).all().map(Self.importJobRecord)
    }

    /// Jobs still running (after a restart, the server takes them up again).
    public func runningImportJobs() async throws -> [String] {
        try await sql.raw("SELECT id FROM import_jobs WHERE status = 'running' ORDER BY created_at").all().map {
            try $0.decode(column: "id", as: String.self)
        }
    }

    public func setImportJobStatus(id: String, status: String, detail: String?, at now: Int64) async throws {
        try await sql.raw(
            "UPDATE import_jobs SET status = \(bind: status), detail = \(bind: detail), updated_at = \(bind: now) WHERE id = \(bind: id)"
        ).run()
    }

    /// Records a customer of the job as done; false if it was already (another run of the job got there first).
    public func recordImportItem(_ item: ImportItemRecord) async throws -> Bool {
        let inserted = try await sql.raw(
            """
            INSERT INTO import_items (job_id, item, outcome, app_user_id, transaction_ids, detail, done_at)
            VALUES (\(bind: item.jobId), \(bind: item.item), \(bind: item.outcome), \(bind: item.appUserId),
                \(bind: item.transactionIds), \(bind: item.detail), \(bind: item.doneAt))
            ON CONFLICT (job_id, item) DO NOTHING RETURNING item
            """
        ).all()
        return !inserted.isEmpty
    }

    /// The positions of the job's customers that are done.
    public func importItemsDone(job jobId: String) async throws -> Set<Int> {
        Set(
            try await sql.raw("SELECT item FROM import_items WHERE job_id = \(bind: jobId)").all().map {
                try $0.decode(column: "item", as: Int.self)
            })
    }

    public func importCounts(job jobId: String) async throws -> ImportCounts {
        var counts = ImportCounts()
        for row in try await sql.raw("SELECT outcome, COUNT(*) AS n FROM import_items WHERE job_id = \(bind: jobId) GROUP BY outcome").all()
        {
            let n = try row.decode(column: "n", as: Int.self)
            switch try row.decode(column: "outcome", as: String.self) {
            case "imported": counts.imported = n
            case "notFound": counts.notFound = n
            default: counts.failed += n
            }
        }
        return counts
    }

    /// The job's customers that were not imported, in the file's order.
    public func importProblems(job jobId: String) async throws -> [ImportItemRecord] {
        try await sql.raw(
            "SELECT * FROM import_items WHERE job_id = \(bind: jobId) AND outcome <> 'imported' ORDER BY item"
        ).all().map { row in
            ImportItemRecord(
                jobId: try row.decode(column: "job_id", as: String.self), item: try row.decode(column: "item", as: Int.self),
                outcome: try row.decode(column: "outcome", as: String.self),
                appUserId: try row.decode(column: "app_user_id", as: String.self),
                transactionIds: try row.decode(column: "transaction_ids", as: String.self),
                detail: try row.decode(column: "detail", as: String.self), doneAt: try row.decode(column: "done_at", as: Int64.self))
        }
    }

    /// The newest event sequence number of a customer's events (0 for none): what an import's own events come after.
    public func lastEventSeq(app appId: String, customer customerId: String) async throws -> Int64 {
        try await sql.raw(
            "SELECT COALESCE(MAX(seq), 0) AS seq FROM events WHERE app_id = \(bind: appId) AND customer_id = \(bind: customerId)"
        ).first().map { try $0.decode(column: "seq", as: Int64.self) } ?? 0
    }

    /// Removes the outbox's deliveries of a customer's events written after `seq` (an import's history, which
    /// destinations are not sent unless asked). Returns how many were removed.
    @discardableResult
    public func withholdDeliveries(app appId: String, customer customerId: String, after seq: Int64) async throws -> Int {
        try await sql.raw(
            """
            DELETE FROM deliveries WHERE app_id = \(bind: appId) AND event_seq IN
                (SELECT seq FROM events WHERE app_id = \(bind: appId) AND customer_id = \(bind: customerId) AND seq > \(bind: seq))
            RETURNING event_seq
            """
        ).all().count
    }

    private static func importJobRecord(_ row: any SQLRow) throws -> ImportJobRecord {
        ImportJobRecord(
            id: try row.decode(column: "id", as: String.self), appId: try row.decode(column: "app_id", as: String.self),
            format: try row.decode(column: "format", as: String.self), source: try row.decode(column: "source", as: String.self),
            customers: try row.decode(column: "customers", as: String.self), total: try row.decode(column: "total", as: Int.self),
            dropped: try row.decode(column: "dropped", as: String.self),
            emitEvents: try row.decode(column: "emit_events", as: Int.self) != 0,
            status: try row.decode(column: "status", as: String.self), detail: try row.decode(column: "detail", as: String?.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self), updatedAt: try row.decode(column: "updated_at", as: Int64.self)
        )
    }
}
