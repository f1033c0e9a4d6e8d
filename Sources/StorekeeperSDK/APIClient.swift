import Entitlements
import Experiments
import Foundation
import ResponseSigning

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How requests leave the SDK: URLSession by default; tests wrap it to take the server away.
public protocol HTTPTransport: Sendable {
    /// Sends the request and returns the body and the HTTP response, or throws when no response came.
    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse)
}

/// URLSession, with FoundationNetworking's on Linux.
public struct URLSessionTransport: HTTPTransport {
    let session: URLSession

    /// A transport on `session` (the shared session by default).
    public init(session: URLSession = .shared) {
        self.session = session
    }

    /// Sends the request with `URLSession.data(for:)`.
    public func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let (data, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return (data, http)
    }
}

/// The server's customer API, as the app's public key may call it. Errors are `StorekeeperError`s.
struct APIClient: Sendable {
    let configuration: Storekeeper.Configuration
    let transport: any HTTPTransport
    /// Checks the server's signatures: nil when verification is off, or informational without a signing key.
    let verifier: ResponseVerifier?

    init(configuration: Storekeeper.Configuration, transport: any HTTPTransport) {
        self.configuration = configuration
        self.transport = transport
        switch (configuration.verification, configuration.signingKey) {
        case (.disabled, _), (.informational, nil): verifier = nil
        case (_, let key): verifier = ResponseVerifier(signingKey: key ?? "")
        }
    }

    static let decoder = JSONDecoder()
    /// The code of a `StorekeeperError.server` for a success whose body does not decode.
    static let unreadableAnswer = "unreadable_answer"
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    /// A customer read: new info, or the cached one still current (304).
    enum Fetched: Sendable {
        case info(CustomerInfo, etag: String?)
        /// The cached answer is still current; the 304's own verification (its signature covers the ETag).
        case notModified(CustomerInfo.Verification)
    }

    /// The customer's state in every environment the app accepts; `environment` (where this copy of the app runs, when
    /// the store told) marks which one is the device's, for `activeInCurrentEnvironment`.
    func customer(_ appUserId: String, etag: String?, environment: CustomerInfo.Environment?) async throws(StorekeeperError) -> Fetched {
        var request = request("GET", "v1/customers", appUserId)
        Self.add("currentEnvironment", environment, to: &request)
        if let etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        let answer = try await send(request)
        if answer.response.statusCode == 304 { return .notModified(answer.verification) }
        return .info(try customerInfo(answer, environment: environment), etag: answer.response.value(forHTTPHeaderField: "ETag"))
    }

    /// The customer info of an answer, marked with how it verified and with the environment the device runs in.
    private func customerInfo(_ answer: Answer, environment: CustomerInfo.Environment?) throws(StorekeeperError) -> CustomerInfo {
        var info = try decode(CustomerInfo.self, answer.data)
        info.verification = answer.verification
        info.currentEnvironment = environment
        return info
    }

    struct PostedTransaction: Encodable { var signedTransaction: String }

    /// Posts a signed transaction; the idempotency key is the same on every retry of one purchase.
    func post(
        transaction jws: String, for appUserId: String, idempotencyKey: String, environment: CustomerInfo.Environment?
    ) async throws(StorekeeperError) -> CustomerInfo {
        var request = request("POST", "v1/customers", appUserId, "transactions")
        Self.add("currentEnvironment", environment, to: &request)
        request.setValue(idempotencyKey, forHTTPHeaderField: "Idempotency-Key")
        request.httpBody = try encode(PostedTransaction(signedTransaction: jws))
        return try customerInfo(try await send(request), environment: environment)
    }

    struct AliasBody: Encodable { var alias: String }

    /// Makes `alias` (the anonymous id) a name of `appUserId`'s customer, merging its purchases.
    func alias(_ alias: String, of appUserId: String, environment: CustomerInfo.Environment?) async throws(StorekeeperError) -> CustomerInfo
    {
        var request = request("POST", "v1/customers", appUserId, "alias")
        Self.add("currentEnvironment", environment, to: &request)
        request.httpBody = try encode(AliasBody(alias: alias))
        return try customerInfo(try await send(request), environment: environment)
    }

    func catalog(app appId: String) async throws(StorekeeperError) -> Catalog {
        try decode(Catalog.self, try await send(request("GET", "v1/apps", appId, "catalog")).data)
    }

    func definitions(app appId: String) async throws(StorekeeperError) -> ExperimentDefinitionSet {
        try decode(ExperimentDefinitionSet.self, try await send(request("GET", "v1/apps", appId, "experiments", "definitions")).data)
    }

    /// The placement's paywall; `environment` is where the exposure that may follow counts (a sandbox tester's never
    /// moves a Production test).
    func placement(_ placementId: String, for appUserId: String, environment: CustomerInfo.Environment?) async throws(StorekeeperError)
        -> Placement
    {
        var request = request("GET", "v1/customers", appUserId, "placements", placementId)
        Self.add("environment", environment, to: &request)
        return try decode(Placement.self, try await send(request).data)
    }

    struct OfferBody: Encodable {
        var productId: String
        var offerId: String
    }

    func promotionalOffer(
        _ offer: OfferBody, for appUserId: String, environment: CustomerInfo.Environment?
    ) async throws(StorekeeperError) -> PromotionalOfferSignature {
        var request = request("POST", "v1/customers", appUserId, "offers", "promotional")
        Self.add("environment", environment, to: &request)
        request.httpBody = try encode(offer)
        return try decode(PromotionalOfferSignature.self, try await send(request).data)
    }

    struct ExposureBody: Encodable {
        var experiment: String
        var variant: String
        var phase: Int
        var placement: String
    }

    func expose(_ exposure: ExposureBody, for appUserId: String, environment: CustomerInfo.Environment?) async throws(StorekeeperError) {
        var request = request("POST", "v1/customers", appUserId, "exposures")
        Self.add("environment", environment, to: &request)
        request.httpBody = try encode(exposure)
        _ = try await send(request)
    }

    // MARK: plumbing

    /// Adds `name=<environment>` to the request's query, when the environment is known.
    static func add(_ name: String, _ environment: CustomerInfo.Environment?, to request: inout URLRequest) {
        guard let environment, let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return
        }
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: name, value: environment.rawValue)]
        if let withQuery = components.url { request.url = withQuery }
    }

    /// A request to `baseURL` + the segments, each percent-encoded as one path segment.
    private func request(_ method: String, _ prefix: String, _ segments: String...) -> URLRequest {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "/?#")
        let path = segments.map { $0.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0 }.joined(separator: "/")
        let base =
            configuration.baseURL.absoluteString.hasSuffix("/")
            ? configuration.baseURL.absoluteString : configuration.baseURL.absoluteString + "/"
        // The base and the encoded segments always make a URL; the fallback only keeps this total.
        let url = URL(string: base + prefix + "/" + path) ?? configuration.baseURL
        var request = URLRequest(url: url, timeoutInterval: Double(configuration.requestTimeout.components.seconds))
        request.httpMethod = method
        request.setValue("Bearer \(configuration.apiKey)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if method != "GET" { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        return request
    }

    struct ErrorBody: Decodable {
        struct Detail: Decodable {
            var code: String
            var message: String
            var permanent: Bool?
        }
        var error: Detail
    }

    /// An answer the SDK reads, and how its signature verified.
    struct Answer {
        var data: Data
        var response: HTTPURLResponse
        var verification: CustomerInfo.Verification
    }

    /// Sends (with a new nonce when answers are verified); a 2xx or 304 answer is returned, anything else becomes the
    /// error it is. An answer whose signature fails is `verificationFailed` in `enforced` mode, and marked `failed`
    /// (and logged) in `informational` mode.
    private func send(_ request: URLRequest) async throws(StorekeeperError) -> Answer {
        var request = request
        let nonce = verifier.map { _ in ResponseVerifier.nonce() }
        if let nonce { request.setValue(nonce, forHTTPHeaderField: SignatureHeaders.nonce) }
        let data: Data
        let response: HTTPURLResponse
        do {
            (data, response) = try await transport.send(request)
        } catch {
            throw .network("\(request.httpMethod ?? "") \(request.url?.path ?? ""): \(error.localizedDescription)")
        }
        let status = response.statusCode
        if (200..<300).contains(status) || status == 304 {
            guard let verifier else { return Answer(data: data, response: response, verification: .notRequested) }
            guard let failure = verifier.failure(nonce: nonce, url: request.url, response: response, body: data) else {
                return Answer(data: data, response: response, verification: .verified)
            }
            let what = "\(request.httpMethod ?? "") \(ResponseVerifier.signedPath(of: request.url))"
            if configuration.verification == .enforced { throw .verificationFailed("\(what): \(failure)") }
            configuration.log("the answer to \(what) failed verification: \(failure)")
            return Answer(data: data, response: response, verification: .failed)
        }
        let body = try? Self.decoder.decode(ErrorBody.self, from: data)
        let code = body?.error.code ?? "http_\(status)"
        let message = body?.error.message ?? HTTPURLResponse.localizedString(forStatusCode: status)
        switch (status, code) {
        case (401, _), (403, "forbidden"): throw .invalidKey(message)
        case (409, "transaction_owned"): throw .conflict(message)
        default:
            if status == 429 || status == 503, let after = response.value(forHTTPHeaderField: "Retry-After").flatMap(Int.init) {
                throw .throttled(retryAfter: max(0, after), message: message)
            }
            throw .server(status: status, code: code, message: message, permanent: body?.error.permanent ?? false)
        }
    }

    private func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws(StorekeeperError) -> T {
        do {
            return try Self.decoder.decode(type, from: data)
        } catch {
            throw .server(status: 200, code: Self.unreadableAnswer, message: "the answer is not a \(T.self): \(error)", permanent: false)
        }
    }

    private func encode(_ value: some Encodable) throws(StorekeeperError) -> Data {
        do {
            return try Self.encoder.encode(value)
        } catch {
            throw .unavailable("the request could not be encoded: \(error)")
        }
    }
}
