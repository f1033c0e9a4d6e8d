import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Testing

/// A destination served by the test (Hummingbird on a free loopback port): it records every request and answers
/// what its responder says, which the test can change while it runs (a destination that fails, then recovers).
final class FakeDestination: Sendable {
    struct Received: Sendable {
        var method: String
        var path: String
        var headers: [String: String]
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
        func header(_ name: String) -> String? { headers[name.lowercased()] }
        /// The body as JSON.
        func json() throws -> [String: Any] {
            guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
                throw FakeDestinationError.notAnObject(text)
            }
            return object
        }
    }

    struct Answer: Sendable {
        var status: Int
        var headers: [String: String] = [:]
        var body: String = "ok"
    }

    /// The answer to a request, given it and how many requests came before it.
    typealias Responder = @Sendable (Received, Int) -> Answer

    private let log = NIOLockedValueBox<[Received]>([])
    /// The responder inside a struct: a closure kept directly in the generic box would be re-wrapped in a
    /// reabstraction thunk by every `withLockedValue` (an inout access writes it back), so each request would call
    /// through one more layer than the last: quadratic in the requests, minutes for a population's deliveries.
    private struct Held: Sendable { var responder: Responder }
    private let responder: NIOLockedValueBox<Held>
    /// How long each answer takes (a slow destination: requests stay in flight).
    let delay: Duration

    init(delay: Duration = .zero, _ responder: @escaping Responder = { _, _ in Answer(status: 200) }) {
        self.delay = delay
        self.responder = NIOLockedValueBox(Held(responder: responder))
    }

    func respond(_ responder: @escaping Responder) { self.responder.withLockedValue { $0 = Held(responder: responder) } }

    var received: [Received] { log.withLockedValue { $0 } }

    /// Serves until `body` returns; `body` gets the base URL (`http://127.0.0.1:<port>`).
    func serve<T: Sendable>(_ body: @Sendable (String) async throws -> T) async throws -> T {
        let router = Router()
        let handle: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
            var request = request
            let bytes = try await request.collectBody(upTo: 4 << 20)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            let received = Received(
                method: request.method.rawValue, path: request.uri.path + (request.uri.query.map { "?\($0)" } ?? ""), headers: headers,
                body: Array(bytes.readableBytesView))
            let index = self.log.withLockedValue { log -> Int in
                log.append(received)
                return log.count - 1
            }
            let answer = self.responder.withLockedValue { $0.responder }(received, index)
            if self.delay > .zero { try await Task.sleep(for: self.delay) }
            var fields = HTTPFields()
            for (name, value) in answer.headers { if let name = HTTPField.Name(name) { fields[name] = value } }
            return Response(
                status: .init(code: answer.status), headers: fields, body: .init(byteBuffer: ByteBuffer(string: answer.body)))
        }
        // The root and every path under it.
        router.on("/", method: .post, use: handle)
        router.on("**", method: .post, use: handle)
        let port = NIOLockedValueBox<Int?>(nil)
        var logger = Logger(label: "fake-destination")
        logger.logLevel = .critical
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in port.withLockedValue { $0 = channel.localAddress?.port } }, logger: logger)
        let server = Task { try await app.runService(gracefulShutdownSignals: []) }
        defer { server.cancel() }
        try await eventually("the fake destination listens") { port.withLockedValue { $0 } != nil }
        let value = try await body("http://127.0.0.1:\(port.withLockedValue { $0 } ?? 0)")
        server.cancel()
        _ = await server.result
        return value
    }
}

enum FakeDestinationError: Error {
    case notAnObject(String)
    case timedOut(String)
}

/// Waits (polling every 20 ms) until `condition` holds, failing after `seconds`.
func eventually(_ what: String, seconds: Double = 30, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw FakeDestinationError.timedOut(what)
}
