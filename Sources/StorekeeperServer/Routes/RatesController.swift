import Hummingbird
import NIOCore
import StorekeeperCore

/// `/v1/rates`: the exchange rates every app of the server shares. Any app's secret key reads them; only the
/// operator changes them (`storekeeper rates import`, or `PUT` with the operator token), since a change rewrites every
/// app's revenue.
struct RatesController {
    let analytics: AppAnalytics
    let apps: AppRegistry
    let operatorToken: OperatorToken

    var routes: RouteCollection<ServerContext> {
        let routes = RouteCollection(context: ServerContext.self)
        routes.put("/v1/rates", use: putRates)
        routes.group().add(middleware: APIKeyAuthenticator(apps: apps)).group(context: AdminContext.self).get("/v1/rates", use: getRates)
        return routes
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

    /// The body is CSV: `date,currency,usd_per_unit`, or the ECB's `Date,USD,JPY,…` per euro. The operator token only:
    /// an app's key (valid, else 401) is 403.
    @Sendable func putRates(_ request: Request, context: ServerContext) async throws -> RateImport {
        guard operatorToken.admits(request.headers) else {
            guard let authorization = request.headers[.authorization] else {
                throw CoreError.unauthenticated("the operator token is required: Authorization: Bearer <STOREKEEPER_OPERATOR_TOKEN>")
            }
            _ = try await apps.authenticate(bearer: APIKeyAuthenticator.credential(authorization))
            throw CoreError.forbidden(
                "exchange rates are the operator's (they change every app's revenue): `storekeeper rates import`, or this endpoint with the operator token"
            )
        }
        var request = request
        let body: ByteBuffer
        do { body = try await request.collectBody(upTo: Self.maxRatesBytes) } catch let error as any HTTPResponseError
            where error.status == .contentTooLarge
        {
            throw ErrorResponse(.contentTooLarge, "payload_too_large", "a rates file is at most \(Self.maxRatesBytes >> 20) MB")
        }
        let count = try await analytics.importRates(csv: String(buffer: body))
        return RateImport(imported: count, currencies: try await coverage())
    }

    @Sendable func getRates(_ request: Request, context: AdminContext) async throws -> RateImport {
        RateImport(imported: 0, currencies: try await coverage())
    }

    func coverage() async throws -> [RateCoverage] {
        try await analytics.rateCoverage().map {
            RateCoverage(currency: $0.currency, rates: $0.count, first: $0.first.description, last: $0.last.description)
        }
    }
}
