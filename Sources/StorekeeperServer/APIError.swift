import AppStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Storage

/// Every error the API answers with: a stable `code` for programs, a `message` for people, and the HTTP status.
/// The body is always `{"error": {"code", "message"}}`. Statuses are decided here and nowhere else.
public struct APIError: Error, HTTPResponseError, Sendable, CustomStringConvertible {
    public let status: HTTPResponse.Status
    public let code: String
    public let message: String
    /// Extra response headers (WWW-Authenticate, Retry-After).
    public var headers: HTTPFields = [:]

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var description: String { "\(status.code) \(code): \(message)" }

    public static func invalidRequest(_ message: String) -> APIError { .init(.badRequest, "invalid_request", message) }
    public static func notFound(_ message: String) -> APIError { .init(.notFound, "not_found", message) }
    public static func conflict(_ code: String, _ message: String) -> APIError { .init(.conflict, code, message) }
    public static func unauthenticated(_ message: String) -> APIError {
        var error = APIError(.unauthorized, "unauthenticated", message)
        error.headers[.wwwAuthenticate] = "Bearer"
        return error
    }
    public static func forbidden(_ message: String) -> APIError { .init(.forbidden, "forbidden", message) }
    public static func payloadTooLarge(_ limit: Int) -> APIError {
        .init(.contentTooLarge, "payload_too_large", "the request body is larger than \(limit / 1024) KB")
    }
    public static func unavailable(_ message: String) -> APIError {
        var error = APIError(.serviceUnavailable, "unavailable", message)
        error.headers[.retryAfter] = "5"
        return error
    }
    public static func internalError(_ message: String) -> APIError { .init(.internalServerError, "internal_error", message) }

    /// A rejected piece of signed data. Retryable failures (an OCSP responder that did not answer) are 503 so that
    /// Apple retries; a bad app identity or environment is 403 (it was signed, but not for this app); the rest is 400.
    public static func verification(_ error: VerificationError) -> APIError {
        switch error.code {
        case .retryableVerificationFailure:
            var api = APIError(.serviceUnavailable, error.code.rawValue, error.message)
            api.headers[.retryAfter] = "30"
            return api
        case .invalidAppIdentifier, .invalidEnvironment, .deviceMismatch:
            return APIError(.forbidden, error.code.rawValue, error.message)
        case .invalidJWTFormat, .invalidCertificate, .verificationFailure, .invalidReceiptFormat:
            return APIError(.badRequest, error.code.rawValue, error.message)
        }
    }

    /// A storage failure: unreachable or failing databases are 503 (retry), the rest 500.
    public static func storage(_ error: StorageError) -> APIError {
        switch error.code {
        case .unavailable: return .unavailable("the database is unavailable: \(error.message)")
        case .conflict: return .conflict("conflict", error.message)
        case .invalidConfiguration, .pendingMigrations, .corrupt: return .internalError(error.message)
        }
    }

    public var isRetryable: Bool { status.code >= 500 }

    struct Body: Encodable {
        struct Detail: Encodable { var code: String; var message: String }
        var error: Detail
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        let data = (try? JSONEncoder.api.encode(Body(error: .init(code: code, message: message)))) ?? Data()
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension JSONEncoder {
    /// Sorted keys: equal values encode to equal bytes (ETags, tests). One shared encoder: encoding does not change it,
    /// and building one per state or event was a measurable cost on the ingest path.
    static let api: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}
