import Analytics
import AppStore
import Foundation
import Storage

/// The analytics use cases: metric series and the overview, exchange rates, and rebuilding the ledger from the facts.
public struct AppAnalytics: Sendable {
    let database: StorageDatabase
    let recomputer: StateRecomputer
    let engine: MetricsEngine
    let clock: @Sendable () -> Date

    init(database: StorageDatabase, recomputer: StateRecomputer, clock: @escaping @Sendable () -> Date) {
        self.database = database
        self.recomputer = recomputer
        self.engine = MetricsEngine(database: database)
        self.clock = clock
    }

    public func series(_ metric: Metric, _ request: MetricRequest) async throws -> MetricSeries {
        try await engine.series(metric, request, now: clock().millisecondsSince1970)
    }

    public func overview(of app: AppRuntime, environment: Environment) async throws -> MetricsOverview {
        try await engine.overview(appId: app.id, environment: environment, now: clock().millisecondsSince1970)
    }

    /// Stores rates read from CSV (either layout) and converts the ledger again; returns how many were stored.
    public func importRates(csv: String) async throws -> Int {
        let rates: [ExchangeRate]
        do { rates = try ExchangeRateCSV.parse(csv) } catch { throw CoreError.invalidInput(field: error.field, error.reason) }
        return try await database.writing(deadline: StorageDatabase.maintenanceDeadline) { try await $0.importRates(rates) }
    }

    /// Computes the app's hourly summary again from its ledger as it stands (the customers are not recomputed).
    public func rebuildSummary(_ app: AppRuntime) async throws {
        try await database.writing(deadline: StorageDatabase.maintenanceDeadline) { try await $0.rebuildLedgerSummary(appId: app.id) }
    }

    /// Where the exchange rates come from and how current they are, in a sentence for the people reading the numbers.
    /// `feedURL` is the configured feed (nil: none).
    public func ratesNote(feedURL: String?) async throws -> RatesNote {
        let standing = try await database.reading { try await $0.ratesStanding() }
        var feed: RateFeedRecord?
        if let feedURL { feed = try await database.reading { try await $0.rateFeed(url: feedURL) } }
        var feedText = ""
        var attention = false
        if let feedURL {
            if let feed, let error = feed.error {
                attention = true
                feedText = " The last fetch of \(feedURL) failed (\(error)); it is retried."
            } else if let feed, let succeeded = feed.succeededAt {
                feedText = " Fetched from \(feedURL) on \(CalendarDay(containing: succeeded)); fetched again every day."
            } else {
                feedText = " The feed \(feedURL) has not answered yet."
            }
        } else {
            feedText = " No feed is configured (STOREKEEPER_RATES_URL): load rates with storekeeper rates import or PUT /v1/rates."
        }
        guard let latest = standing.latestDay, standing.currencies > 0 else {
            return RatesNote(
                text: "No exchange rates are loaded: sales in other currencies than USD are left out of the USD figures." + feedText,
                attention: true)
        }
        if standing.fallbackCurrencies == standing.currencies {
            return RatesNote(
                text: "Exchange rates to USD: the bundled fallback, the ECB's reference rates of \(FallbackRates.day) (no other "
                    + "source has given any)." + feedText,
                attention: true)
        }
        var text = "Exchange rates to USD: the latest of \(latest)."
        if standing.fallbackCurrencies > 0 {
            text +=
                " \(standing.fallbackCurrencies) of \(standing.currencies) currencies are still at the bundled fallback of \(FallbackRates.day)."
        }
        return RatesNote(text: text + feedText, attention: attention || standing.fallbackCurrencies > 0)
    }

    public func rateCoverage() async throws -> [StoredRateCoverage] {
        try await database.reading { try await $0.rateCoverage() }
    }

    /// Recomputes every customer of the app from the facts (states, events and ledger), a customer per transaction,
    /// then the app's hourly summary from its ledger; returns how many customers. `progress` hears the count after
    /// each page.
    @discardableResult
    public func rebuild(_ app: AppRuntime, progress: @Sendable (Int) -> Void = { _ in }) async throws -> Int {
        var after: String?
        var done = 0
        while true {
            let page = try await database.reading { [after] in try await $0.customerIds(app: app.id, after: after, limit: 500) }
            guard let last = page.last else {
                try await rebuildSummary(app)
                return done
            }
            for customerId in page {
                try await recomputer.refresh(app: app, customerId: customerId, now: clock().millisecondsSince1970)
            }
            done += page.count
            after = last
            progress(done)
        }
    }
}

/// Where the exchange rates come from, in a sentence; `attention` when the figures rest on the fallback, or on no rate,
/// or the feed's last fetch failed.
public struct RatesNote: Sendable, Hashable {
    public var text: String
    public var attention: Bool
}
