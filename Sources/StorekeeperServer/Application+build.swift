import Hummingbird
import HummingbirdAuth
import Logging
import StorekeeperCore

/// The application: the HTTP server and the core's services (reconciliation, the database's orderly close) in one
/// service group that shuts down gracefully on SIGTERM or SIGINT (stop accepting, finish what is in flight, close
/// the database). The one way the app is built, by `storekeeper serve` and by every in-process test.
public func buildApplication(
    _ core: StorekeeperCore, settings: ServerSettings, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) -> some ApplicationProtocol {
    let sessions = DatabasePersistDriver(database: core.database, clock: core.clock, logger: core.logger)
    let limits = settings.connections
    let registry = ConnectionRegistry(maximum: limits.effectiveMaximum)
    return Application(
        router: buildRouter(core, sessions: sessions, settings: settings),
        server: .http1(configuration: .init(additionalChannelHandlers: [ConnectionGuard(limits: limits, registry: registry)])),
        configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: "storekeeper"),
        // The session purge stops before the database closes (services stop in reverse order).
        services: core.services + [sessions],
        onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? settings.port) },
        logger: core.logger)
}

/// Every route of the API, each group behind the authentication it needs, and the dashboard's pages. (Built alone,
/// as tests do to list the routes, nothing purges expired sessions: `buildApplication` runs that service.)
public func buildRouter(_ core: StorekeeperCore, settings: ServerSettings = ServerSettings()) -> Router<ServerContext> {
    buildRouter(core, sessions: DatabasePersistDriver(database: core.database, clock: core.clock, logger: core.logger), settings: settings)
}

func buildRouter(_ core: StorekeeperCore, sessions: DatabasePersistDriver, settings: ServerSettings) -> Router<ServerContext> {
    let secureCookies = settings.secureCookies
    let router = Router(context: ServerContext.self)
    router.addMiddleware {
        MetricsMiddleware(metrics: core.metrics)
        ClientAddressMiddleware(trustedProxies: settings.trustedProxies)
        SignInGate(accounts: core.dashboardAccounts)
        ErrorMiddleware(logger: core.logger)
        MethodNotAllowedMiddleware(methodsByPath: OpenAPIDocument.methodsByPath)
    }
    let authenticator = APIKeyAuthenticator(apps: core.apps)
    let customers = CustomerController(core: core)
    router.addRoutes(SystemController(core: core, operatorToken: settings.operatorToken).routes)
    router.addRoutes(WebhookController(core: core).routes)
    let retention = RetentionController(core: core)
    router.addRoutes(retention.appleRoutes)
    let analytics = AnalyticsController(core: core)
    router.addRoutes(RatesController(analytics: core.analytics, apps: core.apps, operatorToken: settings.operatorToken).routes)
    let experiments = ExperimentController(core: core)
    let appAdmin = AppAdminController(core: core)
    let refunds = RefundController(core: core)
    router.group("/v1/apps/:appId").add(middleware: authenticator).group(context: AdminContext.self)
        .addRoutes(appAdmin.routes)
        .addRoutes(analytics.appRoutes)
        .addRoutes(IntegrationController(core: core).routes)
        .addRoutes(experiments.adminRoutes)
        .addRoutes(refunds.adminRoutes)
        .addRoutes(retention.adminRoutes)
        .addRoutes(ImportController(core: core).routes)
    // What an app reads and posts with its public key is signed (README "Answers the device can trust").
    let appGroup = router.group("/v1/apps/:appId").add(middleware: authenticator).group(context: CustomerContext.self)
    let customerGroup = router.group("/v1/customers").add(middleware: authenticator).group(context: CustomerContext.self)
    if let signer = core.responseSigner {
        let now: @Sendable () -> Int64 = { core.now }
        appGroup.add(middleware: ResponseSigningMiddleware<CustomerContext>(signer: signer, now: now))
        customerGroup.add(middleware: ResponseSigningMiddleware<CustomerContext>(signer: signer, now: now))
    }
    appGroup.addRoutes(experiments.appRoutes).addRoutes(appAdmin.publicRoutes)
    customerGroup.addRoutes(customers.customerRoutes).addRoutes(experiments.customerRoutes).addRoutes(refunds.customerRoutes)
    router.group().add(middleware: authenticator).group(context: AdminContext.self)
        .addRoutes(customers.adminRoutes)

    // The dashboard: sessions and HTML errors around every page; sign-in and sign-out open to anyone; the rest behind
    // a signed-in user, every posted form's CSRF token checked; an app's pages with their app resolved once.
    let cookie = SessionCookieParameters(
        name: OpenAPIDocument.sessionCookie, path: DashboardPaths.root, secure: secureCookies, sameSite: .strict)
    let pages = router.group(RouterPath(DashboardPaths.root), context: DashboardContext.self)
        .add(middleware: DashboardPageMiddleware(logger: core.logger))
        .add(
            middleware: SessionMiddleware<DashboardContext>(
                storage: sessions,
                configuration: .init(
                    sessionCookieParameters: cookie, keyPrefix: "dashboard.",
                    defaultSessionExpiration: DashboardSignInController.sessionLength)))
    pages.addRoutes(
        DashboardSignInController(accounts: core.dashboardAccounts, secureCookies: secureCookies)
            .routes)
    let signedIn = pages.group().add(middleware: DashboardSignedIn(accounts: core.dashboardAccounts)).add(middleware: DashboardFormGuard())
    let analyticsPages = DashboardAnalyticsController(core: core)
    signedIn.addRoutes(analyticsPages.listRoutes)
    signedIn.group("apps/:appId").add(middleware: DashboardAppScope(apps: core.apps))
        .addRoutes(analyticsPages.appRoutes)
        .addRoutes(DashboardCustomersController(core: core).appRoutes)
        .addRoutes(DashboardIntegrationsController(core: core).appRoutes)
        .addRoutes(DashboardExperimentsController(core: core).appRoutes)
        .addRoutes(DashboardRefundsController(core: core).appRoutes)
    return router
}
