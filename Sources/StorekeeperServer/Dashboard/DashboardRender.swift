import Analytics
import AppStore
import Hummingbird
import NIOCore
import StorekeeperCore

/// What every signed-in page shows around its content: who is signed in (and the sign-out form's token), the app's
/// pages, the environment switch, and the sandbox label.
struct DashboardChrome: Sendable {
    struct Link: Sendable {
        var name: String
        var href: String
        var current: Bool
    }
    struct AppNavigation: Sendable {
        var links: [Link]
        var environments: [Link]
    }
    var email: String
    var csrf: String
    var app: AppNavigation?
    var sandbox: Bool

    /// The chrome of a page of `app` at `path` (its query's `environment` switched by the environment links).
    init(user: DashboardUser, session: DashboardSession?, app: AppRuntime?, environment: AppStore.Environment?, path: String) {
        email = user.email
        csrf = session?.csrf ?? ""
        sandbox = environment.map { $0 != .production } ?? false
        guard let app, let environment else { return }
        let base = DashboardPaths.app(app.id)
        let env = environment.rawValue
        let pages: [(String, String)] = [
            ("Overview", base), ("MRR", base + "/metrics/mrr"), ("Revenue", base + "/metrics/revenue"),
            ("Subscriptions", base + "/metrics/activeSubscriptions"), ("Churn", base + "/metrics/churn"),
            ("Free trials", base + "/trials"), ("Customers", base + "/customers"), ("Events", base + "/events"),
            ("Integrations", base + "/integrations"), ("Experiments", base + "/experiments"),
            ("Refund requests", base + "/refund-requests"),
        ]
        self.app = AppNavigation(
            links: pages.map { Link(name: $0.0, href: DashboardPaths.link($0.1, [("environment", env)]), current: $0.1 == path) },
            environments: app.config.allowedEnvironments.map {
                Link(name: $0.rawValue, href: DashboardPaths.link(path, [("environment", $0.rawValue)]), current: $0 == environment)
            })
    }
}

/// A series as the pages draw it: an SVG chart of its value and a table of every field, each cell with the JSON
/// number the API answers (`data-value`) beside the text shown.
struct SeriesView {
    struct Cell {
        var field: String
        var raw: String
        var text: String
    }
    struct Row {
        var start: String
        var cells: [Cell]
    }
    var title: String
    var href: String
    var metric: String
    var svg: String
    var columns: [String]
    var rows: [Row]

    init(_ series: MetricSeries, title: String, href: String) {
        self.title = title
        self.href = href
        metric = series.metric.rawValue
        let names = ["value"] + (series.points.first?.fields.map(\.name) ?? [])
        columns = names
        rows = series.points.map { point in
            Row(
                start: point.start.description,
                cells: names.map { name in
                    let value = point[name] ?? 0
                    return Cell(field: name, raw: String(value), text: DashboardFormat.value(value, kind: Self.kind(series.metric, name)))
                })
        }
        svg =
            SVGChart(
                id: "chart-\(series.metric.rawValue)", title: title, labels: series.points.map(\.start.description),
                values: series.points.map(\.value), kind: Self.kind(series.metric, "value")
            ).svg
    }

    /// How a field of a metric reads: money (USD), a ratio, or a count.
    static func kind(_ metric: Metric, _ field: String) -> DashboardFormat.ValueKind {
        switch (metric, field) {
        case (.mrr, _), (.arr, _), (.revenue, _), (.churn, "mrrAtStart"), (.churn, "mrrLost"), (.billing, "recoveredRevenue"): .money
        case (.churn, "value"), (.churn, "revenueChurn"), (.refundRate, "value"), (.refundRate, "revenueRate"),
            (.trialConversion, "value"), (.trialConversion, "conversionWithinWindow"), (.freeTrials, "conversion"),
            (.billing, "recoveryRate"):
            .ratio
        case (.retention, let field) where field.hasPrefix("renewal"): .ratio
        case (.ltv, let field) where field == "value" || field.hasPrefix("per"): .money
        default: .count
        }
    }

    /// Plain words for what currencies without a rate leave out of a figure (named as its card or page names it).
    static func unconvertedWarning(_ unconverted: [String: Double], figure: String) -> String? {
        guard !unconverted.isEmpty else { return nil }
        let list = unconverted.sorted { $0.key < $1.key }.map { "\($0.key) \(DashboardFormat.money($0.value))" }.joined(separator: ", ")
        return "\(figure) leaves out \(list): no exchange rate to USD is loaded for it (storekeeper rates import, or PUT /v1/rates)."
    }

    /// A chart's title: the metric's words, "(USD)" for money, and what the chart covers.
    static func title(_ metric: Metric, _ range: String) -> String {
        metric.title + (kind(metric, "value") == .money ? " (USD)" : "") + ", " + range
    }
}

enum DashboardRender {
    /// A template rendered as an HTML answer.
    static func page(_ template: String, _ model: Any, status: HTTPResponse.Status = .ok) -> Response {
        let html = DashboardTemplates.library.render(model, withTemplate: template) ?? ""
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
