import AppStore
import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import Storage
import TestSupport
import Testing

/// The outbox against the real executable: killed with SIGKILL while deliveries are in flight to a slow webhook,
/// then restarted on the same database.
@Suite("Durability: deliveries")
struct DeliveryDurabilityTests {
    @Test("after a kill -9 with deliveries in flight, every event reaches the webhook, re-sent ones with their ids")
    func killNineWhileDelivering() async throws {
        let (database, app) = try DurabilityTests.appOnNewDatabase("outbox")
        let appId = try #require(app["appId"])
        let secretKey = try #require(app["secretKey"])
        let environment = ["STOREKEEPER_ALLOW_PRIVATE_WEBHOOKS": "true"]

        // Each answer takes 100 ms: a batch of deliveries is always in flight.
        let receiver = FakeDestination(delay: .milliseconds(100))
        try await receiver.serve { url in
            let server = try DurabilityTests.Server(database: database, near: Bundle.module.bundleURL, environment: environment)
            let port = try await server.port()
            let client = HTTPClient.shared
            func post(_ path: String, _ body: String, key: String?) async throws -> (Int, String) {
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                if let key { request.headers.add(name: "Authorization", value: "Bearer \(key)") }
                request.body = .bytes(ByteBuffer(string: body))
                let response = try await client.execute(request, timeout: .seconds(10))
                let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
                return (Int(response.status.code), text)
            }
            let (status, _) = try await post(
                "/v1/apps/\(appId)/integrations", #"{"kind":"webhook","config":{"url":"\#(url)"},"environments":["Sandbox"]}"#,
                key: secretKey)
            #expect(status == 201)

            // 150 purchases, each its own subscription; the server is killed once 20 deliveries have arrived.
            let acknowledged = NIOLockedValueBox(0)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for i in 0..<150 {
                        let purchase = Purchase(
                            transactionId: "\(70_000 + i)", originalTransactionId: "\(70_000 + i)", purchase: at(0), expires: at(30),
                            signed: at(0), token: UUID().uuidString.lowercased())
                        let signed = try notification(.subscribed, .initialBuy, purchase: purchase, signed: at(0))
                        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["signedPayload": signed]), as: UTF8.self)
                        guard let (code, _) = try? await post("/v1/apps/\(appId)/notifications/appstore", body, key: nil) else { return }
                        if code == 200 { acknowledged.withLockedValue { $0 += 1 } }
                    }
                }
                group.addTask {
                    while receiver.received.count < 20 { try await Task.sleep(for: .milliseconds(5)) }
                    kill(server.process.processIdentifier, SIGKILL)
                }
                try await group.waitForAll()
            }
            server.process.waitUntilExit()
            #expect(server.process.terminationReason == .uncaughtSignal)
            let beforeRestart = receiver.received.count

            // Restarted: what was in flight is sent again, and everything else follows.
            let restarted = try DurabilityTests.Server(database: database, near: Bundle.module.bundleURL, environment: environment)
            _ = try await restarted.port()
            let db = try await StorageDatabase.open(.sqlite(path: database))
            let events = try await db.reading { try await $0.events(app: appId, after: .start, limit: 10_000) }
            #expect(events.count >= acknowledged.withLockedValue { $0 })
            try await eventually("every event received", seconds: 60) {
                let received = Set(
                    receiver.received.compactMap {
                        try? (($0.json()["data"] as? [String: Any])?["event"] as? [String: Any])?["id"] as? String
                    })
                return Set(events.map(\.eventId)).isSubset(of: received)
            }
            try await eventually("every delivery recorded", seconds: 30) {
                try await db.reading { session in
                    try await session.sql.raw("SELECT COUNT(*) AS n FROM deliveries WHERE status <> 'delivered'").first()
                        .map { try $0.decode(column: "n", as: Int.self) } == 0
                }
            }
            await db.close()
            kill(restarted.process.processIdentifier, SIGTERM)
            restarted.process.waitUntilExit()
            #expect(restarted.process.terminationStatus == 0)

            // The deliveries in flight at the kill were sent again, with the same id and the same event.
            var bodies: [String: Set<String>] = [:]
            for request in receiver.received {
                let event = try (request.json()["data"] as? [String: Any])?["event"] as? [String: Any]
                bodies[try #require(request.header("webhook-id")), default: []].insert(event?["id"] as? String ?? "")
            }
            let resent = receiver.received.count - bodies.count
            #expect(resent >= 1, "nothing was in flight at the kill (\(beforeRestart) received before it)")
            #expect(bodies.values.allSatisfy { $0.count == 1 })
            print(
                "kill -9 with deliveries in flight: \(beforeRestart) requests received before the kill, \(receiver.received.count) in all, \(bodies.count) distinct deliveries, \(resent) sent again after the restart"
            )
        }
    }
}
