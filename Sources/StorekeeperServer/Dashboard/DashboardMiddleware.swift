import Foundation
import HTTPTypes
import Hummingbird
import Logging
import StorekeeperCore

/// A page that answers with a redirect instead (no session, a finished form).
struct DashboardRedirect: Error {
    let location: String

    /// To the sign-in page, coming back to `next` (a dashboard path) afterwards.
    static func signIn(next: String?) -> DashboardRedirect {
        guard let next, let safe = DashboardPaths.safeNext(next) else { return DashboardRedirect(location: DashboardPaths.signIn) }
        return DashboardRedirect(location: DashboardPaths.signIn + "?next=" + DashboardPaths.queryEscaped(safe))
    }

    var response: Response {
        var headers = HTTPFields()
        headers[.location] = location
        return Response(status: .seeOther, headers: headers)
    }
}

/// The dashboard's paths, and which of them a sign-in may return to.
enum DashboardPaths {
    static let root = "/dashboard"
    static let signIn = "/dashboard/sign-in"
    static let signOut = "/dashboard/sign-out"

    /// A return path after sign-in: only a dashboard path on this server (no `//host`, no scheme).
    static func safeNext(_ next: String) -> String? {
        guard next == root || next.hasPrefix(root + "/") || next.hasPrefix(root + "?"),
            !next.contains("//"), !next.contains("\\"), next.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else { return nil }
        return next
    }

    static func app(_ id: String) -> String { "/dashboard/apps/\(pathEscaped(id))" }

    /// Query text with everything but unreserved characters percent-encoded.
    static func queryEscaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    static func pathEscaped(_ text: String) -> String { queryEscaped(text) }

    /// `path?name=value&…`, skipping nil values.
    static func link(_ path: String, _ query: [(String, String?)]) -> String {
        let pairs = query.compactMap { name, value in value.map { "\(name)=\(queryEscaped($0))" } }
        return pairs.isEmpty ? path : path + "?" + pairs.joined(separator: "&")
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}

/// Every dashboard answer: errors as an HTML page with the API's status (the same mapping as `ErrorResponse`),
/// redirects as 303, and the headers that keep pages out of frames, caches and other origins' reach.
struct DashboardPageMiddleware: RouterMiddleware {
    typealias Context = DashboardContext
    let logger: Logger

    static let securityHeaders: [(HTTPField.Name, String)] = [
        (
            "Content-Security-Policy",
            "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        ),
        ("X-Frame-Options", "DENY"), ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "same-origin"),
        ("Cache-Control", "no-store"),
    ].compactMap { name, value in HTTPField.Name(name).map { ($0, value) } }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let redirect as DashboardRedirect {
            response = redirect.response
        } catch {
            let answer = ErrorResponse(error)
            if answer.status.code >= 500 {
                logger.error("dashboard page failed", metadata: ["path": "\(request.uri.path)", "error": "\(answer)"])
            }
            let heading =
                answer.status == .notFound ? "Not found" : answer.status.code >= 500 ? "Something went wrong" : "That did not work"
            response = DashboardRender.page(
                "error", ErrorPage(title: heading, heading: heading, message: answer.message, chrome: nil), status: answer.status)
            for (name, value) in answer.headers.map({ ($0.name, $0.value) }) where name != .wwwAuthenticate {
                response.headers[name] = value
            }
        }
        for (name, value) in Self.securityHeaders where response.headers[name] == nil { response.headers[name] = value }
        return response
    }

    struct ErrorPage {
        var title: String
        var heading: String
        var message: String
        var chrome: DashboardChrome?
    }
}

/// The pages behind a sign-in: a session naming a user who still exists, or a redirect to the sign-in page (which
/// returns here afterwards).
struct DashboardSignedIn: RouterMiddleware {
    typealias Context = DashboardContext
    let accounts: DashboardAccounts

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let userId = context.sessions.session?.userId, let user = try await accounts.user(id: userId) else {
            context.sessions.clearSession()
            let path = request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
            return DashboardRedirect.signIn(next: request.method == .get ? path : nil).response
        }
        var context = context
        context.user = user
        return try await next(request, context)
    }
}
