import Hummingbird
import NIOCore
import StorekeeperCore

/// The dashboard's forms: URL-encoded bodies of at most `maxBytes` (413 past it), decoded into a named form type.
enum DashboardForm {
    /// The largest form body.
    static let maxBytes = 16 * 1024

    /// Every form's own field: the session's token.
    struct CSRF: Decodable { var csrf: String? }

    /// The request's body as `Form` (the body stays collected: a middleware may read it before the handler).
    static func decode<Form: Decodable>(_ type: Form.Type, _ request: inout Request) async throws -> Form {
        let body: ByteBuffer
        do { body = try await request.collectBody(upTo: maxBytes) } catch let error as any HTTPResponseError
            where error.status == .contentTooLarge
        {
            throw ErrorResponse(.contentTooLarge, "payload_too_large", "a form is at most \(maxBytes / 1024) KB")
        }
        do {
            return try URLEncodedFormDecoder().decode(type, from: String(buffer: body))
        } catch {
            throw CoreError.invalidInput("the form is not URL-encoded form data")
        }
    }

    /// A form of a request whose body a middleware may already have collected.
    static func decode<Form: Decodable>(_ type: Form.Type, _ request: Request) async throws -> Form {
        var request = request
        return try await decode(type, &request)
    }
}

/// Every form posted to a signed-in page carries its session's CSRF token, checked here before the handler runs
/// (403 otherwise): the handlers never see a forged form. Safe methods pass untouched.
struct DashboardFormGuard: RouterMiddleware {
    typealias Context = DashboardContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard ![.get, .head, .options].contains(request.method) else { return try await next(request, context) }
        var request = request
        let form = try await DashboardForm.decode(DashboardForm.CSRF.self, &request)
        guard let session = context.sessions.session, CSRFToken.matches(form.csrf, session.csrf) else {
            throw CoreError.forbidden("the form did not carry this session's token")
        }
        return try await next(request, context)
    }
}
