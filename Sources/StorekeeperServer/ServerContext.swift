import AppStore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Storage

/// The request context: Hummingbird's, with the 256 KB body limit.
public struct ServerContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public static let maxBodyBytes = 256 * 1024

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
    }

    public var maxUploadSize: Int { Self.maxBodyBytes }
}

/// One shared decoder for request bodies (building one per request costs more than decoding a small body).
enum RequestBody {
    static let decoder = JSONDecoder()

    static func decode<T: Decodable>(_ type: T.Type, _ request: Request, context: ServerContext) async throws -> T {
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: ServerContext.maxBodyBytes)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw APIError.payloadTooLarge(ServerContext.maxBodyBytes)
        }
        do {
            return try decoder.decode(T.self, from: Data(buffer.readableBytesView))
        } catch {
            throw APIError.invalidRequest("the body is not valid JSON for this endpoint: \(DecodingErrorDescription.describe(error))")
        }
    }
}

/// JSON responses, encoded with sorted keys.
enum JSONResponse {
    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
        let data: Data
        do { data = try JSONEncoder.api.encode(value) } catch { throw APIError.internalError("the response does not encode: \(error)") }
        return bytes(Array(data), status: status, headers: headers)
    }

    static func bytes(_ bytes: [UInt8], status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// Turns every error into the API's JSON shape (Hummingbird's own 404s and 413s included) and records the request
/// in the metrics.
struct ErrorAndMetricsMiddleware: RouterMiddleware {
    typealias Context = ServerContext
    let metrics: ServerMetrics
    let logger: Logger

    func handle(_ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            let api = Self.apiError(error)
            if api.status.code >= 500 {
                logger.error("request failed", metadata: ["path": "\(request.uri.path)", "error": "\(api)"])
            }
            response = try api.response(from: request, context: context)
        }
        metrics.request(method: request.method.rawValue, route: context.endpointPath ?? "unmatched",
                        status: response.status.code, duration: ContinuousClock.now - start)
        return response
    }

    static func apiError(_ error: any Error) -> APIError {
        switch error {
        case let error as APIError: return error
        case let error as StorageError: return .storage(error)
        case let error as HTTPError:
            switch error.status {
            case .notFound: return .notFound("no such endpoint")
            case .contentTooLarge: return .payloadTooLarge(ServerContext.maxBodyBytes)
            case .methodNotAllowed: return APIError(.methodNotAllowed, "method_not_allowed", "this endpoint does not take that method")
            default: return APIError(error.status, "http_error", error.body ?? error.status.reasonPhrase)
            }
        case let error as any HTTPResponseError where error.status == .contentTooLarge:
            return .payloadTooLarge(ServerContext.maxBodyBytes)
        default:
            return .internalError("an unexpected error occurred")
        }
    }
}
