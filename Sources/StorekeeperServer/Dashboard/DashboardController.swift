import Analytics
import AppStore
import Entitlements
import Foundation
import Hummingbird
import HummingbirdAuth
import NIOCore
import StorekeeperCore

/// `/dashboard`: sign-in and sign-out, then the pages of the apps a user may see. Every number comes from the same
/// use cases as the API (`AppAnalytics`, `CustomerInspection`); templates in `DashboardTemplates`.
struct DashboardController {
    let core: StorekeeperCore

    /// How long a signed-in session lasts, and a sign-in form's session.
    static let sessionLength = Duration.seconds(12 * 3600)
    static let formSessionLength = Duration.seconds(30 * 60)
    /// The largest form body (sign-in, sign-out).
    static let maxFormBytes = 16 * 1024

    /// Pages anyone may open.
    var publicRoutes: RouteCollection<DashboardContext> {
        let routes = RouteCollection(context: DashboardContext.self)
        routes.get("sign-in", use: signInPage)
        routes.post("sign-in", use: signIn)
        routes.post("sign-out", use: signOut)
        return routes
    }

    /// Pages behind `DashboardSignedIn`.
    var pageRoutes: RouteCollection<DashboardContext> {
        let routes = RouteCollection(context: DashboardContext.self)
        routes.get(use: appList)
        routes.get("apps/:appId", use: overview)
        routes.get("apps/:appId/metrics/:metric", use: metric)
        routes.get("apps/:appId/trials", use: trials)
        routes.get("apps/:appId/customers", use: customers)
        routes.get("apps/:appId/customers/:customerId", use: customer)
        routes.get("apps/:appId/raw/:factId", use: raw)
        routes.get("apps/:appId/events", use: events)
        routes.get("apps/:appId/integrations", use: integrations)
        routes.get("apps/:appId/integrations/:integrationId", use: integration)
        routes.post("apps/:appId/integrations/:integrationId/replay", use: replay)
        routes.get("apps/:appId/experiments", use: experiments)
        routes.post("apps/:appId/experiments", use: createExperiment)
        routes.get("apps/:appId/experiments/:experimentKey", use: experiment)
        routes.post("apps/:appId/experiments/:experimentKey/edit", use: editExperiment)
        routes.post("apps/:appId/experiments/:experimentKey/status", use: experimentStatus)
        routes.get("apps/:appId/refund-requests", use: refundRequests)
        routes.post("apps/:appId/refund-requests/:requestId/decision", use: decideRefundRequest)
        return routes
    }

    // MARK: - Signing in and out

    struct SignInPage {
        var title = "Sign in"
        var csrf: String
        var next: String
        var email: String
        var message: String?
        var chrome: DashboardChrome? = nil
    }

    struct SignInForm: Decodable {
        var email: String?
        var password: String?
        var csrf: String?
        var next: String?
    }

    @Sendable func signInPage(_ request: Request, context: DashboardContext) async throws -> Response {
        let next = request.uri.queryParameters.get("next").flatMap(DashboardPaths.safeNext) ?? DashboardPaths.root
        if let userId = context.sessions.session?.userId, try await core.dashboardAccounts.user(id: userId) != nil {
            throw DashboardRedirect(location: next)
        }
        let session = formSession(context)
        return DashboardRender.page("signIn", SignInPage(csrf: session.csrf, next: next, email: "", message: nil))
    }

    @Sendable func signIn(_ request: Request, context: DashboardContext) async throws -> Response {
        let form = try await Self.form(SignInForm.self, request, context)
        let next = form.next.flatMap(DashboardPaths.safeNext) ?? DashboardPaths.root
        let email = form.email ?? ""
        guard let session = context.sessions.session, CSRFToken.matches(form.csrf, session.csrf) else {
            let fresh = DashboardSession.anonymous()
            context.sessions.createSession(fresh, expiresIn: Self.formSessionLength)
            let page = SignInPage(
                csrf: fresh.csrf, next: next, email: email,
                message: "The sign-in form had expired (or came from another site). Please sign in again.")
            return DashboardRender.page("signIn", page, status: .forbidden)
        }
        switch try await core.dashboardAccounts.signIn(email: email, password: form.password ?? "") {
        case .signedIn(let user):
            // A new session id on sign-in, so that an id known before it is worth nothing after.
            context.sessions.createSession(DashboardSession(userId: user.id, csrf: CSRFToken.make()), expiresIn: Self.sessionLength)
            // Returned, not thrown: the session middleware saves the session only from an answer.
            return DashboardRedirect(location: next).response
        case .wrongCredentials:
            let page = SignInPage(csrf: session.csrf, next: next, email: email, message: "Wrong email or password.")
            return DashboardRender.page("signIn", page, status: .unauthorized)
        case .locked(let until):
            let seconds = max(1, (until - core.now + 999) / 1000)
            let page = SignInPage(
                csrf: session.csrf, next: next, email: email,
                message: "Too many failed sign-ins: this account is locked for \(seconds) more seconds.")
            var response = DashboardRender.page("signIn", page, status: .tooManyRequests)
            response.headers[.retryAfter] = String(seconds)
            return response
        }
    }

    struct CSRFForm: Decodable { var csrf: String? }

    @Sendable func signOut(_ request: Request, context: DashboardContext) async throws -> Response {
        let form = try await Self.form(CSRFForm.self, request, context)
        guard let session = context.sessions.session else { throw DashboardRedirect(location: DashboardPaths.signIn) }
        guard CSRFToken.matches(form.csrf, session.csrf) else {
            throw CoreError.forbidden("the sign-out form did not carry this session's token")
        }
        context.sessions.clearSession()
        return DashboardRedirect(location: DashboardPaths.signIn).response
    }

    /// The session a form is posted with: the current one, or a new anonymous one (the sign-in page's).
    func formSession(_ context: DashboardContext) -> DashboardSession {
        if let session = context.sessions.session { return session }
        let session = DashboardSession.anonymous()
        context.sessions.createSession(session, expiresIn: Self.formSessionLength)
        return session
    }

    /// A signed-in form's token must be its session's (every form but sign-in's, which answers with a fresh form).
    static func checkCSRF(_ token: String?, _ context: DashboardContext) throws {
        guard let session = context.sessions.session, CSRFToken.matches(token, session.csrf) else {
            throw CoreError.forbidden("the form did not carry this session's token")
        }
    }

    static func form<Form: Decodable>(_ type: Form.Type, _ request: Request, _ context: DashboardContext) async throws -> Form {
        var request = request
        let body: ByteBuffer
        do { body = try await request.collectBody(upTo: Self.maxFormBytes) } catch let error as any HTTPResponseError
            where error.status == .contentTooLarge
        {
            throw ErrorResponse(.contentTooLarge, "payload_too_large", "a form is at most \(Self.maxFormBytes / 1024) KB")
        }
        do {
            return try URLEncodedFormDecoder().decode(type, from: String(buffer: body))
        } catch {
            throw CoreError.invalidInput("the form is not URL-encoded form data")
        }
    }

    // MARK: - Apps

    struct AppListPage {
        struct Entry {
            var id: String
            var bundleId: String
        }
        var title = "Apps"
        var chrome: DashboardChrome
        var apps: [Entry]
    }

    @Sendable func appList(_ request: Request, context: DashboardContext) async throws -> Response {
        let user = try context.signedIn()
        let ids = user.allApps ? try await core.database.reading { try await $0.apps() }.map(\.id) : user.apps
        var entries: [AppListPage.Entry] = []
        for id in ids {
            guard let app = try? await core.apps.app(id: id) else { continue }
            entries.append(.init(id: app.id, bundleId: app.config.bundleId))
        }
        let chrome = DashboardChrome(user: user, session: context.sessions.session, app: nil, environment: nil, path: DashboardPaths.root)
        return DashboardRender.page("apps", AppListPage(chrome: chrome, apps: entries))
    }

    /// The app of the path and the environment of the query, for a user who may see the app (another app reads as
    /// absent).
    func scope(_ request: Request, _ context: DashboardContext) async throws -> (
        user: DashboardUser, app: AppRuntime, environment: AppStore.Environment, chrome: DashboardChrome
    ) {
        let user = try context.signedIn()
        let appId = context.parameters.get("appId") ?? ""
        guard user.canSee(app: appId) else { throw CoreError.appNotFound(appId: appId) }
        let app = try await core.apps.app(id: appId)
        let environment = try MetricQuery.environment(request.uri.queryParameters.get("environment"), app: app)
        let chrome = DashboardChrome(
            user: user, session: context.sessions.session, app: app, environment: environment, path: request.uri.path)
        return (user, app, environment, chrome)
    }

    // MARK: - Overview

    struct Card {
        var key: String
        var label: String
        var raw: String
        var text: String
    }

    struct OverviewPage {
        var title: String
        var bundleId: String
        var chrome: DashboardChrome
        var cards: [Card]
        var charts: [SeriesView]
        var warnings: [String]
        /// Where the exchange rates come from, under the cards.
        var rates: RatesNote
        var notes: [String]
    }

    /// The headline numbers now, and the last 90 days of MRR, active subscriptions, trials and revenue.
    @Sendable func overview(_ request: Request, context: DashboardContext) async throws -> Response {
        let (_, app, environment, chrome) = try await scope(request, context)
        let overview = try await core.analytics.overview(of: app, environment: environment)
        func card(_ key: String, _ label: String, _ value: Double?, _ kind: DashboardFormat.ValueKind) -> Card {
            Card(
                key: key, label: label, raw: value.map { String($0) } ?? "",
                text: value.map { DashboardFormat.value($0, kind: kind) } ?? "–")
        }
        let cards = [
            card("mrr", "MRR (USD)", overview.mrr, .money), card("arr", "ARR (USD)", overview.arr, .money),
            card("activeSubscriptions", "Active subscriptions", Double(overview.activeSubscriptions), .count),
            card("activeTrials", "Active trials", Double(overview.activeTrials), .count),
            card("revenueLast30Days", "Net revenue, last 30 days (USD)", overview.revenueLast30Days, .money),
            card("refundsLast30Days", "Refunds, last 30 days (USD)", overview.refundsLast30Days, .money),
            card("trialConversionLast30Days", "Trial conversion, last 30 days", overview.trialConversionLast30Days, .ratio),
            card("churnLast30Days", "Churn, last 30 days", overview.churnLast30Days, .ratio),
        ]
        var charts: [SeriesView] = []
        let today = CalendarDay(containing: core.now)
        for (metric, title) in [
            (Metric.mrr, "MRR (USD), last 90 days"), (.activeSubscriptions, "Active subscriptions, last 90 days"),
            (.activeTrials, "Active trials, last 90 days"), (.revenue, "Net revenue (USD), last 90 days"),
        ] {
            let (_, metricRequest) = try MetricQuery.request(
                metric: metric.rawValue, app: app, environment: environment, today: today, defaultDays: 90
            ) { _ in nil }
            let series = try await core.analytics.series(metric, metricRequest)
            let href = DashboardPaths.link(
                DashboardPaths.app(app.id) + "/metrics/" + metric.rawValue, [("environment", environment.rawValue)])
            charts.append(SeriesView(series, title: title, href: href))
        }
        var warnings: [String] = []
        for (figure, amounts) in overview.unconverted.sorted(by: { $0.key < $1.key }) {
            if let warning = SeriesView.unconvertedWarning(amounts, figure: figure) { warnings.append(warning) }
        }
        let page = OverviewPage(
            title: app.config.bundleId, bundleId: app.config.bundleId, chrome: chrome, cards: cards, charts: charts, warnings: warnings,
            rates: try await core.analytics.ratesNote(feedURL: core.settings.ratesURL),
            notes: overview.notes + ["Other metrics: " + Metric.allCases.map(\.rawValue).joined(separator: ", ") + "."])
        return DashboardRender.page("overview", page)
    }

    // MARK: - One metric

    struct Option {
        var name: String
        var selected: Bool
    }

    struct MetricPage {
        var title: String
        var heading: String
        var summary: String
        var chrome: DashboardChrome
        var action: String
        var from: String
        var to: String
        var intervals: [Option]
        var products: [Option]
        var storefront: String
        var environment: String
        var csvHref: String
        var error: String?
        var chart: SeriesView?
        var warnings: [String]
        var notes: [String]
    }

    /// A metric with its controls (range, interval, environment, product, storefront) and a CSV link; `.csv` downloads.
    @Sendable func metric(_ request: Request, context: DashboardContext) async throws -> Response {
        let (_, app, environment, chrome) = try await scope(request, context)
        let (name, asCSV) = MetricQuery.name(context.parameters.get("metric") ?? "", accept: nil)
        guard let metric = Metric(rawValue: name) else {
            throw CoreError.invalidInput(
                field: "metric", "no metric \(name): one of \(Metric.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let parameters = request.uri.queryParameters
        // An empty field of the form means "every": the API would refuse it as empty.
        let given: (String) -> String? = { key in parameters.get(key).flatMap { $0.isEmpty ? nil : $0 } }
        let today = CalendarDay(containing: core.now)
        let path = DashboardPaths.app(app.id) + "/metrics/" + metric.rawValue
        let query: [(String, String?)] = ["from", "to", "interval", "product", "storefront", "tz", "window", "excludeRefunded"].map {
            ($0, given($0))
        }
        var page = MetricPage(
            title: metric.rawValue, heading: metric.rawValue, summary: metric.summary, chrome: chrome, action: path,
            from: given("from") ?? "", to: given("to") ?? "",
            intervals: MetricInterval.allCases.map { Option(name: $0.rawValue, selected: $0.rawValue == (given("interval") ?? "day")) },
            products: app.config.catalog.products.map { Option(name: $0.id, selected: $0.id == given("product")) },
            storefront: given("storefront") ?? "", environment: environment.rawValue,
            csvHref: DashboardPaths.link(path + ".csv", query + [("environment", environment.rawValue)]), error: nil, chart: nil,
            warnings: [], notes: [])
        let metricRequest: MetricRequest
        do {
            metricRequest = try MetricQuery.request(
                metric: metric.rawValue, app: app, environment: environment, today: today, parameter: given
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
            series, title: "\(metric.rawValue), \(page.from) to \(page.to) by \(metricRequest.interval.rawValue)", href: path)
        page.warnings = SeriesView.unconvertedWarning(series.unconverted, figure: metric.rawValue).map { [$0] } ?? []
        page.notes = series.notes
        return DashboardRender.page("metric", page)
    }

    // MARK: - Free trials

    struct TrialsPage {
        var title = "Free trials"
        var chrome: DashboardChrome
        var charts: [SeriesView]
        var notes: [String]
    }

    /// The free-trials report and the trial-conversion cohorts, by month over the last twelve months.
    @Sendable func trials(_ request: Request, context: DashboardContext) async throws -> Response {
        let (_, app, environment, chrome) = try await scope(request, context)
        let today = CalendarDay(containing: core.now)
        let from = today.startOfMonth(addingMonths: -11)
        var charts: [SeriesView] = []
        var notes: [String] = []
        for (metric, title) in [
            (Metric.freeTrials, "Trials started, and what became of them"), (.trialConversion, "Trial conversion by start month"),
        ] {
            let (_, metricRequest) = try MetricQuery.request(metric: metric.rawValue, app: app, environment: environment, today: today) {
                ["from": from.description, "interval": "month"][$0]
            }
            let series = try await core.analytics.series(metric, metricRequest)
            let href = DashboardPaths.link(
                DashboardPaths.app(app.id) + "/metrics/" + metric.rawValue,
                [("environment", environment.rawValue), ("from", from.description), ("interval", "month")])
            charts.append(SeriesView(series, title: title, href: href))
            notes += series.notes
        }
        return DashboardRender.page("trials", TrialsPage(chrome: chrome, charts: charts, notes: notes))
    }

    // MARK: - Customers

    struct CustomersPage {
        struct Result {
            var customerId: String
            var names: String
            var href: String
        }
        var title = "Customers"
        var chrome: DashboardChrome
        var action: String
        var query: String
        var environment: String
        var searched: Bool
        var results: [Result]
    }

    @Sendable func customers(_ request: Request, context: DashboardContext) async throws -> Response {
        let (_, app, environment, chrome) = try await scope(request, context)
        let query = request.uri.queryParameters.get("q") ?? ""
        let found = try await core.inspection.find(query, app: app)
        let base = DashboardPaths.app(app.id) + "/customers"
        let results = found.map { match in
            CustomersPage.Result(
                customerId: match.customerId, names: match.appUserIds.isEmpty ? match.customerId : match.appUserIds.joined(separator: ", "),
                href: DashboardPaths.link(
                    base + "/" + DashboardPaths.pathEscaped(match.customerId), [("environment", environment.rawValue)]))
        }
        if results.count == 1, let only = results.first { throw DashboardRedirect(location: only.href) }
        let page = CustomersPage(
            chrome: chrome, action: base, query: query, environment: environment.rawValue, searched: !query.isEmpty, results: results)
        return DashboardRender.page("customers", page)
    }

    struct CustomerPage {
        struct Entitlement {
            var name: String
            var active: String
            var expires: String
            var product: String
        }
        struct Subscription {
            var product: String
            var group: String
            var status: String
            var period: String
            var purchased: String
            var expires: String
            var willRenew: String
            var transaction: String
            var rawHref: String
        }
        struct Other {
            var product: String
            var type: String
            var purchased: String
            var active: String
        }
        struct Entry {
            var at: String
            var kind: String
            var title: String
            var detail: String
            var price: String
            var environment: String
            var rawHref: String?
            var retracted: Bool
        }
        var title: String
        var chrome: DashboardChrome
        var customerId: String
        var firstSeen: String
        var anonymous: Bool
        var status: String
        var billingIssue: Bool
        var entitlements: [Entitlement]
        var subscriptions: [Subscription]
        var hasOthers: Bool
        var others: [Other]
        var timeline: [Entry]
    }

    @Sendable func customer(_ request: Request, context: DashboardContext) async throws -> Response {
        let (_, app, environment, chrome) = try await scope(request, context)
        let customerId = context.parameters.get("customerId") ?? ""
        guard let dossier = try await core.inspection.dossier(customerId: customerId, app: app, environment: environment) else {
            throw CoreError.notFound("no customer \(customerId) in this app")
        }
        func when(_ timestamp: Timestamp?) -> String { timestamp.map { DashboardFormat.instant($0.millisecondsSince1970) } ?? "–" }
        let rawBase = DashboardPaths.app(app.id) + "/raw/"
        func rawHref(_ id: String) -> String {
            DashboardPaths.link(rawBase + DashboardPaths.pathEscaped(id), [("environment", environment.rawValue)])
        }
        let state = dossier.state
        let page = CustomerPage(
            title: dossier.appUserIds.first ?? dossier.customerId, chrome: chrome, customerId: dossier.customerId,
            firstSeen: dossier.firstSeen.map(DashboardFormat.instant) ?? "–", anonymous: dossier.anonymous, status: state.state.rawValue,
            billingIssue: state.billingIssue,
            entitlements: state.entitlements.sorted { $0.key < $1.key }.map {
                .init(
                    name: $0.key, active: $0.value.active ? "yes" : "no", expires: when($0.value.expiresDate),
                    product: $0.value.productId ?? "–")
            },
            subscriptions: state.subscriptions.map {
                .init(
                    product: $0.productId, group: $0.group, status: $0.status.rawValue, period: $0.periodType.rawValue,
                    purchased: when($0.purchaseDate), expires: when($0.expiresDate),
                    willRenew: $0.willRenew.map { $0 ? "on" : "off" } ?? "–",
                    transaction: $0.transactionId, rawHref: rawHref($0.transactionId))
            },
            hasOthers: !state.nonSubscriptions.isEmpty,
            others: state.nonSubscriptions.map {
                .init(
                    product: $0.productId, type: $0.type.rawValue, purchased: when($0.purchaseDate),
                    active: ($0.active ?? true) ? "yes" : "no")
            },
            timeline: dossier.timeline.map {
                .init(
                    at: DashboardFormat.instant($0.at), kind: $0.kind.rawValue, title: $0.title, detail: $0.detail,
                    price: $0.price == nil ? "" : DashboardFormat.money(milliunits: $0.price, currency: $0.currency),
                    environment: $0.environment, rawHref: $0.rawId.map(rawHref), retracted: $0.retracted)
            })
        return DashboardRender.page("customer", page)
    }

    struct RawPage {
        struct Fact {
            var title: String
            var environment: String
            var receivedAt: String
            var json: String
            var signed: String?
        }
        var title: String
        var heading: String
        var chrome: DashboardChrome
        var facts: [Fact]
    }

    /// A transaction's stored versions or a notification, decoded and as Apple signed it.
    @Sendable func raw(_ request: Request, context: DashboardContext) async throws -> Response {
        let (_, app, _, chrome) = try await scope(request, context)
        let id = context.parameters.get("factId") ?? ""
        let facts = try await core.inspection.rawFacts(id: id, app: app)
        guard !facts.isEmpty else {
            throw CoreError.notFound("no transaction or notification \(id) in this app")
        }
        let page = RawPage(
            title: id, heading: "Signed data: \(id)", chrome: chrome,
            facts: facts.map {
                .init(
                    title: $0.title, environment: $0.environment, receivedAt: DashboardFormat.instant($0.receivedAt), json: $0.json,
                    signed: $0.signed)
            })
        return DashboardRender.page("raw", page)
    }

    // MARK: - Events

    struct EventsPage {
        struct Row {
            var effective: String
            var type: String
            var product: String
            var price: String
            var customerId: String
            var customerHref: String
            var recorded: String
            var retracted: Bool
        }
        var title = "Events"
        var chrome: DashboardChrome
        var action: String
        var environment: String
        var types: [Option]
        var events: [Row]
        var olderHref: String?
    }

    static let eventsPerPage = 100

    /// The app's events, latest first, filtered by type; pages back with `before`.
    @Sendable func events(_ request: Request, context: DashboardContext) async throws -> Response {
        let (_, app, environment, chrome) = try await scope(request, context)
        let parameters = request.uri.queryParameters
        var type: SubscriptionEventType?
        if let name = parameters.get("type"), !name.isEmpty {
            guard let known = SubscriptionEventType(rawValue: name) else {
                throw CoreError.invalidInput(field: "type", "no event type \(name)")
            }
            type = known
        }
        var before: Int64?
        if let text = parameters.get("before") {
            guard let value = Int64(text), value > 0 else {
                throw CoreError.invalidInput(field: "before", "before is a positive event number")
            }
            before = value
        }
        let found = try await core.inspection.latestEvents(
            app: app, environment: environment, type: type, before: before, limit: Self.eventsPerPage)
        let base = DashboardPaths.app(app.id)
        let rows = found.map { item in
            EventsPage.Row(
                effective: DashboardFormat.instant(item.event.effectiveAt.millisecondsSince1970), type: item.event.type.rawValue,
                product: item.event.productId ?? "–",
                price: DashboardFormat.money(milliunits: item.event.price, currency: item.event.currency),
                customerId: item.customerId,
                customerHref: DashboardPaths.link(
                    base + "/customers/" + DashboardPaths.pathEscaped(item.customerId), [("environment", environment.rawValue)]),
                recorded: DashboardFormat.instant(item.recordedAt), retracted: item.retracted)
        }
        let older = found.count == Self.eventsPerPage ? found.last.map { String($0.seq) } : nil
        let page = EventsPage(
            chrome: chrome, action: base + "/events", environment: environment.rawValue,
            types: SubscriptionEventType.allCases.map { Option(name: $0.rawValue, selected: $0 == type) }, events: rows,
            olderHref: older.map {
                DashboardPaths.link(base + "/events", [("environment", environment.rawValue), ("type", type?.rawValue), ("before", $0)])
            })
        return DashboardRender.page("events", page)
    }
}
