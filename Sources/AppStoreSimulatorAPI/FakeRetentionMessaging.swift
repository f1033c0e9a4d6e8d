import AppStore
import AppStoreSimulator
import Foundation
import Hummingbird
import NIOCore

/// What the fake Retention Messaging API holds. Messages and images are approved at once (Apple reviews them first).
public struct FakeRetentionState: Sendable {
    public struct Image: Sendable, Hashable {
        public var size: ImageSize
        public var bytes: Int
    }

    public var images: [String: Image] = [:]
    public var messages: [String: UploadMessageRequestBody] = [:]
    /// Default message per `productId` and locale, keyed `productId/locale`.
    public var defaults: [String: String] = [:]
    public var realtimeURL: String?
    public var tests: [String: PerformanceTestResult] = [:]

    public init() {}
}

extension FakeServerAPI {
    func addRetentionRoutes(to router: Router<BasicRequestContext>) {
        let api = self
        router.put("/inApps/v1/messaging/image/:id") { request, context in try await api.uploadImage(request, context) }
        router.delete("/inApps/v1/messaging/image/:id") { request, context in try api.deleteImage(request, context) }
        router.get("/inApps/v1/messaging/image/list") { request, _ in try api.imageList(request) }
        router.put("/inApps/v1/messaging/message/:id") { request, context in try await api.uploadMessage(request, context) }
        router.delete("/inApps/v1/messaging/message/:id") { request, context in try api.deleteMessage(request, context) }
        router.get("/inApps/v1/messaging/message/list") { request, _ in try api.messageList(request) }
        router.put("/inApps/v1/messaging/default/:productId/:locale") { request, context in
            try await api.configureDefault(request, context)
        }
        router.get("/inApps/v1/messaging/default/:productId/:locale") { request, context in try api.getDefault(request, context) }
        router.delete("/inApps/v1/messaging/default/:productId/:locale") { request, context in try api.deleteDefault(request, context) }
        router.put("/inApps/v1/messaging/realtime/url") { request, _ in try await api.configureRealtimeURL(request) }
        router.get("/inApps/v1/messaging/realtime/url") { request, _ in try api.getRealtimeURL(request) }
        router.delete("/inApps/v1/messaging/realtime/url") { request, _ in try api.deleteRealtimeURL(request) }
        router.post("/inApps/v1/messaging/performanceTest") { request, _ in try await api.startPerformanceTest(request) }
        router.get("/inApps/v1/messaging/performanceTest/result/:requestId") { request, context in
            try api.performanceTestResult(request, context)
        }
    }

    private static func failure(_ status: HTTPResponse.Status, _ code: Int64, _ message: String) -> APIFailure {
        APIFailure(status: status, code: code, message: message)
    }

    private func identifier(_ context: BasicRequestContext) throws(APIFailure) -> String {
        guard let id = context.parameters.get("id"), let uuid = UUID(uuidString: id) else {
            throw Self.failure(.badRequest, 4_000_000, "Invalid request. The identifier is not a UUID.")
        }
        return uuid.uuidString.lowercased()
    }

    // MARK: - Images

    func uploadImage(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try authorize(request, "uploadImage")
        let id = try identifier(context)
        let size = ImageSize(rawValue: request.uri.queryParameters.get("imageSize") ?? ImageSize.fullSize.rawValue)
        guard size.isKnown else { throw Self.failure(.badRequest, 4_000_216, "Invalid request. The image size is invalid.") }
        let buffer = try await request.body.collect(upTo: 10 * 1024 * 1024)
        guard Array(buffer.readableBytesView.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] else {
            throw Self.failure(.badRequest, 4_000_161, "Invalid request. The image is not a valid PNG.")
        }
        try retention.withLockedValue { state in
            guard state.images[id] == nil else { throw Self.failure(.conflict, 4_090_000, "An image with this identifier already exists.") }
            state.images[id] = .init(size: size, bytes: buffer.readableBytes)
        }
        return Response(status: .ok)
    }

    func deleteImage(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        try authorize(request, "deleteImage")
        let id = try identifier(context)
        try retention.withLockedValue { state in
            guard state.images[id] != nil else { throw Self.failure(.notFound, 4_040_014, "Image not found.") }
            let used = state.messages.values.contains { message in
                message.image?.imageIdentifier.lowercased() == id
                    || (message.bulletPoints ?? []).contains { $0.imageIdentifier.lowercased() == id }
            }
            guard !used else { throw Self.failure(.forbidden, 4_030_019, "The image is in use by a message.") }
            state.images[id] = nil
        }
        return Response(status: .ok)
    }

    func imageList(_ request: Request) throws -> Response {
        try authorize(request, "imageList")
        let images = retention.withLockedValue { $0.images }
        return Self.json([
            "imageIdentifiers": images.keys.sorted().map { id in
                ["imageIdentifier": id, "imageState": "APPROVED", "imageSize": images[id]?.size.rawValue ?? ""]
            }
        ])
    }

    // MARK: - Messages

    func uploadMessage(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try authorize(request, "uploadMessage")
        let id = try identifier(context)
        let buffer = try await request.body.collect(upTo: 64 * 1024)
        guard let message = try? JSONDecoder().decode(UploadMessageRequestBody.self, from: Data(buffer.readableBytesView)) else {
            throw Self.failure(.badRequest, 4_000_000, "Invalid request. The body is not an UploadMessageRequestBody.")
        }
        // Apple's own checks, each with its error code: the server's client refuses the same before it calls.
        do {
            try message.validate()
        } catch {
            let code: Int64 =
                switch error.field {
                case "header": 4_000_162
                case "body": 4_000_163
                case "bulletPoints": 4_000_218
                case "headerPosition": 4_000_224
                case let field where field.hasSuffix("altText"): 4_000_175
                case let field where field.hasSuffix(".text"): 4_000_219
                default: 4_000_000
                }
            throw Self.failure(.badRequest, code, "Invalid request. \(error.description)")
        }
        try retention.withLockedValue { state in
            guard state.messages[id] == nil else {
                throw Self.failure(.conflict, 4_090_001, "A message with this identifier already exists.")
            }
            let images = [message.image?.imageIdentifier].compactMap { $0 } + (message.bulletPoints ?? []).map(\.imageIdentifier)
            for image in images where state.images[image.lowercased()] == nil {
                throw Self.failure(.notFound, 4_040_014, "Image \(image) not found.")
            }
            state.messages[id] = message
        }
        return Response(status: .ok)
    }

    func deleteMessage(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        try authorize(request, "deleteMessage")
        let id = try identifier(context)
        try retention.withLockedValue { state in
            guard state.messages.removeValue(forKey: id) != nil else { throw Self.failure(.notFound, 4_040_015, "Message not found.") }
            state.defaults = state.defaults.filter { $0.value != id }
        }
        return Response(status: .ok)
    }

    func messageList(_ request: Request) throws -> Response {
        try authorize(request, "messageList")
        let ids = retention.withLockedValue { $0.messages.keys.sorted() }
        return Self.json(["messageIdentifiers": ids.map { ["messageIdentifier": $0, "messageState": "APPROVED"] }])
    }

    // MARK: - Default message

    private func defaultKey(_ context: BasicRequestContext) throws(APIFailure) -> String {
        let product = context.parameters.get("productId") ?? ""
        let locale = context.parameters.get("locale") ?? ""
        guard !locale.isEmpty, locale.count <= 16, locale.allSatisfy({ $0.isLetter || $0 == "-" || $0 == "_" }) else {
            throw Self.failure(.badRequest, 4_000_164, "Invalid request. The locale is invalid.")
        }
        return product + "/" + locale
    }

    func configureDefault(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        try authorize(request, "configureDefault")
        let key = try defaultKey(context)
        let buffer = try await request.body.collect(upTo: 64 * 1024)
        struct Body: Decodable { var messageIdentifier: String? }
        guard let given = (try? JSONDecoder().decode(Body.self, from: Data(buffer.readableBytesView)))?.messageIdentifier,
            let uuid = UUID(uuidString: given)
        else { throw Self.failure(.badRequest, 4_000_000, "Invalid request. The message identifier is not a UUID.") }
        let id = uuid.uuidString.lowercased()
        try retention.withLockedValue { state in
            guard state.messages[id] != nil else { throw Self.failure(.notFound, 4_040_015, "Message not found.") }
            state.defaults[key] = id
        }
        return Response(status: .ok)
    }

    func getDefault(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        try authorize(request, "getDefault")
        let key = try defaultKey(context)
        guard let id = retention.withLockedValue({ $0.defaults[key] }) else {
            throw Self.failure(.notFound, 4_040_020, "Default message not found.")
        }
        return Self.json(["messageIdentifier": id])
    }

    func deleteDefault(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        try authorize(request, "deleteDefault")
        let key = try defaultKey(context)
        guard retention.withLockedValue({ $0.defaults.removeValue(forKey: key) }) != nil else {
            throw Self.failure(.notFound, 4_040_020, "Default message not found.")
        }
        return Response(status: .ok)
    }

    // MARK: - Real-time URL

    func configureRealtimeURL(_ request: Request) async throws -> Response {
        try authorize(request, "configureRealtimeURL")
        let buffer = try await request.body.collect(upTo: 64 * 1024)
        struct Body: Decodable { var realtimeURL: String? }
        guard let url = (try? JSONDecoder().decode(Body.self, from: Data(buffer.readableBytesView)))?.realtimeURL,
            url.unicodeScalars.count <= 256, let parsed = URL(string: url), parsed.host != nil
        else { throw Self.failure(.badRequest, 4_000_215, "Invalid request. The realtime URL is invalid.") }
        retention.withLockedValue { $0.realtimeURL = url }
        return Response(status: .ok)
    }

    func getRealtimeURL(_ request: Request) throws -> Response {
        try authorize(request, "getRealtimeURL")
        guard let url = retention.withLockedValue({ $0.realtimeURL }) else {
            throw Self.failure(.notFound, 4_040_021, "Realtime URL not found.")
        }
        return Self.json(["realtimeURL": url])
    }

    func deleteRealtimeURL(_ request: Request) throws -> Response {
        try authorize(request, "deleteRealtimeURL")
        guard
            retention.withLockedValue({ state in
                defer { state.realtimeURL = nil }
                return state.realtimeURL
            }) != nil
        else {
            throw Self.failure(.notFound, 4_040_021, "Realtime URL not found.")
        }
        return Response(status: .ok)
    }

    // MARK: - Performance test

    /// Initiate Performance Test: the fake calls the real-time URL `totalRequests` times, `maxConcurrentRequests` at a
    /// time, with requests about the given subscription signed like Apple's, and keeps the result for Get Performance
    /// Test Results. A call passes with a 2xx answer that decodes as a `RealtimeResponseBody` within the threshold.
    func startPerformanceTest(_ request: Request) async throws -> Response {
        try authorize(request, "startPerformanceTest")
        let buffer = try await request.body.collect(upTo: 64 * 1024)
        struct Body: Decodable { var originalTransactionId: String? }
        guard let original = (try? JSONDecoder().decode(Body.self, from: Data(buffer.readableBytesView)))?.originalTransactionId,
            !original.isEmpty
        else { throw Self.failure(.badRequest, 4_000_211, "Invalid request. The performance test request is invalid.") }
        let (url, running) = retention.withLockedValue { state in
            (state.realtimeURL, state.tests.values.contains { $0.result == "PENDING" })
        }
        guard let url else { throw Self.failure(.notFound, 4_040_021, "Realtime URL not found.") }
        guard !running else { throw Self.failure(.badRequest, 4_000_213, "A performance test is already running.") }
        let config = performanceTest
        let total = max(config.totalRequests ?? 100, 1)
        var bodies: [String] = []
        for _ in 0..<total {
            guard let body = try await store.with({ try $0.retentionRequest(originalTransactionId: original) }) else {
                throw Self.failure(.badRequest, 4_000_211, "Invalid request. \(original) is not a subscription's original transaction id.")
            }
            bodies.append(body)
        }
        let requestId = UUID().uuidString.lowercased()
        retention.withLockedValue { state in
            state.tests[requestId] = PerformanceTestResult(
                config: config, target: url, result: "PENDING", successRate: nil, numPending: total, responseTimes: nil, failures: nil)
        }
        let caller = realtimeCaller
        let box = retention
        Task {
            let results = await Self.run(bodies, url: url, concurrency: max(config.maxConcurrentRequests ?? 10, 1), caller: caller)
            let result = Self.result(results, config: config, target: url)
            box.withLockedValue { $0.tests[requestId] = result }
        }
        return Self.json(["requestId": requestId, "config": Self.configObject(config)])
    }

    func performanceTestResult(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        try authorize(request, "performanceTestResult")
        let id = context.parameters.get("requestId") ?? ""
        guard let result = retention.withLockedValue({ $0.tests[id] }) else {
            throw Self.failure(.notFound, 4_040_018, "Performance test run not found.")
        }
        let data = (try? JSONEncoder().encode(result)) ?? Data("{}".utf8)
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(data: data)))
    }

    private static func configObject(_ config: PerformanceTestConfig) -> [String: Any] {
        [
            "maxConcurrentRequests": config.maxConcurrentRequests ?? 0, "totalRequests": config.totalRequests ?? 0,
            "totalDuration": config.totalDuration ?? 0, "responseTimeThreshold": config.responseTimeThreshold ?? 0,
            "successRateThreshold": config.successRateThreshold ?? 0,
        ]
    }

    private static func run(_ bodies: [String], url: String, concurrency: Int, caller: @escaping RealtimeCaller) async
        -> [RealtimeCallResult]
    {
        await withTaskGroup(of: RealtimeCallResult.self) { group in
            var results: [RealtimeCallResult] = []
            var next = 0
            while next < min(concurrency, bodies.count) {
                let body = bodies[next]
                group.addTask { await caller(url, body) }
                next += 1
            }
            while let result = await group.next() {
                results.append(result)
                if next < bodies.count {
                    let body = bodies[next]
                    group.addTask { await caller(url, body) }
                    next += 1
                }
            }
            return results
        }
    }

    /// Apple's result: the share of calls that passed, response times in whole milliseconds, and failures by Apple's
    /// send-attempt results.
    static func result(_ calls: [RealtimeCallResult], config: PerformanceTestConfig, target: String) -> PerformanceTestResult {
        let threshold = Double(config.responseTimeThreshold ?? 700)
        var failures: [String: Int] = [:]
        for call in calls {
            guard let status = call.status else {
                failures["NO_RESPONSE", default: 0] += 1
                continue
            }
            if !(200..<300).contains(status) {
                failures["UNSUCCESSFUL_HTTP_RESPONSE_CODE", default: 0] += 1
            } else if (try? JSONDecoder().decode(RealtimeResponseBody.self, from: Data(call.body))) == nil {
                failures["INVALID_RESPONSE", default: 0] += 1
            } else if call.milliseconds > threshold {
                failures["TIMED_OUT", default: 0] += 1
            }
        }
        let failed = failures.values.reduce(0, +)
        let successRate = calls.isEmpty ? 0 : (calls.count - failed) * 100 / calls.count
        let times = calls.map(\.milliseconds).sorted()
        func percentile(_ p: Double) -> Int? {
            guard !times.isEmpty else { return nil }
            return Int(times[min(times.count - 1, Int((p * Double(times.count)).rounded(.up)) - 1)].rounded(.up))
        }
        let average = times.isEmpty ? nil : Int((times.reduce(0, +) / Double(times.count)).rounded(.up))
        return PerformanceTestResult(
            config: config, target: target, result: successRate >= (config.successRateThreshold ?? 95) ? "PASS" : "FAIL",
            successRate: successRate, numPending: 0,
            responseTimes: PerformanceTestResponseTimes(
                average: average, p50: percentile(0.5), p90: percentile(0.9), p95: percentile(0.95), p99: percentile(0.99)),
            failures: failures)
    }
}
