import Experiments
import Foundation
import Hummingbird
import StorekeeperCore

/// Paywalls, placements and experiments: the admin routes under `/v1/apps/{appId}` (secret key), the definitions an
/// SDK assigns with (any key of the app), and the placement answers and exposures under `/v1/customers/{appUserId}`.
struct ExperimentController {
    let core: StorekeeperCore

    var adminRoutes: RouteCollection<AdminContext> {
        let routes = RouteCollection(context: AdminContext.self)
        routes.get("paywalls", use: listPaywalls)
        routes.put("paywalls/:paywallId", use: putPaywall)
        routes.get("paywalls/:paywallId", use: getPaywall)
        routes.delete("paywalls/:paywallId", use: deletePaywall)
        routes.get("placements", use: listPlacements)
        routes.put("placements/:placementId", use: putPlacement)
        routes.get("placements/:placementId", use: getPlacement)
        routes.post("experiments", use: createExperiment)
        routes.get("experiments", use: listExperiments)
        routes.get("experiments/:experimentKey", use: getExperiment)
        routes.patch("experiments/:experimentKey", use: patchExperiment)
        routes.get("experiments/:experimentKey/results", use: results)
        return routes
    }

    /// Under `/v1/apps/{appId}`, with any key of that app.
    var appRoutes: RouteCollection<CustomerContext> {
        let routes = RouteCollection(context: CustomerContext.self)
        routes.get("experiments/definitions", use: definitions)
        return routes
    }

    /// Under `/v1/customers`, with any key.
    var customerRoutes: RouteCollection<CustomerContext> {
        let routes = RouteCollection(context: CustomerContext.self)
        routes.get(":appUserId/placements/:placementId", use: placement)
        routes.post(":appUserId/exposures", use: expose)
        return routes
    }

    // MARK: paywalls

    struct PaywallList: ResponseEncodable { var paywalls: [Paywall] }

    @Sendable func listPaywalls(_ request: Request, context: AdminContext) async throws -> PaywallList {
        PaywallList(paywalls: try await core.experiments.paywalls(app: context.app))
    }

    @Sendable func putPaywall(_ request: Request, context: AdminContext) async throws -> EditedResponse<Paywall> {
        let body = try await request.decode(as: PaywallBody.self, context: context)
        let put = try await core.experiments.putPaywall(try context.parameters.require("paywallId"), body.input, app: context.app)
        return EditedResponse(status: put.created ? .created : .ok, response: put.paywall)
    }

    @Sendable func getPaywall(_ request: Request, context: AdminContext) async throws -> Paywall {
        try await core.experiments.paywall(try context.parameters.require("paywallId"), app: context.app)
    }

    @Sendable func deletePaywall(_ request: Request, context: AdminContext) async throws -> Response {
        try await core.experiments.deletePaywall(try context.parameters.require("paywallId"), app: context.app)
        return Response(status: .noContent)
    }

    // MARK: placements

    struct PlacementList: ResponseEncodable { var placements: [PlacementView] }
    struct PlacementBody: Decodable { var defaultPaywall: String }

    @Sendable func listPlacements(_ request: Request, context: AdminContext) async throws -> PlacementList {
        PlacementList(placements: try await core.experiments.placements(app: context.app))
    }

    @Sendable func putPlacement(_ request: Request, context: AdminContext) async throws -> EditedResponse<PlacementView> {
        let body = try await request.decode(as: PlacementBody.self, context: context)
        let (placement, created) = try await core.experiments.putPlacement(
            try context.parameters.require("placementId"), defaultPaywall: body.defaultPaywall, app: context.app)
        return EditedResponse(status: created ? .created : .ok, response: placement)
    }

    @Sendable func getPlacement(_ request: Request, context: AdminContext) async throws -> PlacementView {
        try await core.experiments.placement(try context.parameters.require("placementId"), app: context.app)
    }

    // MARK: experiments

    struct ExperimentList: ResponseEncodable { var experiments: [ExperimentView] }

    @Sendable func createExperiment(_ request: Request, context: AdminContext) async throws -> EditedResponse<ExperimentView> {
        let body = try await Self.jsonBody(request, context: context)
        return EditedResponse(status: .created, response: try await core.experiments.createExperiment(body, app: context.app))
    }

    @Sendable func listExperiments(_ request: Request, context: AdminContext) async throws -> ExperimentList {
        ExperimentList(experiments: try await core.experiments.experiments(app: context.app))
    }

    @Sendable func getExperiment(_ request: Request, context: AdminContext) async throws -> ExperimentView {
        try await core.experiments.experiment(try context.parameters.require("experimentKey"), app: context.app)
    }

    @Sendable func patchExperiment(_ request: Request, context: AdminContext) async throws -> ExperimentView {
        let body = try await Self.jsonBody(request, context: context)
        return try await core.experiments.patchExperiment(try context.parameters.require("experimentKey"), body, app: context.app)
    }

    @Sendable func results(_ request: Request, context: AdminContext) async throws -> ExperimentResults {
        let parameters = request.uri.queryParameters
        let environment = try context.app.environment(parameters.get("environment"))
        let window = try ExperimentResultsReader.window(parameters.get("window"))
        return try await core.experimentResults.results(
            try context.parameters.require("experimentKey"), app: context.app, environment: environment, windowDays: window)
    }

    @Sendable func definitions(_ request: Request, context: CustomerContext) async throws -> ExperimentDefinitions {
        let app = context.caller.app
        if let appId = context.parameters.get("appId"), appId != app.id { throw CoreError.appNotFound(appId: appId) }
        return try await core.experiments.definitions(app: app)
    }

    // MARK: what the app asks

    /// The answer's JSON was made when the app's catalog was loaded: sent as it is.
    @Sendable func placement(_ request: Request, context: CustomerContext) async throws -> Response {
        let parameters = request.uri.queryParameters
        let app = context.caller.app
        let appContext = PlacementServing.AppContext(
            appVersion: parameters.get("appVersion"), storefront: parameters.get("storefront"),
            environment: try app.environment(parameters.get("environment")), client: context.client)
        let answer = try await core.placements.placement(
            try context.parameters.require("placementId"), for: try CustomerController.appUserId(context), caller: context.caller,
            context: appContext)
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: answer.json)))
    }

    @Sendable func expose(_ request: Request, context: CustomerContext) async throws -> EditedResponse<ExposureAnswer> {
        let input = try await request.decode(as: ExposureInput.self, context: context)
        let environment = try context.caller.app.environment(request.uri.queryParameters.get("environment"))
        let answer = try await core.placements.expose(
            input, for: try CustomerController.appUserId(context), caller: context.caller, environment: environment)
        return EditedResponse(status: answer.recorded ? .created : .ok, response: answer)
    }

    /// A JSON body as its bytes (at most 256 KB, valid JSON), for the use cases that decode it themselves.
    static func jsonBody(_ request: Request, context: some RequestContext) async throws -> Data {
        let value = try await request.decode(as: JSONValue.self, context: context)
        return try JSONEncoder().encode(value)
    }
}

/// A paywall's body: `products` and `config` (and `id`, which must be the path's); another field is refused.
struct PaywallBody: Decodable {
    var input: PaywallInput

    enum CodingKeys: String, CodingKey, CaseIterable { case id, products, config }

    init(from decoder: any Decoder) throws {
        try StrictBody.refuseUnknown(decoder, CodingKeys.self, what: "a paywall")
        let c = try decoder.container(keyedBy: CodingKeys.self)
        input = PaywallInput(
            id: try c.decodeUnlessAbsent(String.self, forKey: .id), products: try c.decode([String].self, forKey: .products),
            config: try c.decodeIfPresent(JSONValue.self, forKey: .config))
    }
}

extension Paywall: ResponseEncodable {}
extension PlacementView: ResponseEncodable {}
extension ExperimentView: ResponseEncodable {}
extension ExperimentResults: ResponseEncodable {}
extension ExperimentDefinitions: ResponseEncodable {}
extension ExposureAnswer: ResponseEncodable {}
