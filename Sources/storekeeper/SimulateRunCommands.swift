import Analytics
import AppStore
import AppStoreSimulator
import AppStoreSimulatorAPI
import ArgumentParser
import AsyncHTTPClient
import Entitlements
import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import StorekeeperCore
import Synchronization

/// What `simulate run` and `simulate population` share: the simulated app, the clock, delivery and its faults,
/// the fake Server API, and checking a server against the ground truth.
struct SimulationOptions: ParsableArguments {
    @Option(help: "The server's webhook: http://host:port/v1/apps/<appId>/notifications/appstore.") var webhook: String
    @Option(help: "virtual (stepped, ending now) or sandbox (wall-clock time, Apple's sandbox period table).") var clock: String = "virtual"
    @Option(help: "Seeds ids and faults: the same seed repeats a run.") var seed: UInt64 = 1
    @Option(name: .customLong("bundle-id"), help: "The simulated app's bundle id.") var bundleId: String
    @Option(name: .customLong("app-apple-id"), help: "The simulated app's Apple id (needed for production).") var appAppleId: Int64?
    @Option(help: "sandbox (default), production, xcode or localtesting.") var environment: String = "sandbox"
    @Option(help: "A product catalog in the Entitlements format (default: the simulator's own).") var catalog: String?
    @Option(name: .customLong("grace-period-days"), help: "The app's billing grace period (0: none).") var gracePeriodDays: Int = 16
    @Option(help: "The state folder holding the CA (default: ./.storekeeper-simulator).") var state: String?
    @Option(help: "Share of notifications delivered twice (0 to 1).") var duplicate: Double = 0
    @Option(help: "Share delivered after the next one.") var reorder: Double = 0
    @Option(help: "Share never delivered (left in Notification History as failures).") var drop: Double = 0
    @Option(help: "Share delivered one step later.") var delay: Double = 0
    @Flag(name: .customLong("no-renewal-limit"), help: "Sandbox clock: renew more than Apple's 12 times.") var noRenewalLimit = false
    @Option(
        name: .customLong("api-port"), help: "Serve the fake App Store Server API on this port during the run (and after it, until Ctrl-C)."
    )
    var apiPort: Int?
    @Option(name: .customLong("verify-with"), help: "An API key of the app (pk_… or sk_…): read every simulated customer back and compare.")
    var verifyWith: String?
    @Option(help: "The server's base URL for --verify-with (default: the webhook's).") var server: String?
    @Option(
        name: .customLong("export-ids"),
        help: "Write every customer's app user id and purchases' transaction ids here (CSV: app_user_id,transaction_id).")
    var exportIds: String?
    @Option(
        name: .customLong("export-format"),
        help:
            "--export-ids as plain (app_user_id,transaction_id), revenuecat (its Scheduled Data Export) or apphud (its Customers API answers, JSON lines)."
    )
    var exportFormat: String = "plain"
    @Option(
        name: .customLong("verify-after"),
        help: "With --verify-with: compare only once this file exists (a script imports the exported customers, then creates it).")
    var verifyAfter: String?

    func validate() throws {
        guard ["virtual", "sandbox"].contains(clock) else { throw ValidationError("--clock is virtual or sandbox") }
        guard (0...60).contains(gracePeriodDays) else { throw ValidationError("--grace-period-days is 0 (none) to 60") }
        for (name, value) in [("duplicate", duplicate), ("reorder", reorder), ("drop", drop), ("delay", delay)]
        where !(0...1).contains(value) {
            throw ValidationError("--\(name) is a share from 0 to 1")
        }
        guard URL(string: webhook)?.host != nil else { throw ValidationError("--webhook must be an http(s) URL") }
        guard CustomerIdsFormat(rawValue: exportFormat) != nil else {
            throw ValidationError("--export-format is plain, revenuecat or apphud")
        }
        if verifyAfter != nil, verifyWith == nil { throw ValidationError("--verify-after waits to compare: give --verify-with too") }
    }

    func app() throws -> SimulatedApp {
        let env: AppStore.Environment
        switch environment.lowercased() {
        case "sandbox": env = .sandbox
        case "production": env = .production
        case "xcode": env = .xcode
        case "localtesting": env = .localTesting
        default: throw ValidationError("unknown environment '\(environment)'")
        }
        if env == .production, appAppleId == nil { throw ValidationError("production needs --app-apple-id") }
        var parsed = SimulatedApp.defaultCatalog
        if let catalog {
            guard let data = FileManager.default.contents(atPath: catalog) else { throw ValidationError("cannot read \(catalog)") }
            do { parsed = try CatalogFile.parse(data, path: catalog) } catch { throw ValidationError(error.message) }
        }
        return SimulatedApp(
            bundleId: bundleId, appAppleId: appAppleId, environment: env, catalog: parsed,
            gracePeriodDays: gracePeriodDays > 0 ? gracePeriodDays : nil)
    }

    func ca() throws -> SimulatorCA {
        let directory = state.map { URL(fileURLWithPath: $0) } ?? SimulatorCA.defaultStateDirectory
        do { return try SimulatorCA.loadOrCreate(in: directory) } catch { throw ValidationError(error.message) }
    }

    var periodTime: PeriodTime { clock == "sandbox" ? .sandbox(SandboxTime(renewalLimit: noRenewalLimit ? nil : 12)) : .calendar }
    var faults: FaultPlan { FaultPlan(duplicate: duplicate, reorder: reorder, drop: drop, delay: delay) }

    var serverBase: String {
        if let server { return server.hasSuffix("/") ? String(server.dropLast()) : server }
        guard let url = URL(string: webhook), let scheme = url.scheme, let host = url.host else { return webhook }
        return "\(scheme)://\(host)\(url.port.map { ":\($0)" } ?? "")"
    }
}

/// Plays a scenario against a server, optionally serving the fake Server API, and checks the result.
struct SimulationSession {
    let options: SimulationOptions
    let app: SimulatedApp
    let player: ScenarioPlayer
    let store: SimulatedStore
    /// When the run began, on the store's clock.
    let start: Int64
    /// What the app's metrics were before the run (other runs' customers), with a secret key to read them.
    let baseline = NIOLockedValueBox<MetricsBaseline?>(nil)

    static var wallClock: Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    init(options: SimulationOptions, scenarioName: String, span: Double, gracePeriodDays: Int?, rate: Double?, lanes: Int = 1) throws {
        self.options = options
        var app = try options.app()
        if let gracePeriodDays { app.gracePeriodDays = gracePeriodDays == 0 ? nil : gracePeriodDays }
        self.app = app
        var hasher = StableHash()
        hasher.add(scenarioName)
        let runId = (options.seed &* 1_000_003) ^ hasher.value
        let time = options.periodTime
        let dayMs = Double(time == .calendar ? 86_400_000 : 10_000)
        // On the virtual clock the run ends now, so that the server, on the wall clock, sees the final state.
        let start = options.clock == "virtual" ? Self.wallClock - Int64(span * dayMs) : Self.wallClock
        let ca = try options.ca()
        let validFrom = Int64(ca.leaf.notValidBefore.timeIntervalSince1970 * 1000)
        guard start >= validFrom else {
            throw ValidationError(
                "the simulator's CA is valid from \(ca.leaf.notValidBefore), after this run's start: move the state folder away to make a new CA (and trust its new root)"
            )
        }
        self.start = start
        store = SimulatedStore(StoreModel(app: app, ca: ca, time: time, runId: runId, start: start))
        let reported = Mutex(Set<String>())
        var send = Webhook.http(options.webhook) { reason in
            // Each reason once (a wrong app id refuses every notification alike), as soon as it happens.
            guard reported.withLock({ $0.insert(reason).inserted }) else { return }
            FileHandle.standardError.write(Data("delivery failed: \(reason) (Apple retries; so does the simulator)\n".utf8))
        }
        if let rate, rate > 0 {
            let pacer = SlotPacer(perSecond: rate)
            let inner = send
            send = { notification in
                await pacer.wait()
                return await inner(notification)
            }
        }
        player = ScenarioPlayer(
            store: store, delivery: Delivery(send: send, faults: options.faults, time: time, seed: options.seed, lanes: lanes),
            start: start,
            clock: options.clock == "sandbox" ? .sandbox : .virtual)
    }

    /// Runs `body` with the fake Server API listening when --api-port is given, then keeps serving until Ctrl-C (with
    /// --verify-after, the comparison ends it).
    func withAPI(_ body: () async throws -> Int32) async throws -> Int32 {
        try await captureBaseline()
        guard let port = options.apiPort else { return try await body() }
        let api = FakeServerAPI(store: store, bundleId: app.bundleId, webhook: Webhook.http(options.webhook))
        let application = Application(router: api.router(), configuration: .init(address: .hostname("127.0.0.1", port: port)))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await application.runService() }
            print("fake App Store Server API on http://127.0.0.1:\(port) (the app's serverAPI.baseURL)")
            let code = try await body()
            if options.verifyAfter != nil {
                // The import it served is over and compared.
                group.cancelAll()
                return code
            }
            print("the run is over; the fake Server API keeps serving until Ctrl-C")
            try await group.next()
            return code
        }
    }

    /// Brings the store to the wall clock (on the virtual clock: renewals up to now) and sends what waits.
    func finish() async throws {
        try await player.advance(to: max(Self.wallClock, await store.with { $0.now }))
        await player.drain()
    }

    /// A few customers to look up (`GET /v1/customers/<app user id>`), and every one in `--export-ids`.
    func reportCustomers() async throws {
        let customers = await store.with { $0.customerIds() }
        let shown = customers.prefix(3).map { "\($0.name) = \($0.appUserId)" }.joined(separator: ", ")
        if !shown.isEmpty { print("customers to look up (GET /v1/customers/<app user id>): \(shown)") }
        guard let path = options.exportIds else { return }
        let format = CustomerIdsFormat(rawValue: options.exportFormat) ?? .plain
        let text = await store.with { $0.customerIds(as: format) }
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else { throw ValidationError("cannot write \(path)") }
        print("wrote \(customers.count) customers' ids to \(path) (\(format.rawValue))")
    }

    /// Notifications that never reached the server although no drop was asked for: a failed run.
    var undelivered: Int {
        options.drop > 0 ? 0 : player.delivery.stats.failed
    }

    /// The exit status: non-zero when notifications were lost or the server disagrees with the ground truth.
    func outcome() async throws -> Int32 {
        if undelivered > 0 {
            print("error: \(undelivered) notifications never reached \(options.webhook) after Apple's retries (the reasons are above)")
            return 1
        }
        if let path = options.verifyAfter {
            // Unbuffered: a script waits for this line.
            FileHandle.standardOutput.write(Data("waiting for \(path) before comparing (import the customers, then create it)\n".utf8))
            while !FileManager.default.fileExists(atPath: path) { try await Task.sleep(for: .milliseconds(250)) }
        }
        let customers = try await verify()
        let metrics = try await verifyMetrics()
        return customers == 0 && metrics == 0 ? 0 : 1
    }

    /// With a secret key: the server's overview (actives, trials, MRR) and the run's net revenue against what the
    /// simulator's own bookkeeping expects. The server needs the simulator's rates (`storekeeper simulate rates`).
    /// Returns the number of mismatches.
    func verifyMetrics() async throws -> Int {
        guard let key = options.verifyWith, key.hasPrefix("sk_") else { return 0 }
        let parts = URL(string: options.webhook)?.pathComponents ?? []
        guard let appsIndex = parts.firstIndex(of: "apps"), appsIndex + 1 < parts.count else {
            print("metrics: the webhook URL names no app, not compared")
            return 1
        }
        let appId = parts[appsIndex + 1]
        try await player.advance(to: Self.wallClock)
        // This run's customers, added to what the app had before it: the run knows only its own.
        let before = baseline.withLockedValue { $0 } ?? MetricsBaseline()
        var expected = await store.with { $0.expectedMetrics() }
        expected.activeSubscriptions += before.activeSubscriptions
        expected.activeTrials += before.activeTrials
        expected.mrr += before.mrr
        expected.netRevenue += before.netRevenue
        print(
            before.isEmpty
                ? "metrics: the app had no customers before this run; compared with this run's ground truth"
                : String(
                    format:
                        "metrics: compared with this run's ground truth added to what the app had before it (active %d, trials %d, MRR %.2f USD, net revenue %.2f USD)",
                    before.activeSubscriptions, before.activeTrials, before.mrr, before.netRevenue))
        let environment = app.environment.rawValue
        let overview = try JSONDecoder().decode(
            MetricsOverview.self, from: try await get("/v1/apps/\(appId)/metrics/overview?environment=\(environment)", key: key))
        var mismatches: [String] = []
        if !overview.unconverted.isEmpty {
            mismatches.append(
                "the server has no rate for \(Set(overview.unconverted.values.flatMap { $0.keys }).sorted()): load the simulator's (storekeeper simulate rates > rates.csv; storekeeper rates import rates.csv)"
            )
        }
        if overview.activeSubscriptions != expected.activeSubscriptions {
            mismatches.append("active subscriptions: server \(overview.activeSubscriptions), simulator \(expected.activeSubscriptions)")
        }
        if overview.activeTrials != expected.activeTrials {
            mismatches.append("active trials: server \(overview.activeTrials), simulator \(expected.activeTrials)")
        }
        if abs(overview.mrr - expected.mrr) >= 0.01 + 0.0005 * Double(expected.activeSubscriptions) {
            mismatches.append(String(format: "MRR: server %.2f, simulator %.2f", overview.mrr, expected.mrr))
        }
        let revenue = try await revenuePoints(appId: appId, key: key)
        let net = revenue.points.reduce(0) { $0 + $1.net }
        if abs(net - expected.netRevenue) >= 0.01 * Double(revenue.points.count) + 0.01 {
            mismatches.append(String(format: "net revenue: server %.2f, simulator %.2f", net, expected.netRevenue))
        }
        for mismatch in mismatches { print("metrics mismatch: \(mismatch)") }
        print(
            String(
                format: "verified metrics against %@: %d mismatches (active %d, trials %d, MRR %.2f USD, net revenue %.2f USD)",
                options.serverBase, mismatches.count, overview.activeSubscriptions, overview.activeTrials, overview.mrr, net))
        return mismatches.count
    }

    /// The app's monthly net revenue over the run's span (and the days around it).
    func revenuePoints(appId: String, key: String) async throws -> RevenuePoints {
        let from = CalendarDay(containing: start - 86_400_000).description
        let to = CalendarDay(containing: Self.wallClock + 2 * 86_400_000).description
        return try JSONDecoder().decode(
            RevenuePoints.self,
            from: try await get(
                "/v1/apps/\(appId)/metrics/revenue?environment=\(app.environment.rawValue)&interval=month&from=\(from)&to=\(to)", key: key))
    }

    /// With a secret key: the app's metrics before the run, so that a run against an app that already has customers
    /// (an earlier scenario's) compares only what it adds.
    func captureBaseline() async throws {
        guard let key = options.verifyWith, key.hasPrefix("sk_") else { return }
        let parts = URL(string: options.webhook)?.pathComponents ?? []
        guard let appsIndex = parts.firstIndex(of: "apps"), appsIndex + 1 < parts.count else { return }
        let appId = parts[appsIndex + 1]
        let overview = try JSONDecoder().decode(
            MetricsOverview.self,
            from: try await get("/v1/apps/\(appId)/metrics/overview?environment=\(app.environment.rawValue)", key: key))
        let net = try await revenuePoints(appId: appId, key: key).points.reduce(0) { $0 + $1.net }
        let captured = MetricsBaseline(
            activeSubscriptions: overview.activeSubscriptions, activeTrials: overview.activeTrials, mrr: overview.mrr, netRevenue: net)
        baseline.withLockedValue { $0 = captured }
    }

    struct RevenuePoints: Decodable {
        struct Point: Decodable { var net: Double }
        var points: [Point]
    }

    /// GET a path that must answer 200.
    func get(_ path: String, key: String) async throws -> Data {
        let (status, body) = try await fetch(path, key: key)
        guard status == 200 else { throw UsageError(message: "GET \(path): HTTP \(status): \(String(decoding: body, as: UTF8.self))") }
        return body
    }

    /// Reads every simulated customer from the server and compares; prints and returns the mismatches.
    func verify() async throws -> Int {
        guard let key = options.verifyWith else { return 0 }
        let model = await store.with { $0 }
        let names = model.customerNames
        var mismatches = 0
        var checked = 0
        var skipped = 0
        for name in names {
            guard let appUserId = model.appUserId(of: name) else { continue }
            if appUserId.hasPrefix("$"), !key.hasPrefix("sk_") {
                skipped += 1
                continue
            }
            var difference = try await compare(name, appUserId: appUserId, key: key)
            if difference != nil {
                // The server read at a later instant than the store's: let the store catch up, then read again.
                try await player.advance(to: Self.wallClock)
                difference = try await compare(name, appUserId: appUserId, key: key)
            }
            checked += 1
            if let difference {
                mismatches += 1
                if mismatches <= 10 { print("mismatch: \(name) (\(appUserId)):\n\(difference)") }
            }
        }
        print(
            "verified \(checked) customers against \(options.serverBase): \(mismatches) mismatches"
                + (skipped > 0 ? " (\(skipped) customers named by the server need a secret key, skipped)" : ""))
        return mismatches
    }

    func compare(_ name: String, appUserId: String, key: String) async throws -> String? {
        let truth = await store.with { $0.truth(of: name) }
        guard let truth else { return "the simulator does not know \(name)" }
        // In the environment it simulated: an app that takes Production and Sandbox answers for both unless asked.
        let (status, body) = try await fetch(TruthCheck.customerPath(appUserId) + "?environment=\(app.environment.rawValue)", key: key)
        guard status == 200 else { return "HTTP \(status): \(String(decoding: body, as: UTF8.self))" }
        return TruthCheck.compare(customerBody: body, truth: truth, catalog: app.catalog)
    }

    /// GET a path of the server with an API key: the status and the body.
    func fetch(_ path: String, key: String) async throws -> (status: UInt, body: Data) {
        try await Self.send("GET", options.serverBase + path, key: key)
    }

    /// A request to the server with an API key (and a JSON body): the status and the body.
    static func send(_ method: String, _ url: String, key: String, json: Data? = nil) async throws -> (status: UInt, body: Data) {
        var request = HTTPClientRequest(url: url)
        request.method = .RAW(value: method)
        request.headers.add(name: "Authorization", value: "Bearer \(key)")
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: json))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 8 << 20)
        return (response.status.code, Data(body.readableBytesView))
    }
}

extension SimulateCommand {
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Play a scenario (a file, or a library scenario's name) against a server's webhook; print what was sent and what the server should show."
        )

        @Argument(help: "A scenario file (JSON), or the name of a library scenario (`simulate scenarios` lists them).") var scenario: String
        @OptionGroup var options: SimulationOptions

        func run() async throws {
            let loaded: Scenario
            if FileManager.default.fileExists(atPath: scenario) {
                guard let data = FileManager.default.contents(atPath: scenario) else { throw ValidationError("cannot read \(scenario)") }
                do { loaded = try Scenario.decode(data, source: scenario) } catch { throw ValidationError("\(error)") }
            } else {
                do { loaded = try ScenarioLibrary.named(scenario) } catch { throw ValidationError("\(error)") }
            }
            let session = try SimulationSession(
                options: options, scenarioName: loaded.name, span: loaded.span,
                gracePeriodDays: loaded.gracePeriodDays, rate: nil)
            let code = try await session.withAPI {
                print("scenario \(loaded.name)\(loaded.description.map { ": " + $0 } ?? "")")
                for step in loaded.steps {
                    let sent: [SimulatedNotification]
                    do { sent = try await session.player.play(step) } catch let error as StoreError {
                        throw ValidationError("day \(step.day), \(step.action.rawValue): \(error.message)")
                    }
                    let what = [step.action.rawValue, step.customer, step.product].compactMap { $0 }.joined(separator: " ")
                    print(
                        "day \(step.day): \(what)"
                            + (sent.isEmpty ? "" : " → " + sent.map { "\($0.label) [\($0.customer ?? "-")]" }.joined(separator: ", ")))
                }
                try await session.finish()
                let model = await session.store.with { $0 }
                print("delivery: \(session.player.delivery.stats)")
                try await session.reportCustomers()
                print("expected:")
                for name in model.customerNames {
                    guard let truth = model.truth(of: name) else { continue }
                    print("\(name) (\(model.appUserId(of: name) ?? "-")): \(truth)")
                    print("  events: \(model.events(of: name).map(\.type.rawValue).joined(separator: ", "))")
                }
                return try await session.outcome()
            }
            if code != 0 { throw ExitCode(code) }
        }
    }

    struct PopulationCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "population",
            abstract: "Generate realistic customer lifecycles and stream them to a server's webhook, for load; print the ground truth.")

        @Option(help: "How many customers.") var customers: Int = 1000
        @Option(help: "Over how many days.") var days: Int = 365
        @Option(help: "At most this many notifications per second.") var rate: Double?
        @Option(
            help:
                "Send on this many connections at once, each customer's notifications on one of them in order (Apple sends an app's notifications in parallel)."
        ) var concurrency: Int = 1
        @OptionGroup var options: SimulationOptions
        @OptionGroup var split: SplitTestOptions

        func validate() throws {
            guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency is 1 to 256") }
            if concurrency > 1, split.experiment != nil {
                throw ValidationError("--concurrency works without --experiment: the split test reads each customer back as it goes")
            }
            guard (1...10_000_000).contains(customers) else { throw ValidationError("--customers is 1 to 10000000") }
            guard (1...Int(Scenario.maxDay)).contains(days) else { throw ValidationError("--days is 1 to \(Int(Scenario.maxDay))") }
            if let rate, !(0.01...1_000_000).contains(rate) { throw ValidationError("--rate is 0.01 to 1000000 notifications per second") }
            if split.experiment != nil, options.clock != "sandbox" {
                throw ValidationError(
                    "--experiment needs --clock sandbox: the server stamps exposures with its own time, so the simulated customers must live on the wall clock (a virtual run happens in the past)"
                )
            }
        }

        func run() async throws {
            let scenario = Population(customers: customers, days: days, seed: options.seed).scenario(
                catalog: try options.app().catalog)
            let session = try SimulationSession(
                options: options, scenarioName: scenario.name, span: Double(days), gracePeriodDays: nil, rate: rate, lanes: concurrency)
            if let experiment = try split.experiment(seed: options.seed) {
                let code = try await session.withAPI {
                    // The split test's comparison, then the usual one (customers, metrics) with --verify-with.
                    let results = try await split.run(experiment, scenario: scenario, session: session)
                    let customers = try await session.outcome()
                    return results != 0 ? results : customers
                }
                if code != 0 { throw ExitCode(code) }
                return
            }
            let code = try await session.withAPI {
                let started = ContinuousClock.now
                var lastPrint = ContinuousClock.now
                for (index, step) in scenario.steps.enumerated() {
                    try await session.player.play(step, lenient: true)
                    if ContinuousClock.now - lastPrint > .milliseconds(500) || index == scenario.steps.count - 1 {
                        lastPrint = ContinuousClock.now
                        let done = Double(index + 1) / Double(scenario.steps.count)
                        let bar = String(repeating: "#", count: Int(done * 30)) + String(repeating: " ", count: 30 - Int(done * 30))
                        let seconds = Self.seconds(ContinuousClock.now - started)
                        let sent = session.player.sent
                        FileHandle.standardError.write(
                            Data(
                                String(
                                    format: "\r[%@] %3.0f%%  day %d  %d notifications  %.0f/s ", bar, done * 100, Int(step.day), sent,
                                    Double(sent) / max(seconds, 0.001)
                                ).utf8))
                    }
                }
                try await session.finish()
                let seconds = Self.seconds(ContinuousClock.now - started)
                FileHandle.standardError.write(Data("\n".utf8))
                let summary = await session.store.with { $0.summary() }
                print("ground truth: \(summary)")
                print("delivery: \(session.player.delivery.stats)")
                try await session.reportCustomers()
                print(
                    String(
                        format: "end to end: %d notifications in %.1f s, %.0f notifications/s (%d steps skipped as impossible by then)",
                        session.player.sent, seconds, Double(session.player.sent) / max(seconds, 0.001), session.player.skipped.count))
                return try await session.outcome()
            }
            if code != 0 { throw ExitCode(code) }
        }

        static func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }
    }

    struct Scenarios: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the scenario library, or export it as JSON files.")

        @Option(help: "Write each scenario to this folder.") var export: String?

        func run() async throws {
            let library: [Scenario]
            do { library = try ScenarioLibrary.all() } catch { throw ValidationError("\(error)") }
            if let export {
                try FileManager.default.createDirectory(atPath: export, withIntermediateDirectories: true)
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                for scenario in library {
                    let path = (export as NSString).appendingPathComponent(scenario.name + ".json")
                    guard FileManager.default.createFile(atPath: path, contents: try encoder.encode(scenario)) else {
                        throw ValidationError("cannot write \(path)")
                    }
                }
                print("wrote \(library.count) scenarios to \(export)")
                return
            }
            for scenario in library { print("\(scenario.name): \(scenario.description ?? "")") }
        }
    }
}

extension SimulateCommand {
    struct CatalogCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "catalog",
            abstract: "Print the simulator's default product catalog (the Entitlements format), for `apps create --catalog`.")

        func run() async throws {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(SimulatedApp.defaultCatalog), as: UTF8.self))
        }
    }
}

/// An app's metrics before a simulated run.
struct MetricsBaseline: Sendable {
    var activeSubscriptions = 0
    var activeTrials = 0
    var mrr = 0.0
    var netRevenue = 0.0

    var isEmpty: Bool { activeSubscriptions == 0 && activeTrials == 0 && abs(mrr) < 0.005 && abs(netRevenue) < 0.005 }
}
