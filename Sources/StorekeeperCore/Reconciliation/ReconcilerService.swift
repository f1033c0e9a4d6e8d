import Logging
import ServiceLifecycle

/// Reconciliation as a service of the server: a pass every `interval`, until shutdown.
public struct ReconcilerService: Service {
    let reconciler: Reconciler
    let interval: Duration
    let logger: Logger

    public init(reconciler: Reconciler, interval: Duration, logger: Logger) {
        self.reconciler = reconciler
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        await everyUntilShutdown(interval, logger: logger, failure: "could not reconcile") {
            let report = await reconciler.run()
            if !report.errors.isEmpty || report.notificationsNew > 0 || report.customersRefreshed > 0 {
                logger.info(
                    "reconciled",
                    metadata: [
                        "notifications": "\(report.notificationsNew)", "subscriptions": "\(report.subscriptionsChecked)",
                        "customers": "\(report.customersRefreshed)", "errors": "\(report.errors.count)",
                    ])
            }
        }
    }
}
