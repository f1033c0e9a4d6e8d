import Logging
import ServiceLifecycle
import Storage

/// Runs the imports started over HTTP, one job at a time, in the server's process; after a restart it takes up the
/// jobs left running (each resumes where it stopped). A service of the server.
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
            for id in try await database.reading({ try await $0.runningImportJobs() }) { submit(id) }
        } catch {
            logger.error("could not list the imports left running", metadata: ["error": "\(error)"])
        }
        await withGracefulShutdownHandler {
            for await job in queue.stream {
                do {
                    var options = job.options
                    if options == nil { options = try await imports.applesPace(job: job.id) }
                    guard let options else { continue }
                    let later = try await imports.run(job: job.id, options: options)
                    logger.info("import finished", metadata: ["job": "\(job.id)", "retryLater": "\(later.count)"])
                } catch is CancellationError {
                    return
                } catch {
                    logger.error("import failed", metadata: ["job": "\(job.id)", "error": "\(error)"])
                }
            }
        } onGracefulShutdown: {
            queue.continuation.finish()
        }
    }
}
