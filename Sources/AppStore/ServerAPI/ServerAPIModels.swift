import Foundation

// The App Store Server API's request and response bodies, with Apple's field names. They are grouped in one file
// because each is small and used by one endpoint of `AppStoreServerAPIClient`.

/// A signed value as Apple sent it, next to its verified, decoded form.
public struct Signed<Value: Sendable & Hashable>: Sendable, Hashable {
    public var jws: String
    public var value: Value

    public init(jws: String, value: Value) {
        self.jws = jws
        self.value = value
    }
}

/// `HistoryResponse`: one page of Get Transaction History v2, verified.
public struct TransactionHistoryPage: Sendable, Hashable {
    public var revision: String?
    public var hasMore: Bool
    public var bundleId: String?
    public var appAppleId: Int64?
    public var environment: Environment?
    public var transactions: [Signed<JWSTransactionDecodedPayload>]
}

struct HistoryResponse: Decodable {
    var revision: String?
    var hasMore: Bool?
    var bundleId: String?
    var appAppleId: Int64?
    var environment: Environment?
    var signedTransactions: [String]?
}

/// The filters of Get Transaction History v2.
public struct TransactionHistoryRequest: Sendable, Hashable {
    public enum Order: String, Sendable {
        case ascending = "ASCENDING"
        case descending = "DESCENDING"
    }
    public var startDate: Timestamp?
    public var endDate: Timestamp?
    public var productIds: [String] = []
    public var productTypes: [String] = []  // AUTO_RENEWABLE, NON_RENEWABLE, CONSUMABLE, NON_CONSUMABLE
    public var sort: Order?
    public var subscriptionGroupIdentifiers: [String] = []
    public var inAppOwnershipType: InAppOwnershipType?
    public var revoked: Bool?

    public init() {}

    var queryItems: [(String, String)] {
        var items: [(String, String)] = []
        if let startDate { items.append(("startDate", String(startDate.millisecondsSince1970))) }
        if let endDate { items.append(("endDate", String(endDate.millisecondsSince1970))) }
        items += productIds.map { ("productId", $0) }
        items += productTypes.map { ("productType", $0) }
        if let sort { items.append(("sort", sort.rawValue)) }
        items += subscriptionGroupIdentifiers.map { ("subscriptionGroupIdentifier", $0) }
        if let inAppOwnershipType { items.append(("inAppOwnershipType", inAppOwnershipType.rawValue)) }
        if let revoked { items.append(("revoked", revoked ? "true" : "false")) }
        return items
    }
}

struct TransactionInfoResponse: Decodable { var signedTransactionInfo: String }
struct AppTransactionInfoResponse: Decodable { var signedAppTransactionInfo: String }

/// Get All Subscription Statuses, verified.
public struct SubscriptionStatuses: Sendable, Hashable {
    public struct Item: Sendable, Hashable {
        public var status: SubscriptionStatus?
        public var originalTransactionId: String?
        public var transaction: Signed<JWSTransactionDecodedPayload>?
        public var renewalInfo: Signed<JWSRenewalInfoDecodedPayload>?
    }
    public struct Group: Sendable, Hashable {
        public var subscriptionGroupIdentifier: String?
        public var lastTransactions: [Item]
    }
    public var environment: Environment?
    public var bundleId: String?
    public var appAppleId: Int64?
    public var groups: [Group]
}

struct StatusResponse: Decodable {
    struct LastTransactionsItem: Decodable {
        var status: SubscriptionStatus?
        var originalTransactionId: String?
        var signedTransactionInfo: String?
        var signedRenewalInfo: String?
    }
    struct SubscriptionGroupIdentifierItem: Decodable {
        var subscriptionGroupIdentifier: String?
        var lastTransactions: [LastTransactionsItem]?
    }
    var environment: Environment?
    var bundleId: String?
    var appAppleId: Int64?
    var data: [SubscriptionGroupIdentifierItem]?
}

/// Get Refund History v2, one page, verified.
public struct RefundHistoryPage: Sendable, Hashable {
    public var revision: String?
    public var hasMore: Bool
    public var transactions: [Signed<JWSTransactionDecodedPayload>]
}

struct RefundHistoryResponse: Decodable {
    var signedTransactions: [String]?
    var revision: String?
    var hasMore: Bool?
}

/// Look Up Order ID, verified. `status` 0 is a valid order id, 1 an invalid one.
public struct OrderLookup: Sendable, Hashable {
    public var status: Int32
    public var isValid: Bool { status == 0 }
    public var transactions: [Signed<JWSTransactionDecodedPayload>]
}

struct OrderLookupResponse: Decodable {
    var status: Int32?
    var signedTransactions: [String]?
}

/// Extend a Subscription Renewal Date: the request.
public struct ExtendRenewalDateRequest: Encodable, Sendable, Hashable {
    public var extendByDays: Int32
    /// 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.
    public var extendReasonCode: Int32
    public var requestIdentifier: String

    public init(extendByDays: Int32, extendReasonCode: Int32, requestIdentifier: String) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
    }
}

/// Extend a Subscription Renewal Date: the answer.
public struct ExtendRenewalDateResponse: Decodable, Sendable, Hashable {
    public var originalTransactionId: String?
    public var webOrderLineItemId: String?
    public var success: Bool?
    public var effectiveDate: Timestamp?
}

/// Extend Subscription Renewal Dates for All Active Subscribers: the request.
public struct MassExtendRenewalDateRequest: Encodable, Sendable, Hashable {
    public var extendByDays: Int32
    public var extendReasonCode: Int32
    public var requestIdentifier: String
    public var storefrontCountryCodes: [String]?
    public var productId: String

    public init(
        extendByDays: Int32, extendReasonCode: Int32, requestIdentifier: String, storefrontCountryCodes: [String]? = nil, productId: String
    ) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
        self.storefrontCountryCodes = storefrontCountryCodes
        self.productId = productId
    }
}

public struct MassExtendRenewalDateResponse: Decodable, Sendable, Hashable {
    public var requestIdentifier: String?
}

/// Get Status of Subscription Renewal Date Extensions.
public struct MassExtendRenewalDateStatusResponse: Decodable, Sendable, Hashable {
    public var requestIdentifier: String?
    public var complete: Bool?
    public var completeDate: Timestamp?
    public var succeededCount: Int64?
    public var failedCount: Int64?
}

/// Send Consumption Information v2: what the app tells Apple about a consumable or subscription whose refund the
/// customer asked for.
public struct ConsumptionRequest: Encodable, Sendable, Hashable {
    public var customerConsented: Bool
    public var deliveryStatus: PurchaseDeliveryStatus
    public var sampleContentProvided: Bool
    /// Share consumed, in milli-percent (0 to 100000); never for an auto-renewable subscription.
    public var consumptionPercentage: Int32?
    public var refundPreference: RefundPreference?

    public init(
        customerConsented: Bool, deliveryStatus: PurchaseDeliveryStatus, sampleContentProvided: Bool,
        consumptionPercentage: Int32? = nil, refundPreference: RefundPreference? = nil
    ) {
        self.customerConsented = customerConsented
        self.deliveryStatus = deliveryStatus
        self.sampleContentProvided = sampleContentProvided
        self.consumptionPercentage = consumptionPercentage
        self.refundPreference = refundPreference
    }
}

struct SendTestNotificationResponse: Decodable { var testNotificationToken: String }

/// One attempt by Apple to deliver a notification.
public struct SendAttemptItem: Decodable, Sendable, Hashable {
    public var attemptDate: Timestamp?
    /// `SUCCESS`, `TIMED_OUT`, `TLS_ISSUE`, `CIRCULAR_REDIRECT`, `NO_RESPONSE`, `SOCKET_ISSUE`, … kept as sent.
    public var sendAttemptResult: String?
}

/// A notification Apple sent (or tried to), verified, with its delivery attempts.
public struct NotificationHistoryItem: Sendable, Hashable {
    public var notification: Signed<VerifiedNotification>?
    public var sendAttempts: [SendAttemptItem]
}

struct CheckTestNotificationResponse: Decodable {
    var signedPayload: String?
    var sendAttempts: [SendAttemptItem]?
}

/// Get Notification History: the request.
public struct NotificationHistoryRequest: Encodable, Sendable, Hashable {
    public var startDate: Timestamp
    public var endDate: Timestamp
    public var notificationType: NotificationType?
    public var notificationSubtype: NotificationSubtype?
    public var onlyFailures: Bool?
    public var transactionId: String?

    public init(
        startDate: Timestamp, endDate: Timestamp, notificationType: NotificationType? = nil,
        notificationSubtype: NotificationSubtype? = nil, onlyFailures: Bool? = nil, transactionId: String? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.onlyFailures = onlyFailures
        self.transactionId = transactionId
    }
}

/// Get Notification History, one page, verified.
public struct NotificationHistoryPage: Sendable, Hashable {
    public var paginationToken: String?
    public var hasMore: Bool
    public var items: [NotificationHistoryItem]
}

struct NotificationHistoryResponse: Decodable {
    struct Item: Decodable {
        var signedPayload: String?
        var sendAttempts: [SendAttemptItem]?
    }
    var paginationToken: String?
    var hasMore: Bool?
    var notificationHistory: [Item]?
}

struct UpdateAppAccountTokenRequest: Encodable { var appAccountToken: String }

struct ErrorPayload: Decodable {
    var errorCode: Int64?
    var errorMessage: String?
}
