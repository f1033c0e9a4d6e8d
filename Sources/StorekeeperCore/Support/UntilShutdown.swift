import Logging
import ServiceLifecycle

/// The loop of the server's periodic services: runs `work` now and then every `interval` until the service group shuts
/// down or the task is cancelled (a wait in progress ends at once). An error `work` throws is logged as a warning,
/// `failure` with the error, and the loop goes on; one thrown because the task was cancelled (a server whose start
/// failed stops its services mid-work) is not a failure to report.
public func everyUntilShutdown(
    _ interval: Duration, logger: Logger, failure: Logger.Message, _ work: () async throws -> Void
) async {
    while !Task.isCancelled && !Task.isShuttingDownGracefully {
        do { try await work() } catch {
            if Task.isCancelled { return }
            logger.warning(failure, metadata: ["error": "\(error)"])
        }
        do { try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) } } catch { return }
    }
}
