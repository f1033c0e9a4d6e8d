import HTTPTypes
import Hummingbird
import NIOCore
import ResponseSigning
import StorekeeperCore

/// Signs every successful answer of the routes it wraps (the customer API an app calls with its public key): the
/// request's `X-Nonce`, the path, the server's time, the ETag and the body, with the core's `ResponseSigner`, in
/// `X-Signature` beside `X-Request-Time` (README "Answers the device can trust"). A request without a nonce is signed
/// too (without one), so cacheable reads stay cacheable; a nonce that is not 12 bytes of base64 is refused (400).
struct ResponseSigningMiddleware<Context: RequestContext>: RouterMiddleware {
    let signer: ResponseSigner
    let now: @Sendable () -> Int64

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let signatureField = SignatureFields.signature, let requestTimeField = SignatureFields.requestTime,
            let nonceField = SignatureFields.nonce
        else { return try await next(request, context) }
        let nonce = request.headers[nonceField]
        if let nonce, !SignatureHeaders.isValidNonce(nonce) {
            throw CoreError.invalidInput(field: SignatureHeaders.nonce, "a nonce is 12 random bytes in base64 (16 characters)")
        }
        var response = try await next(request, context)
        guard (200..<300).contains(response.status.code) || response.status == .notModified else { return response }
        let collector = BodyCollector()
        try await response.body.write(CollectingWriter(collector: collector))
        let body = collector.bytes
        let requestTime = now()
        let message = SignedMessage(
            nonce: nonce, path: request.uri.path, requestTime: requestTime, etag: response.headers[.eTag], body: body)
        response.headers[signatureField] = try signer.sign(message)
        response.headers[requestTimeField] = String(requestTime)
        response.body = ResponseBody(byteBuffer: ByteBuffer(bytes: body))
        return response
    }
}

/// The header names (`HTTPField.Name` refuses only names with characters no header can have; these have none).
enum SignatureFields {
    static let signature = HTTPField.Name(SignatureHeaders.signature)
    static let requestTime = HTTPField.Name(SignatureHeaders.requestTime)
    static let nonce = HTTPField.Name(SignatureHeaders.nonce)
}

/// The bytes a response body wrote. Only the middleware's own task writes and then reads it, one after the other.
final class BodyCollector: @unchecked Sendable {
    // @unchecked: written by `CollectingWriter` during `ResponseBody.write`, which the middleware awaits before it
    // reads `bytes`; no two tasks ever touch it at once.
    var bytes: [UInt8] = []
}

/// A `ResponseBodyWriter` that keeps what is written.
struct CollectingWriter: ResponseBodyWriter {
    let collector: BodyCollector

    mutating func write(_ buffer: ByteBuffer) async throws {
        collector.bytes += buffer.readableBytesView
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
