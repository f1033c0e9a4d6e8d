import Foundation
import Logging
import ServiceLifecycle
import Storage

/// Runs the imports started over HTTP, one job at a time, in the server's process: reads the job's stored file, then
/// imports its customers. After a restart it takes up the jobs left reading or running (each resumes where it stopped). A service of the server.
public struct ImportWorker: Service {
    let imports: CustomerImports
    let database: StorageDatabase
    let logger: Logger
    private let queue = AsyncStream.makeStream(of: Queued.self)

    struct Queued: Sendable {
        var id: String
        var options: CustomerImports.RunOptions?
    }

    init(imports: CustomerImports, database: StorageDatabase, logger: Logger) {
        self.imports = imports
        self.database = database
        self.logger = logger
    }

    /// Queues a job; `options` nil paces it at Apple's documented limit for the app's environments.
    public func submit(_ id: String, options: CustomerImports.RunOptions? = nil) {
        queue.continuation.yield(Queued(id: id, options: options))
    }

    public func run() async throws {
        do {
            try await imports.discardAbandonedUploads()
            for id in try await database.reading({ try await $0.unfinishedImportJobs() }) { submit(id) }
        } catch {
            logger.error("could not list the imports left reading or running", metadata: ["error": "\(error)"])
        }
        await withGracefulShutdownHandler {
            for await job in queue.stream {
                do {
                    var options = job.options
                    if options == nil { options = try await imports.applesPace(job: job.id) }
                    guard let options else { continue }
                    // A shutdown stops the job between customers (or parts of its file), not after its last.
                    let imports = self.imports
                    let later = try await cancelWhenGracefulShutdown { try await imports.run(job: job.id, options: options) }
                    logger.info("import finished", metadata: ["job": "\(job.id)", "retryLater": "\(later.count)"])
                } catch is CancellationError {
                    await resumeAtNextStart(job.id)
                    return
                } catch {
                    logger.error("import failed", metadata: ["job": "\(job.id)", "error": "\(error)"])
                }
            }
        } onGracefulShutdown: {
            queue.continuation.finish()
        }
    }

    /// A job the server's shutdown stopped is `running` again, for the next start to take up (a run stopped by Ctrl-C
    /// is `incomplete` until run again).
    private func resumeAtNextStart(_ id: String) async {
        let database = self.database
        // In a task of its own: this one is cancelled.
        let written = await Task {
            try await database.writing { session in
                guard let job = try await session.importJob(id: id), job.status == "incomplete" else { return }
                try await session.setImportJobStatus(
                    id: id, status: "running", detail: "stopped by the server's shutdown: resumes at its next start",
                    at: Int64(Date().timeIntervalSince1970 * 1000))
            }
        }.result
        if case .failure(let error) = written {
            logger.error("could not mark the stopped import to resume", metadata: ["job": "\(id)", "error": "\(error)"])
        }
    }
}
