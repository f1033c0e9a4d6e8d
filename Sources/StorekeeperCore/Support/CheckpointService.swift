import Logging
import ServiceLifecycle
import Storage

/// Checkpoints a SQLite database beside the server, every `interval`, rather than inside the commits that pass 1,000
/// pages of log, while every other write waits, and starts a long log over (`WALCheckpointer`). Listed for SQLite only.
/// Should the checkpointer fail to start, the writer keeps its own checkpoints and the server goes on.
struct CheckpointService: Service {
    let database: StorageDatabase
    let logger: Logger
    var interval: Duration = .milliseconds(500)

    func run() async throws {
        let checkpointer: WALCheckpointer?
        do { checkpointer = try await database.takeOverCheckpoints() } catch {
            if Task.isCancelled { return }
            logger.warning("the SQLite writer keeps its own checkpoints", metadata: ["error": "\(error)"])
            checkpointer = nil
        }
        guard let checkpointer else {
            // A service that returns ends the server: this one waits for the end instead.
            try? await gracefulShutdown()
            return
        }
        await everyUntilShutdown(interval, logger: logger, failure: "could not checkpoint the SQLite log") {
            try await checkpointer.checkpointAndRewind()
        }
        await checkpointer.stop()
    }
}
