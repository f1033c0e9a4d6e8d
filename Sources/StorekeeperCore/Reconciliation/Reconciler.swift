import AppStore
import Entitlements
import Foundation
import Storage

/// Brings the stored facts back in line with Apple's, for apps with Server API credentials: notifications Apple
/// failed to deliver (Notification History, `onlyFailures`), and the statuses of subscriptions near their expiry or
/// in billing retry. It also re-evaluates customers whose state changed with time alone, so that events such as an
/// expiry are recorded even for customers nobody reads.
public struct Reconciler: Sendable {
    public struct Report: Codable, Sendable, Hashable {
        public var apps = 0
        public var notificationsFetched = 0
        public var notificationsNew = 0
        public var subscriptionsChecked = 0
        public var customersRefreshed = 0
        public var errors: [String] = []
    }

    let database: StorageDatabase
    let registry: AppRegistry
    let ingestion: NotificationIngestion
    let recomputer: StateRecomputer
    let appleAPI: AppleAPIAccess?
    let metrics: ServerMetrics
    let clock: @Sendable () -> Date
    /// How far back Notification History is read.
    public var lookback: Duration = .seconds(3 * 86_400)
    /// At most this many subscription statuses are asked per app and environment in one pass (Apple rate-limits the
    /// Server API per app); the rest wait for the next pass.
    public var subscriptionsPerPass = 200

    /// One pass over every app.
    public func run() async -> Report {
        var report = Report()
        let now = clock().millisecondsSince1970
        let apps: [AppRecord]
        do {
            apps = try await database.reading { try await $0.apps() }
        } catch {
            report.errors.append("listing apps: \(error)")
            return report
        }
        for record in apps {
            guard let app = try? await registry.app(id: record.id) else {
                report.errors.append("app \(record.id): its configuration does not load")
                continue
            }
            report.apps += 1
            if app.config.serverAPI != nil, let apple = appleAPI {
                for environment in app.config.allowedEnvironments where environment == .production || environment == .sandbox {
                    await reconcile(app: app, environment: environment, apple: apple, now: now, report: &report)
                }
            }
        }
        await refreshDue(now: now, report: &report)
        metrics.reconciliation("notifications", count: report.notificationsNew)
        metrics.reconciliation("subscriptions", count: report.subscriptionsChecked)
        metrics.reconciliation("customers", count: report.customersRefreshed)
        return report
    }

    private func reconcile(app: AppRuntime, environment: Environment, apple: AppleAPIAccess, now: Int64, report: inout Report) async {
        let client: AppStoreServerAPIClient
        do {
            guard let made = try await apple.client(app: app, environment: environment) else { return }
            client = made
        } catch {
            report.errors.append("app \(app.id): the Server API key does not load: \(error)")
            return
        }
        // Notifications Apple could not deliver.
        let lookbackMs = lookback.wholeMilliseconds
        let request = NotificationHistoryRequest(
            startDate: Timestamp(millisecondsSince1970: now - lookbackMs), endDate: Timestamp(millisecondsSince1970: now),
            onlyFailures: true)
        var token: String?
        var pages = 0
        repeat {
            do {
                let page = try await client.notificationHistory(request, paginationToken: token)
                for item in page.items {
                    guard let notification = item.notification else { continue }
                    report.notificationsFetched += 1
                    do {
                        let outcome = try await ingestion.applyFromHistory(notification.value, signedPayload: notification.jws, app: app)
                        if outcome != .duplicate { report.notificationsNew += 1 }
                    } catch {
                        report.errors.append("app \(app.id): notification: \(error)")
                    }
                }
                token = page.hasMore ? page.paginationToken : nil
            } catch {
                report.errors.append("app \(app.id) \(environment.rawValue): notification history: \(error)")
                token = nil
            }
            pages += 1
        } while token != nil && pages < 100

        // Subscriptions that expired within Apple's billing-retry window or expire within a day: ask for their status.
        let originals: [String]
        do {
            originals = try await database.reading {
                try await $0.originalTransactionsExpiring(
                    app: app.id, from: now - EntitlementEngine.billingRetryLimit, to: now + 86_400_000, limit: subscriptionsPerPass)
            }
        } catch {
            report.errors.append("app \(app.id): \(error)")
            return
        }
        for original in originals {
            let pulled = await apple.statuses(app: app, transactionId: original, environment: environment, now: now)
            guard !pulled.transactions.isEmpty || !pulled.renewals.isEmpty else { continue }
            report.subscriptionsChecked += 1
            do {
                try await store(pulled, app: app, originalTransactionId: original, now: now)
            } catch {
                report.errors.append("app \(app.id): storing \(original): \(error)")
            }
        }
    }

    private func refreshDue(now: Int64, report: inout Report) async {
        // Each customer once a pass: a stored state that stays due (an environment the app no longer allows) must not
        // be refreshed over and over.
        var refreshed: Set<String> = []
        for _ in 0..<100 {
            let due: [DueCustomer]
            do {
                due = try await database.reading { try await $0.customersDue(at: now, limit: 500) }
            } catch {
                report.errors.append("customers due: \(error)")
                return
            }
            let fresh = due.filter { !refreshed.contains($0.customerId) }
            if fresh.isEmpty { return }
            for customer in fresh {
                refreshed.insert(customer.customerId)
                do {
                    let app = try await registry.app(id: customer.appId)
                    try await recomputer.refresh(app: app, customerId: customer.customerId, now: clock().millisecondsSince1970)
                    report.customersRefreshed += 1
                } catch {
                    report.errors.append("customer \(customer.customerId): \(error)")
                    return
                }
            }
        }
    }

    /// Stores what was pulled from Apple about one original transaction and recomputes its owner, in one transaction.
    private func store(_ pulled: AppleAPIAccess.Pulled, app: AppRuntime, originalTransactionId: String, now: Int64) async throws {
        let recomputer = self.recomputer
        let recomputed: RecomputedCustomer? = try await database.writing { session in
            var fresh = false
            for t in pulled.transactions { fresh = try await session.insert(t) || fresh }
            for r in pulled.renewals { fresh = try await session.insert(r) || fresh }
            guard fresh, let owner = try await session.owner(app: app.id, originalTransactionId: originalTransactionId) else { return nil }
            return try await recomputer.lockAndRecompute(session, app: app, customerId: owner, now: now)
        }
        if let recomputed { recomputer.committed(recomputed) }
    }
}
