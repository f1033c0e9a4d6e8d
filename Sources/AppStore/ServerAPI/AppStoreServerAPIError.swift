/// A failed App Store Server API call: Apple's error body `{errorCode, errorMessage}` with its documented name, or
/// what went wrong around it (transport, an unexpected answer, signed data that did not verify).
public struct AppStoreServerAPIError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// Apple answered with an error body.
        case api(code: Int64, name: String)
        /// HTTP 401: the token was refused (wrong key, issuer, bundle id, or an expired token).
        case unauthorized
        /// An HTTP status with no error body Storekeeper understands.
        case unexpectedResponse
        /// The request never got an answer: connection, TLS or timeout.
        case transport
        /// The answer carried signed data that did not verify.
        case verification(VerificationError.Code)
        /// The request was refused before it was sent (an id that cannot be a path segment, a body that does not encode).
        case invalidRequest
    }

    public let kind: Kind
    public let httpStatus: Int?
    public let message: String

    public init(kind: Kind, httpStatus: Int?, message: String) {
        self.kind = kind
        self.httpStatus = httpStatus
        self.message = message
    }

    /// Whether the same call may succeed later.
    public var isRetryable: Bool {
        switch kind {
        case .api(let code, _): Self.retryableCodes.contains(code)
        case .transport: true
        case .unexpectedResponse: (httpStatus ?? 0) >= 500
        case .unauthorized, .invalidRequest: false
        case .verification(let code): code == .retryableVerificationFailure
        }
    }

    /// Apple's documented error name for `errorCode`, or nil for a code this library does not know.
    public var apiErrorName: String? {
        if case .api(_, let name) = kind { return name }
        return nil
    }

    public var description: String {
        switch kind {
        case .api(let code, let name): "\(name) (\(code)): \(message)"
        default: "\(kind) (HTTP \(httpStatus.map(String.init) ?? "-")): \(message)"
        }
    }

    public static let rateLimitExceeded: Int64 = 4_290_000
    static let retryableCodes: Set<Int64> = [4_040_002, 4_040_004, 4_040_006, 4_290_000, 5_000_001]

    /// The error codes of the App Store Server API, as Apple's documentation names them.
    public static let errorNames: [Int64: String] = [
        4_000_000: "GeneralBadRequestError", 4_000_002: "InvalidAppIdentifierError", 4_000_005: "InvalidRequestRevisionError",
        4_000_006: "InvalidTransactionIdError", 4_000_008: "InvalidOriginalTransactionIdError",
        4_000_009: "InvalidExtendByDaysError", 4_000_010: "InvalidExtendReasonCodeError",
        4_000_011: "InvalidRequestIdentifierError", 4_000_012: "StartDateTooFarInPastError",
        4_000_013: "StartDateAfterEndDateError", 4_000_014: "InvalidPaginationTokenError", 4_000_015: "InvalidStartDateError",
        4_000_016: "InvalidEndDateError", 4_000_017: "PaginationTokenExpiredError", 4_000_018: "InvalidNotificationTypeError",
        4_000_019: "MultipleFiltersSuppliedError", 4_000_020: "InvalidTestNotificationTokenError", 4_000_021: "InvalidSortError",
        4_000_022: "InvalidProductTypeError", 4_000_023: "InvalidProductIdError",
        4_000_024: "InvalidSubscriptionGroupIdentifierError", 4_000_026: "InvalidInAppOwnershipTypeError",
        4_000_027: "InvalidEmptyStorefrontCountryCodeListError", 4_000_028: "InvalidStorefrontCountryCodeError",
        4_000_030: "InvalidRevokedError", 4_000_031: "InvalidStatusError", 4_000_032: "InvalidAccountTenureError",
        4_000_033: "InvalidAppAccountTokenError", 4_000_034: "InvalidConsumptionStatusError",
        4_000_035: "InvalidCustomerConsentedError", 4_000_036: "InvalidDeliveryStatusError",
        4_000_037: "InvalidLifetimeDollarsPurchasedError", 4_000_038: "InvalidLifetimeDollarsRefundedError",
        4_000_039: "InvalidPlatformError", 4_000_040: "InvalidPlayTimeError", 4_000_041: "InvalidSampleContentProvidedError",
        4_000_042: "InvalidUserStatusError", 4_000_044: "InvalidTransactionTypeNotSupportedError",
        4_000_045: "AppTransactionIdNotSupportedError", 4_000_183: "InvalidAppAccountTokenUUIDError",
        4_000_185: "FamilyTransactionNotSupportedError", 4_000_187: "TransactionIdIsNotOriginalTransactionIdError",
        4_030_004: "SubscriptionExtensionIneligibleError", 4_030_005: "SubscriptionMaxExtensionError",
        4_030_007: "FamilySharedSubscriptionExtensionIneligibleError", 4_040_001: "AccountNotFoundError",
        4_040_002: "AccountNotFoundRetryableError", 4_040_003: "AppNotFoundError", 4_040_004: "AppNotFoundRetryableError",
        4_040_005: "OriginalTransactionIdNotFoundError", 4_040_006: "OriginalTransactionIdNotFoundRetryableError",
        4_040_007: "ServerNotificationUrlNotFoundError", 4_040_008: "TestNotificationNotFoundError",
        4_040_009: "StatusRequestNotFoundError", 4_040_010: "TransactionIdNotFoundError",
        4_040_019: "AppTransactionDoesNotExistError", 4_290_000: "RateLimitExceededError",
        4_000_161: "InvalidImageError", 4_000_162: "HeaderTooLongError", 4_000_163: "BodyTooLongError",
        4_000_164: "InvalidLocaleError", 4_000_175: "AltTextTooLongError", 4_000_211: "InvalidPerformanceTestRequestError",
        4_000_212: "InvalidRequestIdError", 4_000_213: "ExistingPerformanceTestRunError", 4_000_215: "BadRequestRealtimeUrlError",
        4_000_216: "BadRequestImageSizeError", 4_000_218: "BadRequestTooManyBulletPointsError",
        4_000_219: "BadRequestBulletPointTextTooLongError", 4_000_224: "BadRequestAboveImageRequiresAnImageError",
        4_030_014: "MaximumNumberOfImagesReachedError", 4_030_016: "MaximumNumberOfMessagesReachedError",
        4_030_017: "MessageNotApprovedError", 4_030_018: "ImageNotApprovedError", 4_030_019: "ImageInUseError",
        4_030_026: "ForbiddenNoPassingTestError", 4_040_014: "ImageNotFoundError", 4_040_015: "MessageNotFoundError",
        4_040_018: "PerformanceTestRunNotFoundError", 4_040_020: "DefaultMessageNotFoundError",
        4_040_021: "RealtimeUrlNotFoundError", 4_090_000: "ImageAlreadyExistsError", 4_090_001: "MessageAlreadyExistsError",
        5_000_000: "GeneralInternalError", 5_000_001: "GeneralInternalRetryableError",
    ]
}
