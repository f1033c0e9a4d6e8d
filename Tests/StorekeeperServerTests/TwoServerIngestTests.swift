import AsyncHTTPClient
import Foundation
import NIOCore
import SQLKit
import Storage
import TestSupport
import Testing

/// Two `storekeeper serve` processes on one PostgreSQL database, each sent every notification (as Apple's retries and
/// a load balancer can), in opposite orders and at once: the database must end as one server's run that got each
/// notification once, in order — every customer's state and the ledger equal, every event of that run in the stream,
/// none twice — with every notification stored once.
@Suite("Two server processes on one PostgreSQL")
struct TwoServerIngestTests {
    /// One customer's notifications, in Apple's order: a purchase, two renewals, auto-renew turned off; every third
    /// customer's second renewal refunded.
    static func notifications(customer index: Int, start: Int64) throws -> (token: String, bodies: [String]) {
        let token = UUID().uuidString.lowercased()
        let original = "\(80_000 + index * 10)"
        let month: Int64 = 30 * day
        func purchase(_ number: Int64, revoked: Int64? = nil) -> Purchase {
            let id = number == 0 ? original : "\(80_000 + index * 10 + Int(number))"
            return Purchase(
                transactionId: id, originalTransactionId: original, purchase: start + number * month,
                expires: start + (number + 1) * month, signed: start + number * month, token: token, revocation: revoked)
        }
        var signed = [
            try notification(.subscribed, .initialBuy, purchase: purchase(0), signed: start),
            try notification(
                .didRenew, purchase: purchase(1), renewal: renewalInfo(original: original, signed: start + month, token: token),
                signed: start + month),
            try notification(
                .didRenew, purchase: purchase(2), renewal: renewalInfo(original: original, signed: start + 2 * month, token: token),
                signed: start + 2 * month),
            try notification(
                .didChangeRenewalStatus, .autoRenewDisabled, purchase: purchase(2),
                renewal: renewalInfo(original: original, autoRenew: false, signed: start + 2 * month + day, token: token),
                signed: start + 2 * month + day),
        ]
        if index % 3 == 0 {
            signed.append(
                try notification(.refund, purchase: purchase(2, revoked: start + 2 * month + 2 * day), signed: start + 2 * month + 2 * day))
        }
        return (
            token, try signed.map { String(decoding: try JSONSerialization.data(withJSONObject: ["signedPayload": $0]), as: UTF8.self) }
        )
    }

    /// Posts `bodies` to the server at `port`, `lanes` at a time, each lane in the given order; answers the statuses.
    static func post(_ bodies: [String], to port: Int, appId: String, lanes: Int) async throws -> [UInt] {
        try await withThrowingTaskGroup(of: [UInt].self) { group in
            for lane in 0..<lanes {
                group.addTask {
                    var statuses: [UInt] = []
                    for index in stride(from: lane, to: bodies.count, by: lanes) {
                        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/apps/\(appId)/notifications/appstore")
                        request.method = .POST
                        request.headers.add(name: "Content-Type", value: "application/json")
                        request.body = .bytes(ByteBuffer(string: bodies[index]))
                        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                        _ = try await response.body.collect(upTo: 1 << 20)
                        statuses.append(response.status.code)
                    }
                    return statuses
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }

    /// What a server shows of a customer, without what differs by when or where it was asked: the state's JSON (less
    /// `requestDate` and the app's id) and the event stream (type, transactions, instant and product of each event).
    struct Shown: Equatable {
        var state: String
        var events: [String]
    }

    static func shown(_ token: String, port: Int, app: [String: String]) async throws -> Shown {
        func get(_ path: String, key: String) async throws -> [String: Any] {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
            request.headers.add(name: "Authorization", value: "Bearer \(key)")
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 1 << 22)
            #expect(response.status.code == 200, "\(path): \(String(buffer: body))")
            return try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])
        }
        var state = try await get("/v1/customers/\(token)", key: try #require(app["publicKey"]))
        state["requestDate"] = nil
        state["appId"] = nil
        let page = try await get("/v1/customers/\(token)/events?limit=100", key: try #require(app["secretKey"]))
        let events = (page["events"] as? [[String: Any]] ?? []).map { event in
            ["type", "originalTransactionId", "transactionId", "effectiveAt", "productId"].map { "\(event[$0] ?? "-")" }
                .joined(separator: " ")
        }
        return Shown(
            state: String(decoding: try JSONSerialization.data(withJSONObject: state, options: [.sortedKeys]), as: UTF8.self),
            events: events)
    }

    /// The ledger's rows, less the customer ids each database made up.
    static func ledger(_ location: DatabaseLocation) async throws -> [String] {
        let database = try await StorageDatabase.open(location)
        let lines = try await database.reading { session in
            try await session.sql.raw(
                """
                SELECT transaction_id || '|' || kind || '|' || CAST(start_at AS TEXT) || '|' || COALESCE(CAST(end_at AS TEXT), '-')
                || '|' || COALESCE(CAST(price AS TEXT), '-') || '|' || COALESCE(currency, '-') AS line
                FROM ledger ORDER BY line
                """
            ).all(decodingColumn: "line", as: String.self)
        }
        await database.close()
        return lines
    }

    /// A migrated PostgreSQL database of its own (the command line takes a URL, not a test schema), with one app.
    static func postgresApp() async throws -> (url: String, app: [String: String]) {
        let base = try #require(TestDatabase.postgresURL)
        let name = "sk_two_servers_\(UUID().uuidString.prefix(8).lowercased())"
        let admin = try await StorageDatabase.open(.postgres(url: base))
        try await admin.reading { try await $0.sql.raw("CREATE DATABASE \(unsafeRaw: name)").run() }
        await admin.close()
        var components = try #require(URLComponents(string: base))
        components.path = "/" + name
        let url = try #require(components.string)
        let migrated = try StorekeeperCLI.run(["migrate", "--database-url", url], near: Bundle.module.bundleURL)
        #expect(migrated.status == 0, "\(migrated.stderr)")
        let directory = try TestRun.scratch("two-servers")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return (url, try DurabilityTests.createApp(in: url, scratch: directory))
    }

    @Test(
        "every notification sent to both servers in opposite orders: states and ledger equal one server's run, no event twice",
        .enabled(if: TestDatabase.available.contains(.postgres)))
    func sameNotificationsToBoth() async throws {
        let start = Int64(Date().timeIntervalSince1970 * 1000) - 75 * day
        let customers = try (0..<24).map { try Self.notifications(customer: $0, start: start) }
        let inOrder = customers.flatMap(\.bodies)
        // Across customers as Apple interleaves them; each customer's own in order (one lane per customer's turn).
        let interleaved = (0..<5).flatMap { step in customers.compactMap { step < $0.bodies.count ? $0.bodies[step] : nil } }

        // The reference: one server, each notification once, in order.
        let (referenceFile, referenceApp) = try DurabilityTests.appOnNewDatabase("two-servers-reference")
        let reference = try DurabilityTests.Server(database: referenceFile, near: Bundle.module.bundleURL)
        defer { reference.process.terminate() }
        let referencePort = try await reference.port()
        #expect(Set(try await Self.post(interleaved, to: referencePort, appId: try #require(referenceApp["appId"]), lanes: 1)) == [200])

        // Two servers on one PostgreSQL database, each sent everything: one in order, the other in reverse, four at a
        // time each, both at once.
        let (url, app) = try await Self.postgresApp()
        let appId = try #require(app["appId"])
        let first = try DurabilityTests.Server(database: url, near: Bundle.module.bundleURL)
        defer { first.process.terminate() }
        let second = try DurabilityTests.Server(database: url, near: Bundle.module.bundleURL)
        defer { second.process.terminate() }
        let ports = [try await first.port(), try await second.port()]
        async let one = Self.post(inOrder, to: ports[0], appId: appId, lanes: 4)
        async let other = Self.post(inOrder.reversed(), to: ports[1], appId: appId, lanes: 4)
        let statuses = try await one + other
        #expect(statuses.count == 2 * inOrder.count)
        #expect(Set(statuses) == [200], "\(statuses.filter { $0 != 200 })")

        for customer in customers {
            let expected = try await Self.shown(customer.token, port: referencePort, app: referenceApp)
            for port in ports {
                let shown = try await Self.shown(customer.token, port: port, app: app)
                #expect(shown.state == expected.state, "customer \(customer.token) on port \(port)")
                // Every event of the in-order run, none twice. Not equal: delivered out of order, a renewal that
                // came before its purchase was announced as a start too, which stays in the stream once the purchase
                // arrives (noted on issue 47).
                #expect(
                    Set(expected.events).isSubset(of: shown.events),
                    "customer \(customer.token) on port \(port): missing \(Set(expected.events).subtracting(shown.events))")
                #expect(Set(shown.events).count == shown.events.count, "customer \(customer.token): an event twice: \(shown.events)")
            }
        }
        let ledger = try await Self.ledger(.postgres(url: url))
        #expect(ledger == (try await Self.ledger(.sqlite(path: referenceFile))))
        #expect(ledger.count >= customers.count * 3)
        let notifications = try await StorageDatabase.open(.postgres(url: url))
        let stored = try await notifications.reading { try await $0.notificationUUIDs(app: appId) }
        await notifications.close()
        #expect(stored.count == inOrder.count)
        #expect(Set(stored).count == inOrder.count)

        for server in [first, second] {
            server.process.terminate()
            server.process.waitUntilExit()
        }
        let admin = try await StorageDatabase.open(.postgres(url: try #require(TestDatabase.postgresURL)))
        let name = try #require(URLComponents(string: url)?.path.dropFirst())
        try await admin.reading { try await $0.sql.raw("DROP DATABASE IF EXISTS \(unsafeRaw: String(name)) WITH (FORCE)").run() }
        await admin.close()
    }
}
