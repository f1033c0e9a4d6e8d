import Foundation
import Synchronization
import X509

#if Server
    import AsyncHTTPClient
    import NIOCore
#endif

/// Optional revocation checking of the signing chain with OCSP (RFC 6960), off by default.
///
/// The check itself is swift-certificates' `OCSPVerifierPolicy` in hard-fail mode. A responder that does not
/// answer makes verification fail with `retryableVerificationFailure`; a certificate the responder reports revoked
/// fails with `verificationFailure`.
public struct OCSPChecking: Sendable {
    /// How requests reach the responder. The default posts them over HTTP with AsyncHTTPClient.
    public var transport: any OCSPTransport
    /// How long a chain confirmed by OCSP is trusted from the cache before it is checked again.
    public var cacheLifetime: TimeInterval

    public init(transport: any OCSPTransport, cacheLifetime: TimeInterval = 15 * 60) {
        self.transport = transport
        self.cacheLifetime = cacheLifetime
    }
}

#if Server
    extension OCSPChecking {
        /// Checking over HTTP with AsyncHTTPClient.
        public init(cacheLifetime: TimeInterval = 15 * 60) {
            self.init(transport: HTTPOCSPTransport(), cacheLifetime: cacheLifetime)
        }
    }
#endif

/// Carries one DER-encoded OCSP request to a responder and returns its DER response, or throws when the responder
/// could not be reached or did not answer usefully.
public protocol OCSPTransport: Sendable {
    func send(request: [UInt8], to uri: String) async throws -> [UInt8]
}

#if Server
    /// Sends OCSP requests as `POST application/ocsp-request` (RFC 6960 appendix A.1).
    public struct HTTPOCSPTransport: OCSPTransport {
        public var httpClient: HTTPClient
        public var timeout: TimeAmount
        /// Responses larger than this are treated as a failed query.
        public var maxResponseBytes: Int

        public init(httpClient: HTTPClient = .shared, timeout: TimeAmount = .seconds(10), maxResponseBytes: Int = 64 * 1024) {
            self.httpClient = httpClient
            self.timeout = timeout
            self.maxResponseBytes = maxResponseBytes
        }

        public func send(request: [UInt8], to uri: String) async throws -> [UInt8] {
            var httpRequest = HTTPClientRequest(url: uri)
            httpRequest.method = .POST
            httpRequest.headers.add(name: "Content-Type", value: "application/ocsp-request")
            httpRequest.headers.add(name: "Accept", value: "application/ocsp-response")
            httpRequest.body = .bytes(ByteBuffer(bytes: request))
            let response = try await httpClient.execute(httpRequest, timeout: timeout)
            guard response.status == .ok else {
                throw OCSPQueryError(message: "the OCSP responder answered HTTP \(response.status.code)")
            }
            let body = try await response.body.collect(upTo: maxResponseBytes)
            return Array(buffer: body)
        }
    }

#endif

struct OCSPQueryError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Adapts a transport to swift-certificates' requester for one verification, and remembers whether any query went
/// unanswered, so that an unreachable responder is told apart from a certificate that is really revoked.
final class RecordingOCSPRequester: OCSPRequester {
    let transport: any OCSPTransport
    private let unanswered = Mutex<[String]>([])

    init(_ transport: any OCSPTransport) {
        self.transport = transport
    }

    /// What went wrong with the queries that got no response, if any.
    var unansweredQueries: [String] { unanswered.withLock { $0 } }

    func query(request: [UInt8], uri: String) async -> OCSPRequesterQueryResult {
        // Recorded before the call and cleared after an answer, so a query cut off by the policy's deadline counts.
        let marker = "no answer from \(uri)"
        unanswered.withLock { $0.append(marker) }
        do {
            let response = try await transport.send(request: request, to: uri)
            unanswered.withLock { list in
                if let index = list.firstIndex(of: marker) { list.remove(at: index) }
            }
            return .response(response)
        } catch {
            unanswered.withLock { list in
                if let index = list.firstIndex(of: marker) { list[index] = "\(uri): \(error)" }
            }
            return .nonTerminalError(error)
        }
    }
}
