import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Sends destinations' requests: each address checked by the policy first, redirects never followed (a 3xx is the
/// answer), the whole exchange cut off after `timeout`, and only the first kilobyte of an answer's body kept.
public struct DeliveryTransport: Sendable {
    public static let timeout: Duration = .seconds(15)

    let client: HTTPClient
    public let policy: AddressPolicy
    let timeout: Duration

    public init(client: HTTPClient, policy: AddressPolicy, timeout: Duration = DeliveryTransport.timeout) {
        self.client = client
        self.policy = policy
        self.timeout = timeout
    }

    /// The process's client for deliveries (never shut down, like `HTTPClient.shared`), on the delivery threads:
    /// redirects are not followed.
    public static let sharedClient = makeClient()

    private static func makeClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = .init(connect: .seconds(5), read: .seconds(15))
        configuration.decompression = .disabled
        return HTTPClient(eventLoopGroupProvider: .shared(DeliveryThreads.shared.group), configuration: configuration)
    }

    /// Sends one request and returns the answer, or the failure that prevented one (a refused address, a refused
    /// connection, a timeout). Never throws: every outcome is something to record.
    public func send(_ request: OutgoingRequest) async -> AttemptAnswer {
        do {
            try await policy.check(request.url)
        } catch {
            // An internal address can never be called; a name that does not resolve may resolve at the next attempt.
            return AttemptAnswer(failure: error.message, permanent: error.code == .forbiddenAddress)
        }
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for header in request.headers { outgoing.headers.add(name: header.name, value: header.value) }
        outgoing.headers.replaceOrAdd(name: "user-agent", value: "Storekeeper-Webhooks/1.0")
        outgoing.body = .bytes(ByteBuffer(bytes: request.body))
        do {
            let response = try await client.execute(outgoing, timeout: .nanoseconds(Int64(timeout.components.seconds) * 1_000_000_000))
            // Only the first kilobyte is kept, so no more is read: a destination streaming an endless body must not
            // hold the lane (leaving the loop cancels the rest).
            var body: [UInt8] = []
            for try await chunk in response.body {
                body += chunk.readableBytesView.prefix(AttemptAnswer.keptBodyBytes - body.count)
                if body.count >= AttemptAnswer.keptBodyBytes { break }
            }
            var headers: [String: String] = [:]
            for (name, value) in response.headers where headers[name.lowercased()] == nil { headers[name.lowercased()] = value }
            return AttemptAnswer(status: Int(response.status.code), headers: headers, body: body)
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            return AttemptAnswer(failure: "no answer within \(timeout)")
        } catch {
            return AttemptAnswer(failure: "the request failed: \(error)")
        }
    }
}
