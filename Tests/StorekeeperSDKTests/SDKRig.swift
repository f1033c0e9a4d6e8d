import AppStore
import AppStoreSimulator
import Entitlements
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Storage
import StorekeeperCore
import StorekeeperSDK
import StorekeeperSDKTesting
import StorekeeperServer
import Synchronization
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Server time, set by the test (the simulator's clock).
final class ServerClock: Sendable {
    private let ms: Mutex<Int64>
    init(_ start: Int64) { ms = Mutex(start) }
    var now: Int64 { ms.withLock { $0 } }
    func set(_ value: Int64) { ms.withLock { $0 = value } }
    var date: Date { Date(timeIntervalSince1970: Double(now) / 1000) }
}

let sdkBundleId = "com.example.sdk"
/// The app's Apple id: Production data must carry it.
let sdkAppAppleId: Int64 = 6_450_000_001
let sdkCatalog = SimulatedApp.defaultCatalog
/// 2026-01-05T00:00:00Z.
let sdkStart: Int64 = 1_767_571_200_000

let sdkCA: SimulatorCA = {
    do {
        return try SimulatorCA(
            name: "Storekeeper SDK Test", validity: Date(timeIntervalSince1970: 1_700_000_000)...Date(timeIntervalSince1970: 2_100_000_000))
    } catch {
        preconditionFailure("the test CA builds: \(error)")
    }
}()

/// A transport that the test can take down: the server unreachable, answering 503 for a number of requests, or answering
/// customer reads with what this SDK cannot read.
final class FaultyTransport: HTTPTransport {
    enum Mode: Sendable {
        case pass
        case down
        /// 503 for this many requests, then through again.
        case unavailable(Int)
        /// Customer reads (`GET /v1/customers/…`) answered as a newer server would: the customer's `state` is a value
        /// this SDK does not know.
        case newerServerReads
    }

    private let mode = Mutex<Mode>(.pass)
    private let posts = Mutex<[String]>([])
    private let rewritten = Mutex(0)
    let base = URLSessionTransport()

    func set(_ mode: Mode) { self.mode.withLock { $0 = mode } }

    /// The paths of the POST requests that reached the server.
    var postedPaths: [String] { posts.withLock { $0 } }

    /// How many answers `newerServerReads` rewrote.
    var rewrittenAnswers: Int { rewritten.withLock { $0 } }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        let fault = mode.withLock { mode -> Int? in
            switch mode {
            case .pass, .newerServerReads: return nil
            case .down: return -1
            case .unavailable(let remaining):
                mode = remaining <= 1 ? .pass : .unavailable(remaining - 1)
                return 503
            }
        }
        if fault == -1 { throw URLError(.cannotConnectToHost) }
        if let status = fault, let url = request.url,
            let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: nil, headerFields: [:])
        {
            return (Data(#"{"error":{"code":"unavailable","message":"down for the test","permanent":false}}"#.utf8), response)
        }
        if request.httpMethod == "POST", let path = request.url?.path { posts.withLock { $0.append(path) } }
        let (data, response) = try await base.send(request)
        guard case .newerServerReads = mode.withLock({ $0 }), request.httpMethod == "GET",
            request.url?.path.hasPrefix("/v1/customers/") == true, response.statusCode == 200
        else { return (data, response) }
        let text = String(decoding: data, as: UTF8.self)
        let newer = text.replacingOccurrences(of: #""state":"active""#, with: #""state":"paused""#)
        if newer != text { rewritten.withLock { $0 += 1 } }
        return (Data(newer.utf8), response)
    }
}

/// A Storekeeper server on a fresh SQLite database (or `database`), listening on a free port, with one app that trusts
/// the simulator's CA; and a simulated App Store for that app.
struct SDKRig: Sendable {
    let core: StorekeeperCore
    let clock: ServerClock
    let app: CreatedApp
    let baseURL: URL
    let directory: URL

    /// What outlives one server: its database, the app on it, the clock and the devices' storage.
    struct Setup: Sendable {
        let location: DatabaseLocation
        let app: CreatedApp
        let clock: ServerClock
        let directory: URL
    }

    static func run(
        policy: AppConfiguration.TransferPolicy = .transfer, database: TestDatabase = .sqlite, environments: [String] = ["Sandbox"],
        _ body: @Sendable (SDKRig) async throws -> Void
    ) async throws {
        let setup = try await setUp(policy: policy, database: database, environments: environments)
        defer { try? FileManager.default.removeItem(at: setup.directory) }
        try await serve(setup, body)
    }

    /// A fresh database with the app on it (made by a server that is then stopped).
    static func setUp(policy: AppConfiguration.TransferPolicy, database: TestDatabase, environments: [String]) async throws -> Setup {
        let clock = ServerClock(sdkStart)
        let location = try await database.fresh()
        let core = try await open(location, clock: clock)
        let app: CreatedApp
        do {
            app = try await core.administration.create(
                AppConfiguration(
                    bundleId: sdkBundleId, appAppleId: sdkAppAppleId, environments: environments,
                    trustedRoots: [Data(sdkCA.rootDER).base64EncodedString()],
                    catalog: sdkCatalog, transferPolicy: policy))
        } catch {
            await core.database.close()
            throw error
        }
        await core.database.close()
        return Setup(location: location, app: app, clock: clock, directory: try TestRun.scratch("sdk"))
    }

    private static func open(_ location: DatabaseLocation, clock: ServerClock) async throws -> StorekeeperCore {
        var settings = CoreSettings()
        settings.ratesURL = nil  // no fetch from the ECB in tests: the rates are the tests' own
        settings.database = location
        settings.migrate = true
        settings.reconcileInterval = nil
        // The rig's one client stands for a population of devices, each new to the server.
        settings.newIdsPerMinute = 1_000_000
        var logger = Logger(label: "sdk-test")
        logger.logLevel = .critical
        return try await StorekeeperCore.open(settings, clock: { clock.date }, logger: logger, httpClient: nil)
    }

    /// A server on the setup's database, on a new port, for as long as `body` runs: called again, a restart.
    static func serve(_ setup: Setup, _ body: @Sendable (SDKRig) async throws -> Void) async throws {
        let core = try await open(setup.location, clock: setup.clock)
        var serverSettings = ServerSettings()
        serverSettings.port = 0
        serverSettings.core = core.settings
        do {
            try await buildApplication(core, settings: serverSettings).test(.live) { client in
                guard let port = client.port, let url = URL(string: "http://127.0.0.1:\(port)") else {
                    throw HarnessError("the live test server has no port")
                }
                try await body(SDKRig(core: core, clock: setup.clock, app: setup.app, baseURL: url, directory: setup.directory))
            }
        } catch {
            await core.database.close()
            throw error
        }
        await core.database.close()
    }

    /// A simulated App Store for the app, its clock at the server's.
    func store(
        customer: String = "device-owner", originalApplicationVersion: String? = nil, environment: AppStore.Environment = .sandbox,
        runId: UInt64 = 7
    ) throws -> SimulatedStoreClient {
        let model = StoreModel(
            app: SimulatedApp(bundleId: sdkBundleId, appAppleId: sdkAppAppleId, environment: environment, catalog: sdkCatalog), ca: sdkCA,
            time: .calendar,
            runId: runId, start: clock.now)
        return try SimulatedStoreClient(
            model: model, customer: customer, applicationVersion: "2.0", originalApplicationVersion: originalApplicationVersion)
    }

    /// The SDK's configuration for one device (its own storage directory).
    func configuration(device: String = "phone", appUserId: String? = nil, transport: (any HTTPTransport)? = nil)
        -> Storekeeper.Configuration
    {
        var configuration = Storekeeper.Configuration(apiKey: app.publicKey, baseURL: baseURL, appUserId: appUserId)
        configuration.storage = FileStorage(directory: directory.appendingPathComponent(device))
        // Each simulated device keeps its own identity (on macOS the default would be the one Keychain).
        configuration.identityStorage = configuration.storage
        configuration.transport = transport
        configuration.retryDelay = .milliseconds(50)
        configuration.maxRetryDelay = .milliseconds(400)
        return configuration
    }

    /// Delivers the App Store's notifications to the server, as Apple would.
    func deliver(_ notifications: [SimulatedNotification]) async throws {
        for notification in notifications {
            let (status, _) = try await request(
                "POST", "/v1/apps/\(app.appId)/notifications/appstore", key: nil, body: ["signedPayload": notification.signedPayload])
            guard status == 200 else { throw HarnessError("the server answered \(status) to \(notification.label)") }
        }
    }

    /// A request to the server with the app's secret key (or none), answered as (status, JSON).
    @discardableResult
    func request(_ method: String, _ path: String, key: String? = "secret", body: Any? = nil) async throws -> (Int, Any?) {
        guard let url = URL(string: baseURL.absoluteString + path) else { throw HarnessError("bad path \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        if key != nil { request.setValue("Bearer \(app.secretKey)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        return (status, data.isEmpty ? nil : try? JSONSerialization.jsonObject(with: data))
    }

    /// The customer's state as the server answers the secret key.
    func serverState(of appUserId: String) async throws -> [String: Any] {
        let encoded = appUserId.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? appUserId
        let (status, json) = try await request("GET", "/v1/customers/\(encoded)")
        guard status == 200, let object = json as? [String: Any] else { throw HarnessError("GET customer answered \(status)") }
        return object
    }

    /// The customer's subscription events on the server.
    func events(of appUserId: String) async throws -> [[String: Any]] {
        let encoded = appUserId.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? appUserId
        let (status, json) = try await request("GET", "/v1/customers/\(encoded)/events")
        guard status == 200, let events = (json as? [String: Any])?["events"] as? [[String: Any]] else {
            throw HarnessError("GET events answered \(status)")
        }
        return events
    }
}

/// Waits (polling) until `condition` holds, for at most `seconds`.
func eventually(_ seconds: Double = 10, _ condition: @Sendable () async throws -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}
