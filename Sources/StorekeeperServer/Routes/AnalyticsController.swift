import Analytics
import AppStore
import Foundation
import Hummingbird
import StorekeeperCore

/// `/v1/apps/{appId}/metrics…` (the app's secret key).
struct AnalyticsController {
    let core: StorekeeperCore

    var appRoutes: RouteCollection<AdminContext> {
        let routes = RouteCollection(context: AdminContext.self)
        routes.get("metrics", use: list)
        routes.get("metrics/overview", use: overview)
        routes.get("metrics/:metric", use: series)
        return routes
    }

    struct MetricList: ResponseEncodable {
        struct Entry: Encodable {
            var name: String
            var summary: String
            var path: String
        }
        var metrics: [Entry]
    }

    @Sendable func list(_ request: Request, context: AdminContext) async throws -> MetricList {
        MetricList(
            metrics: Metric.allCases.map {
                .init(name: $0.rawValue, summary: $0.summary, path: "/v1/apps/\(context.app.id)/metrics/\($0.rawValue)")
            })
    }

    @Sendable func overview(_ request: Request, context: AdminContext) async throws -> MetricsOverview {
        try await core.analytics.overview(of: context.app, environment: try environment(request, context))
    }

    /// A series as JSON, or as CSV with `Accept: text/csv` or a `.csv` suffix.
    @Sendable func series(_ request: Request, context: AdminContext) async throws -> Response {
        let (name, asCSV) = MetricQuery.name(context.parameters.get("metric") ?? "", accept: request.headers[.accept])
        let parameters = request.uri.queryParameters
        let environment = try environment(request, context)
        let (metric, metricRequest) = try MetricQuery.request(
            metric: name, app: context.app, environment: environment, today: CalendarDay(containing: core.now)
        ) { parameters.get($0) }
        let series = try await core.analytics.series(metric, metricRequest)
        return asCSV ? MetricQuery.csvResponse(series) : try series.response(from: request, context: context)
    }

    func environment(_ request: Request, _ context: AdminContext) throws -> AppStore.Environment {
        try MetricQuery.environment(request.uri.queryParameters.get("environment"), app: context.app)
    }
}

extension MetricSeries: ResponseEncodable {}
extension MetricsOverview: ResponseEncodable {}
