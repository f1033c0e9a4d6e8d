import Hummingbird
import HummingbirdAuth
import NIOCore
import StorekeeperCore

/// `/dashboard/sign-in` and `/dashboard/sign-out`: the pages anyone may open. The sign-in form's token is a cookie of
/// its own (`storekeeper_signin`, the form carries the same value back: a double submit under SameSite=Strict), so
/// that opening the page stores nothing; a session is stored only once someone signs in. A stale or missing token
/// gets a fresh form, not an error page. Attempts are throttled per client address (`ClientAddressMiddleware`) and
/// per account before any password is checked.
struct DashboardSignInController {
    let accounts: DashboardAccounts
    let secureCookies: Bool

    /// The sign-in form's cookie.
    static let formCookie = "storekeeper_signin"

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
        if let userId = context.sessions.session?.userId, try await accounts.user(id: userId) != nil {
            throw DashboardRedirect(location: next)
        }
        let token = formToken(request) ?? CSRFToken.make()
        return withFormCookie(token, DashboardRender.page("signIn", SignInPage(csrf: token, next: next, email: "", message: nil)))
    }

    @Sendable func signIn(_ request: Request, context: DashboardContext) async throws -> Response {
        let form = try await DashboardForm.decode(SignInForm.self, request)
        let next = form.next.flatMap(DashboardPaths.safeNext) ?? DashboardPaths.root
        let email = form.email ?? ""
        guard let token = formToken(request), CSRFToken.matches(form.csrf, token) else {
            let fresh = CSRFToken.make()
            let page = SignInPage(
                csrf: fresh, next: next, email: email,
                message: "The sign-in form had expired (or came from another site). Please sign in again.")
            return withFormCookie(fresh, DashboardRender.page("signIn", page, status: .forbidden))
        }
        let outcome: SignInOutcome
        do {
            outcome = try await accounts.signIn(email: email, password: form.password ?? "", client: context.client)
        } catch CoreError.tooManyRequests(_, let seconds) {
            return Self.tooMany(seconds: Int64(seconds))
        }
        switch outcome {
        case .signedIn(let user):
            // A new session id on sign-in, so that an id known before it is worth nothing after.
            context.sessions.createSession(DashboardSession(userId: user.id, csrf: CSRFToken.make()), expiresIn: Self.sessionLength)
            // Returned, not thrown: the session middleware saves the session only from an answer.
            return DashboardRedirect(location: next).response
        case .wrongCredentials:
            let page = SignInPage(csrf: token, next: next, email: email, message: "Wrong email or password.")
            return DashboardRender.page("signIn", page, status: .unauthorized)
        case .throttled(let seconds):
            return Self.tooMany(seconds: seconds)
        }
    }

    /// The answer to an attempt refused before any password was checked: a small page made without the template
    /// engine (a flood of them costs what any small answer does), with a link back to the form.
    static func tooMany(seconds: Int64) -> Response {
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>Too many sign-in attempts</title></head>
            <body><h1>Too many sign-in attempts</h1><p role="alert">Too many sign-in attempts: please wait \(seconds) seconds \
            before the next one.</p><p><a href="\(DashboardPaths.signIn)">Back to sign-in</a></p></body></html>
            """
        return Response(
            status: .tooManyRequests,
            headers: [.contentType: "text/html; charset=utf-8", .retryAfter: String(seconds)],
            body: .init(byteBuffer: ByteBuffer(string: html)))
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

    /// The sign-in form's token from its cookie, when it has the form of one (64 hex digits).
    func formToken(_ request: Request) -> String? {
        guard let value = request.cookies[Self.formCookie]?.value, value.utf8.count == 64,
            value.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else { return nil }
        return value
    }

    /// The answer with the form's cookie set (HttpOnly, SameSite=Strict, for the sign-in path, half an hour).
    func withFormCookie(_ token: String, _ response: Response) -> Response {
        var response = response
        response.setCookie(
            Cookie(
                name: Self.formCookie, value: token, maxAge: Int(Self.formSessionLength.components.seconds), path: DashboardPaths.signIn,
                secure: secureCookies, httpOnly: true, sameSite: .strict))
        return response
    }
}

/// Answers a sign-in attempt from a client that must wait with `DashboardSignInController.tooMany` before anything of
/// it is read (its session, its form): on the router, ahead of the dashboard's middleware, so that a flood of
/// attempts costs what any small answer does.
struct SignInGate: RouterMiddleware {
    typealias Context = ServerContext
    let accounts: DashboardAccounts

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .post, request.uri.path == DashboardPaths.signIn, let seconds = accounts.signInWait(client: context.client)
        else { return try await next(request, context) }
        return DashboardSignInController.tooMany(seconds: seconds)
    }
}
