// The pages of an app's numbers: the app list, the overview, one metric, the free trials.
import Analytics
import AppStore
import Hummingbird
import StorekeeperCore

struct AppListPage {
    struct Entry {
        var id: String
        var bundleId: String
    }
    var title = "Apps"
    var chrome: DashboardChrome
    var apps: [Entry]
    /// An operator (every app) is told how to create one; anyone else, whom to ask.
    var `operator`: Bool
}

/// A headline number: its key (`data-figure`, the API's field), its words, the JSON number and the text shown.
struct OverviewCard {
    var key: String
    var label: String
    var raw: String
    var text: String

    /// The overview's cards, in the order shown.
    static func cards(_ overview: MetricsOverview) -> [OverviewCard] {
        func card(_ key: String, _ label: String, _ value: Double?, _ kind: DashboardFormat.ValueKind) -> OverviewCard {
            OverviewCard(
                key: key, label: label, raw: value.map { String($0) } ?? "",
                text: value.map { DashboardFormat.value($0, kind: kind) } ?? "–")
        }
        return [
            card("mrr", "MRR (USD)", overview.mrr, .money), card("arr", "ARR (USD)", overview.arr, .money),
            card("activeSubscriptions", "Active subscriptions", Double(overview.activeSubscriptions), .count),
            card("activeTrials", "Active trials", Double(overview.activeTrials), .count),
            card("revenueLast30Days", "Net revenue, last 30 days (USD)", overview.revenueLast30Days, .money),
            card("refundsLast30Days", "Refunds, last 30 days (USD)", overview.refundsLast30Days, .money),
            card("trialConversionLast30Days", "Trial conversion, last 30 days", overview.trialConversionLast30Days, .ratio),
            card("churnLast30Days", "Churn, last 30 days", overview.churnLast30Days, .ratio),
        ]
    }
}

/// What a new app's overview says to do first: where Apple's notifications go, the SDK, exchange rates.
struct FirstSteps {
    /// The URL to give App Store Connect for App Store Server Notifications (V2), on this server's host.
    var notificationURL: String
    var sandbox: Bool
    /// Said only when no exchange rate is loaded yet.
    var ratesStep: String?

    init(_ request: Request, app: AppRuntime, environment: AppStore.Environment, rates: RatesNote) {
        let host = request.head.authority ?? "your-server.example.com"
        notificationURL = "https://\(host)/v1/apps/\(app.id)/notifications/appstore"
        sandbox = environment != .production
        ratesStep = rates.attention ? rates.text : nil
    }
}

struct OverviewPage {
    var title: String
    var bundleId: String
    var chrome: DashboardChrome
    var cards: [OverviewCard]
    var charts: [SeriesView]
    var warnings: [String]
    /// Where the exchange rates come from, under the cards.
    var rates: RatesNote
    /// On an app without customers yet.
    var firstSteps: FirstSteps?
    var notes: [String]
    var otherMetrics: [DashboardChrome.Link]
}

/// A choice of a form's select, and whether it is the one chosen.
struct FormOption {
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
    var intervals: [FormOption]
    var products: [FormOption]
    var storefront: String
    var environment: String
    var csvHref: String
    var error: String?
    var chart: SeriesView?
    var warnings: [String]
    var notes: [String]
}

struct TrialsPage {
    var title = "Free trials"
    var chrome: DashboardChrome
    var charts: [SeriesView]
    var notes: [String]
}

extension DashboardTemplates {
    static let apps = """
        {{> header}}
        <h1>Apps</h1>
        {{^apps}}{{#operator}}<section><h2>No app yet</h2><p>Create one for your app's bundle id, on the server's machine:</p>
        <pre>storekeeper apps create --bundle-id com.example.app --environment sandbox</pre>
        <p class="note">It prints the app's id and keys; the app's page here then says where Apple's notifications go.</p></section>{{/operator}}
        {{^operator}}<p>You may see no app yet: ask an operator to run <code>storekeeper users create</code> with <code>--apps</code>.</p>{{/operator}}{{/apps}}
        <ul>{{#apps}}<li><a href="/dashboard/apps/{{id}}">{{bundleId}}</a> <span class="note">{{id}}</span></li>{{/apps}}</ul>
        {{> footer}}
        """

    static let overview = """
        {{> header}}
        <h1>{{bundleId}}</h1>
        {{#warnings}}<p class="warning" role="status">{{.}}</p>{{/warnings}}
        <div class="cards">{{#cards}}<div class="card" data-figure="{{key}}" data-value="{{raw}}"><div class="label">{{label}}</div><div class="number">{{text}}</div></div>{{/cards}}</div>
        {{#rates}}<p class="{{#attention}}warning{{/attention}}{{^attention}}note{{/attention}}" data-rates>{{text}}</p>{{/rates}}
        {{#firstSteps}}<section id="first-steps"><h2>First steps</h2><ol>
        <li>In App Store Connect (your app › App Information › App Store Server Notifications), set the {{#sandbox}}Sandbox{{/sandbox}}{{^sandbox}}Production{{/sandbox}} Server URL, Version 2, to
        <code data-field="notificationURL">{{notificationURL}}</code> (Apple calls only HTTPS: serve this URL behind TLS).</li>
        <li>Add the SDK to the app (README, "The SDK in your app") so purchases reach this server as they happen; existing
        subscribers come in with <code>storekeeper import</code>.</li>
        {{#ratesStep}}<li>Exchange rates: {{.}}</li>{{/ratesStep}}
        </ol><p class="note">This section goes once the first customer arrives.</p></section>{{/firstSteps}}
        {{#charts}}<section><h2><a href="{{href}}">{{title}}</a></h2>{{{svg}}}{{> seriesTable}}</section>{{/charts}}
        {{#notes}}<p class="note">{{.}}</p>{{/notes}}
        <p class="note">Other metrics: {{#otherMetrics}}<a href="{{href}}">{{name}}</a> · {{/otherMetrics}}</p>
        {{> footer}}
        """

    static let metric = """
        {{> header}}
        <h1>{{heading}}</h1>
        <p class="note">{{summary}}</p>
        <form class="controls" method="get" action="{{action}}">
        <label>From <input type="date" name="from" value="{{from}}"></label>
        <label>To (not included) <input type="date" name="to" value="{{to}}"></label>
        <label>Interval <select name="interval">{{#intervals}}<option{{#selected}} selected{{/selected}}>{{name}}</option>{{/intervals}}</select></label>
        <label>Product <select name="product"><option value="">every product</option>{{#products}}<option{{#selected}} selected{{/selected}}>{{name}}</option>{{/products}}</select></label>
        <label>Storefront <input name="storefront" value="{{storefront}}" placeholder="e.g. USA" size="6"></label>
        <input type="hidden" name="environment" value="{{environment}}">
        <button type="submit">Show</button> <a href="{{csvHref}}" download>CSV</a>
        </form>
        {{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}
        {{#warnings}}<p class="warning" role="status">{{.}}</p>{{/warnings}}
        {{#chart}}<section>{{{svg}}}{{> seriesTable}}</section>{{/chart}}
        {{#notes}}<p class="note">{{.}}</p>{{/notes}}
        {{> footer}}
        """

    static let trials = """
        {{> header}}
        <h1>Free trials</h1>
        <p class="note">Trials by the month they started, over the last twelve months.</p>
        {{#charts}}<section><h2><a href="{{href}}">{{title}}</a></h2>{{{svg}}}{{> seriesTable}}</section>{{/charts}}
        {{#notes}}<p class="note">{{.}}</p>{{/notes}}
        {{> footer}}
        """
}
