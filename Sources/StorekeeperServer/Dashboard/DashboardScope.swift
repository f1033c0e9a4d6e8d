import AppStore
import Hummingbird
import StorekeeperCore

/// What a page of one app is about: who looks, the app, the environment of the query, and the chrome around it.
struct DashboardScope: Sendable {
    let user: DashboardUser
    let app: AppRuntime
    let environment: AppStore.Environment
    let chrome: DashboardChrome
}

/// The pages under `apps/:appId`: the app of the path for a user who may see it (another app reads as absent, 404),
/// and the environment of the query (refused when the app does not allow it), resolved once, into the context.
struct DashboardAppScope: RouterMiddleware {
    typealias Context = DashboardContext
    let apps: AppRegistry

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let user = try context.signedIn()
        let appId = context.parameters.get("appId") ?? ""
        guard user.canSee(app: appId) else { throw CoreError.appNotFound(appId: appId) }
        let app = try await apps.app(id: appId)
        let environment = try MetricQuery.environment(request.uri.queryParameters.get("environment"), app: app)
        var context = context
        context.appScope = DashboardScope(
            user: user, app: app, environment: environment,
            chrome: DashboardChrome(
                user: user, session: context.sessions.session, app: app, environment: environment, path: request.uri.path))
        return try await next(request, context)
    }
}
