// The HTTP clients are the server's: an app depending on this package without the `Server` trait fetches no HTTP stack.
#if Server
    import AsyncHTTPClient
    import Foundation
    import NIOCore

    /// A client of Apple's deprecated verifyReceipt endpoint, kept as the fallback for receipts that cannot be
    /// verified locally. It goes to production first, follows 21007 to the sandbox and 21008 back to production, and
    /// maps every status to a named error with a retryable flag.
    public struct VerifyReceiptClient: Sendable {
        public struct Configuration: Sendable {
            /// The app's shared secret, required for auto-renewable subscriptions.
            public var sharedSecret: String?
            public var excludeOldTransactions: Bool
            public var productionURL: String
            public var sandboxURL: String
            public var timeout: TimeAmount
            public var maxResponseBytes: Int

            public init(
                sharedSecret: String? = nil, excludeOldTransactions: Bool = true,
                productionURL: String = "https://buy.itunes.apple.com/verifyReceipt",
                sandboxURL: String = "https://sandbox.itunes.apple.com/verifyReceipt",
                timeout: TimeAmount = .seconds(30), maxResponseBytes: Int = 32 * 1024 * 1024
            ) {
                self.sharedSecret = sharedSecret
                self.excludeOldTransactions = excludeOldTransactions
                self.productionURL = productionURL
                self.sandboxURL = sandboxURL
                self.timeout = timeout
                self.maxResponseBytes = maxResponseBytes
            }
        }

        public let configuration: Configuration
        private let httpClient: HTTPClient

        public init(_ configuration: Configuration, httpClient: HTTPClient = .shared) {
            self.configuration = configuration
            self.httpClient = httpClient
        }

        struct RequestBody: Encodable {
            var receiptData: String
            var password: String?
            var excludeOldTransactions: Bool

            enum CodingKeys: String, CodingKey {
                case receiptData = "receipt-data"
                case password
                case excludeOldTransactions = "exclude-old-transactions"
            }
        }

        /// Verifies base64 receipt data. Returns Apple's answer for status 0 (and 21006, a valid receipt of an expired
        /// subscription); throws a `VerifyReceiptError` for every other status.
        public func verify(receiptData: String) async throws(VerifyReceiptError) -> VerifyReceiptResponse {
            let body: [UInt8]
            do {
                body = Array(
                    try JSONEncoder().encode(
                        RequestBody(
                            receiptData: receiptData, password: configuration.sharedSecret,
                            excludeOldTransactions: configuration.excludeOldTransactions)))
            } catch {
                throw VerifyReceiptError(status: nil, isRetryable: false, message: "the request could not be encoded: \(error)")
            }
            let production = try await post(body, to: configuration.productionURL)
            switch production.status {
            case 21007:
                let sandbox = try await post(body, to: configuration.sandboxURL)
                if sandbox.status == 21008 {
                    throw VerifyReceiptError(
                        status: 21008, isRetryable: false,
                        message: "production sent the receipt to the sandbox and the sandbox sent it back")
                }
                return try Self.result(sandbox)
            default:
                return try Self.result(production)
            }
        }

        static func result(_ response: VerifyReceiptResponse) throws(VerifyReceiptError) -> VerifyReceiptResponse {
            switch response.status {
            case 0, 21006: return response
            case let status:
                let retryable = response.isRetryable ?? (status == 21005 || status == 21009 || (21100...21199).contains(status))
                throw VerifyReceiptError(status: status, isRetryable: retryable, message: VerifyReceiptError.describe(status))
            }
        }

        private func post(_ body: [UInt8], to url: String) async throws(VerifyReceiptError) -> VerifyReceiptResponse {
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
            let status: UInt
            let data: Data
            do {
                let response = try await httpClient.execute(request, timeout: configuration.timeout)
                status = response.status.code
                data = Data(try await response.body.collect(upTo: configuration.maxResponseBytes).readableBytesView)
            } catch {
                throw VerifyReceiptError(status: nil, isRetryable: true, message: "verifyReceipt could not be reached: \(error)")
            }
            guard status == 200 else {
                throw VerifyReceiptError(status: nil, isRetryable: status >= 500, message: "verifyReceipt answered HTTP \(status)")
            }
            do {
                return try JSONDecoder().decode(VerifyReceiptResponse.self, from: data)
            } catch {
                throw VerifyReceiptError(
                    status: nil, isRetryable: false,
                    message: "verifyReceipt's answer is not the documented JSON: \(SignedDataVerifier.describe(error))")
            }
        }
    }

    /// A verifyReceipt status other than success, or a failure to get one.
    public struct VerifyReceiptError: Error, Sendable, Hashable, CustomStringConvertible {
        /// Apple's status code, or nil when there was no usable answer.
        public let status: Int?
        public let isRetryable: Bool
        public let message: String

        /// The status's name, as Apple's documentation describes it.
        public var name: String {
            switch status {
            case nil: "requestFailed"
            case 21000: "malformedRequest"
            case 21001: "deprecatedStatus"
            case 21002: "malformedReceiptData"
            case 21003: "receiptNotAuthenticated"
            case 21004: "sharedSecretMismatch"
            case 21005: "receiptServerUnavailable"
            case 21007: "sandboxReceiptSentToProduction"
            case 21008: "productionReceiptSentToSandbox"
            case 21009: "internalDataAccessError"
            case 21010: "accountNotFound"
            case let code? where (21100...21199).contains(code): "internalDataAccessError"
            default: "unknownStatus"
            }
        }

        public var description: String { "\(name)\(status.map { " (\($0))" } ?? ""): \(message)" }

        static func describe(_ status: Int) -> String {
            switch status {
            case 21000: "the request to the App Store was not made using the HTTP POST method or was malformed"
            case 21001: "this status code is no longer sent by the App Store"
            case 21002: "the receipt data was malformed or missing"
            case 21003: "the receipt could not be authenticated"
            case 21004: "the shared secret does not match the one on file for the account"
            case 21005: "the receipt server was temporarily unable to provide the receipt"
            case 21007: "this receipt is from the test environment but was sent to production"
            case 21008: "this receipt is from the production environment but was sent to the test environment"
            case 21009: "internal data access error"
            case 21010: "the user account cannot be found or has been deleted"
            case 21100...21199: "internal data access error"
            default: "unknown status \(status)"
            }
        }
    }

    /// verifyReceipt's answer. Numbers, booleans and `_ms` instants arrive as strings.
    public struct VerifyReceiptResponse: Decodable, Sendable, Hashable {
        public var status: Int
        public var environment: String?
        public var isRetryable: Bool?
        public var receipt: AppReceipt?
        public var latestReceipt: String?
        public var latestReceiptInfo: [InAppPurchaseReceipt]
        public var pendingRenewalInfo: [PendingRenewalInfo]

        enum CodingKeys: String, CodingKey {
            case status, environment, receipt
            case isRetryable = "is-retryable"
            case latestReceipt = "latest_receipt"
            case latestReceiptInfo = "latest_receipt_info"
            case pendingRenewalInfo = "pending_renewal_info"
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            guard let status = try c.appleInt(.status) else {
                throw DecodingError.keyNotFound(CodingKeys.status, .init(codingPath: c.codingPath, debugDescription: "status is missing"))
            }
            self.status = Int(status)
            environment = try c.appleString(.environment)
            isRetryable = try c.appleBool(.isRetryable)
            receipt = try c.decodeIfPresent(AppReceipt.self, forKey: .receipt)
            latestReceipt = try c.appleString(.latestReceipt)
            latestReceiptInfo = try c.decodeIfPresent([InAppPurchaseReceipt].self, forKey: .latestReceiptInfo) ?? []
            pendingRenewalInfo = try c.decodeIfPresent([PendingRenewalInfo].self, forKey: .pendingRenewalInfo) ?? []
        }
    }

    /// One entry of verifyReceipt's `pending_renewal_info`.
    public struct PendingRenewalInfo: Decodable, Sendable, Hashable {
        public var autoRenewProductId: String?
        public var autoRenewStatus: Bool?
        public var expirationIntent: ExpirationIntent?
        public var gracePeriodExpiresDate: Timestamp?
        public var isInBillingRetryPeriod: Bool?
        public var offerCodeRefName: String?
        public var originalTransactionId: String?
        public var priceConsentStatus: String?
        public var productId: String?
        public var promotionalOfferId: String?
        public var priceIncreaseStatus: String?

        enum CodingKeys: String, CodingKey {
            case autoRenewProductId = "auto_renew_product_id"
            case autoRenewStatus = "auto_renew_status"
            case expirationIntent = "expiration_intent"
            case gracePeriodExpiresDate = "grace_period_expires_date_ms"
            case isInBillingRetryPeriod = "is_in_billing_retry_period"
            case offerCodeRefName = "offer_code_ref_name"
            case originalTransactionId = "original_transaction_id"
            case priceConsentStatus = "price_consent_status"
            case productId = "product_id"
            case promotionalOfferId = "promotional_offer_id"
            case priceIncreaseStatus = "price_increase_status"
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            autoRenewProductId = try c.appleString(.autoRenewProductId)
            autoRenewStatus = try c.appleBool(.autoRenewStatus)
            expirationIntent = try c.appleInt(.expirationIntent).map { ExpirationIntent(rawValue: Int32(truncatingIfNeeded: $0)) }
            gracePeriodExpiresDate = try c.appleMilliseconds(.gracePeriodExpiresDate)
            isInBillingRetryPeriod = try c.appleBool(.isInBillingRetryPeriod)
            offerCodeRefName = try c.appleString(.offerCodeRefName)
            originalTransactionId = try c.appleString(.originalTransactionId)
            priceConsentStatus = try c.appleString(.priceConsentStatus)
            productId = try c.appleString(.productId)
            promotionalOfferId = try c.appleString(.promotionalOfferId)
            priceIncreaseStatus = try c.appleString(.priceIncreaseStatus)
        }
    }
#endif
