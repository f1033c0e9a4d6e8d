import Hummingbird
import Logging
import Storage
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
                logger.error(
                    "request failed", metadata: ["path": "\(request.uri.path)", "error": "\(answer)", "cause": "\(Self.cause(error))"])
            }
            return try answer.response(from: request, context: context)
        }
    }

    /// The failure as the logs tell it: a database failure with the driver's whole account, which the answer leaves out.
    static func cause(_ error: any Error) -> String {
        switch error {
        case let error as StorageError: error.description
        case CoreError.storage(let error): error.description
        default: String(describing: error)
        }
    }
}
