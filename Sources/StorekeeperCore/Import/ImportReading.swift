import Foundation
import Storage

/// Reading a job's stored file into the customers it names: one part at a time, each part's lines folded into the
/// customers stored so far (grouped by app user id in the database, wherever in the file their lines are) in one
/// transaction with the job's counts. Memory holds a part and its rows, whatever the file's size. A read interrupted
/// (a restart, the database gone) starts again from the file's first part.
extension CustomerImports {
    /// Reads the job's file if it is still `reading`; returns whether the job has customers to run. A file that cannot
    /// be read (a bad line, no customer) fails the job with the reason and no customer (total 0: running it does
    /// nothing); a storage error leaves it `reading`, for the next start of the worker or the same file posted again.
    @discardableResult
    public func read(job id: String) async throws -> Bool {
        guard let job = try await database.reading({ try await $0.importJob(id: id) }) else { throw CoreError.notFound("no import \(id)") }
        guard job.status == "reading" else { return job.status != "done" && !(job.status == "failed" && job.total == 0) }
        guard let upload = job.uploadId, let format = ImportFormat(rawValue: job.format) else {
            try await finishReading(job, status: "failed", detail: "the job's file is gone: post it again", counts: nil)
            return false
        }
        try await database.writing { try await $0.deleteImportCustomers(job: id) }
        var reader = ImportFileReader(format: format)
        var counts = ReadCounts()
        do {
            for part in 0... {
                guard let bytes = try await database.reading({ try await $0.importUploadPart(upload: upload, part: part) }) else { break }
                try Task.checkCancellation()
                try await save(try reader.feed(bytes), job: id, counts: &counts)
            }
            try await save(try reader.finish(), job: id, counts: &counts)
        } catch let error as CoreError {
            if case .storage = error { throw error }
            // A file with a line that cannot be read imports nothing: what was read of it is forgotten.
            try await database.writing { try await $0.deleteImportCustomers(job: id) }
            try await finishReading(job, status: "failed", detail: error.description, counts: ReadCounts())
            return false
        }
        guard counts.customers > 0 || counts.dropped > 0 else {
            try await finishReading(job, status: "failed", detail: "file: the file names no customer", counts: counts)
            return false
        }
        try await finishReading(job, status: "running", detail: nil, counts: counts)
        return counts.customers > 0
    }

    /// Customers and dropped lines read so far.
    struct ReadCounts {
        var customers = 0
        var dropped = 0
    }

    /// Rows (or dropped lines) folded in one transaction: a few hundred, so that each is short (on PostgreSQL a long
    /// transaction holds back every event stream's horizon, and any transaction has a 15-second deadline).
    static let rowsPerTransaction = 400

    /// Folds a part's rows into the job's customers and records its dropped lines, a few hundred to a transaction
    /// (each also recording the counts so far).
    private func save(_ read: ImportFileReader.Read, job id: String, counts: inout ReadCounts) async throws {
        let size = Self.rowsPerTransaction
        for start in stride(from: 0, to: read.rows.count, by: size) {
            let rows = Array(read.rows[start..<min(start + size, read.rows.count)])
            counts = try await fold(rows, job: id, counts: counts)
        }
        for start in stride(from: 0, to: read.dropped.count, by: size) {
            let lines = read.dropped[start..<min(start + size, read.dropped.count)].map {
                ImportDroppedRecord(line: $0.line, reason: $0.reason)
            }
            let (first, now) = (counts.dropped, clock().millisecondsSince1970)
            counts.dropped += lines.count
            let total = counts
            try await database.writing { session in
                try await session.insertImportDropped(job: id, first: first, lines)
                try await session.setImportJobRead(id: id, total: total.customers, droppedLines: total.dropped, at: now)
            }
        }
    }

    /// One transaction: the customers the rows name read, the rows folded into them (a new customer the next item),
    /// and those changed written back in one statement.
    private func fold(_ rows: [ImportRow], job id: String, counts start: ReadCounts) async throws -> ReadCounts {
        let now = clock().millisecondsSince1970
        return try await database.writing { session -> ReadCounts in
            var counts = start
            var keys: [String] = []
            var seen: Set<String> = []
            for row in rows where seen.insert(row.key).inserted { keys.append(row.key) }
            var customers: [String: ImportCustomerRecord] = [:]
            for record in try await session.importCustomers(job: id, keys: keys) { customers[record.key] = record }
            var changed: [String] = []
            var changedSet: Set<String> = []
            for row in rows {
                let record: ImportCustomerRecord
                if let stored = customers[row.key] {
                    var customer = ImportCustomer(stored)
                    customer.fold(row)
                    guard customer != ImportCustomer(stored) else { continue }
                    record = ImportCustomerRecord(customer, item: stored.item, key: row.key)
                } else {
                    record = ImportCustomerRecord(ImportCustomer(row), item: counts.customers, key: row.key)
                    counts.customers += 1
                }
                customers[row.key] = record
                if changedSet.insert(row.key).inserted { changed.append(row.key) }
            }
            try await session.saveImportCustomers(job: id, changed.compactMap { customers[$0] })
            try await session.setImportJobRead(id: id, total: counts.customers, droppedLines: counts.dropped, at: now)
            return counts
        }
    }

    private func finishReading(_ job: ImportJobRecord, status: String, detail: String?, counts: ReadCounts?) async throws {
        let now = clock().millisecondsSince1970
        try await database.writing { session in
            if let counts { try await session.setImportJobRead(id: job.id, total: counts.customers, droppedLines: counts.dropped, at: now) }
            try await session.setImportJobStatus(id: job.id, status: status, detail: detail, at: now)
        }
        if let upload = job.uploadId { try await discard(upload: upload) }
    }
}

extension ImportCustomer {
    init(_ record: ImportCustomerRecord) {
        self.init(
            appUserId: record.appUserId, aliases: record.aliases, transactionIds: record.transactionIds,
            appAccountToken: record.appAccountToken, environment: record.environment, line: record.line)
    }
}

extension ImportCustomerRecord {
    init(_ customer: ImportCustomer, item: Int, key: String) {
        self.init(
            item: item, key: key, appUserId: customer.appUserId, aliases: customer.aliases, transactionIds: customer.transactionIds,
            appAccountToken: customer.appAccountToken, environment: customer.environment, line: customer.line)
    }
}
