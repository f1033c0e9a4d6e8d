import CoreMetrics
import Foundation
import Integrations
import Prometheus
import Storage

/// The server's metrics, through swift-metrics into a Prometheus registry of its own (so that several servers in one
/// process, as in the tests, never share counters).
public final class ServerMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory

    public init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(5),
        ]
        self.factory = factory
        // Which release answers: the version and commit as labels of a constant 1 (Prometheus's build-info idiom).
        Gauge(
            label: "storekeeper_build_info", dimensions: [("version", Release.version), ("commit", Release.commit)], factory: factory
        ).record(1)
    }

    public func request(method: String, route: String, status: Int, duration: Duration) {
        let dimensions = [("method", method), ("route", route), ("status", String(status))]
        Counter(label: "storekeeper_http_requests_total", dimensions: dimensions, factory: factory).increment()
        Timer(
            label: "storekeeper_http_request_duration_seconds", dimensions: [("method", method), ("route", route)],
            preferredDisplayUnit: .seconds, factory: factory
        )
        .recordNanoseconds(Int64(clamping: duration.wholeNanoseconds))
    }

    func notification(type: String, result: String) {
        Counter(label: "storekeeper_notifications_total", dimensions: [("type", type), ("result", result)], factory: factory).increment()
    }

    func verificationFailure(_ code: String) {
        Counter(label: "storekeeper_verification_failures_total", dimensions: [("error", code)], factory: factory).increment()
    }

    func appleCall(_ endpoint: String, result: String) {
        Counter(label: "storekeeper_apple_calls_total", dimensions: [("endpoint", endpoint), ("result", result)], factory: factory)
            .increment()
    }

    /// A fetch of the exchange-rate feed (`ok`, `error`), and the day of the newest rate stored (days since 1970).
    func ratesFetch(result: String, latestDay: Int64?) {
        Counter(label: "storekeeper_rates_fetches_total", dimensions: [("result", result)], factory: factory).increment()
        if let latestDay { Gauge(label: "storekeeper_rates_latest_day", factory: factory).record(latestDay) }
    }

    func reconciliation(_ what: String, count: Int) {
        Counter(label: "storekeeper_reconciled_total", dimensions: [("what", what)], factory: factory).increment(by: count)
    }

    /// One delivery attempt's outcome: delivered, retrying, dead, or disabled (the destination refused for good).
    func delivery(kind: String, outcome: String) {
        Counter(label: "storekeeper_deliveries_total", dimensions: [("kind", kind), ("outcome", outcome)], factory: factory).increment()
    }

    /// What an attempt to answer a refund request ended in: sent, waiting (to retry), rejected, expired, noConsent, unanswered.
    func refundAnswer(_ status: String) {
        Counter(label: "storekeeper_refund_answers_total", dimensions: [("status", status)], factory: factory).increment()
    }

    /// The outbox's queue by destination kind: deliveries waiting, and the oldest one's age. A kind with none waiting
    /// reads 0.
    func outbox(_ depth: [OutboxDepth], now: Int64) {
        for kind in DestinationKind.allCases.map(\.rawValue) {
            let row = depth.first { $0.kind == kind }
            Gauge(label: "storekeeper_outbox_waiting", dimensions: [("kind", kind)], factory: factory).record(row?.waiting ?? 0)
            Gauge(label: "storekeeper_outbox_oldest_waiting_seconds", dimensions: [("kind", kind)], factory: factory)
                .record(Double(row?.oldestCreatedAt.map { max(0, now - $0) } ?? 0) / 1000)
        }
    }

    /// SQLite's group commit (`SQLiteWriter`): write transactions and the commits that wrote them, since the server
    /// started (their ratio is the mean batch). Nothing on PostgreSQL.
    func sqliteCommits(_ statistics: SQLiteCommitStatistics?) {
        guard let statistics else { return }
        Gauge(label: "storekeeper_sqlite_write_transactions", factory: factory).record(statistics.transactions)
        Gauge(label: "storekeeper_sqlite_commits", factory: factory).record(statistics.commits)
    }

    /// The Prometheus text, with the figures that are read when asked for brought up to date first.
    public func exposition(database: StorageDatabase) -> [UInt8] {
        sqliteCommits(database.sqliteCommitStatistics)
        return registry.emitToBuffer()
    }
}
