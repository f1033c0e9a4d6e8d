import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `/health`, `/metrics`, `/openapi.yaml` and `/ping` (a route that does nothing, the benchmark's yardstick).
struct SystemRoutes {
    let ingestion: Ingestion
    let metrics: ServerMetrics

    struct Health: Encodable {
        var status: String
        var database: String
        var error: String?
    }

    func register(_ router: Router<ServerContext>) {
        router.get("/health") { _, _ in
            do {
                try await ingestion.database.ping()
                return try JSONResponse.make(Health(status: "ok", database: ingestion.database.kind.rawValue))
            } catch {
                return try JSONResponse.make(
                    Health(status: "unavailable", database: ingestion.database.kind.rawValue, error: "the database does not answer"),
                    status: .serviceUnavailable)
            }
        }
        router.get("/metrics") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                     body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
        router.get("/openapi.yaml") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/yaml; charset=utf-8"],
                     body: .init(byteBuffer: ByteBuffer(string: OpenAPIDocument.yaml)))
        }
        router.get("/ping") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "pong")))
        }
    }
}
