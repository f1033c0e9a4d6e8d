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
        var name = context.parameters.get("metric") ?? ""
        var asCSV = request.headers[.accept].map { $0.contains("text/csv") } ?? false
        if name.hasSuffix(".csv") {
            name.removeLast(4)
            asCSV = true
        }
        let parameters = request.uri.queryParameters
        let environment = try environment(request, context)
        let metricRequest: MetricRequest
        let metric: Metric
        do throws(AnalyticsError) {
            metric = try Metric(named: name)
            let today = CalendarDay(containing: core.now)
            let to = parameters.get("to") ?? today.adding(days: 1).description
            // Without from: 30 days before to (before tomorrow when to itself is wrong, so that the error names to).
            let from = parameters.get("from") ?? (CalendarDay(to) ?? today.adding(days: 1)).adding(days: -30).description
            metricRequest = try MetricRequest(
                appId: context.app.id, environment: environment, from: from, to: to,
                interval: parameters.get("interval") ?? "day", timeZone: parameters.get("tz"),
                productId: parameters.get("product"), group: parameters.get("group"), storefront: parameters.get("storefront"),
                conversionWindowDays: try Self.integer(parameters.get("window"), name: "window") ?? 3,
                excludeRefunded: try Self.flag(parameters.get("excludeRefunded"), name: "excludeRefunded"))
        } catch {
            throw StorekeeperError.invalidInput(field: error.field, error.reason)
        }
        let series = try await core.analytics.series(metric, metricRequest)
        if asCSV {
            var headers = HTTPFields()
            headers[.contentType] = "text/csv; charset=utf-8"
            headers[.contentDisposition] = "attachment; filename=\"\(metric.rawValue).csv\""
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: series.csv)))
        }
        return try series.response(from: request, context: context)
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

    /// `?environment=`: Production when the app accepts it, else the app's first.
    func environment(_ request: Request, _ context: AdminContext) throws -> AppStore.Environment {
        let requested = request.uri.queryParameters.get("environment")
        if requested == nil, context.app.config.allowedEnvironments.contains(.production) { return .production }
        return try context.app.environment(requested)
    }

    static func integer(_ text: String?, name: String) throws(AnalyticsError) -> Int64? {
        guard let text else { return nil }
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), text.utf8.count <= 6, let value = Int64(text) else {
            throw .invalidParameter(name, "'\(text)' is not a whole number of days")
        }
        return value
    }

    static func flag(_ text: String?, name: String) throws(AnalyticsError) -> Bool {
        switch text {
        case nil, "false": false
        case "true": true
        case let other?: throw .invalidParameter(name, "'\(other)' is not true or false")
        }
    }
}

extension MetricSeries: ResponseEncodable {}
extension MetricsOverview: ResponseEncodable {}
