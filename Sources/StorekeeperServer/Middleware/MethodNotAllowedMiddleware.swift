import HTTPTypes
import Hummingbird

/// A known path asked with a method it does not take (TRACE, DELETE, HEAD …) gets 405 with `Allow`, as RFC 9110
/// asks, instead of the router's 404. The paths and methods are the OpenAPI document's, which a test keeps equal to
/// the router's. Only the router's own 404 (no route for this method and path) is looked at, so that the routes that
/// exist pay nothing.
struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Path templates split into segments (`{…}` matches any one segment), with their methods.
    let table: [(segments: [Substring], methods: Set<String>)]

    init(methodsByPath: [(template: String, methods: [String])]) {
        table = methodsByPath.map { ($0.template.split(separator: "/"), Set($0.methods)) }
    }

    /// The methods a path takes, nil for a path no template matches. Like the router, a literal segment wins over a
    /// `{…}` one: `/experiments/definitions` takes GET only, though `/experiments/{experimentKey}` also matches it.
    func allowed(_ path: String) -> Set<String>? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        var best: (literals: Int, methods: Set<String>)?
        for entry in table where entry.segments.count == segments.count {
            let matches = zip(entry.segments, segments).allSatisfy { template, actual in
                template.hasPrefix("{") ? !actual.isEmpty : template == actual
            }
            guard matches else { continue }
            let literals = entry.segments.filter { !$0.hasPrefix("{") }.count
            if let current = best, current.literals > literals { continue }
            if let current = best, current.literals == literals {
                best = (literals, current.methods.union(entry.methods))
            } else {
                best = (literals, entry.methods)
            }
        }
        return best?.methods
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            guard let methods = allowed(request.uri.path), !methods.contains(request.method.rawValue) else { throw error }
            let list = methods.sorted().joined(separator: ", ")
            var answer = ErrorResponse(
                .methodNotAllowed, "method_not_allowed", "\(request.method.rawValue) is not one of this path's methods: \(list)")
            answer.headers[.allow] = list
            throw answer
        }
    }
}
