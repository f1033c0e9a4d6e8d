import AppStore
import Entitlements
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Storage
import StorekeeperCore
import TestSupport
import Testing

@testable import StorekeeperServer

@Suite("App Store webhook")
struct WebhookTests {
    static let token = "6F1A3C7E-1111-4A2B-9C3D-000000000001"

    /// A subscription's life: bought, renewed twice, then refunded; every notification carries its transaction.
    static func lifecycle(token: String? = token) throws -> [String] {
        let first = Purchase(
            transactionId: "1000", originalTransactionId: "1000", purchase: at(0), expires: at(30), signed: at(0), token: token)
        let second = Purchase(
            transactionId: "1001", originalTransactionId: "1000", purchase: at(30), expires: at(60), signed: at(30), token: token)
        let third = Purchase(
            transactionId: "1002", originalTransactionId: "1000", purchase: at(60), expires: at(90), signed: at(60), token: token)
        var refunded = third
        refunded.revocation = at(70)
        refunded.signed = at(70)
        return [
            try notification(
                .subscribed, .initialBuy, purchase: first, renewal: renewalInfo(original: "1000", signed: at(0)), signed: at(0)),
            try notification(.didRenew, purchase: second, renewal: renewalInfo(original: "1000", signed: at(30)), signed: at(30)),
            try notification(.didRenew, purchase: third, renewal: renewalInfo(original: "1000", signed: at(60)), signed: at(60)),
            try notification(.refund, purchase: refunded, signed: at(70)),
        ]
    }

    @Test(
        "a notification is stored, its customer found by appAccountToken, and the state answers at once", arguments: TestDatabase.available)
    func applied(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        h.clock.set(at(10))
        let purchase = Purchase(
            transactionId: "1000", originalTransactionId: "1000", purchase: at(0), expires: at(30), signed: at(0), token: Self.token)
        let signed = try notification(
            .subscribed, .initialBuy, purchase: purchase, renewal: renewalInfo(original: "1000", signed: at(0)), signed: at(0))
        try await h.test { client in
            let response = try await client.postNotification(h.app.appId, signed)
            #expect(response.status == .ok)
            #expect(try decode(WebhookController.NotificationAnswer.self, response).result == .applied)
            // The token, lower-cased, is the app user id.
            let state = try customer(try await client.customer(Self.token.lowercased(), key: h.app.publicKey))
            #expect(state.state == .active)
            #expect(state[entitlement: "pro"]?.active == true)
            #expect(state[entitlement: "pro"]?.expiresDate?.millisecondsSince1970 == at(30))
            #expect(state.requestDate == at(10))
            // The raw signed payload is kept.
            let stored = try await h.core.database.reading { try await $0.notificationUUIDs(app: h.app.appId) }
            #expect(stored.count == 1)
            // A notification type Apple adds later is stored, not rejected.
            let future = try notification(NotificationType(rawValue: "SOMETHING_NEW"), purchase: purchase, signed: at(1))
            let answer = try await client.postNotification(h.app.appId, future)
            #expect(answer.status == .ok)
            #expect(try decode(WebhookController.NotificationAnswer.self, answer).result == .applied)
            let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get, headers: operatorHeaders()).body)
            #expect(metrics.contains(#"storekeeper_notifications_total{type="SUBSCRIBED",result="applied"} 1"#))
            #expect(metrics.contains(#"storekeeper_notifications_total{type="SOMETHING_NEW",result="applied"} 1"#))
            // SQLite's group commit counts its transactions and commits; PostgreSQL has none.
            let commitLines = metrics.split(separator: "\n").filter { $0.hasPrefix("storekeeper_sqlite_commits ") }
            #expect(commitLines.count == (database == .sqlite ? 1 : 0))
            if database == .sqlite {
                #expect(commitLines.first.flatMap { Double($0.split(separator: " ").last ?? "") }.map { $0 >= 2 } == true)
            }
        }
    }

    @Test("the same notification ten times is stored once and gives the same state and events", arguments: TestDatabase.available)
    func idempotent(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        h.clock.set(at(45))
        let signed = try Self.lifecycle()
        try await h.test { client in
            try await client.postNotification(h.app.appId, signed[0])
            try await client.postNotification(h.app.appId, signed[1])
            let once = try customer(try await client.customer(Self.token.lowercased(), key: h.app.publicKey)).customer
            let eventsOnce = try await h.core.database.reading {
                try await $0.events(app: h.app.appId, after: .start, limit: 1000, settledOnly: false)
            }
            for _ in 0..<10 {
                let response = try await client.postNotification(h.app.appId, signed[1])
                #expect(response.status == .ok)
                #expect(try decode(WebhookController.NotificationAnswer.self, response).result == .duplicate)
            }
            let again = try customer(try await client.customer(Self.token.lowercased(), key: h.app.publicKey)).customer
            #expect(once == again)
            let eventsAgain = try await h.core.database.reading {
                try await $0.events(app: h.app.appId, after: .start, limit: 1000, settledOnly: false)
            }
            #expect(eventsAgain.map(\.eventId) == eventsOnce.map(\.eventId))
            #expect(try await h.core.database.reading { try await $0.notificationCount(app: h.app.appId) } == 2)
        }
    }

    @Test("a customer's notifications in any order give the same final state and events", arguments: TestDatabase.available)
    func shuffled(database: TestDatabase) async throws {
        let signed = try Self.lifecycle()
        var reference: (state: CustomerState, events: [String])?
        var generator = SeededGenerator(state: 7)
        let orders = [Array(0..<signed.count)] + (0..<5).map { _ in Array(0..<signed.count).shuffled(using: &generator) }
        for order in orders {
            let h = try await Harness.make(database)
            h.clock.set(at(75))
            let result = try await h.test { client in
                for index in order {
                    #expect(try await client.postNotification(h.app.appId, signed[index]).status == .ok)
                }
                let response = try await client.customer(Self.token.lowercased(), key: h.app.publicKey)
                // The refund took access away.
                #expect(try customer(response)[entitlement: "pro"]?.active == false)
                // Events that early, partial facts suggested (a renewal seen before its purchase looks like a start)
                // are retracted once the facts are complete: the standing events are the same in every order.
                let events = try await h.core.database.reading {
                    try await $0.events(app: h.app.appId, after: .start, limit: 1000, settledOnly: false)
                }
                .filter { $0.retractedAt == nil }.map(\.eventId).sorted()
                return (state: try customer(response).customer, events: events)
            }
            #expect(result.events.contains { $0.hasPrefix("refunded:") })
            if let reference {
                #expect(result.state == reference.state, "order \(order)")
                #expect(result.events == reference.events, "order \(order)")
            } else {
                reference = result
            }
        }
    }

    @Test("forged, foreign, malformed and oversized payloads get named 4xx errors and are counted", arguments: TestDatabase.available)
    func rejected(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        let purchase = Purchase(transactionId: "1", originalTransactionId: "1", purchase: at(0), expires: at(30), signed: at(0))
        try await h.test { client in
            let forged = try await client.postNotification(
                h.app.appId, try notification(.subscribed, purchase: purchase, signed: at(0), ca: forgerCA))
            #expect(forged.status == .badRequest)
            #expect(try errorCode(forged) == "verificationFailure")

            let otherApp = try await client.postNotification(
                h.app.appId, try notification(.subscribed, purchase: purchase, signed: at(0), bundle: "com.other"))
            #expect(otherApp.status == .forbidden)
            #expect(try errorCode(otherApp) == "invalidAppIdentifier")

            var production = purchase
            production.environment = .production
            let wrongEnvironment = try await client.postNotification(
                h.app.appId, try notification(.subscribed, purchase: production, signed: at(0), environment: .production, appAppleId: 1))
            #expect(wrongEnvironment.status == .forbidden)
            #expect(try errorCode(wrongEnvironment) == "invalidEnvironment")

            let malformed = try await client.postNotification(h.app.appId, "not.a-jws")
            #expect(malformed.status == .badRequest)
            #expect(try errorCode(malformed) == "invalidJWTFormat")

            let notJSON = try await client.execute(
                uri: "/v1/apps/\(h.app.appId)/notifications/appstore", method: .post,
                headers: headers(nil), body: ByteBuffer(string: "{"))
            #expect(notJSON.status == .badRequest)
            #expect(try errorCode(notJSON) == "invalid_request")

            let huge = try await client.postNotification(h.app.appId, String(repeating: "a", count: 300 * 1024))
            #expect(huge.status == .contentTooLarge)
            #expect(try errorCode(huge) == "payload_too_large")

            let unknownApp = try await client.postNotification("app_nope", try notification(.subscribed, purchase: purchase, signed: at(0)))
            #expect(unknownApp.status == .notFound)

            #expect(try await h.core.database.reading { try await $0.notificationCount(app: h.app.appId) } == 0)
            let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get, headers: operatorHeaders()).body)
            #expect(metrics.contains(#"storekeeper_verification_failures_total{error="verificationFailure"} 1"#))
            #expect(metrics.contains(#"storekeeper_verification_failures_total{error="invalidAppIdentifier"} 1"#))
            #expect(metrics.contains("storekeeper_http_requests_total"))
        }
    }

    @Test(
        "a notification for no known customer and no token creates an anonymous one, merged when the app posts it",
        arguments: TestDatabase.available)
    func anonymousThenMerged(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        h.clock.set(at(5))
        let purchase = Purchase(transactionId: "2000", originalTransactionId: "2000", purchase: at(0), expires: at(30), signed: at(0))
        try await h.test { client in
            #expect(
                try await client.postNotification(
                    h.app.appId, try notification(.subscribed, .initialBuy, purchase: purchase, signed: at(0))
                ).status == .ok)
            #expect(try customer(try await client.customer("$anonymous:2000", key: h.app.secretKey)).state == .active)

            let posted = try await client.execute(
                uri: "/v1/customers/bob/transactions", method: .post, headers: headers(h.app.publicKey),
                body: body(["signedTransaction": try purchase.signed()]))
            #expect(posted.status == .ok)
            #expect(try customer(posted).state == .active)
            // The anonymous name now leads to bob's customer, and the merge is audited.
            let audit = try decode(
                AppAdminController.AuditLog.self,
                try await client.execute(uri: "/v1/apps/\(h.app.appId)/audit", method: .get, headers: headers(h.app.secretKey)))
            #expect(audit.audit.contains { $0.action == "merge" && $0.originalTransactionId == "2000" })
        }
    }

    @Test("a database outage answers 503 so that Apple retries, and nothing is acknowledged", arguments: TestDatabase.available)
    func outage(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        let purchase = Purchase(transactionId: "3000", originalTransactionId: "3000", purchase: at(0), expires: at(30), signed: at(0))
        let signed = try notification(.subscribed, purchase: purchase, signed: at(0))
        let application = h.application()
        try await application.test(.router) { client in
            // Warm the app cache, then take the database away.
            _ = try await client.postNotification(h.app.appId, try notification(.test, purchase: nil, signed: at(0)))
            await h.core.database.close()
            let response = try await client.postNotification(h.app.appId, signed)
            #expect(response.status == .serviceUnavailable)
            #expect(try errorCode(response) == "unavailable")
            let health = try await client.execute(uri: "/health", method: .get)
            #expect(health.status == .serviceUnavailable)
        }
    }
}
