import AppStore
import AsyncHTTPClient
import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import Storage
import TestSupport
import Testing

/// The real executable, as users run it: killed with SIGKILL in the middle of a stream of notifications, restarted,
/// and stopped with SIGTERM.
@Suite("Durability")
struct DurabilityTests {
    final class Server: Sendable {
        let process: ChildProcess
        let output = NIOLockedValueBox("")

        init(database: String, near bundle: URL, extraArguments: [String] = [], environment: [String: String] = [:]) throws {
            process = try ChildProcess(
                try StorekeeperCLI.binary(near: bundle).path,
                arguments: ["serve", "--database-url", database, "--port", "0", "--reconcile-interval", "0", "--log-level", "error"]
                    + extraArguments,
                environment: environment.isEmpty ? nil : ProcessInfo.processInfo.environment.merging(environment) { _, given in given },
                stdout: .pipe)
            let output = self.output
            process.onOutput(0) { data in output.withLockedValue { $0 += String(decoding: data, as: UTF8.self) } }
        }

        /// The port, once the server says it listens.
        func port() async throws -> Int {
            for _ in 0..<300 {
                let text = output.withLockedValue { $0 }
                if let range = text.range(of: "listening on http://127.0.0.1:") {
                    let digits = text[range.upperBound...].prefix { $0.isNumber }
                    if let port = Int(digits) { return port }
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            throw HarnessError("the server did not start: \(output.withLockedValue { $0 })")
        }
    }

    /// A new SQLite file in a directory of its own with one app (Sandbox, trusting the test CA), created with the
    /// command line as users do: the file's path and the app's `appId`, `publicKey` and `secretKey`.
    static func appOnNewDatabase(_ name: String) throws -> (database: String, app: [String: String]) {
        let directory = try TestRun.scratch(name)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let database = directory.appendingPathComponent("db.sqlite").path
        return (database, try createApp(in: database, scratch: directory))
    }

    /// One app (Sandbox, trusting the test CA) created with the command line in the database `url` names (migrated
    /// already, or a SQLite file), its root written to `scratch`: the app's `appId`, `publicKey` and `secretKey`.
    static func createApp(in url: String, scratch directory: URL) throws -> [String: String] {
        let root = directory.appendingPathComponent("root.der").path
        try Data(testCA.rootDER).write(to: URL(fileURLWithPath: root))
        let created = try StorekeeperCLI.run(
            ["apps", "create", "--database-url", url, "--bundle-id", bundleId, "--environment", "sandbox", "--trusted-root", root],
            near: Bundle.module.bundleURL)
        #expect(created.status == 0, "\(created.stderr)")
        return try JSONDecoder().decode([String: String].self, from: Data(created.stdout.utf8))
    }

    @Test("every notification answered 200 before a kill -9 is in the database after it; SIGTERM stops cleanly")
    func killNine() async throws {
        let (database, app) = try Self.appOnNewDatabase("durability")
        let appId = try #require(app["appId"])

        // 400 notifications, each about its own subscription.
        let payloads = try (0..<400).map { i -> (uuid: String, body: String) in
            let uuid = UUID().uuidString.lowercased()
            let purchase = Purchase(
                transactionId: "\(90_000 + i)", originalTransactionId: "\(90_000 + i)", purchase: at(0),
                expires: at(30), signed: at(0), token: UUID().uuidString.lowercased())
            let signed = try notification(.subscribed, .initialBuy, uuid: uuid, purchase: purchase, signed: at(0))
            let body = String(decoding: try JSONSerialization.data(withJSONObject: ["signedPayload": signed]), as: UTF8.self)
            return (uuid, body)
        }

        let server = try Server(database: database, near: Bundle.module.bundleURL)
        let port = try await server.port()
        let acknowledged = NIOLockedValueBox<[String]>([])
        let client = HTTPClient.shared
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for index in stride(from: worker, to: payloads.count, by: 4) {
                        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/apps/\(appId)/notifications/appstore")
                        request.method = .POST
                        request.headers.add(name: "Content-Type", value: "application/json")
                        request.body = .bytes(ByteBuffer(string: payloads[index].body))
                        guard let response = try? await client.execute(request, timeout: .seconds(10)) else { return }
                        if response.status.code == 200 { acknowledged.withLockedValue { $0.append(payloads[index].uuid) } }
                        _ = try? await response.body.collect(upTo: 1 << 20)
                    }
                }
            }
            group.addTask {
                // Kill it mid-stream, without warning.
                while acknowledged.withLockedValue({ $0.count }) < 60 { try await Task.sleep(for: .milliseconds(5)) }
                kill(server.process.processIdentifier, SIGKILL)
            }
            try await group.waitForAll()
        }
        server.process.waitUntilExit()
        #expect(server.process.terminationReason == .uncaughtSignal)
        let answered = acknowledged.withLockedValue { $0 }
        #expect(answered.count >= 60)
        #expect(answered.count < payloads.count, "the kill came too late to test anything")

        // Restarted on the same file: every acknowledged notification is there.
        let restarted = try Server(database: database, near: Bundle.module.bundleURL)
        _ = try await restarted.port()
        let db = try await StorageDatabase.open(.sqlite(path: database))
        let stored = Set(try await db.reading { try await $0.notificationUUIDs(app: appId) })
        await db.close()
        #expect(Set(answered).isSubset(of: stored), "lost: \(Set(answered).subtracting(stored).count)")

        // SIGTERM: a graceful stop, exit status 0.
        kill(restarted.process.processIdentifier, SIGTERM)
        restarted.process.waitUntilExit()
        #expect(restarted.process.terminationReason == .exit)
        #expect(restarted.process.terminationStatus == 0)
    }
}

/// Refund requests across a kill -9: every `CONSUMPTION_REQUEST` answered 200 before the kill gets its answer sent to
/// Apple by the restarted server.
@Suite("Durability: refund requests")
struct RefundDurabilityTests {
    @Test("every refund request acknowledged before a kill -9 is answered at Apple after the restart")
    func killNine() async throws {
        let (database, app) = try DurabilityTests.appOnNewDatabase("refund-durability")
        let appId = try #require(app["appId"])
        let secret = try #require(app["secretKey"])
        let publicKey = try #require(app["publicKey"])
        let answered = NIOLockedValueBox<Set<String>>([])
        let router = Router()
        router.put("/inApps/v2/transactions/consumption/:transactionId") { _, context in
            let id = try context.parameters.require("transactionId")
            answered.withLockedValue { _ = $0.insert(id) }
            return Response(status: .accepted)
        }
        try await ReceiptAndReconciliationTests.withFakeAppleAPI(router) { credentials in
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let customers = (0..<200).map { i in (token: UUID().uuidString.lowercased(), transactionId: "\(70_000 + i)") }
            // The fake Apple API is on loopback: allowed for this server only.
            let server = try DurabilityTests.Server(
                database: database, near: Bundle.module.bundleURL,
                environment: ["STOREKEEPER_ALLOW_CUSTOM_APPLE_URLS": "true", "STOREKEEPER_ALLOW_PRIVATE_WEBHOOKS": "true"])
            let port = try await server.port()
            let base = "http://127.0.0.1:\(port)"
            func send(_ method: HTTPMethod, _ path: String, key: String?, _ object: Any) async throws -> UInt {
                var request = HTTPClientRequest(url: base + path)
                request.method = method
                request.headers.add(name: "Content-Type", value: "application/json")
                if let key { request.headers.add(name: "Authorization", value: "Bearer \(key)") }
                request.body = .bytes(ByteBuffer(data: try JSONSerialization.data(withJSONObject: object)))
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
                _ = try await response.body.collect(upTo: 1 << 20)
                return response.status.code
            }
            let serverAPI: [String: Any] = [
                "issuerId": credentials.issuerId, "keyId": credentials.keyId, "privateKey": credentials.privateKey,
                "baseURL": credentials.baseURL ?? "",
            ]
            #expect(try await send(.PATCH, "/v1/apps/\(appId)", key: secret, ["serverAPI": serverAPI]) == 200)
            #expect(try await send(.PUT, "/v1/apps/\(appId)/refund-policy", key: secret, ["defaultPreference": "DECLINE"]) == 200)
            for customer in customers {
                #expect(
                    try await send(.POST, "/v1/customers/\(customer.token)/consumption", key: publicKey, ["customerConsented": true]) == 200
                )
            }
            let payloads = try customers.map { customer -> (transactionId: String, body: [String: String]) in
                let purchase = Purchase(
                    transactionId: customer.transactionId, originalTransactionId: customer.transactionId, purchase: now - 86_400_000,
                    expires: now + 29 * 86_400_000, signed: now, token: customer.token)
                return (customer.transactionId, ["signedPayload": try notification(.consumptionRequest, purchase: purchase, signed: now)])
            }
            let acknowledged = NIOLockedValueBox<[String]>([])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        for index in stride(from: worker, to: payloads.count, by: 4) {
                            let path = "/v1/apps/\(appId)/notifications/appstore"
                            guard let status = try? await send(.POST, path, key: nil, payloads[index].body) else { return }
                            if status == 200 { acknowledged.withLockedValue { $0.append(payloads[index].transactionId) } }
                        }
                    }
                }
                group.addTask {
                    while acknowledged.withLockedValue({ $0.count }) < 40 { try await Task.sleep(for: .milliseconds(5)) }
                    kill(server.process.processIdentifier, SIGKILL)
                }
                try await group.waitForAll()
            }
            server.process.waitUntilExit()
            let owed = Set(acknowledged.withLockedValue { $0 })
            #expect(owed.count >= 40)
            #expect(owed.count < payloads.count, "the kill came too late to test anything")

            // Restarted on the same file: the worker sends every acknowledged request's answer (those the killed one
            // had taken, once their one-minute lease ends).
            let restarted = try DurabilityTests.Server(
                database: database, near: Bundle.module.bundleURL,
                environment: ["STOREKEEPER_ALLOW_CUSTOM_APPLE_URLS": "true", "STOREKEEPER_ALLOW_PRIVATE_WEBHOOKS": "true"])
            _ = try await restarted.port()
            for _ in 0..<900 where !owed.isSubset(of: answered.withLockedValue { $0 }) {
                try await Task.sleep(for: .milliseconds(100))
            }
            let lost = owed.subtracting(answered.withLockedValue { $0 })
            #expect(lost.isEmpty, "acknowledged and never answered at Apple: \(lost.count) of \(owed.count)")
            kill(restarted.process.processIdentifier, SIGTERM)
            restarted.process.waitUntilExit()
        }
    }
}
