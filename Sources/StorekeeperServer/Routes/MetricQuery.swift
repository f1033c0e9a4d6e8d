import Analytics
import AppStore
import Hummingbird
import NIOCore
import StorekeeperCore

/// A metric's query parameters as the API and the dashboard both read them, so that a page shows what the API
/// answers for the same parameters.
enum MetricQuery {
    /// `?environment=`: Production when the app accepts it, else the app's first.
    static func environment(_ requested: String?, app: AppRuntime) throws -> AppStore.Environment {
        if requested == nil, app.config.allowedEnvironments.contains(.production) { return .production }
        return try app.environment(requested)
    }

    /// The metric's name from the path, and whether CSV is asked for (a `.csv` suffix or `Accept: text/csv`).
    static func name(_ segment: String, accept: String?) -> (name: String, csv: Bool) {
        if segment.hasSuffix(".csv") { return (String(segment.dropLast(4)), true) }
        return (segment, accept?.contains("text/csv") ?? false)
    }

    /// The metric and its request: `from`, `to` (default: the 30 days up to tomorrow), `interval`, `tz`, `product`,
    /// `group`, `storefront`, `window`, `excludeRefunded`. Errors name the parameter (400).
    static func request(
        metric name: String, app: AppRuntime, environment: AppStore.Environment, today: CalendarDay,
        defaultDays: Int64 = 30, parameter: (String) -> String?
    ) throws -> (Metric, MetricRequest) {
        do throws(AnalyticsError) {
            let metric = try Metric(named: name)
            let to = parameter("to") ?? today.adding(days: 1).description
            // Without from: before to (before tomorrow when to itself is wrong, so that the error names to).
            let from = parameter("from") ?? (CalendarDay(to) ?? today.adding(days: 1)).adding(days: -defaultDays).description
            let request = try MetricRequest(
                appId: app.id, environment: environment, from: from, to: to,
                interval: parameter("interval") ?? "day", timeZone: parameter("tz"),
                productId: parameter("product"), group: parameter("group"), storefront: parameter("storefront"),
                conversionWindowDays: try integer(parameter("window"), name: "window") ?? 3,
                excludeRefunded: try flag(parameter("excludeRefunded"), name: "excludeRefunded"))
            return (metric, request)
        } catch {
            throw CoreError.invalidInput(field: error.field, error.reason)
        }
    }

    /// A series as a CSV download.
    static func csvResponse(_ series: MetricSeries) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/csv; charset=utf-8"
        headers[.contentDisposition] = "attachment; filename=\"\(series.metric.rawValue).csv\""
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: series.csv)))
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
