import AppStore
import AppStoreSimulator
import Entitlements
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Storage
import StorekeeperServer
import Testing

/// The databases every database test runs on: SQLite always, PostgreSQL when `STOREKEEPER_TEST_POSTGRES_URL` is set
/// (`.ci/run` sets it). Each test gets its own SQLite file or its own PostgreSQL schema.
enum TestDatabase: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres

    static var postgresURL: String? { ProcessInfo.processInfo.environment["STOREKEEPER_TEST_POSTGRES_URL"] }

    static var available: [TestDatabase] { postgresURL == nil ? [.sqlite] : [.sqlite, .postgres] }

    var testDescription: String { rawValue }

    /// A new, empty database location.
    func fresh() async throws -> DatabaseLocation {
        switch self {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storekeeper-tests-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return .sqlite(path: directory.appendingPathComponent("test.sqlite").path)
        case .postgres:
            guard let url = Self.postgresURL else { throw HarnessError("STOREKEEPER_TEST_POSTGRES_URL is not set") }
            let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
            let admin = try await StorageDatabase.open(.postgres(url: url))
            try await admin.transaction { try await $0.raw("CREATE SCHEMA \(unsafeRaw: String(schema))").run() }
            await admin.close()
            return .postgres(url: url, schema: String(schema))
        }
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Server time, set by the test.
final class TestClock: Sendable {
    private let ms = NIOLockedValueBox<Int64>(0)
    init(_ start: Int64) { ms.withLockedValue { $0 = start } }
    var now: Int64 { ms.withLockedValue { $0 } }
    func set(_ value: Int64) { ms.withLockedValue { $0 = value } }
    var date: Date { Date(timeIntervalSince1970: Double(now) / 1000) }
}

let day: Int64 = 86_400_000
/// 2026-01-01T00:00:00Z.
let t0: Int64 = 1_767_225_600_000
func at(_ days: Double) -> Int64 { t0 + Int64(days * Double(day)) }

let bundleId = "com.example.storekeeper"

let testCatalog: Catalog = {
    do {
        return try Catalog(products: [
            CatalogProduct(id: "pro.monthly", type: .autoRenewable, group: "pro", period: try ISO8601Duration("P1M"),
                           entitlements: ["pro"], level: 2),
            CatalogProduct(id: "pro.yearly", type: .autoRenewable, group: "pro", period: try ISO8601Duration("P1Y"),
                           entitlements: ["pro"], level: 1),
            CatalogProduct(id: "lifetime", type: .nonConsumable, entitlements: ["pro"]),
        ])
    } catch {
        preconditionFailure("the test catalog is valid: \(error)")
    }
}()

/// The simulator's CA signs everything the tests send, with Apple's chain shape and OIDs; the test app trusts its root.
let testCA: SimulatorCA = {
    do {
        return try SimulatorCA(name: "Storekeeper Test", validity: Date(timeIntervalSince1970: 1_700_000_000)...Date(timeIntervalSince1970: 2_100_000_000))
    } catch {
        preconditionFailure("the test CA builds: \(error)")
    }
}()

/// A second CA, trusted by nobody: its signatures are forgeries.
let forgerCA: SimulatorCA = {
    do {
        return try SimulatorCA(name: "Forger", validity: Date(timeIntervalSince1970: 1_700_000_000)...Date(timeIntervalSince1970: 2_100_000_000))
    } catch {
        preconditionFailure("the forger CA builds: \(error)")
    }
}()

/// One server core on a fresh database, with one app (and its keys) that trusts the test CA.
struct Harness: Sendable {
    let core: StorekeeperCore
    let clock: TestClock
    let app: StorekeeperCore.CreatedApp
    let database: TestDatabase

    static func make(
        _ database: TestDatabase, environments: [String] = ["Sandbox"], appAppleId: Int64? = nil,
        policy: AppConfiguration.TransferPolicy = .transfer, serverAPI: AppConfiguration.ServerAPICredentials? = nil,
        catalog: Catalog = testCatalog
    ) async throws -> Harness {
        let clock = TestClock(at(0))
        var settings = ServerSettings()
        settings.database = try await database.fresh()
        settings.migrate = true
        settings.reconcileInterval = nil
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let core = try await StorekeeperCore.open(settings, clock: { clock.date }, logger: logger)
        let app = try await core.createApp(config(
            environments: environments, appAppleId: appAppleId, policy: policy, serverAPI: serverAPI, catalog: catalog))
        return Harness(core: core, clock: clock, app: app, database: database)
    }

    static func config(
        environments: [String] = ["Sandbox"], appAppleId: Int64? = nil, policy: AppConfiguration.TransferPolicy = .transfer,
        serverAPI: AppConfiguration.ServerAPICredentials? = nil, bundle: String = bundleId, catalog: Catalog = testCatalog
    ) -> AppConfiguration {
        AppConfiguration(bundleId: bundle, appAppleId: appAppleId, environments: environments,
                         trustedRoots: [Data(testCA.rootDER).base64EncodedString()], serverAPI: serverAPI,
                         catalog: catalog, transferPolicy: policy)
    }

    func close() async { await core.database.close() }

    /// Runs `body` against the router, then closes the database.
    @discardableResult
    func test<Value: Sendable>(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Value) async throws -> Value {
        let application = Application(router: core.router())
        let value: Value
        do {
            value = try await application.test(.router) { client in try await body(client) }
        } catch {
            await close()
            throw error
        }
        await close()
        return value
    }
}

// MARK: - Signed data, as the App Store would send it

struct Purchase {
    var transactionId: String
    var originalTransactionId: String
    var productId = "pro.monthly"
    var purchase: Int64
    var expires: Int64?
    var signed: Int64
    var token: String?
    var environment: AppStore.Environment = .sandbox
    var offerType: OfferType?
    var revocation: Int64?
    var type: ProductType = .autoRenewable
    var bundle = bundleId

    var payload: JWSTransactionDecodedPayload {
        var t = JWSTransactionDecodedPayload()
        t.transactionId = transactionId
        t.originalTransactionId = originalTransactionId
        t.productId = productId
        t.bundleId = bundle
        t.purchaseDate = Timestamp(millisecondsSince1970: purchase)
        t.originalPurchaseDate = Timestamp(millisecondsSince1970: purchase)
        t.expiresDate = expires.map { Timestamp(millisecondsSince1970: $0) }
        t.signedDate = Timestamp(millisecondsSince1970: signed)
        t.type = type
        t.inAppOwnershipType = .purchased
        t.environment = environment
        t.appAccountToken = token
        t.offerType = offerType
        t.price = 9990
        t.currency = "USD"
        t.storefront = "USA"
        t.transactionReason = transactionId == originalTransactionId ? .purchase : .renewal
        if let revocation {
            t.revocationDate = Timestamp(millisecondsSince1970: revocation)
            t.revocationReason = .other
        }
        return t
    }

    func signed(by ca: SimulatorCA = testCA) throws -> String { try ca.sign(payload) }
}

func renewalInfo(original: String, product: String = "pro.monthly", autoRenew: Bool = true, signed: Int64,
                 environment: AppStore.Environment = .sandbox, token: String? = nil) -> JWSRenewalInfoDecodedPayload {
    var r = JWSRenewalInfoDecodedPayload()
    r.originalTransactionId = original
    r.productId = product
    r.autoRenewProductId = product
    r.autoRenewStatus = autoRenew ? .on : .off
    r.signedDate = Timestamp(millisecondsSince1970: signed)
    r.environment = environment
    r.appAccountToken = token
    return r
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

func headers(_ key: String?) -> HTTPFields {
    var fields: HTTPFields = [.contentType: "application/json"]
    if let key { fields[.authorization] = "Bearer \(key)" }
    return fields
}

func json(_ response: TestResponse) throws -> [String: Any] {
    guard let object = try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? [String: Any] else {
        throw HarnessError("the body is not a JSON object: \(String(buffer: response.body))")
    }
    return object
}

func errorCode(_ response: TestResponse) throws -> String? {
    (try json(response)["error"] as? [String: Any])?["code"] as? String
}

extension TestClientProtocol {
    @discardableResult
    func postNotification(_ app: String, _ signedPayload: String) async throws -> TestResponse {
        try await execute(uri: "/v1/apps/\(app)/notifications/appstore", method: .post, headers: headers(nil),
                          body: body(["signedPayload": signedPayload]))
    }

    func customer(_ appUserId: String, key: String, query: String = "") async throws -> TestResponse {
        try await execute(uri: "/v1/customers/\(appUserId)\(query)", method: .get, headers: headers(key))
    }
}

/// The parts of a customer body that are its state (without requestDate, which is the server's clock), as JSON with
/// sorted keys: equal states give equal strings.
func stateOnly(_ response: TestResponse, key: String? = nil) throws -> String {
    var object: Any = try json(response)
    if var dictionary = object as? [String: Any] {
        dictionary["requestDate"] = nil
        object = key.flatMap { dictionary[$0] } ?? dictionary
    }
    return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
}
