import AppStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Storage
import StorekeeperCore

/// Every error the API answers with: a stable `code` for programs, a `message` for people, the field at fault when
/// there is one, and the HTTP status. The body is always `{"error": {"code", "message"[, "field"], "permanent"}}`.
///
/// Statuses are decided here and nowhere else: `init(_:)` maps the domain's errors and Hummingbird's own.
public struct ErrorResponse: Error, HTTPResponseError, Sendable, CustomStringConvertible {
    public let status: HTTPResponse.Status
    public let code: String
    public let message: String
    public var field: String?
    /// Extra response headers (WWW-Authenticate, Retry-After).
    public var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String, field: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
    }

    public var description: String { "\(status.code) \(code): \(message)" }

    /// The largest request body, and the error for a larger one.
    static let maxBodyBytes = 256 * 1024
    static let payloadTooLarge = ErrorResponse(
        .contentTooLarge, "payload_too_large", "the request body is larger than \(maxBodyBytes / 1024) KB")

    /// Any error as the API answers it.
    public init(_ error: any Error) {
        switch error {
        case let error as ErrorResponse: self = error
        case let error as CoreError: self = Self(domain: error)
        case let error as StorageError: self = Self(domain: .storage(error))
        case let error as VerificationError: self = Self(domain: .verification(error))
        case let error as HTTPError:
            switch error.status {
            case .notFound: self = ErrorResponse(.notFound, "not_found", "no such endpoint")
            case .contentTooLarge: self = Self.payloadTooLarge
            case .methodNotAllowed: self = ErrorResponse(.methodNotAllowed, "method_not_allowed", "this endpoint does not take that method")
            default: self = ErrorResponse(error.status, "http_error", error.body ?? error.status.reasonPhrase)
            }
        case let error as any HTTPResponseError where error.status == .contentTooLarge:
            self = Self.payloadTooLarge
        default:
            self = ErrorResponse(.internalServerError, "internal_error", "an unexpected error occurred")
        }
    }

    /// The domain's errors. Apple retries a webhook answered with 5xx, so 5xx is kept for what a retry can mend.
    init(domain error: CoreError) {
        switch error {
        case .appNotFound, .notFound:
            self.init(.notFound, "not_found", error.description)
        case .unauthenticated(let message):
            self.init(.unauthorized, "unauthenticated", message)
            headers[.wwwAuthenticate] = "Bearer"
        case .forbidden(let message):
            self.init(.forbidden, "forbidden", message)
        case .invalidInput(let field, let message):
            self.init(.badRequest, "invalid_request", message, field: field)
        case .conflict(let message):
            self.init(.conflict, "conflict", message)
        case .transactionOwned:
            self.init(.conflict, "transaction_owned", error.description)
        case .verification(let error):
            self.init(verification: error)
        case .rejectedByApple(let message):
            self.init(.badRequest, "receipt_rejected", message)
        case .appleUnavailable(let message):
            self.init(.serviceUnavailable, "unavailable", message)
            headers[.retryAfter] = "5"
        case .tooManyRequests(let message, let seconds):
            self.init(.tooManyRequests, "too_many_requests", message)
            headers[.retryAfter] = String(max(1, seconds))
        case .storage(let error):
            self.init(storage: error)
        case .internalError(let message):
            self.init(.internalServerError, "internal_error", message)
        }
    }

    /// Rejected signed data. Retryable failures (an OCSP responder that did not answer) are 503 so that Apple
    /// retries; a bad app identity or environment is 403 (it was signed, but not for this app); the rest is 400.
    private init(verification error: VerificationError) {
        switch error.code {
        case .retryableVerificationFailure:
            self.init(.serviceUnavailable, error.code.rawValue, error.message)
            headers[.retryAfter] = "30"
        case .invalidAppIdentifier, .invalidEnvironment, .deviceMismatch:
            self.init(.forbidden, error.code.rawValue, error.message)
        case .invalidJWTFormat, .invalidCertificate, .verificationFailure, .invalidReceiptFormat:
            self.init(.badRequest, error.code.rawValue, error.message)
        }
    }

    /// A storage failure: unreachable or failing databases are 503 (retry), a value the database cannot hold 400, the
    /// rest 500.
    private init(storage error: StorageError) {
        switch error.code {
        case .invalidValue:
            self.init(.badRequest, "invalid_request", "a value of this request cannot be stored or compared: \(error.message)")
        case .unavailable:
            self.init(.serviceUnavailable, "unavailable", "the database is unavailable: \(error.message)")
            headers[.retryAfter] = "5"
        case .conflict:
            self.init(.conflict, "conflict", error.message)
        case .invalidConfiguration, .pendingMigrations, .newerSchema, .corrupt, .misuse:
            self.init(.internalServerError, "internal_error", error.message)
        }
    }

    /// Whether sending the same request again can never succeed: the input itself is refused (400, 409, 413, and 403
    /// for signed data made for another app or environment). Authentication, a missing app, rate limits and server
    /// errors are not permanent: the SDK keeps a purchase queued through them, and finishes it after a permanent one.
    var permanent: Bool {
        switch status.code {
        case 400, 409, 413, 422: true
        case 403: code != "forbidden"
        default: false
        }
    }

    struct Body: Encodable {
        struct Detail: Encodable {
            var code: String
            var message: String
            var field: String?
            var permanent: Bool
        }
        var error: Detail
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        let body = Body(error: .init(code: code, message: message, field: field, permanent: permanent))
        let data = (try? JSONEncoder.sortedKeys.encode(body)) ?? Data()
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
