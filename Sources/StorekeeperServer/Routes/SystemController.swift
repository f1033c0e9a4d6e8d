import Hummingbird
import NIOCore
import StorekeeperCore

/// `/health`, `/metrics`, `/openapi.yaml` and `/ping` (a route that does nothing, the benchmark's yardstick). Once an
/// operator token is set, `/metrics` and `/openapi.yaml` answer only with it (401 otherwise).
struct SystemController {
    let core: StorekeeperCore
    let operatorToken: OperatorToken

    struct Health: ResponseCodable {
        var status: String
        var database: String
        /// The release answering, and the commit it was built from (`development` for a build not made by
        /// `scripts/release.sh`).
        var version = Release.version
        var commit = Release.commit
        var error: String?
    }

    var routes: RouteCollection<ServerContext> {
        let routes = RouteCollection(context: ServerContext.self)
        routes.get("/health", use: health)
        routes.get("/metrics") { request, _ in
            try internals(request)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: core.metrics.exposition(database: core.database))))
        }
        routes.get("/openapi.yaml") { request, _ in
            try internals(request)
            return Response(
                status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.yaml)))
        }
        routes.get("/ping") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "pong")))
        }
        return routes
    }

    /// Lets a request read the server's internals: anyone without an operator token set; only it otherwise.
    func internals(_ request: Request) throws {
        guard operatorToken.isSet, !operatorToken.admits(request.headers) else { return }
        throw CoreError.unauthenticated("this needs the operator token: Authorization: Bearer <STOREKEEPER_OPERATOR_TOKEN>")
    }

    @Sendable func health(_ request: Request, context: ServerContext) async throws -> EditedResponse<Health> {
        let kind = core.database.kind.rawValue
        do {
            try await core.database.ping()
            return EditedResponse(response: Health(status: "ok", database: kind))
        } catch {
            return EditedResponse(
                status: .serviceUnavailable, response: Health(status: "unavailable", database: kind, error: "the database does not answer"))
        }
    }
}
