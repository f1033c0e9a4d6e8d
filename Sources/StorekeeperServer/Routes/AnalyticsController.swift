import Analytics
import AppStore
import Foundation
import Hummingbird
import StorekeeperCore

/// `/v1/apps/{appId}/metrics…` (the app's secret key) and `/v1/rates` (any app's secret key: the rates are reference
/// data every app of the server shares).
struct AnalyticsController {
    let core: StorekeeperCore

    var appRoutes: RouteCollection<AdminContext> {
        let routes = RouteCollection(context: AdminContext.self)
        routes.get("metrics", use: list)
        routes.get("metrics/overview", use: overview)
        routes.get("metrics/:metric", use: series)
        return routes
    }

    var rateRoutes: RouteCollection<AdminContext> {
        let routes = RouteCollection(context: AdminContext.self)
        routes.put("/v1/rates", use: putRates)
        routes.get("/v1/rates", use: getRates)
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

    struct RateImport: ResponseEncodable {
        var imported: Int
        var currencies: [RateCoverage]
    }
    struct RateCoverage: ResponseEncodable {
        var currency: String
        var rates: Int
        var first: String
        var last: String
    }

    /// The largest rates file: the ECB's whole history since 1999 is under 1 MB.
    static let maxRatesBytes = 16 * 1024 * 1024

    /// The body is CSV: `date,currency,usd_per_unit`, or the ECB's `Date,USD,JPY,…` per euro.
    @Sendable func putRates(_ request: Request, context: AdminContext) async throws -> RateImport {
        var request = request
        let body: ByteBuffer
        do { body = try await request.collectBody(upTo: Self.maxRatesBytes) } catch let error as any HTTPResponseError
            where error.status == .contentTooLarge
        {
            throw ErrorResponse(.contentTooLarge, "payload_too_large", "a rates file is at most \(Self.maxRatesBytes >> 20) MB")
        }
        let count = try await core.analytics.importRates(csv: String(buffer: body))
        return RateImport(imported: count, currencies: try await coverage())
    }

    @Sendable func getRates(_ request: Request, context: AdminContext) async throws -> RateImport {
        RateImport(imported: 0, currencies: try await coverage())
    }

    func coverage() async throws -> [RateCoverage] {
        try await core.analytics.rateCoverage().map {
            RateCoverage(currency: $0.currency, rates: $0.count, first: $0.first.description, last: $0.last.description)
        }
    }

    func environment(_ request: Request, _ context: AdminContext) throws -> AppStore.Environment {
        try MetricQuery.environment(request.uri.queryParameters.get("environment"), app: context.app)
    }
}

extension MetricSeries: ResponseEncodable {}
extension MetricsOverview: ResponseEncodable {}
