import AppStore
import AsyncHTTPClient
import Foundation
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import SQLKit
import StorekeeperCore
import TestSupport
import Testing

@testable import Storage

/// The database failing under the server: PostgreSQL restarted (a crash restart) while notifications stream in, and an
/// SQLite file that turns read-only or full. While it lasts the webhook answers 503 (Apple retries) and never anything
/// else; `/health` says so; the server recovers by itself; and every notification answered 200 is stored, with every
/// customer's state what its purchase makes it.
@Suite("Database outages")
struct DatabaseOutageTests {
    /// A subscription bought by its own customer (named by the appAccountToken), as Apple notifies it.
    struct Delivery: Sendable {
        var uuid: String
        var customer: String
        var body: String
    }

    /// `purchase` and `expires` in epoch ms: the test clock's for in-process servers, the wall clock's for the executable.
    static func deliveries(_ count: Int, from first: Int, purchase: Int64 = at(0), expires: Int64 = at(30)) throws -> [Delivery] {
        try (0..<count).map { i in
            let uuid = UUID().uuidString.lowercased()
            let customer = UUID().uuidString.lowercased()
            let bought = Purchase(
                transactionId: "\(first + i)", originalTransactionId: "\(first + i)", purchase: purchase, expires: expires,
                signed: purchase, token: customer)
            let signed = try notification(.subscribed, .initialBuy, uuid: uuid, purchase: bought, signed: purchase)
            let body = String(decoding: try JSONSerialization.data(withJSONObject: ["signedPayload": signed]), as: UTF8.self)
            return Delivery(uuid: uuid, customer: customer, body: body)
        }
    }

    /// Posts one notification; its status, or nil when the connection failed.
    static func post(_ delivery: Delivery, port: Int, appId: String) async -> Int? {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/apps/\(appId)/notifications/appstore")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: delivery.body))
        guard let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(30)) else { return nil }
        _ = try? await response.body.collect(upTo: 1 << 20)
        return Int(response.status.code)
    }

    static func health(port: Int) async -> (status: Int, body: String)? {
        guard
            let response = try? await HTTPClient.shared.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(port)/health"), timeout: .seconds(15)),
            let body = try? await response.body.collect(upTo: 1 << 16)
        else { return nil }
        return (Int(response.status.code), String(buffer: body))
    }

    /// After the outage: every acknowledged notification is stored, and every customer is active with the product.
    static func checkNothingLost(_ h: Harness, acknowledged: [Delivery], port: Int) async throws {
        let stored = Set(try await h.core.database.reading { try await $0.notificationUUIDs(app: h.app.appId) })
        let missing = acknowledged.filter { !stored.contains($0.uuid) }
        #expect(missing.isEmpty, "acknowledged but not stored: \(missing.count)")
        try await checkStates(acknowledged, port: port, secretKey: h.app.secretKey)
    }

    /// Every customer's state is what its purchase makes it: active.
    static func checkStates(_ deliveries: [Delivery], port: Int, secretKey: String) async throws {
        for delivery in deliveries {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/customers/\(delivery.customer)")
            request.headers.add(name: "Authorization", value: "Bearer \(secretKey)")
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(15))
            let body = try await response.body.collect(upTo: 1 << 20)
            #expect(response.status.code == 200)
            let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
            #expect(object?["state"] as? String == "active", "\(delivery.customer): \(String(buffer: body))")
        }
    }

    // MARK: - PostgreSQL

    /// A second PostgreSQL cluster that this test alone crashes (`.ci/postgres.sh outage 5433 storekeeper_outage` makes
    /// it), so that the other database tests keep theirs.
    static var outageURL: String? { ProcessInfo.processInfo.environment["STOREKEEPER_TEST_POSTGRES_OUTAGE_URL"] }

    /// Restarts PostgreSQL the hard way, from inside: a backend kills itself with SIGKILL, and the postmaster, taking it
    /// for a crash, ends every connection and reinitializes with crash recovery; what clients see of
    /// `pg_ctl restart -m immediate`, without needing the server's pg_ctl and its rights on this machine.
    static func crashRestart(_ url: String) async throws {
        let admin = try await StorageDatabase.open(.postgres(url: url))
        // The statement fails by design: its own connection is the first one killed.
        _ = try? await admin.read { sql in
            try await sql.raw(
                "DO $$ BEGIN EXECUTE format('COPY (SELECT 1) TO PROGRAM %L', 'kill -9 ' || pg_backend_pid()); END $$"
            ).run()
        }
        await admin.close()
    }

    @Test(
        "PostgreSQL restarted under a stream of notifications: 503 while it is down, /health says so, the server reconnects, nothing acknowledged is lost",
        .enabled(if: outageURL != nil, "needs STOREKEEPER_TEST_POSTGRES_OUTAGE_URL (.ci/run sets it)"))
    func postgresRestart() async throws {
        let url = try #require(Self.outageURL)
        // The real executable on a database of its own (the cluster is this test's alone).
        let admin = try await StorageDatabase.open(.postgres(url: url))
        try await admin.transaction { sql in
            try await sql.raw("DROP SCHEMA public CASCADE").run()
            try await sql.raw("CREATE SCHEMA public").run()
        }
        await admin.close()
        let directory = try TestRun.scratch("outage")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let root = directory.appendingPathComponent("root.der").path
        try Data(testCA.rootDER).write(to: URL(fileURLWithPath: root))
        let bundleURL = Bundle.module.bundleURL
        #expect(try StorekeeperCLI.run(["migrate", "--database-url", url], near: bundleURL).status == 0)
        let created = try StorekeeperCLI.run(
            ["apps", "create", "--database-url", url, "--bundle-id", bundleId, "--environment", "sandbox", "--trusted-root", root],
            near: bundleURL)
        #expect(created.status == 0, "\(created.stderr)")
        let keys = try JSONDecoder().decode([String: String].self, from: Data(created.stdout.utf8))
        let appId = try #require(keys["appId"])
        let secretKey = try #require(keys["secretKey"])
        let server = try DurabilityTests.Server(database: url, near: bundleURL)
        defer { if server.process.isRunning { server.process.terminate() } }
        let port = try await server.port()

        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let deliveries = try Self.deliveries(240, from: 300_000, purchase: now - 86_400_000, expires: now + 30 * 86_400_000)
        let acknowledged = NIOLockedValueBox<[Delivery]>([])
        let statuses = NIOLockedValueBox<[Int: Int]>([:])
        let healthDuringOutage = NIOLockedValueBox<[String]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for index in stride(from: worker, to: deliveries.count, by: 4) {
                        // As Apple does: a 5xx (or no answer) is retried later, until it is a 200.
                        for _ in 0..<600 {
                            let status = await Self.post(deliveries[index], port: port, appId: appId)
                            statuses.withLockedValue { $0[status ?? 0, default: 0] += 1 }
                            if status == 200 {
                                acknowledged.withLockedValue { $0.append(deliveries[index]) }
                                break
                            }
                            try await Task.sleep(for: .milliseconds(100))
                        }
                    }
                }
            }
            group.addTask {
                // Mid-stream: the restart, with /health watched closely while the database comes back.
                while acknowledged.withLockedValue({ $0.count }) < 40 { try await Task.sleep(for: .milliseconds(5)) }
                // Watched until the kill has happened (the restart's own connection is the first one killed: it returns
                // then) and for up to 5 s after, or until /health has said 503 and then 200 again: a busy machine can
                // take longer to open the restart's connection than any fixed number of samples lasts.
                let killed = NIOLockedValueBox<ContinuousClock.Instant?>(nil)
                async let restart: Void = {
                    try await Self.crashRestart(url)
                    killed.withLockedValue { $0 = .now }
                }()
                var sawOutage = false
                while true {
                    if let health = await Self.health(port: port) {
                        healthDuringOutage.withLockedValue { $0.append("\(health.status) \(health.body)") }
                        if health.status == 503 { sawOutage = true }
                        if sawOutage && health.status == 200 { break }
                    }
                    if let at = killed.withLockedValue({ $0 }), ContinuousClock.now - at > .seconds(5) { break }
                    try await Task.sleep(for: .milliseconds(10))
                }
                try await restart
            }
            try await group.waitForAll()
        }
        // Back by itself, and everything was eventually acknowledged.
        #expect(await Self.health(port: port)?.status == 200)
        let counts = statuses.withLockedValue { $0 }
        #expect(Set(counts.keys).isSubset(of: [200, 503]), "answers around the restart (0: none): \(counts)")
        #expect((counts[503] ?? 0) > 0, "the restart was never seen by the webhook: \(counts)")
        #expect(acknowledged.withLockedValue { $0.count } == deliveries.count)
        let seen = healthDuringOutage.withLockedValue { $0 }
        #expect(seen.contains { $0.hasPrefix("503") && $0.contains("\"unavailable\"") }, "health around the restart: \(seen)")
        let database = try await StorageDatabase.open(.postgres(url: url))
        let stored = Set(try await database.reading { try await $0.notificationUUIDs(app: appId) })
        await database.close()
        let answered = acknowledged.withLockedValue { $0 }
        #expect(answered.allSatisfy { stored.contains($0.uuid) }, "acknowledged but not stored")
        try await Self.checkStates(answered, port: port, secretKey: secretKey)

        // And it still stops cleanly on SIGTERM (while this test reads its output).
        kill(server.process.processIdentifier, SIGTERM)
        server.process.waitUntilExit()
        #expect(server.process.terminationReason == .exit)
        #expect(server.process.terminationStatus == 0)
    }

    // MARK: - SQLite

    @Test("an SQLite file that turns read-only, then full: 503 for each write, nothing acknowledged lost, recovery once it is writable")
    func sqliteReadOnlyAndFull() async throws {
        let h = try await Harness.make(.sqlite)
        let before = try Self.deliveries(20, from: 400_000)
        let during = try Self.deliveries(10, from: 410_000)
        try await h.application().test(.live) { client in
            let port = try #require(client.port)
            for delivery in before { #expect(await Self.post(delivery, port: port, appId: h.app.appId) == 200) }

            // Read-only: every write is refused by SQLite; the webhook says 503, and reads still work.
            try await h.core.database.onSQLiteWriter("PRAGMA query_only = ON")
            for delivery in during { #expect(await Self.post(delivery, port: port, appId: h.app.appId) == 503) }
            #expect(await Self.health(port: port)?.status == 200)
            try await h.core.database.onSQLiteWriter("PRAGMA query_only = OFF")

            // Full: no page may be added (SQLITE_FULL, what a full disk gives).
            let row = try await h.core.database.read { try await $0.raw("PRAGMA page_count").first() }
            let count = try #require(try row?.decode(column: "page_count", as: Int.self))
            try await h.core.database.onSQLiteWriter("PRAGMA max_page_count = \(count)")
            for delivery in during { #expect(await Self.post(delivery, port: port, appId: h.app.appId) == 503) }

            // Nothing of the refused ones was half-stored.
            let stored = Set(try await h.core.database.reading { try await $0.notificationUUIDs(app: h.app.appId) })
            #expect(stored.isDisjoint(with: during.map(\.uuid)))

            // Room again: Apple's retries are applied.
            try await h.core.database.onSQLiteWriter("PRAGMA max_page_count = 1073741823")
            for delivery in during { #expect(await Self.post(delivery, port: port, appId: h.app.appId) == 200) }
            try await Self.checkNothingLost(h, acknowledged: before + during, port: port)
        }
    }
}
