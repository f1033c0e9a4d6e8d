import Crypto
import Foundation
import NIOCore
import Storage

/// Receiving an import's file: its bytes stored in the database as they come, in parts of `partBytes` (memory holds
/// one part, whatever the file's size), hashed on the way to name the job. The file is read later, by the import
/// worker (`read(job:)`): receiving answers as soon as the last byte is stored.
extension CustomerImports {
    /// The size of a stored part of an upload.
    public static let partBytes = 1 << 20
    /// The largest file received (a million customers' RevenueCat transactions are about this size).
    public static let maxFileBytes = 512 * 1024 * 1024

    /// Stores a file of customers as it comes and makes its job (status `reading`), or finds the job the same input
    /// made before (the same app, format, events choice and bytes), whose upload is then not kept (unless that job's
    /// reading failed: it reads this one). `format` nil: told by
    /// the file's first bytes. Refused before anything is stored: an app without App Store Server API credentials; as
    /// soon as its start shows it: a CSV header without the format's columns. An error of `body` (a client gone, a size
    /// limit) is thrown as it is, after what was stored is removed.
    public func receive<Body: AsyncSequence>(
        _ body: Body, format: ImportFormat?, app appId: String, source: String, emitEvents: Bool
    ) async throws -> ImportJobStatus where Body.Element == ByteBuffer {
        let app = try await registry.app(id: appId)
        guard app.config.serverAPI != nil, appleAPI != nil else {
            throw CoreError.invalidInput(
                field: "app", "the app has no App Store Server API key (serverAPI in its configuration): an import asks Apple")
        }
        let upload = "upl_" + Hex.random(bytes: 12)
        var store = PartWriter(database: database, upload: upload, format: format, prefix: "\(appId)\n%@\n\(emitEvents)\n")
        do {
            for try await buffer in body {
                try await store.append(buffer.readableBytesView)
            }
            try await store.close()
        } catch {
            // In a task of its own: this one may be cancelled (its client gone), and the parts must still go.
            try? await Task { [self] in try await discard(upload: upload) }.value
            throw error
        }
        guard let format = store.format, store.size > 0 else { throw CoreError.invalidInput(field: "file", "the file is empty") }
        let id = "imp_" + Hex.encode(Array(store.digest.finalize())).prefix(24)
        let now = clock().millisecondsSince1970
        let record = ImportJobRecord(
            id: id, appId: appId, format: format.rawValue, source: source, total: 0, droppedLines: 0, emitEvents: emitEvents,
            status: "reading", detail: nil, uploadId: upload, createdAt: now, updatedAt: now)
        let job = try await database.writing { session -> ImportJobRecord in
            let job = try await session.createImportJob(record)
            guard job.uploadId != upload else { return job }
            // A job of the same file whose reading failed (a bad line, or its file lost) reads this upload again.
            if job.status == "failed", job.total == 0 {
                try await session.attachImportUpload(job: job.id, upload: upload, at: now)
                return try await session.importJob(id: job.id) ?? job
            }
            return job
        }
        if job.uploadId != upload { try await discard(upload: upload) }
        return try await status(of: job)
    }

    /// Removes an upload's parts, one a transaction.
    func discard(upload: String) async throws {
        for part in try await database.reading({ try await $0.importUploadParts(upload) }) {
            try await database.writing { try await $0.deleteImportUploadPart(upload: upload, part: part) }
        }
    }

    /// Removes the uploads of jobs no longer reading them (left by a server stopped before it removed them).
    func discardAbandonedUploads() async throws {
        for upload in try await database.reading({ try await $0.abandonedImportUploads() }) { try await discard(upload: upload) }
    }

    /// Writes an upload's parts, hashing them; the format is told (and a CSV header checked) from the first part.
    struct PartWriter {
        let database: StorageDatabase
        let upload: String
        var format: ImportFormat?
        /// What the digest starts with, `%@` standing for the format.
        let prefix: String
        var digest = SHA256()
        var pending: [UInt8] = []
        var part = 0
        var size = 0
        private var started = false

        init(database: StorageDatabase, upload: String, format: ImportFormat?, prefix: String) {
            self.database = database
            self.upload = upload
            self.format = format
            self.prefix = prefix
            pending.reserveCapacity(CustomerImports.partBytes)
        }

        mutating func append(_ bytes: some Collection<UInt8>) async throws {
            size += bytes.count
            guard size <= CustomerImports.maxFileBytes else {
                throw CoreError.invalidInput(field: "file", "the file is over \(CustomerImports.maxFileBytes >> 20) MB")
            }
            var rest = bytes[...]
            while !rest.isEmpty {
                let room = CustomerImports.partBytes - pending.count
                pending.append(contentsOf: rest.prefix(room))
                rest = rest.dropFirst(room)
                if pending.count == CustomerImports.partBytes { try await flush() }
            }
        }

        mutating func close() async throws {
            if !pending.isEmpty || !started { try await flush() }
        }

        private mutating func flush() async throws {
            if !started {
                started = true
                let head = Array(pending.prefix(ImportFormat.headBytes))
                guard !head.isEmpty else { return }
                let format = self.format ?? ImportFormat.detect(head)
                try ImportFileReader.checkHead(head, format: format)
                self.format = format
                digest.update(data: Data(prefix.replacingOccurrences(of: "%@", with: format.rawValue).utf8))
            }
            guard !pending.isEmpty else { return }
            digest.update(data: pending)
            let (bytes, upload, part) = (pending, self.upload, self.part)
            try await database.writing { try await $0.insertImportUploadPart(upload: upload, part: part, bytes: bytes) }
            self.part += 1
            pending.removeAll(keepingCapacity: true)
        }
    }
}
