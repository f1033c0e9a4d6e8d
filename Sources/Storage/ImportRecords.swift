import Foundation
import SQLKit

/// An import of existing customers from Apple: the customers to import (read from the operator's file into
/// `import_customers`) and how far it has come. A job is identified by its input (the app, the format and the file's
/// digest), so posting the same file again finds the job, and a finished job imports nothing twice.
public struct ImportJobRecord: Sendable, Hashable {
    public var id: String
    public var appId: String
    /// `plain`, `revenuecat` or `apphud`.
    public var format: String
    /// The file's name as given (for people reading the job).
    public var source: String
    /// Customers the file names (known once it is read).
    public var total: Int
    /// Lines of the file that name nothing to import (known once it is read).
    public var droppedLines: Int
    public var emitEvents: Bool
    /// `reading` (the file is stored in `import_uploads`, not yet read), `running`, `done`, `incomplete`, or `failed`
    /// (stopped by an error that is not one customer's; `detail` says which).
    public var status: String
    public var detail: String?
    /// The upload the job reads its file from while `reading`.
    public var uploadId: String?
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(
        id: String, appId: String, format: String, source: String, total: Int, droppedLines: Int, emitEvents: Bool, status: String,
        detail: String?, uploadId: String?, createdAt: Int64, updatedAt: Int64
    ) {
        self.id = id
        self.appId = appId
        self.format = format
        self.source = source
        self.total = total
        self.droppedLines = droppedLines
        self.emitEvents = emitEvents
        self.status = status
        self.detail = detail
        self.uploadId = uploadId
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// One customer a job's file names, as read: all the lines naming them folded into one (`item` is their position
/// among the file's customers, by the first line naming them).
public struct ImportCustomerRecord: Sendable, Hashable {
    public var item: Int
    /// What the file's lines are grouped by: the app user id, or for an unnamed customer its first transaction id.
    public var key: String
    public var appUserId: String?
    public var aliases: [String]
    public var transactionIds: [String]
    public var appAccountToken: String?
    public var environment: String?
    public var line: Int

    public init(
        item: Int, key: String, appUserId: String?, aliases: [String], transactionIds: [String], appAccountToken: String?,
        environment: String?, line: Int
    ) {
        self.item = item
        self.key = key
        self.appUserId = appUserId
        self.aliases = aliases
        self.transactionIds = transactionIds
        self.appAccountToken = appAccountToken
        self.environment = environment
        self.line = line
    }
}

/// A line of a job's file that names nothing to import.
public struct ImportDroppedRecord: Sendable, Hashable {
    public var line: Int
    public var reason: String

    public init(line: Int, reason: String) {
        self.line = line
        self.reason = reason
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
    /// Creates the job, or returns the stored one with the same id (the same input).
    public func createImportJob(_ job: ImportJobRecord) async throws -> ImportJobRecord {
        try await sql.raw(
            """
            INSERT INTO import_jobs (id, app_id, format, source, customers, total, dropped, dropped_count, emit_events, status,
                detail, upload_id, created_at, updated_at)
            VALUES (\(bind: job.id), \(bind: job.appId), \(bind: job.format), \(bind: job.source), '', \(bind: job.total), '',
                \(bind: job.droppedLines), \(bind: job.emitEvents ? 1 : 0), \(bind: job.status), \(bind: job.detail),
                \(bind: job.uploadId), \(bind: job.createdAt), \(bind: job.updatedAt))
            ON CONFLICT (id) DO NOTHING
            """
        ).run()
        return try await importJob(id: job.id) ?? job
    }

    public func importJob(id: String) async throws -> ImportJobRecord? {
        try await sql.raw("SELECT \(unsafeRaw: Self.importJobColumns) FROM import_jobs WHERE id = \(bind: id)").first().map(
            Self.importJobRecord)
    }

    /// An app's jobs, newest first.
    public func importJobs(app appId: String, limit: Int) async throws -> [ImportJobRecord] {
        try await sql.raw(
            """
            SELECT \(unsafeRaw: Self.importJobColumns) FROM import_jobs WHERE app_id = \(bind: appId)
            ORDER BY created_at DESC, id LIMIT \(bind: limit)
            """
        ).all().map(Self.importJobRecord)
    }

    /// Jobs still reading their file or running (after a restart, the server takes them up again).
    public func unfinishedImportJobs() async throws -> [String] {
        try await sql.raw("SELECT id FROM import_jobs WHERE status IN ('reading', 'running') ORDER BY created_at").all().map {
            try $0.decode(column: "id", as: String.self)
        }
    }

    public func setImportJobStatus(id: String, status: String, detail: String?, at now: Int64) async throws {
        try await sql.raw(
            "UPDATE import_jobs SET status = \(bind: status), detail = \(bind: detail), updated_at = \(bind: now) WHERE id = \(bind: id)"
        ).run()
    }

    /// A job whose reading failed for want of the database, given a new upload of the same file to read.
    public func attachImportUpload(job id: String, upload: String, at now: Int64) async throws {
        try await sql.raw(
            """
            UPDATE import_jobs SET upload_id = \(bind: upload), status = 'reading', detail = NULL, updated_at = \(bind: now)
            WHERE id = \(bind: id)
            """
        ).run()
    }

    /// How much of the file reading has found so far (or in all, once it is read).
    public func setImportJobRead(id: String, total: Int, droppedLines: Int, at now: Int64) async throws {
        try await sql.raw(
            """
            UPDATE import_jobs SET total = \(bind: total), dropped_count = \(bind: droppedLines), updated_at = \(bind: now)
            WHERE id = \(bind: id)
            """
        ).run()
    }

    // MARK: The uploaded file, in parts

    /// Stores a part of an upload (parts are numbered from 0 in the file's order).
    public func insertImportUploadPart(upload: String, part: Int, bytes: [UInt8]) async throws {
        try await sql.raw(
            "INSERT INTO import_uploads (upload_id, part, bytes) VALUES (\(bind: upload), \(bind: part), \(bind: Data(bytes)))"
        ).run()
    }

    /// The upload's part `part`, or nil past its last.
    public func importUploadPart(upload: String, part: Int) async throws -> [UInt8]? {
        try await sql.raw("SELECT bytes FROM import_uploads WHERE upload_id = \(bind: upload) AND part = \(bind: part)").first().map {
            [UInt8](try $0.decode(column: "bytes", as: Data.self))
        }
    }

    /// The numbers of an upload's parts.
    public func importUploadParts(_ upload: String) async throws -> [Int] {
        try await sql.raw("SELECT part FROM import_uploads WHERE upload_id = \(bind: upload) ORDER BY part").all().map {
            try $0.decode(column: "part", as: Int.self)
        }
    }

    /// Removes one part of an upload: a part a transaction (SQLite holds what a transaction deletes in memory until
    /// it commits, so a whole file's parts at once would cost its size).
    public func deleteImportUploadPart(upload: String, part: Int) async throws {
        try await sql.raw("DELETE FROM import_uploads WHERE upload_id = \(bind: upload) AND part = \(bind: part)").run()
    }

    /// Uploads left behind by jobs no longer reading them (a server stopped between a job's reading and the removal
    /// of its file).
    public func abandonedImportUploads() async throws -> [String] {
        try await sql.raw(
            """
            SELECT DISTINCT u.upload_id FROM import_uploads u JOIN import_jobs j ON j.upload_id = u.upload_id
            WHERE j.status <> 'reading'
            """
        ).all().map { try $0.decode(column: "upload_id", as: String.self) }
    }

    // MARK: The customers a job's file names

    /// Forgets what reading a job's file had found (before it is read again from the start).
    public func deleteImportCustomers(job jobId: String) async throws {
        try await sql.raw("DELETE FROM import_customers WHERE job_id = \(bind: jobId)").run()
        try await sql.raw("DELETE FROM import_dropped WHERE job_id = \(bind: jobId)").run()
    }

    /// The job's customers stored under `keys`.
    public func importCustomers(job jobId: String, keys: [String]) async throws -> [ImportCustomerRecord] {
        guard !keys.isEmpty else { return [] }
        return try await sql.raw(
            """
            SELECT * FROM import_customers WHERE job_id = \(bind: jobId) AND key IN (\(SQLList(keys.map { SQLBind($0) })))
            """
        ).all().map(Self.importCustomerRecord)
    }

    /// Stores customers read from the job's file, or replaces them (the same items) with more of their lines folded
    /// in: one statement (at most a few hundred at a time: 9 values each).
    public func saveImportCustomers(job jobId: String, _ customers: [ImportCustomerRecord]) async throws {
        guard !customers.isEmpty else { return }
        var insert = sql.insert(into: "import_customers").columns(
            "job_id", "item", "key", "app_user_id", "aliases", "transaction_ids", "app_account_token", "environment", "line")
        for customer in customers {
            insert = insert.values(
                SQLBind(jobId), SQLBind(customer.item), SQLBind(customer.key), SQLBind(customer.appUserId),
                SQLBind(Self.joinedAliases(customer.aliases)), SQLBind(customer.transactionIds.joined(separator: " ")),
                SQLBind(customer.appAccountToken), SQLBind(customer.environment), SQLBind(customer.line))
        }
        try await insert.onConflict(with: ["job_id", "item"]) {
            $0.set(excludedValueOf: "aliases").set(excludedValueOf: "transaction_ids").set(excludedValueOf: "app_account_token")
                .set(excludedValueOf: "environment")
        }.run()
    }

    /// Customers of the job after `item` not done yet, in the file's order, at most `limit`.
    public func pendingImportCustomers(job jobId: String, after item: Int, limit: Int) async throws -> [ImportCustomerRecord] {
        try await sql.raw(
            """
            SELECT c.* FROM import_customers c
            WHERE c.job_id = \(bind: jobId) AND c.item > \(bind: item)
                AND NOT EXISTS (SELECT 1 FROM import_items i WHERE i.job_id = c.job_id AND i.item = c.item)
            ORDER BY c.item LIMIT \(bind: limit)
            """
        ).all().map(Self.importCustomerRecord)
    }

    /// The job's customers at `items`.
    public func importCustomers(job jobId: String, items: [Int]) async throws -> [ImportCustomerRecord] {
        guard !items.isEmpty else { return [] }
        return try await sql.raw(
            "SELECT * FROM import_customers WHERE job_id = \(bind: jobId) AND item IN (\(SQLList(items.map { SQLBind($0) })))"
        ).all().map(Self.importCustomerRecord)
    }

    /// Records lines of the job's file left out; `first` numbers the first of them among the job's. One statement.
    public func insertImportDropped(job jobId: String, first: Int, _ lines: [ImportDroppedRecord]) async throws {
        guard !lines.isEmpty else { return }
        var insert = sql.insert(into: "import_dropped").columns("job_id", "seq", "line", "reason")
        for (offset, line) in lines.enumerated() {
            insert = insert.values(SQLBind(jobId), SQLBind(first + offset), SQLBind(line.line), SQLBind(line.reason))
        }
        try await insert.run()
    }

    /// The lines of the job's file left out, in the file's order.
    public func importDropped(job jobId: String) async throws -> [ImportDroppedRecord] {
        try await sql.raw("SELECT line, reason FROM import_dropped WHERE job_id = \(bind: jobId) ORDER BY seq").all().map {
            ImportDroppedRecord(line: try $0.decode(column: "line", as: Int.self), reason: try $0.decode(column: "reason", as: String.self))
        }
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

    /// The counts of several jobs at once (a job with nothing done has none).
    public func importCounts(jobs: [String]) async throws -> [String: ImportCounts] {
        guard !jobs.isEmpty else { return [:] }
        var counts: [String: ImportCounts] = [:]
        for row in try await sql.raw(
            """
            SELECT job_id, outcome, COUNT(*) AS n FROM import_items WHERE job_id IN (\(SQLList(jobs.map { SQLBind($0) }))) GROUP BY job_id, outcome
            """
        ).all() {
            let job = try row.decode(column: "job_id", as: String.self)
            let n = try row.decode(column: "n", as: Int.self)
            switch try row.decode(column: "outcome", as: String.self) {
            case "imported": counts[job, default: ImportCounts()].imported = n
            case "notFound": counts[job, default: ImportCounts()].notFound = n
            default: counts[job, default: ImportCounts()].failed += n
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

    private static let importJobColumns =
        "id, app_id, format, source, total, dropped_count, emit_events, status, detail, upload_id, created_at, updated_at"

    private static func importJobRecord(_ row: any SQLRow) throws -> ImportJobRecord {
        ImportJobRecord(
            id: try row.decode(column: "id", as: String.self), appId: try row.decode(column: "app_id", as: String.self),
            format: try row.decode(column: "format", as: String.self), source: try row.decode(column: "source", as: String.self),
            total: try row.decode(column: "total", as: Int.self), droppedLines: try row.decode(column: "dropped_count", as: Int.self),
            emitEvents: try row.decode(column: "emit_events", as: Int.self) != 0,
            status: try row.decode(column: "status", as: String.self), detail: try row.decode(column: "detail", as: String?.self),
            uploadId: try row.decode(column: "upload_id", as: String?.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self), updatedAt: try row.decode(column: "updated_at", as: Int64.self)
        )
    }

    private static func importCustomerRecord(_ row: any SQLRow) throws -> ImportCustomerRecord {
        let transactionIds = try row.decode(column: "transaction_ids", as: String.self)
        return ImportCustomerRecord(
            item: try row.decode(column: "item", as: Int.self), key: try row.decode(column: "key", as: String.self),
            appUserId: try row.decode(column: "app_user_id", as: String?.self),
            aliases: try splitAliases(try row.decode(column: "aliases", as: String.self)),
            transactionIds: transactionIds.split(separator: " ").map(String.init),
            appAccountToken: try row.decode(column: "app_account_token", as: String?.self),
            environment: try row.decode(column: "environment", as: String?.self), line: try row.decode(column: "line", as: Int.self))
    }

    /// Aliases are app user ids, which may hold any character but a control: as a JSON array.
    static func joinedAliases(_ aliases: [String]) -> String {
        aliases.isEmpty ? "[]" : (try? JSONEncoder().encode(aliases)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    }

    static func splitAliases(_ text: String) throws -> [String] {
        text == "[]" || text.isEmpty ? [] : try JSONDecoder().decode([String].self, from: Data(text.utf8))
    }
}
