import AppStore
import AppStoreSimulator
import AsyncHTTPClient
import Entitlements
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Storage
import StorekeeperCore
import TestSupport
import Testing

@testable import StorekeeperServer

extension TestDatabase: CustomTestStringConvertible {
    public var testDescription: String { rawValue }
}

/// Server time, set by the test.
final class TestClock: Sendable {
    private let ms = NIOLockedValueBox<Int64>(0)
    init(_ start: Int64) { ms.withLockedValue { $0 = start } }
    var now: Int64 { ms.withLockedValue { $0 } }
    func set(_ value: Int64) { ms.withLockedValue { $0 = value } }
    var date: Date { Date(timeIntervalSince1970: Double(now) / 1000) }
}

let bundleId = "com.example.storekeeper"

let testCatalog = TestCatalogs.pro

/// The simulator's CA signs everything the tests send, with Apple's chain shape and OIDs; the test app trusts its root.
let testCA: SimulatorCA = {
    do {
        return try SimulatorCA(
            name: "Storekeeper Test", validity: Date(timeIntervalSince1970: 1_700_000_000)...Date(timeIntervalSince1970: 2_100_000_000))
    } catch {
        preconditionFailure("the test CA builds: \(error)")
    }
}()

/// A second CA, trusted by nobody: its signatures are forgeries.
let forgerCA: SimulatorCA = {
    do {
        return try SimulatorCA(
            name: "Forger", validity: Date(timeIntervalSince1970: 1_700_000_000)...Date(timeIntervalSince1970: 2_100_000_000))
    } catch {
        preconditionFailure("the forger CA builds: \(error)")
    }
}()

/// One server core on a fresh database, with one app (and its keys) that trusts the test CA, and the application
/// built from it as production builds it (`buildApplication`).
struct Harness: Sendable {
    let core: StorekeeperCore
    let clock: TestClock
    let app: CreatedApp
    let database: TestDatabase

    static func make(
        _ database: TestDatabase, environments: [String] = ["Sandbox"], appAppleId: Int64? = nil,
        policy: AppConfiguration.TransferPolicy = .transfer, serverAPI: AppConfiguration.ServerAPICredentials? = nil,
        catalog: Catalog = testCatalog, allowPrivateWebhooks: Bool = true, newIdsPerMinute: Int = 1_000_000, logger: Logger? = nil
    ) async throws -> Harness {
        let clock = TestClock(at(0))
        let core = try await openCore(
            database.fresh(), clock: clock, allowPrivateWebhooks: allowPrivateWebhooks, newIdsPerMinute: newIdsPerMinute, logger: logger)
        let app = try await core.administration.create(
            config(
                environments: environments, appAppleId: appAppleId, policy: policy, serverAPI: serverAPI, catalog: catalog))
        return Harness(core: core, clock: clock, app: app, database: database)
    }

    /// A core on `location`, migrated, without reconciliation, on the test's clock; webhooks may go to the test's own
    /// receivers on loopback unless `allowPrivateWebhooks` is false.
    static func openCore(
        _ location: DatabaseLocation, clock: TestClock, httpClient: HTTPClient? = .shared, allowPrivateWebhooks: Bool = true,
        customAppleURLs: Bool = true, newIdsPerMinute: Int = 1_000_000, logger given: Logger? = nil
    ) async throws -> StorekeeperCore {
        var settings = CoreSettings()
        settings.ratesURL = nil  // no fetch from the ECB in tests: the rates are the tests' own
        settings.database = location
        settings.migrate = true
        settings.reconcileInterval = nil
        // The tests run the refund answers' worker themselves (`refundAnswers.pass()`), so that no background pass
        // takes a request between a test's steps.
        settings.refundAnswerInterval = nil
        settings.allowPrivateWebhooks = allowPrivateWebhooks
        // The tests' App Store Server API is the simulator's, on loopback.
        settings.allowCustomAppleURLs = customAppleURLs
        // In-process every request is one client ("unknown"), standing for a population of devices: the limit on
        // new ids per client is the production default only where a test says so.
        settings.newIdsPerMinute = newIdsPerMinute
        var logger = given ?? Logger(label: "test")
        if given == nil { logger.logLevel = .critical }
        return try await StorekeeperCore.open(settings, clock: { clock.date }, logger: logger, httpClient: httpClient)
    }

    static func config(
        environments: [String] = ["Sandbox"], appAppleId: Int64? = nil, policy: AppConfiguration.TransferPolicy = .transfer,
        serverAPI: AppConfiguration.ServerAPICredentials? = nil, bundle: String = bundleId, catalog: Catalog = testCatalog
    ) -> AppConfiguration {
        AppConfiguration(
            bundleId: bundle, appAppleId: appAppleId, environments: environments,
            trustedRoots: [Data(testCA.rootDER).base64EncodedString()], serverAPI: serverAPI,
            catalog: catalog, transferPolicy: policy)
    }

    func close() async { await core.database.close() }

    /// The application as `storekeeper serve` builds it, on a free port.
    func application(_ adjust: (inout ServerSettings) -> Void = { _ in }) -> some ApplicationProtocol {
        Self.application(core, adjust)
    }

    static func application(_ core: StorekeeperCore, _ adjust: (inout ServerSettings) -> Void = { _ in }) -> some ApplicationProtocol {
        var settings = ServerSettings()
        settings.port = 0
        settings.core = core.settings
        settings.operatorToken = testOperatorToken
        adjust(&settings)
        return buildApplication(core, settings: settings)
    }

    /// Runs `body` against the application's router; the application's shutdown closes the database.
    @discardableResult
    func test<Value: Sendable>(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Value) async throws -> Value {
        let value: Value
        do {
            // Every answer is checked against the OpenAPI document as it goes.
            value = try await application().test(.router) { client in try await body(ConformingClient(base: client)) }
        } catch {
            await close()
            throw error
        }
        await close()
        return value
    }
}

// MARK: - Signed data, as the App Store would send it

/// A purchase as the App Store signs it for the test app (Sandbox, the test bundle id).
struct Purchase {
    var transactionId: String
    var originalTransactionId: String
    var productId = "pro.monthly"
    var purchase: Int64
    var expires: Int64?
    var signed: Int64
    var token: String?
    var environment: AppStore.Environment = .sandbox
    var revocation: Int64?
    var type: ProductType = .autoRenewable
    var bundle = bundleId

    var payload: JWSTransactionDecodedPayload {
        Payloads.transaction(
            transactionId, original: originalTransactionId, product: productId, purchase: purchase, expires: expires,
            signed: signed, reason: transactionId == originalTransactionId ? .purchase : .renewal, revoked: revocation,
            revocationReason: .other, environment: environment, token: token, bundleId: bundle, type: type)
    }

    func signed(by ca: SimulatorCA = testCA) throws -> String { try ca.sign(payload) }
}

func renewalInfo(
    original: String, product: String = "pro.monthly", autoRenew: Bool = true, signed: Int64,
    environment: AppStore.Environment = .sandbox, token: String? = nil
) -> JWSRenewalInfoDecodedPayload {
    Payloads.renewal(original, product: product, signed: signed, autoRenew: autoRenew, environment: environment, token: token)
}

/// A signed App Store Server Notification V2 about a purchase.
func notification(
    _ type: NotificationType, _ subtype: NotificationSubtype? = nil, uuid: String = UUID().uuidString.lowercased(),
    purchase: Purchase?, renewal: JWSRenewalInfoDecodedPayload? = nil, signed: Int64, ca: SimulatorCA = testCA,
    environment: AppStore.Environment = .sandbox, bundle: String = bundleId, appAppleId: Int64? = nil
) throws -> String {
    var data = NotificationData()
    data.bundleId = bundle
    data.environment = environment
    data.appAppleId = appAppleId
    data.signedTransactionInfo = try purchase.map { try $0.signed(by: ca) }
    data.signedRenewalInfo = try renewal.map { try ca.sign($0) }
    var payload = ResponseBodyV2DecodedPayload()
    payload.notificationType = type
    payload.subtype = subtype
    payload.notificationUUID = uuid
    payload.version = "2.0"
    payload.signedDate = Timestamp(millisecondsSince1970: signed)
    payload.data = data
    return try ca.sign(payload)
}

// MARK: - HTTP

func body(_ object: [String: String]) -> ByteBuffer {
    ByteBuffer(data: (try? JSONSerialization.data(withJSONObject: object)) ?? Data())
}

/// The operator token every test application is built with.
let testOperatorToken: OperatorToken = {
    do { return try OperatorToken(testOperatorTokenText) } catch { preconditionFailure("the test operator token is valid: \(error)") }
}()
let testOperatorTokenText = "op-test-0123456789abcdef0123456789abcdef"

/// Headers that carry the operator token.
func operatorHeaders(contentType: String = "text/csv") -> HTTPFields {
    [.contentType: contentType, .authorization: "Bearer \(testOperatorTokenText)"]
}

func headers(_ key: String?) -> HTTPFields {
    var fields: HTTPFields = [.contentType: "application/json"]
    if let key { fields[.authorization] = "Bearer \(key)" }
    return fields
}

/// A response body decoded as the API's own type (or a test's mirror of it).
func decode<T: Decodable>(_ type: T.Type, _ response: TestResponse) throws -> T {
    do {
        return try JSONDecoder().decode(T.self, from: Data(response.body.readableBytesView))
    } catch {
        throw HarnessError("the body is not a \(T.self): \(error)\n\(String(buffer: response.body))")
    }
}

/// The customer API's body: the customer's state, with who, where and when in front.
struct CustomerBody: Decodable {
    var appUserId: String
    var environment: String
    var requestDate: Int64
    var customer: CustomerState

    enum Keys: String, CodingKey { case appUserId, environment, requestDate }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        appUserId = try container.decode(String.self, forKey: .appUserId)
        environment = try container.decode(String.self, forKey: .environment)
        requestDate = try container.decode(Int64.self, forKey: .requestDate)
        customer = try CustomerState(from: decoder)
    }

    var state: CustomerStatus { customer.state }
    /// An entitlement's access.
    subscript(entitlement name: String) -> AccessState? { customer.entitlements[name] }
}

/// The API's error body.
struct ErrorBody: Decodable {
    struct Detail: Decodable {
        var code: String
        var message: String
        var field: String?
        var permanent: Bool?
    }
    var error: Detail
}

func customer(_ response: TestResponse) throws -> CustomerBody { try decode(CustomerBody.self, response) }

func errorCode(_ response: TestResponse) throws -> String? {
    try decode(ErrorBody.self, response).error.code
}

extension TestClientProtocol {
    /// The app's audit log's actions, through the admin API.
    func auditActions(_ h: Harness) async throws -> [String] {
        let response = try await execute(uri: "/v1/apps/\(h.app.appId)/audit", method: .get, headers: headers(h.app.secretKey))
        return try decode(AppAdminController.AuditLog.self, response).audit.map(\.action)
    }

    @discardableResult
    func postNotification(_ app: String, _ signedPayload: String) async throws -> TestResponse {
        try await execute(
            uri: "/v1/apps/\(app)/notifications/appstore", method: .post, headers: headers(nil),
            body: body(["signedPayload": signedPayload]))
    }

    func customer(_ appUserId: String, key: String, query: String = "") async throws -> TestResponse {
        try await execute(uri: "/v1/customers/\(appUserId)\(query)", method: .get, headers: headers(key))
    }
}
