import Foundation

/// The Retention Messaging API's bodies and answers (Apple's models of the same names).

/// A text field of a retention message over Apple's limit, or another value Apple would refuse, found before the call.
public struct RetentionMessageFieldError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The field as Apple's JSON names it (`header`, `body`, `bulletPoints[2].text`, `image.altText`).
    public var field: String
    public var reason: String

    public var description: String { "\(field): \(reason)" }
}

/// Where the header goes (Apple's `HeaderPosition`).
public struct HeaderPosition: AppleEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let aboveBody = Self(rawValue: "ABOVE_BODY")
    public static let aboveImage = Self(rawValue: "ABOVE_IMAGE")
    public static let known: [Self] = [.aboveBody, .aboveImage]
}

/// An image's use (Apple's `ImageSize`).
public struct ImageSize: AppleEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let fullSize = Self(rawValue: "FULL_SIZE")
    public static let bulletPoint = Self(rawValue: "BULLET_POINT")
    public static let known: [Self] = [.fullSize, .bulletPoint]
}

/// Apple's review state of an uploaded image or message (`ImageState`, `MessageState`).
public struct RetentionReviewState: AppleEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let pending = Self(rawValue: "PENDING")
    public static let approved = Self(rawValue: "APPROVED")
    public static let rejected = Self(rawValue: "REJECTED")
    public static let known: [Self] = [.pending, .approved, .rejected]
}

/// Upload Message's body (Apple's `UploadMessageRequestBody`).
public struct UploadMessageRequestBody: Codable, Sendable, Hashable {
    public struct Image: Codable, Sendable, Hashable {
        public var imageIdentifier: String
        public var altText: String

        public init(imageIdentifier: String, altText: String) {
            self.imageIdentifier = imageIdentifier
            self.altText = altText
        }
    }

    public struct BulletPoint: Codable, Sendable, Hashable {
        public var text: String
        public var imageIdentifier: String
        public var altText: String

        public init(text: String, imageIdentifier: String, altText: String) {
            self.text = text
            self.imageIdentifier = imageIdentifier
            self.altText = altText
        }
    }

    public var header: String
    public var body: String
    public var image: Image?
    public var headerPosition: HeaderPosition?
    public var bulletPoints: [BulletPoint]?

    public init(
        header: String, body: String, image: Image? = nil, headerPosition: HeaderPosition? = nil, bulletPoints: [BulletPoint]? = nil
    ) {
        self.header = header
        self.body = body
        self.image = image
        self.headerPosition = headerPosition
        self.bulletPoints = bulletPoints
    }

    /// Apple's limits, in characters (counted as Unicode scalars, as Apple's own libraries count them).
    public static let maxHeader = 66
    public static let maxBody = 144
    public static let maxAltText = 150
    public static let maxBulletPoints = 5
    public static let maxBulletPointText = 66

    /// Refuses what Apple refuses (its errors 4000162, 4000163, 4000175, 4000218, 4000219, 4000224), naming the field.
    public func validate() throws(RetentionMessageFieldError) {
        func limit(_ text: String, _ max: Int, _ field: String) throws(RetentionMessageFieldError) {
            let count = text.unicodeScalars.count
            guard count <= max else {
                throw RetentionMessageFieldError(field: field, reason: "is \(count) characters; Apple allows at most \(max)")
            }
        }
        func uuid(_ text: String, _ field: String) throws(RetentionMessageFieldError) {
            guard UUID(uuidString: text) != nil else {
                throw RetentionMessageFieldError(field: field, reason: "'\(text)' is not a UUID")
            }
        }
        guard !header.isEmpty else { throw RetentionMessageFieldError(field: "header", reason: "is empty") }
        guard !body.isEmpty else { throw RetentionMessageFieldError(field: "body", reason: "is empty") }
        try limit(header, Self.maxHeader, "header")
        try limit(body, Self.maxBody, "body")
        if let image {
            try uuid(image.imageIdentifier, "image.imageIdentifier")
            try limit(image.altText, Self.maxAltText, "image.altText")
        }
        if let headerPosition, !headerPosition.isKnown {
            throw RetentionMessageFieldError(
                field: "headerPosition", reason: "'\(headerPosition.rawValue)' is not ABOVE_BODY or ABOVE_IMAGE")
        }
        if headerPosition == .aboveImage, image == nil {
            throw RetentionMessageFieldError(field: "headerPosition", reason: "ABOVE_IMAGE needs an image")
        }
        if let bulletPoints {
            guard bulletPoints.count <= Self.maxBulletPoints else {
                throw RetentionMessageFieldError(
                    field: "bulletPoints", reason: "has \(bulletPoints.count); Apple allows at most \(Self.maxBulletPoints)")
            }
            for (index, point) in bulletPoints.enumerated() {
                try limit(point.text, Self.maxBulletPointText, "bulletPoints[\(index)].text")
                try uuid(point.imageIdentifier, "bulletPoints[\(index)].imageIdentifier")
                try limit(point.altText, Self.maxAltText, "bulletPoints[\(index)].altText")
            }
        }
    }
}

/// One uploaded image (Apple's `GetImageListResponseItem`).
public struct RetentionImage: Codable, Sendable, Hashable {
    public var imageIdentifier: String?
    public var imageState: RetentionReviewState?
    public var imageSize: ImageSize?
}

/// One uploaded message (Apple's `GetMessageListResponseItem`).
public struct RetentionMessage: Codable, Sendable, Hashable {
    public var messageIdentifier: String?
    public var messageState: RetentionReviewState?
}

/// Get Image List's answer.
struct GetImageListResponse: Decodable { var imageIdentifiers: [RetentionImage]? }
/// Get Message List's answer.
struct GetMessageListResponse: Decodable { var messageIdentifiers: [RetentionMessage]? }
/// Configure Default Message's body and Get Default Message's answer.
struct DefaultConfiguration: Codable { var messageIdentifier: String? }
/// Configure Realtime URL's body and Get Realtime URL's answer.
struct RealtimeURLBody: Codable { var realtimeURL: String? }
/// Initiate Performance Test's body.
struct PerformanceTestRequest: Encodable { var originalTransactionId: String }

/// How Apple runs a performance test of the Get Retention Message endpoint (Apple's `PerformanceTestConfig`): times in
/// milliseconds, the success rate in percent.
public struct PerformanceTestConfig: Codable, Sendable, Hashable {
    public var maxConcurrentRequests: Int?
    public var totalRequests: Int?
    public var totalDuration: Int?
    public var responseTimeThreshold: Int?
    public var successRateThreshold: Int?

    public init(
        maxConcurrentRequests: Int? = nil, totalRequests: Int? = nil, totalDuration: Int? = nil, responseTimeThreshold: Int? = nil,
        successRateThreshold: Int? = nil
    ) {
        self.maxConcurrentRequests = maxConcurrentRequests
        self.totalRequests = totalRequests
        self.totalDuration = totalDuration
        self.responseTimeThreshold = responseTimeThreshold
        self.successRateThreshold = successRateThreshold
    }
}

/// Initiate Performance Test's answer (Apple's `PerformanceTestResponse`).
public struct PerformanceTestStarted: Codable, Sendable, Hashable {
    public var config: PerformanceTestConfig?
    public var requestId: String?

    public init(config: PerformanceTestConfig?, requestId: String?) {
        self.config = config
        self.requestId = requestId
    }
}

/// Response times of a performance test, in milliseconds (Apple's `PerformanceTestResponseTimes`).
public struct PerformanceTestResponseTimes: Codable, Sendable, Hashable {
    public var average: Int?
    public var p50: Int?
    public var p90: Int?
    public var p95: Int?
    public var p99: Int?

    public init(average: Int?, p50: Int?, p90: Int?, p95: Int?, p99: Int?) {
        self.average = average
        self.p50 = p50
        self.p90 = p90
        self.p95 = p95
        self.p99 = p99
    }
}

/// Get Performance Test Results' answer (Apple's `PerformanceTestResultResponse`): `result` is `PENDING`, `PASS` or
/// `FAIL`; `failures` counts failed sends by Apple's `SendAttemptResult` (`TIMED_OUT`, `NO_RESPONSE` …).
public struct PerformanceTestResult: Codable, Sendable, Hashable {
    public var config: PerformanceTestConfig?
    public var target: String?
    public var result: String?
    public var successRate: Int?
    public var numPending: Int?
    public var responseTimes: PerformanceTestResponseTimes?
    public var failures: [String: Int]?

    public init(
        config: PerformanceTestConfig?, target: String?, result: String?, successRate: Int?, numPending: Int?,
        responseTimes: PerformanceTestResponseTimes?, failures: [String: Int]?
    ) {
        self.config = config
        self.target = target
        self.result = result
        self.successRate = successRate
        self.numPending = numPending
        self.responseTimes = responseTimes
        self.failures = failures
    }
}
