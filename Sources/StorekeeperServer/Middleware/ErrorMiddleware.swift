import Hummingbird
import Logging
import StorekeeperCore

/// Turns every error into the API's JSON shape (`ErrorResponse`), Hummingbird's own 404s and 413s included, and
/// logs the server's own failures.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let answer = ErrorResponse(error)
            if answer.status.code >= 500 {
                logger.error("request failed", metadata: ["path": "\(request.uri.path)", "error": "\(answer)"])
            }
            return try answer.response(from: request, context: context)
        }
    }
}
