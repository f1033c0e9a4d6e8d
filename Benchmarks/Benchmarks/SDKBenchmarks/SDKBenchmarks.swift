import AppStoreModels
import Benchmark
import BenchmarkSettings
import Crypto
import Entitlements
import Foundation
import ResponseSigning
@_spi(Benchmarks) import StorekeeperSDK

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A server that answers every customer read with the same state, and nothing else: enough to fill the SDK's cache.
struct CannedServer: HTTPTransport {
    static let requestDate: Int64 = 1_767_571_200_000
    static let body = Data(
        """
        {"appUserId":"user-42","appId":"app_bench","appAccountToken":"7e3fb20b-4cdb-47cc-936d-99d65f608138","environment":"Sandbox",\
        "requestDate":\(requestDate),"state":"active","billingIssue":false,\
        "entitlements":{"pro":{"active":true,"expiresDate":\(requestDate + 2_592_000_000),"productId":"pro.monthly","transactionId":"1"}},\
        "products":{"pro.monthly":{"active":true,"expiresDate":\(requestDate + 2_592_000_000),"productId":"pro.monthly","transactionId":"1"}},\
        "groups":{},"subscriptions":[],"nonSubscriptions":[],"introEligibility":{},"winBackEligibility":{},"nextChangeAt":null}
        """.utf8)

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        guard request.httpMethod == "GET", request.url?.path.hasPrefix("/v1/customers/") == true, let url = request.url,
            let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: nil, headerFields: ["ETag": "\"bench\""])
        else { throw URLError(.cannotConnectToHost) }
        return (Self.body, response)
    }
}

/// A store with nothing in it.
struct EmptyStore: StoreClient {
    func transactionUpdates() -> AsyncStream<StoreTransaction> { AsyncStream { _ in } }
    func unfinishedTransactions() async -> [StoreTransaction] { [] }
    func currentEntitlements() async -> [StoreTransaction] { [] }
    func purchase(productId: String, appAccountToken: UUID?, promotionalOffer: PromotionalOfferSignature?) async throws(StorekeeperError)
        -> StorePurchaseOutcome
    { .userCancelled }
    func finish(_ transaction: StoreTransaction) async {}
    func sync() async throws(StorekeeperError) {}
}

func configuration(_ directory: URL) -> Storekeeper.Configuration {
    var configuration = Storekeeper.Configuration(
        apiKey: "pk_bench_key", baseURL: URL(fileURLWithPath: "/"), appUserId: "user-42")
    configuration.storage = FileStorage(directory: directory)
    configuration.transport = CannedServer()
    configuration.staleAfter = .seconds(3600)
    return configuration
}

/// 100 monthly renewals of one subscription, as StoreKit hands them over (the signature is not read on the device).
func renewals(_ count: Int) -> [StoreTransaction] {
    let encoder = JSONEncoder()
    let header = Data(#"{"alg":"ES256","x5c":[]}"#.utf8).base64EncodedString()
    let month: Int64 = 2_592_000_000
    let start = CannedServer.requestDate - Int64(count - 1) * month
    return (0..<count).map { index in
        var payload = JWSTransactionDecodedPayload()
        payload.transactionId = "\(2_000_000_000 + index)"
        payload.originalTransactionId = "2000000000"
        payload.productId = "pro.monthly"
        payload.bundleId = "com.example.app"
        payload.type = .autoRenewable
        payload.purchaseDate = Timestamp(millisecondsSince1970: start + Int64(index) * month)
        payload.originalPurchaseDate = Timestamp(millisecondsSince1970: start)
        payload.expiresDate = Timestamp(millisecondsSince1970: start + Int64(index + 1) * month)
        payload.signedDate = payload.purchaseDate
        payload.environment = .sandbox
        payload.inAppOwnershipType = .purchased
        payload.price = 9990
        payload.currency = "USD"
        let body = ((try? encoder.encode(payload)) ?? Data()).base64EncodedString()
        func url(_ text: String) -> String {
            text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        return StoreTransaction(
            id: payload.transactionId ?? "", originalId: "2000000000", productId: "pro.monthly",
            jwsRepresentation: url(header) + "." + url(body) + ".c2lnbmF0dXJl")
    }
}

let catalog: Catalog = {
    let products = [
        CatalogProduct(id: "pro.monthly", type: .autoRenewable, group: "pro", period: try? ISO8601Duration("P1M"), entitlements: ["pro"])
    ]
    return (try? Catalog(products: products)) ?? .empty
}()

nonisolated(unsafe) let benchmarks = {
    Benchmark.defaultConfiguration = BenchmarkSettings.configuration(warmupIterations: 1)

    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storekeeper-sdk-bench-\(UUID().uuidString)")

    // The customer info of the launch before: written by an SDK that read it from the canned server.
    @Sendable func primeCache() async {
        let sdk = Storekeeper(configuration: configuration(directory), store: EmptyStore())
        await sdk.waitUntilStarted()
        sdk.shutdown()
    }

    // Launch: configure the SDK and read the customer info it kept (the app's first frame can use it).
    Benchmark("SDK cold start to cached customer info") { benchmark in
        for _ in benchmark.scaledIterations {
            let sdk = Storekeeper(configuration: configuration(directory), store: EmptyStore())
            blackHole(sdk.cachedCustomerInfo?.isActive("pro"))
            sdk.shutdown()
        }
    } setup: {
        await primeCache()
    }

    Benchmark("SDK customerInfo() from the cache") { benchmark in
        let warm = Storekeeper(configuration: configuration(directory), store: EmptyStore())
        await warm.waitUntilStarted()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await warm.customerInfo().isActive("pro"))
        }
        benchmark.stopMeasurement()
    } setup: {
        await primeCache()
    }

    let transactions = renewals(100)
    let now = Date(timeIntervalSince1970: Double(CannedServer.requestDate) / 1000 + 86_400)
    // The first computation of a launch decodes every payload; later ones reuse them.
    Benchmark("SDK offline entitlements, 100 transactions, first (decoding them)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(DeviceEntitlements().state(of: transactions, catalog: catalog, now: now))
        }
    }

    let device = DeviceEntitlements()
    Benchmark("SDK offline entitlements, 100 transactions, again") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(device.state(of: transactions, catalog: catalog, now: now))
        }
    }

    // A signed customer answer as the SDK checks it (README "Answers the device can trust"): the first check of an
    // intermediate key verifies the root's signature too; later answers from the same intermediate only their own.
    guard let signed = SignedAnswer.make() else { return }
    Benchmark("SDK signed answer check, intermediate known") { benchmark in
        let verifier = ResponseVerifier(signingKey: signed.rootKey)
        blackHole(verifier.failure(nonce: signed.nonce, url: signed.url, response: signed.response, body: signed.body))
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(verifier.failure(nonce: signed.nonce, url: signed.url, response: signed.response, body: signed.body))
        }
        benchmark.stopMeasurement()
    }
    Benchmark("SDK signed answer check, new intermediate") { benchmark in
        for _ in benchmark.scaledIterations {
            let verifier = ResponseVerifier(signingKey: signed.rootKey)
            blackHole(verifier.failure(nonce: signed.nonce, url: signed.url, response: signed.response, body: signed.body))
        }
    }
}

/// One customer answer signed as the server signs it.
struct SignedAnswer: @unchecked Sendable {
    // @unchecked: HTTPURLResponse is an immutable reference here (made once, only read by the benchmarks).
    var rootKey: String
    var nonce: String
    var url: URL
    var response: HTTPURLResponse
    var body: Data

    /// The answer, or nil if Foundation will not make the response (it always does for these fields).
    static func make() -> SignedAnswer? {
        let root = Curve25519.Signing.PrivateKey()
        let intermediate = Curve25519.Signing.PrivateKey()
        let publicKey = Array(intermediate.publicKey.rawRepresentation)
        let expiresAt = CannedServer.requestDate + 86_400_000
        let nonce = Data(repeating: 7, count: 12).base64EncodedString()
        let url = URL(fileURLWithPath: "/v1/customers/user-42")
        let message = SignedMessage(
            nonce: nonce, path: "/v1/customers/user-42", requestTime: CannedServer.requestDate, etag: "\"bench\"",
            body: Array(CannedServer.body))
        let rootSignature =
            (try? root.signature(for: IntermediateKeySignature.statement(publicKey: publicKey, expiresAt: expiresAt))) ?? Data()
        let signature = (try? intermediate.signature(for: message.bytes)) ?? Data()
        let header = IntermediateKeySignature(
            publicKey: publicKey, expiresAt: expiresAt, rootSignature: Array(rootSignature), signature: Array(signature))
        guard
            let response = HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: nil,
                headerFields: [
                    "ETag": "\"bench\"", SignatureHeaders.signature: header.headerValue,
                    SignatureHeaders.requestTime: String(CannedServer.requestDate),
                ])
        else { return nil }
        return SignedAnswer(
            rootKey: root.publicKey.rawRepresentation.base64EncodedString(), nonce: nonce, url: url, response: response,
            body: CannedServer.body)
    }
}
