import Analytics
import AppStore
import Hummingbird
import StorekeeperCore

/// The app list, and the pages of an app's numbers: the overview, one metric with its controls, the free trials.
/// Every number comes from the same use case as the API (`AppAnalytics`).
struct DashboardAnalyticsController {
    let core: StorekeeperCore

    /// `/dashboard`: the apps a user may see.
    var listRoutes: RouteCollection<DashboardContext> {
        let routes = RouteCollection(context: DashboardContext.self)
        routes.get(use: appList)
        return routes
    }

    /// Under `apps/:appId`.
    var appRoutes: RouteCollection<DashboardContext> {
        let routes = RouteCollection(context: DashboardContext.self)
        routes.get(use: overview)
        routes.get("metrics/:metric", use: metric)
        routes.get("trials", use: trials)
        return routes
    }

    /// The apps the user may see; with only one, its overview at once.
    @Sendable func appList(_ request: Request, context: DashboardContext) async throws -> Response {
        let user = try context.signedIn()
        let apps = try await core.dashboardAccounts.visibleApps(of: user, from: core.apps)
        if apps.count == 1, let only = apps.first { throw DashboardRedirect(location: DashboardPaths.app(only.id)) }
        let chrome = DashboardChrome(user: user, session: context.sessions.session, app: nil, environment: nil, path: DashboardPaths.root)
        let entries = apps.map { AppListPage.Entry(id: $0.id, bundleId: $0.config.bundleId) }
        return DashboardRender.page("apps", AppListPage(chrome: chrome, apps: entries, operator: user.allApps))
    }

    /// The headline numbers now, and the last 90 days of MRR, active subscriptions, trials and revenue; on an app
    /// without customers yet, what to do first.
    @Sendable func overview(_ request: Request, context: DashboardContext) async throws -> Response {
        let scope = try context.scope()
        let overview = try await core.analytics.overview(of: scope.app, environment: scope.environment)
        let cards = OverviewCard.cards(overview)
        var charts: [SeriesView] = []
        let today = CalendarDay(containing: core.now)
        for metric in [Metric.mrr, .activeSubscriptions, .activeTrials, .revenue] {
            let (_, metricRequest) = try MetricQuery.request(
                metric: metric.rawValue, app: scope.app, environment: scope.environment, today: today, defaultDays: 90
            ) { _ in nil }
            let series = try await core.analytics.series(metric, metricRequest)
            charts.append(SeriesView(series, title: SeriesView.title(metric, "last 90 days"), href: metricHref(metric, scope)))
        }
        let warnings = overview.unconverted.sorted { $0.key < $1.key }.compactMap { figure, amounts in
            SeriesView.unconvertedWarning(amounts, figure: cards.first { $0.key == figure }?.label ?? figure)
        }
        let rates = try await core.analytics.ratesNote(feedURL: core.settings.ratesURL)
        let isNew = try await !core.inspection.hasCustomers(app: scope.app)
        let page = OverviewPage(
            title: scope.app.config.bundleId, bundleId: scope.app.config.bundleId, chrome: scope.chrome, cards: cards,
            charts: charts, warnings: warnings, rates: rates,
            firstSteps: isNew ? FirstSteps(request, app: scope.app, environment: scope.environment, rates: rates) : nil,
            notes: overview.notes,
            otherMetrics: Metric.allCases.map { DashboardChrome.Link(name: $0.title, href: metricHref($0, scope), current: false) })
        return DashboardRender.page("overview", page)
    }

    /// A metric with its controls (range, interval, environment, product, storefront) and a CSV link; `.csv` downloads.
    @Sendable func metric(_ request: Request, context: DashboardContext) async throws -> Response {
        let scope = try context.scope()
        let (name, asCSV) = MetricQuery.name(context.parameters.get("metric") ?? "", accept: nil)
        guard let metric = Metric(rawValue: name) else {
            throw CoreError.invalidInput(
                field: "metric", "no metric \(name): one of \(Metric.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let parameters = request.uri.queryParameters
        // An empty field of the form means "every": the API would refuse it as empty.
        let given: (String) -> String? = { key in parameters.get(key).flatMap { $0.isEmpty ? nil : $0 } }
        let today = CalendarDay(containing: core.now)
        let path = DashboardPaths.app(scope.app.id) + "/metrics/" + metric.rawValue
        let query: [(String, String?)] = ["from", "to", "interval", "product", "storefront", "tz", "window", "excludeRefunded"].map {
            ($0, given($0))
        }
        var page = MetricPage(
            title: metric.title, heading: metric.title, summary: metric.summary, chrome: scope.chrome, action: path,
            from: given("from") ?? "", to: given("to") ?? "",
            intervals: MetricInterval.allCases.map {
                FormOption(name: $0.rawValue, selected: $0.rawValue == (given("interval") ?? "day"))
            },
            products: scope.app.config.catalog.products.map { FormOption(name: $0.id, selected: $0.id == given("product")) },
            storefront: given("storefront") ?? "", environment: scope.environment.rawValue,
            csvHref: DashboardPaths.link(path + ".csv", query + [("environment", scope.environment.rawValue)]), error: nil,
            chart: nil, warnings: [], notes: [])
        let metricRequest: MetricRequest
        do {
            metricRequest = try MetricQuery.request(
                metric: metric.rawValue, app: scope.app, environment: scope.environment, today: today, parameter: given
            ).1
        } catch let error as CoreError {
            if asCSV { throw error }
            page.error = error.description
            return DashboardRender.page("metric", page, status: .badRequest)
        }
        page.from = metricRequest.from.description
        page.to = metricRequest.to.description
        let series = try await core.analytics.series(metric, metricRequest)
        if asCSV { return MetricQuery.csvResponse(series) }
        page.chart = SeriesView(
            series, title: SeriesView.title(metric, "\(page.from) to \(page.to) by \(metricRequest.interval.rawValue)"), href: path)
        page.warnings = SeriesView.unconvertedWarning(series.unconverted, figure: metric.title).map { [$0] } ?? []
        page.notes = series.notes
        return DashboardRender.page("metric", page)
    }

    /// The free-trials report and the trial-conversion cohorts, by month over the last twelve months.
    @Sendable func trials(_ request: Request, context: DashboardContext) async throws -> Response {
        let scope = try context.scope()
        let today = CalendarDay(containing: core.now)
        let from = today.startOfMonth(addingMonths: -11)
        var charts: [SeriesView] = []
        var notes: [String] = []
        for (metric, title) in [
            (Metric.freeTrials, "Trials started, and what became of them"), (.trialConversion, "Trial conversion by start month"),
        ] {
            let (_, metricRequest) = try MetricQuery.request(
                metric: metric.rawValue, app: scope.app, environment: scope.environment, today: today
            ) { ["from": from.description, "interval": "month"][$0] }
            let series = try await core.analytics.series(metric, metricRequest)
            let href = DashboardPaths.link(
                DashboardPaths.app(scope.app.id) + "/metrics/" + metric.rawValue,
                [("environment", scope.environment.rawValue), ("from", from.description), ("interval", "month")])
            charts.append(SeriesView(series, title: title, href: href))
            notes += series.notes
        }
        return DashboardRender.page("trials", TrialsPage(chrome: scope.chrome, charts: charts, notes: notes))
    }

    private func metricHref(_ metric: Metric, _ scope: DashboardScope) -> String {
        DashboardPaths.link(
            DashboardPaths.app(scope.app.id) + "/metrics/" + metric.rawValue, [("environment", scope.environment.rawValue)])
    }
}
