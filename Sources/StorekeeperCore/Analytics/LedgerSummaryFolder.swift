import Logging
import ServiceLifecycle
import Storage

/// Folds the ledger's moves (the rows its writes replaced and wrote) into the hourly summary while the server runs
/// (`StorageSession.foldLedgerSummaryChanges`): every `interval`, batches of `batch` until none is left. Readers add
/// the moves not folded yet, so what this changes is only how many rows they add, never the numbers. On shutdown the
/// current batch's transaction finishes or rolls back whole; what is left is folded by the next server.
public struct LedgerSummaryFolder: Service {
    let database: StorageDatabase
    let logger: Logger
    var interval: Duration = .seconds(2)
    var batch = 5_000

    public init(database: StorageDatabase, logger: Logger) {
        self.database = database
        self.logger = logger
    }

    public func run() async throws {
        await everyUntilShutdown(interval, logger: logger, failure: "could not fold the ledger's moves into the hourly summary") {
            try await foldAll()
        }
    }

    /// Folds batches until a batch comes back short (nothing left, or another server folding on PostgreSQL).
    func foldAll() async throws {
        let batch = self.batch
        while !Task.isShuttingDownGracefully {
            let folded = try await database.writing { try await $0.foldLedgerSummaryChanges(limit: batch) }
            if folded > 0 { logger.debug("folded the ledger's moves into the hourly summary", metadata: ["rows": "\(folded)"]) }
            if folded < batch { return }
        }
    }
}
