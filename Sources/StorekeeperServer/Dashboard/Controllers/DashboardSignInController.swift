import Hummingbird
import HummingbirdAuth
import StorekeeperCore

/// `/dashboard/sign-in` and `/dashboard/sign-out`: the pages anyone may open. Sign-in checks its own form's token
/// (a stale one gets a fresh form, not an error page).
struct DashboardSignInController {
    let core: StorekeeperCore

    /// How long a signed-in session lasts, and a sign-in form's session.
    static let sessionLength = Duration.seconds(12 * 3600)
    static let formSessionLength = Duration.seconds(30 * 60)

    var routes: RouteCollection<DashboardContext> {
        let routes = RouteCollection(context: DashboardContext.self)
        routes.get("sign-in", use: signInPage)
        routes.post("sign-in", use: signIn)
        routes.post("sign-out", use: signOut)
        return routes
    }

    struct SignInForm: Decodable {
        var email: String?
        var password: String?
        var csrf: String?
        var next: String?
    }

    @Sendable func signInPage(_ request: Request, context: DashboardContext) async throws -> Response {
        let next = request.uri.queryParameters.get("next").flatMap(DashboardPaths.safeNext) ?? DashboardPaths.root
        if let userId = context.sessions.session?.userId, try await core.dashboardAccounts.user(id: userId) != nil {
            throw DashboardRedirect(location: next)
        }
        let session = formSession(context)
        return DashboardRender.page("signIn", SignInPage(csrf: session.csrf, next: next, email: "", message: nil))
    }

    @Sendable func signIn(_ request: Request, context: DashboardContext) async throws -> Response {
        let form = try await DashboardForm.decode(SignInForm.self, request)
        let next = form.next.flatMap(DashboardPaths.safeNext) ?? DashboardPaths.root
        let email = form.email ?? ""
        guard let session = context.sessions.session, CSRFToken.matches(form.csrf, session.csrf) else {
            let fresh = DashboardSession.anonymous()
            context.sessions.createSession(fresh, expiresIn: Self.formSessionLength)
            let page = SignInPage(
                csrf: fresh.csrf, next: next, email: email,
                message: "The sign-in form had expired (or came from another site). Please sign in again.")
            return DashboardRender.page("signIn", page, status: .forbidden)
        }
        switch try await core.dashboardAccounts.signIn(email: email, password: form.password ?? "") {
        case .signedIn(let user):
            // A new session id on sign-in, so that an id known before it is worth nothing after.
            context.sessions.createSession(DashboardSession(userId: user.id, csrf: CSRFToken.make()), expiresIn: Self.sessionLength)
            // Returned, not thrown: the session middleware saves the session only from an answer.
            return DashboardRedirect(location: next).response
        case .wrongCredentials:
            let page = SignInPage(csrf: session.csrf, next: next, email: email, message: "Wrong email or password.")
            return DashboardRender.page("signIn", page, status: .unauthorized)
        case .locked(let until):
            let seconds = max(1, (until - core.now + 999) / 1000)
            let page = SignInPage(
                csrf: session.csrf, next: next, email: email,
                message: "Too many failed sign-ins: this account is locked for \(seconds) more seconds.")
            var response = DashboardRender.page("signIn", page, status: .tooManyRequests)
            response.headers[.retryAfter] = String(seconds)
            return response
        }
    }

    @Sendable func signOut(_ request: Request, context: DashboardContext) async throws -> Response {
        let form = try await DashboardForm.decode(DashboardForm.CSRF.self, request)
        guard let session = context.sessions.session else { throw DashboardRedirect(location: DashboardPaths.signIn) }
        guard CSRFToken.matches(form.csrf, session.csrf) else {
            throw CoreError.forbidden("the sign-out form did not carry this session's token")
        }
        context.sessions.clearSession()
        return DashboardRedirect(location: DashboardPaths.signIn).response
    }

    /// The session a form is posted with: the current one, or a new anonymous one (the sign-in page's).
    func formSession(_ context: DashboardContext) -> DashboardSession {
        if let session = context.sessions.session { return session }
        let session = DashboardSession.anonymous()
        context.sessions.createSession(session, expiresIn: Self.formSessionLength)
        return session
    }
}
