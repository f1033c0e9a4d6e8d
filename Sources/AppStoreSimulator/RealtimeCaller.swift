import Foundation

#if Server
    import AsyncHTTPClient
    import NIOCore
#endif

/// What one call of a Get Retention Message endpoint got: the HTTP status and body (nil status: no answer), and how
/// long it took.
public struct RealtimeCallResult: Sendable, Hashable {
    public var status: Int?
    public var body: [UInt8]
    public var milliseconds: Double

    public init(status: Int?, body: [UInt8], milliseconds: Double) {
        self.status = status
        self.body = body
        self.milliseconds = milliseconds
    }
}

/// Posts a retention message request's body to a URL, as Apple does when a customer opens the cancellation screen.
public typealias RealtimeCaller = @Sendable (_ url: String, _ body: String) async -> RealtimeCallResult

public enum RealtimeCall {
    #if Server
        /// A caller that posts with AsyncHTTPClient, giving up after `timeout` (Apple's limit is about 700 ms).
        public static func http(client: HTTPClient = Webhook.client, timeout: TimeAmount = .seconds(5)) -> RealtimeCaller {
            { url, body in
                let clock = ContinuousClock()
                let start = clock.now
                var request = HTTPClientRequest(url: url)
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(string: body))
                var status: Int?
                var answer: [UInt8] = []
                do {
                    let response = try await client.execute(request, timeout: timeout)
                    let buffer = try await response.body.collect(upTo: 1 << 20)
                    status = Int(response.status.code)
                    answer = Array(buffer.readableBytesView)
                } catch {
                    status = nil
                }
                let elapsed = clock.now - start
                let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
                return RealtimeCallResult(status: status, body: answer, milliseconds: milliseconds)
            }
        }
    #endif
}
