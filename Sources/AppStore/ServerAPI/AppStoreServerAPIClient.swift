// The HTTP clients are the server's: an app depending on this package without the `Server` trait fetches no HTTP stack.
#if Server
    import AsyncHTTPClient
    import Foundation
    import NIOCore
    import NIOHTTP1

    /// A client of the App Store Server API. Every call carries a fresh ES256 bearer token, and every signed value in
    /// an answer is verified with the given `SignedDataVerifier` before it is returned.
    public struct AppStoreServerAPIClient: Sendable {
        public struct Configuration: Sendable {
            public var key: AppStoreSigningKey
            /// `.production` or `.sandbox` (anything else uses the sandbox URL).
            public var environment: Environment
            /// Apple's hosts since May 2026 (its libraries moved off `api.storekit.itunes.apple.com` and
            /// `api.storekit-sandbox.itunes.apple.com` then).
            public var productionBaseURL: String = "https://api.storekit.apple.com"
            public var sandboxBaseURL: String = "https://api.storekit-sandbox.apple.com"
            /// How long a token is valid; Apple accepts at most an hour.
            public var tokenLifetime: TimeInterval = 300
            /// How many times a `RateLimitExceededError` (4290000) is retried before it is returned.
            public var rateLimitRetries: Int = 3
            /// The first wait after a rate-limit answer; it doubles each time, unless Apple sends `Retry-After`.
            public var rateLimitBackoff: Duration = .seconds(1)
            /// The longest wait for one rate-limit answer: a longer `Retry-After` returns the error instead.
            public var maxRateLimitWait: Duration = .seconds(60)
            public var timeout: TimeAmount = .seconds(30)
            public var maxResponseBytes: Int = 16 * 1024 * 1024
            public var clock: @Sendable () -> Date = { Date() }

            public init(key: AppStoreSigningKey, environment: Environment) {
                self.key = key
                self.environment = environment
            }

            /// The host calls go to: the production URL in production, the sandbox URL otherwise.
            public var baseURL: String { environment == .production ? productionBaseURL : sandboxBaseURL }
        }

        public let configuration: Configuration
        public let verifier: SignedDataVerifier
        private let httpClient: HTTPClient

        public init(_ configuration: Configuration, verifier: SignedDataVerifier, httpClient: HTTPClient = .shared) {
            self.configuration = configuration
            self.verifier = verifier
            self.httpClient = httpClient
        }

        // MARK: - Token

        struct TokenClaims: Encodable {
            var iss: String
            var iat: Int64
            var exp: Int64
            var aud = "appstoreconnect-v1"
            var bid: String
        }

        /// A bearer token: header `alg` ES256 and `kid`; claims `iss`, `iat`, `exp` (at most an hour later), `aud`
        /// `appstoreconnect-v1` and `bid`.
        public func makeToken(now: Date? = nil) throws -> String {
            let issued = Int64((now ?? configuration.clock()).timeIntervalSince1970)
            let lifetime = Int64(min(max(configuration.tokenLifetime, 1), 3600))
            return try configuration.key.signJWT(
                TokenClaims(
                    iss: configuration.key.issuerId, iat: issued, exp: issued + lifetime, bid: configuration.key.bundleId))
        }

        // MARK: - Endpoints

        /// Get Transaction History v2: one page. Pass the previous page's `revision` to get the next.
        public func transactionHistory(
            transactionId: String, revision: String? = nil, filter: TransactionHistoryRequest = .init()
        ) async throws(AppStoreServerAPIError) -> TransactionHistoryPage {
            var query = filter.queryItems
            if let revision { query.insert(("revision", revision), at: 0) }
            let response: HistoryResponse = try await call(.GET, "/inApps/v2/history/\(try segment(transactionId))", query: query)
            return TransactionHistoryPage(
                revision: response.revision, hasMore: response.hasMore ?? false, bundleId: response.bundleId,
                appAppleId: response.appAppleId, environment: response.environment,
                transactions: try await verifyTransactions(response.signedTransactions ?? []))
        }

        /// Every page of Get Transaction History v2, followed by revision.
        public func allTransactionHistory(
            transactionId: String, filter: TransactionHistoryRequest = .init(), maxPages: Int = 1000
        ) async throws(AppStoreServerAPIError) -> [Signed<JWSTransactionDecodedPayload>] {
            var transactions: [Signed<JWSTransactionDecodedPayload>] = []
            var revision: String?
            for _ in 0..<maxPages {
                let page = try await transactionHistory(transactionId: transactionId, revision: revision, filter: filter)
                transactions += page.transactions
                guard page.hasMore, let next = page.revision else { return transactions }
                revision = next
            }
            return transactions
        }

        /// Get Transaction Info.
        public func transactionInfo(transactionId: String) async throws(AppStoreServerAPIError) -> Signed<JWSTransactionDecodedPayload> {
            let response: TransactionInfoResponse = try await call(.GET, "/inApps/v1/transactions/\(try segment(transactionId))")
            return try await verifyTransaction(response.signedTransactionInfo)
        }

        /// Get All Subscription Statuses, optionally only those in the given statuses.
        public func allSubscriptionStatuses(
            transactionId: String, status: [SubscriptionStatus] = []
        ) async throws(AppStoreServerAPIError) -> SubscriptionStatuses {
            let response: StatusResponse = try await call(
                .GET, "/inApps/v1/subscriptions/\(try segment(transactionId))", query: status.map { ("status", String($0.rawValue)) })
            var groups: [SubscriptionStatuses.Group] = []
            for group in response.data ?? [] {
                var items: [SubscriptionStatuses.Item] = []
                for item in group.lastTransactions ?? [] {
                    var entry = SubscriptionStatuses.Item(status: item.status, originalTransactionId: item.originalTransactionId)
                    if let jws = item.signedTransactionInfo { entry.transaction = try await verifyTransaction(jws) }
                    if let jws = item.signedRenewalInfo {
                        entry.renewalInfo = Signed(
                            jws: jws,
                            value: try await verified(jws) { () async throws(VerificationError) in
                                try await verifier.verifyRenewalInfo(jws)
                            })
                    }
                    items.append(entry)
                }
                groups.append(.init(subscriptionGroupIdentifier: group.subscriptionGroupIdentifier, lastTransactions: items))
            }
            return SubscriptionStatuses(
                environment: response.environment, bundleId: response.bundleId, appAppleId: response.appAppleId, groups: groups)
        }

        /// Get Refund History v2: one page.
        public func refundHistory(transactionId: String, revision: String? = nil) async throws(AppStoreServerAPIError) -> RefundHistoryPage
        {
            let response: RefundHistoryResponse = try await call(
                .GET, "/inApps/v2/refund/lookup/\(try segment(transactionId))", query: revision.map { [("revision", $0)] } ?? [])
            return RefundHistoryPage(
                revision: response.revision, hasMore: response.hasMore ?? false,
                transactions: try await verifyTransactions(response.signedTransactions ?? []))
        }

        /// Look Up Order ID.
        public func lookUpOrderId(_ orderId: String) async throws(AppStoreServerAPIError) -> OrderLookup {
            let response: OrderLookupResponse = try await call(.GET, "/inApps/v1/lookup/\(try segment(orderId))")
            return OrderLookup(status: response.status ?? 1, transactions: try await verifyTransactions(response.signedTransactions ?? []))
        }

        /// Extend a Subscription Renewal Date, for one subscriber.
        public func extendRenewalDate(
            originalTransactionId: String, _ request: ExtendRenewalDateRequest
        ) async throws(AppStoreServerAPIError) -> ExtendRenewalDateResponse {
            try await call(.PUT, "/inApps/v1/subscriptions/extend/\(try segment(originalTransactionId))", body: request)
        }

        /// Extend Subscription Renewal Dates for All Active Subscribers.
        public func extendRenewalDateForAllActiveSubscribers(
            _ request: MassExtendRenewalDateRequest
        ) async throws(AppStoreServerAPIError) -> MassExtendRenewalDateResponse {
            try await call(.POST, "/inApps/v1/subscriptions/extend/mass", body: request)
        }

        /// Get Status of Subscription Renewal Date Extensions.
        public func renewalDateExtensionStatus(
            productId: String, requestIdentifier: String
        ) async throws(AppStoreServerAPIError) -> MassExtendRenewalDateStatusResponse {
            try await call(.GET, "/inApps/v1/subscriptions/extend/mass/\(try segment(productId))/\(try segment(requestIdentifier))")
        }

        /// Send Consumption Information v2.
        public func sendConsumptionInformation(transactionId: String, _ request: ConsumptionRequest) async throws(AppStoreServerAPIError) {
            let _: Empty = try await call(.PUT, "/inApps/v2/transactions/consumption/\(try segment(transactionId))", body: request)
        }

        /// Request a Test Notification; returns its token.
        public func requestTestNotification() async throws(AppStoreServerAPIError) -> String {
            let response: SendTestNotificationResponse = try await call(.POST, "/inApps/v1/notifications/test")
            return response.testNotificationToken
        }

        /// Get Test Notification Status.
        public func testNotificationStatus(token: String) async throws(AppStoreServerAPIError) -> NotificationHistoryItem {
            let response: CheckTestNotificationResponse = try await call(.GET, "/inApps/v1/notifications/test/\(try segment(token))")
            return NotificationHistoryItem(
                notification: try await verifyNotification(response.signedPayload), sendAttempts: response.sendAttempts ?? [])
        }

        /// Get Notification History: one page. Pass the previous page's `paginationToken` to get the next.
        public func notificationHistory(
            _ request: NotificationHistoryRequest, paginationToken: String? = nil
        ) async throws(AppStoreServerAPIError) -> NotificationHistoryPage {
            let response: NotificationHistoryResponse = try await call(
                .POST, "/inApps/v1/notifications/history", query: paginationToken.map { [("paginationToken", $0)] } ?? [], body: request)
            var items: [NotificationHistoryItem] = []
            for item in response.notificationHistory ?? [] {
                items.append(
                    NotificationHistoryItem(
                        notification: try await verifyNotification(item.signedPayload), sendAttempts: item.sendAttempts ?? []))
            }
            return NotificationHistoryPage(paginationToken: response.paginationToken, hasMore: response.hasMore ?? false, items: items)
        }

        /// Get App Transaction Info.
        public func appTransactionInfo(transactionId: String) async throws(AppStoreServerAPIError) -> Signed<AppTransaction> {
            let response: AppTransactionInfoResponse = try await call(
                .GET, "/inApps/v1/transactions/appTransactions/\(try segment(transactionId))")
            let jws = response.signedAppTransactionInfo
            return Signed(
                jws: jws,
                value: try await verified(jws) { () async throws(VerificationError) in
                    try await verifier.verifyAppTransaction(jws)
                })
        }

        /// Set App Account Token on a purchase.
        public func setAppAccountToken(originalTransactionId: String, appAccountToken: UUID) async throws(AppStoreServerAPIError) {
            let _: Empty = try await call(
                .PUT, "/inApps/v1/transactions/\(try segment(originalTransactionId))/appAccountToken",
                body: UpdateAppAccountTokenRequest(appAccountToken: appAccountToken.uuidString.lowercased()))
        }

        // MARK: - Verification of answers

        private func verified<T>(_ jws: String, _ body: () async throws(VerificationError) -> T) async throws(AppStoreServerAPIError) -> T {
            do {
                return try await body()
            } catch {
                throw AppStoreServerAPIError(
                    kind: .verification(error.code), httpStatus: 200, message: "signed data in the answer: \(error.message)")
            }
        }

        private func verifyTransaction(_ jws: String) async throws(AppStoreServerAPIError) -> Signed<JWSTransactionDecodedPayload> {
            Signed(
                jws: jws, value: try await verified(jws) { () async throws(VerificationError) in try await verifier.verifyTransaction(jws) }
            )
        }

        private func verifyTransactions(_ list: [String]) async throws(AppStoreServerAPIError) -> [Signed<JWSTransactionDecodedPayload>] {
            var result: [Signed<JWSTransactionDecodedPayload>] = []
            for jws in list { result.append(try await verifyTransaction(jws)) }
            return result
        }

        private func verifyNotification(_ jws: String?) async throws(AppStoreServerAPIError) -> Signed<VerifiedNotification>? {
            guard let jws else { return nil }
            return Signed(
                jws: jws,
                value: try await verified(jws) { () async throws(VerificationError) in try await verifier.verifyNotification(jws) })
        }

        // MARK: - HTTP

        struct Empty: Decodable {}
        private struct NoBody: Encodable {}

        /// A path segment from a caller's value, percent-encoded; one that would change the path is refused.
        func segment(_ value: String) throws(AppStoreServerAPIError) -> String {
            guard !value.isEmpty, value != ".", value != "..",
                let encoded = value.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"]))
            else {
                throw AppStoreServerAPIError(kind: .invalidRequest, httpStatus: nil, message: "'\(value)' cannot be a path segment")
            }
            return encoded
        }

        private static let decoder = JSONDecoder()

        func call<Response: Decodable>(
            _ method: HTTPMethod, _ path: String, query: [(String, String)] = []
        ) async throws(AppStoreServerAPIError) -> Response {
            try await call(method, path, query: query, body: nil as NoBody?)
        }

        func call<Response: Decodable, Body: Encodable>(
            _ method: HTTPMethod, _ path: String, query: [(String, String)] = [], body: Body?
        ) async throws(AppStoreServerAPIError) -> Response {
            let bodyBytes: [UInt8]?
            do {
                bodyBytes = try body.map { Array(try JSONEncoder().encode($0)) }
            } catch {
                throw AppStoreServerAPIError(
                    kind: .invalidRequest, httpStatus: nil, message: "the request body could not be encoded: \(error)")
            }
            return try await call(method, path, query: query, bytes: bodyBytes, contentType: "application/json")
        }

        /// A call with a body of the given bytes and content type (an image upload is `image/png`).
        func call<Response: Decodable>(
            _ method: HTTPMethod, _ path: String, query: [(String, String)] = [], bytes bodyBytes: [UInt8]?, contentType: String
        ) async throws(AppStoreServerAPIError) -> Response {
            var url = configuration.baseURL + path
            if !query.isEmpty {
                var components = URLComponents()
                components.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) }
                url += "?" + (components.percentEncodedQuery ?? "")
            }
            var attempt = 0
            while true {
                let (status, headers, data) = try await send(method, url, body: bodyBytes, contentType: contentType)
                if (200..<300).contains(status) {
                    if Response.self == Empty.self, let empty = Empty() as? Response { return empty }
                    do {
                        return try Self.decoder.decode(Response.self, from: data)
                    } catch {
                        throw AppStoreServerAPIError(
                            kind: .unexpectedResponse, httpStatus: status,
                            message: "the answer is not the documented JSON: \(SignedDataVerifier.describe(error))")
                    }
                }
                let error = Self.error(status: status, body: data)
                if case .api(let code, _) = error.kind, code == AppStoreServerAPIError.rateLimitExceeded,
                    attempt < configuration.rateLimitRetries
                {
                    let retryAfter = headers.first(name: "Retry-After").flatMap {
                        Self.retryAfter($0, now: configuration.clock())
                    }
                    let backoff = retryAfter ?? configuration.rateLimitBackoff * (1 << min(attempt, 10))
                    guard backoff <= configuration.maxRateLimitWait else { throw error }
                    attempt += 1
                    do {
                        try await Task.sleep(for: backoff)
                    } catch {
                        throw AppStoreServerAPIError(kind: .transport, httpStatus: nil, message: "cancelled while backing off")
                    }
                    continue
                }
                throw error
            }
        }

        private func send(_ method: HTTPMethod, _ url: String, body: [UInt8]?, contentType: String) async throws(AppStoreServerAPIError)
            -> (
                Int, HTTPHeaders, Data
            )
        {
            var request = HTTPClientRequest(url: url)
            request.method = method
            do {
                request.headers.add(name: "Authorization", value: "Bearer \(try makeToken())")
            } catch {
                throw AppStoreServerAPIError(kind: .unauthorized, httpStatus: nil, message: "the token could not be signed: \(error)")
            }
            request.headers.add(name: "Accept", value: "application/json")
            request.headers.add(name: "User-Agent", value: "storekeeper")
            if let body {
                request.headers.add(name: "Content-Type", value: contentType)
                request.body = .bytes(ByteBuffer(bytes: body))
            }
            do {
                let response = try await httpClient.execute(request, timeout: configuration.timeout)
                let buffer = try await response.body.collect(upTo: configuration.maxResponseBytes)
                return (Int(response.status.code), response.headers, Data(buffer.readableBytesView))
            } catch {
                throw AppStoreServerAPIError(kind: .transport, httpStatus: nil, message: "\(error)")
            }
        }

        /// How long a `Retry-After` header asks to wait. Apple documents it for the App Store Server API as the UNIX
        /// time, in milliseconds, of the next allowed request; HTTP's own forms (seconds to wait) are read too.
        static func retryAfter(_ value: String, now: Date) -> Duration? {
            guard let number = Int64(value.trimmingCharacters(in: .whitespaces)), number >= 0 else { return nil }
            // A count of seconds is small; a UNIX time in milliseconds is past 2001 (10^12 ms).
            guard number >= 1_000_000_000_000 else { return .seconds(number) }
            let wait = number - Int64((now.timeIntervalSince1970 * 1000).rounded())
            return .milliseconds(max(wait, 0))
        }

        static func error(status: Int, body: Data) -> AppStoreServerAPIError {
            if let payload = try? decoder.decode(ErrorPayload.self, from: body), let code = payload.errorCode {
                return AppStoreServerAPIError(
                    kind: .api(code: code, name: AppStoreServerAPIError.errorNames[code] ?? "UnknownError"),
                    httpStatus: status, message: payload.errorMessage ?? "")
            }
            if status == 401 {
                return AppStoreServerAPIError(
                    kind: .unauthorized, httpStatus: status, message: "the App Store Server API refused the token")
            }
            return AppStoreServerAPIError(kind: .unexpectedResponse, httpStatus: status, message: "HTTP \(status) without an error body")
        }
    }
#endif
