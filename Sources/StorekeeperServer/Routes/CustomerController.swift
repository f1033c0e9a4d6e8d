import AppStore
import Foundation
import Hummingbird
import StorekeeperCore

/// `/v1/customers/{appUserId}…` (any key of the app) and the secret-key reads beside them: the customer's events and
/// the RevenueCat-shaped `/v1/subscribers/{appUserId}`.
struct CustomerController {
    let core: StorekeeperCore

    /// What the app reads and posts, with its public key.
    var customerRoutes: RouteCollection<CustomerContext> {
        let routes = RouteCollection(context: CustomerContext.self)
        routes.get(":appUserId", use: getCustomer)
        routes.post(":appUserId/transactions", use: postTransaction)
        routes.post(":appUserId/alias", use: postAlias)
        routes.post(":appUserId/offers/promotional", use: promotionalOffer)
        return routes
    }

    /// What the team's backend reads, with a secret key.
    var adminRoutes: RouteCollection<AdminContext> {
        let routes = RouteCollection(context: AdminContext.self)
        routes.get("/v1/customers/:appUserId/events", use: customerEvents)
        routes.get("/v1/subscribers/:appUserId", use: subscriber)
        return routes
    }

    /// What a customer answer covers: `?environment=` narrows it to one environment; without it, every environment
    /// the app accepts; `?currentEnvironment=` says which one the caller runs in (`activeInCurrentEnvironment`).
    static func view(_ request: Request, app: AppRuntime, current fallback: AppStore.Environment? = nil) throws -> StateView {
        let parameters = request.uri.queryParameters
        var view = try app.stateView(environment: parameters.get("environment"), current: parameters.get("currentEnvironment"))
        if case .every(let environments, .none) = view, let fallback, environments.contains(fallback) {
            view = .every(environments, current: fallback)
        }
        return view
    }

    @Sendable func getCustomer(_ request: Request, context: CustomerContext) async throws -> Response {
        let appUserId = try Self.appUserId(context)
        let view = try Self.view(request, app: context.caller.app)
        let read = try await core.customers.state(of: appUserId, caller: context.caller, view: view)
        return StateResponse(
            snapshot: read.snapshot, appUserId: appUserId, appId: context.caller.app.id,
            appAccountToken: core.accountTokens.token(forRead: appUserId, app: context.caller.app.id, client: context.client), view: view,
            requestDate: core.now
        ).response(to: request)
    }

    @Sendable func postTransaction(_ request: Request, context: CustomerContext) async throws -> Response {
        let app = context.caller.app
        let appUserId = try Self.appUserId(context)
        var view = try Self.view(request, app: app)
        let posted = try await request.decode(as: PostedPurchase.self, context: context)
        let linked = try await core.purchases.post(posted, app: app, appUserId: appUserId)
        // Without ?environment=, the answer covers every environment, the purchase's being the caller's unless it
        // said otherwise (an app of one environment: the purchase's, as it always was).
        if request.uri.queryParameters.get("environment") == nil {
            view = try Self.view(request, app: app, current: linked.environment)
            if case .one = view, let purchaseEnvironment = linked.environment { view = .one(purchaseEnvironment) }
        }
        let snapshot = try await core.customers.state(customerId: linked.customerId, app: app, view: view)
        return StateResponse(
            snapshot: snapshot, appUserId: appUserId, appId: app.id,
            appAccountToken: try await core.accountTokens.token(for: appUserId, app: app.id), view: view,
            requestDate: core.now, transferred: linked.transferred
        ).response(to: request)
    }

    struct AliasBody: Decodable { var alias: String }

    @Sendable func postAlias(_ request: Request, context: CustomerContext) async throws -> Response {
        let app = context.caller.app
        let appUserId = try Self.appUserId(context)
        let view = try Self.view(request, app: app)
        let body = try await request.decode(as: AliasBody.self, context: context)
        let customerId = try await core.purchases.alias(body.alias, of: appUserId, caller: context.caller)
        let snapshot = try await core.customers.state(customerId: customerId, app: app, view: view)
        return StateResponse(
            snapshot: snapshot, appUserId: appUserId, appId: app.id,
            appAccountToken: try await core.accountTokens.token(for: appUserId, app: app.id), view: view,
            requestDate: core.now
        ).response(to: request)
    }

    struct OfferBody: Decodable {
        var productId: String
        var offerId: String
    }

    @Sendable func promotionalOffer(_ request: Request, context: CustomerContext) async throws -> SignedPromotionalOffer {
        let body = try await request.decode(as: OfferBody.self, context: context)
        let environment = try context.caller.app.environment(request.uri.queryParameters.get("environment"))
        return try await core.promotionalOffers.sign(
            productId: body.productId, offerId: body.offerId, for: try Self.appUserId(context), caller: context.caller,
            environment: environment)
    }

    @Sendable func customerEvents(_ request: Request, context: AdminContext) async throws -> EventPage {
        try await core.customers.events(of: try Self.appUserId(context), app: context.app, query: EventQuery(request))
    }

    @Sendable func subscriber(_ request: Request, context: AdminContext) async throws -> RevenueCatSubscriber {
        let appUserId = try Self.appUserId(context)
        let view = try Self.view(request, app: context.app)
        let customerId = try await core.customers.customerId(of: appUserId, app: context.app)
        let snapshot = try await core.customers.state(customerId: customerId, app: context.app, view: view)
        let now = core.now
        var firstSeen: Int64?
        if let customerId { firstSeen = try await core.customers.firstSeen(customerId: customerId) }
        return RevenueCatSubscriber(state: try snapshot.state(), appUserId: appUserId, requestDate: now, firstSeen: firstSeen ?? now)
    }

    /// The path's app user id, percent-decoded.
    static func appUserId(_ context: some RequestContext) throws -> String {
        guard let raw = context.parameters.get("appUserId") else {
            throw CoreError.invalidInput(field: "appUserId", "the app user id is missing")
        }
        return raw.removingPercentEncoding ?? raw
    }
}

extension RevenueCatSubscriber: ResponseEncodable {}
extension SignedPromotionalOffer: ResponseEncodable {}
