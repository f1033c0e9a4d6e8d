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

@Suite("Customer API")
struct CustomerAPITests {
    @Test("posting a signed transaction links it, returns the state, and transfers it by policy", arguments: TestDatabase.available)
    func postAndTransfer(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        h.clock.set(at(2))
        let purchase = Purchase(transactionId: "500", originalTransactionId: "500", purchase: at(0), expires: at(30), signed: at(0))
        try await h.test { client in
            // Read before she buys anything: a name nobody has (remembered as such), then named by her purchase, and
            // read again at once.
            #expect(try customer(try await client.customer("alice", key: h.app.publicKey)).state == .new)
            let alice = try await client.execute(
                uri: "/v1/customers/alice/transactions", method: .post, headers: headers(h.app.publicKey),
                body: body(["signedTransaction": try purchase.signed()]))
            #expect(alice.status == .ok)
            #expect(try customer(alice).state == .active)
            #expect(try customer(try await client.customer("alice", key: h.app.publicKey)).state == .active)
            // Restoring on another account moves it (the default policy).
            let bob = try await client.execute(
                uri: "/v1/customers/bob/transactions", method: .post, headers: headers(h.app.publicKey),
                body: body(["signedTransaction": try purchase.signed()]))
            #expect(try customer(bob).state == .active)
            #expect(try customer(try await client.customer("alice", key: h.app.publicKey)).state == .new)
            #expect(try await client.auditActions(h) == ["transfer"])

            // Bad posts.
            let both = try await client.execute(
                uri: "/v1/customers/bob/transactions", method: .post, headers: headers(h.app.publicKey),
                body: body(["signedTransaction": "a", "receipt": "b"]))
            #expect(both.status == .badRequest)
            let forged = try await client.execute(
                uri: "/v1/customers/bob/transactions", method: .post, headers: headers(h.app.publicKey),
                body: body(["signedTransaction": try purchase.signed(by: forgerCA)]))
            #expect(forged.status == .badRequest)
            #expect(try errorCode(forged) == "verificationFailure")
            let reserved = try await client.execute(
                uri: "/v1/customers/$anonymous:1/transactions", method: .post,
                headers: headers(h.app.publicKey), body: body(["signedTransaction": try purchase.signed()]))
            #expect(reserved.status == .badRequest)
        }
    }

    @Test("the answer's app user id is valid JSON whatever it holds (quotes, backslashes, slashes, non-ASCII), and as sent")
    func appUserIdsInTheAnswer() async throws {
        let h = try await Harness.make(.sqlite)
        try await h.test { client in
            for appUserId in ["plain-id_1.$:x", #"we"ird\back"#, "a/b", "é 😀", "<script>&"] {
                let encoded = try #require(appUserId.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
                let answer = try await client.execute(uri: "/v1/customers/\(encoded)", method: .get, headers: headers(h.app.publicKey))
                #expect(answer.status == .ok, "\(appUserId)")
                let json = try #require(try JSONSerialization.jsonObject(with: Data(buffer: answer.body)) as? [String: Any])
                #expect(json["appUserId"] as? String == appUserId && (json["environments"] as? [String])?.count == 1, "\(json)")
            }
        }
    }

    @Test("with the keep policy, another customer's transaction is a 409 and nothing changes", arguments: TestDatabase.available)
    func keepPolicy(database: TestDatabase) async throws {
        let h = try await Harness.make(database, policy: .keep)
        h.clock.set(at(2))
        let purchase = Purchase(transactionId: "600", originalTransactionId: "600", purchase: at(0), expires: at(30), signed: at(0))
        try await h.test { client in
            _ = try await client.execute(
                uri: "/v1/customers/alice/transactions", method: .post, headers: headers(h.app.publicKey),
                body: body(["signedTransaction": try purchase.signed()]))
            let bob = try await client.execute(
                uri: "/v1/customers/bob/transactions", method: .post, headers: headers(h.app.publicKey),
                body: body(["signedTransaction": try purchase.signed()]))
            #expect(bob.status == .conflict)
            #expect(try errorCode(bob) == "transaction_owned")
            #expect(try customer(try await client.customer("alice", key: h.app.publicKey)).state == .active)
            #expect(try customer(try await client.customer("bob", key: h.app.publicKey)).state == .new)
        }
    }

    @Test("an alias merges the anonymous id's purchases into the identified customer", arguments: TestDatabase.available)
    func alias(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        h.clock.set(at(2))
        let purchase = Purchase(transactionId: "700", originalTransactionId: "700", purchase: at(0), expires: at(30), signed: at(0))
        try await h.test { client in
            _ = try await client.execute(
                uri: "/v1/customers/$device:123/transactions", method: .post, headers: headers(h.app.publicKey),
                body: body(["signedTransaction": try purchase.signed()]))
            #expect(try customer(try await client.customer("carol", key: h.app.publicKey)).state == .new)
            let merged = try await client.execute(
                uri: "/v1/customers/carol/alias", method: .post, headers: headers(h.app.publicKey),
                body: body(["alias": "$device:123"]))
            #expect(merged.status == .ok)
            #expect(try customer(merged).state == .active)
            // Both names now read the same customer.
            #expect(
                try customer(try await client.customer("$device:123", key: h.app.publicKey)).customer.entitlements
                    == (try customer(try await client.customer("carol", key: h.app.publicKey)).customer.entitlements))
            #expect(try customer(try await client.customer("carol", key: h.app.publicKey)).state == .active)
            #expect(try await client.auditActions(h) == ["merge"])
        }
    }

    @Test("the public key cannot alias a named customer (or claim a name), nor read server-named ones; a secret key can")
    func aliasNeedsProof() async throws {
        let h = try await Harness.make(.sqlite)
        h.clock.set(at(2))
        let purchase = Purchase(transactionId: "710", originalTransactionId: "710", purchase: at(0), expires: at(30), signed: at(0))
        let orphan = Purchase(transactionId: "720", originalTransactionId: "720", purchase: at(0), expires: at(30), signed: at(0))
        try await h.test { client in
            _ = try await client.execute(
                uri: "/v1/customers/victim/transactions", method: .post, headers: headers(h.app.publicKey),
                body: body(["signedTransaction": try purchase.signed()]))
            for alias in ["victim", "future-user@example.com", "$anonymous:720"] {
                let taken = try await client.execute(
                    uri: "/v1/customers/mallory/alias", method: .post, headers: headers(h.app.publicKey),
                    body: body(["alias": alias]))
                #expect(taken.status == .forbidden, "\(alias)")
            }
            #expect(try customer(try await client.customer("mallory", key: h.app.publicKey)).state == .new)
            #expect(try customer(try await client.customer("victim", key: h.app.publicKey)).state == .active)
            // A notification nobody claimed: its customer is read, and merged, with a secret key only.
            try await client.postNotification(h.app.appId, try notification(.subscribed, purchase: orphan, signed: at(0)))
            #expect(try await client.customer("$anonymous:720", key: h.app.publicKey).status == .forbidden)
            #expect(try await client.customer("$anonymous:720", key: h.app.secretKey).status == .ok)
            let merged = try await client.execute(
                uri: "/v1/customers/support-case/alias", method: .post, headers: headers(h.app.secretKey),
                body: body(["alias": "$anonymous:720"]))
            #expect(merged.status == .ok)
            #expect(try customer(merged).state == .active)
        }
    }

    @Test("ETag and If-None-Match; Cache-Control never outlives nextChangeAt; requestDate is server time")
    func caching() async throws {
        let h = try await Harness.make(.sqlite)
        let purchase = Purchase(transactionId: "800", originalTransactionId: "800", purchase: at(0), expires: at(0) + 30_000, signed: at(0))
        h.clock.set(at(0) + 10_000)
        try await h.test { client in
            let posted = try await client.execute(
                uri: "/v1/customers/dan/transactions", method: .post, headers: headers(h.app.publicKey),
                body: body(["signedTransaction": try purchase.signed()]))
            #expect(posted.status == .ok)
            let first = try await client.customer("dan", key: h.app.publicKey)
            let etag = try #require(first.headers[.eTag])
            // 20 s before the expiry: the cache may keep it 20 s at most.
            #expect(first.headers[.cacheControl] == "private, max-age=20")
            #expect(try customer(first).requestDate == at(0) + 10_000)
            var conditional = headers(h.app.publicKey)
            conditional[.ifNoneMatch] = etag
            let notModified = try await client.execute(uri: "/v1/customers/dan", method: .get, headers: conditional)
            #expect(notModified.status == .notModified)
            #expect(notModified.body.readableBytes == 0)
            // After the expiry the state changes with no new fact, and so does the ETag.
            h.clock.set(at(0) + 31_000)
            let later = try await client.execute(uri: "/v1/customers/dan", method: .get, headers: conditional)
            #expect(later.status == .ok)
            #expect(later.headers[.eTag] != etag)
            #expect(try customer(later).state == .inactive)
        }
    }

    @Test("the event streams page by cursor and hold each event once", arguments: TestDatabase.available)
    func events(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        h.clock.set(at(75))
        try await h.test { client in
            for signed in try WebhookTests.lifecycle() { try await client.postNotification(h.app.appId, signed) }
            var cursor = "0"
            var seen: [String] = []
            var owners = Set<String>()
            // On PostgreSQL the stream shows an event once no older transaction in the cluster is still running (other
            // tests' included), so the last events can take a moment to appear: poll, as a consumer would.
            for _ in 0..<200 {
                let page = try decode(
                    EventPage.self,
                    try await client.execute(
                        uri: "/v1/apps/\(h.app.appId)/events?after=\(cursor)&limit=2", method: .get,
                        headers: headers(h.app.secretKey)))
                let events = page.events
                if events.isEmpty {
                    if seen.contains(where: { $0.hasPrefix("refunded:") }) { break }
                    try await Task.sleep(for: .milliseconds(25))
                    continue
                }
                #expect(events.count <= 2)
                #expect(events.allSatisfy { !$0.customerId.isEmpty }, "an event without its customer")
                owners.formUnion(events.map(\.customerId))
                seen += events.map(\.event.id)
                cursor = page.nextCursor
            }
            #expect(Set(seen).count == seen.count)
            #expect(seen.contains { $0.hasPrefix("subscription_started:") })
            #expect(seen.contains { $0.hasPrefix("refunded:") })
            // One customer's lifecycle: every event names the same customer.
            #expect(owners.count == 1)
            let customerPage = try decode(
                EventPage.self,
                try await client.execute(
                    uri: "/v1/customers/\(WebhookTests.token.lowercased())/events", method: .get,
                    headers: headers(h.app.secretKey)))
            #expect(customerPage.events.map(\.event.id).sorted() == seen.sorted())
            let bad = try await client.execute(
                uri: "/v1/apps/\(h.app.appId)/events?after=x", method: .get, headers: headers(h.app.secretKey))
            #expect(bad.status == .badRequest)
        }
    }

    @Test("a body that is not JSON says where it stopped; JSON of the wrong shape names the field; a metric's typo is answered")
    func bodyErrors() async throws {
        let h = try await Harness.make(.sqlite)
        h.clock.set(at(1))
        try await h.test { client in
            let broken = try await client.execute(
                uri: "/v1/customers/erin/transactions", method: .post, headers: headers(h.app.publicKey),
                body: ByteBuffer(string: "{\"signedTransaction\": \"x\",\n  \"oops\": }"))
            #expect(broken.status == .badRequest)
            let brokenText = String(buffer: broken.body)
            #expect(brokenText.contains("not valid JSON: unexpected text at line 2, column 11"), "\(brokenText)")
            let shapeless = try await client.execute(
                uri: "/v1/customers/erin/transactions", method: .post, headers: headers(h.app.publicKey), body: ByteBuffer(string: "{}"))
            #expect(shapeless.status == .badRequest)
            let shapelessText = String(buffer: shapeless.body)
            #expect(!shapelessText.contains("not valid JSON") && shapelessText.contains("signedTransaction"), "\(shapelessText)")
            let typo = try await client.execute(uri: "/v1/apps/\(h.app.appId)/metrics/mmr", method: .get, headers: headers(h.app.secretKey))
            #expect(typo.status == .badRequest && String(buffer: typo.body).contains("did you mean 'mrr'?"))
            // The environment in any case; the answer in Apple's spelling.
            let lower = try await client.execute(
                uri: "/v1/customers/erin?environment=sandbox", method: .get, headers: headers(h.app.publicKey))
            #expect(lower.status == .ok && String(buffer: lower.body).contains("\"environment\":\"Sandbox\""))
        }
    }

    @Test("the RevenueCat-shaped subscriber")
    func subscriber() async throws {
        let h = try await Harness.make(.sqlite)
        h.clock.set(at(10))
        let purchase = Purchase(transactionId: "900", originalTransactionId: "900", purchase: at(0), expires: at(30), signed: at(0))
        try await h.test { client in
            _ = try await client.execute(
                uri: "/v1/customers/erin/transactions", method: .post, headers: headers(h.app.publicKey),
                body: body(["signedTransaction": try purchase.signed()]))
            let response = try decode(
                RevenueCatSubscriber.self,
                try await client.execute(uri: "/v1/subscribers/erin", method: .get, headers: headers(h.app.secretKey)))
            #expect(response.request_date_ms == at(10))
            let subscriber = response.subscriber
            #expect(subscriber.original_app_user_id == "erin")
            let pro = subscriber.entitlements["pro"]
            #expect(pro?.product_identifier == "pro.monthly")
            #expect(pro?.expires_date == "2026-01-31T00:00:00Z")
            let subscription = subscriber.subscriptions["pro.monthly"]
            #expect(subscription?.is_sandbox == true)
            #expect(subscription?.store == "app_store")
            #expect(subscription?.period_type == "normal")
            // The app's event stream says whose each event is: the customer and its app user id.
            let stream = try decode(
                EventPage.self,
                try await client.execute(uri: "/v1/apps/\(h.app.appId)/events", method: .get, headers: headers(h.app.secretKey)))
            #expect(!stream.events.isEmpty)
            #expect(stream.events.allSatisfy { $0.appUserId == "erin" && !$0.customerId.isEmpty })

            // Renewed: the entitlement is the subscription's (keyed by its original transaction), not lost.
            h.clock.set(at(40))
            let renewal = Purchase(transactionId: "901", originalTransactionId: "900", purchase: at(30), expires: at(60), signed: at(30))
            _ = try await client.execute(
                uri: "/v1/customers/erin/transactions", method: .post, headers: headers(h.app.publicKey),
                body: body(["signedTransaction": try renewal.signed()]))
            let renewed = try await client.execute(uri: "/v1/subscribers/erin", method: .get, headers: headers(h.app.secretKey))
            let text = String(buffer: renewed.body)
            let after = try decode(RevenueCatSubscriber.self, renewed).subscriber
            #expect(after.entitlements["pro"]?.expires_date == "2026-03-02T00:00:00Z")
            #expect(after.entitlements["pro"]?.purchase_date == "2026-01-31T00:00:00Z")
            #expect(after.subscriptions["pro.monthly"]?.store_transaction_id == "901")
            #expect(after.management_url == RevenueCatSubscriber.appStoreManagementURL)
            // RevenueCat sends a value that does not exist as null, never as a missing key.
            for key in [
                "refunded_at", "billing_issues_detected_at", "auto_resume_date", "unsubscribe_detected_at", "grace_period_expires_date",
            ] {
                #expect(text.contains("\"\(key)\":null"), "\(key) is not sent as null: \(text)")
            }

            // Lapsed: RevenueCat keeps the entitlement, with its past expiry.
            h.clock.set(at(70))
            let lapsed = try decode(
                RevenueCatSubscriber.self,
                try await client.execute(uri: "/v1/subscribers/erin", method: .get, headers: headers(h.app.secretKey))
            ).subscriber
            #expect(lapsed.entitlements["pro"]?.expires_date == "2026-03-02T00:00:00Z")
            #expect(lapsed.management_url == nil)
        }
    }

    @Test("every endpoint answers on a live server")
    func live() async throws {
        let h = try await Harness.make(.sqlite)
        h.clock.set(at(1))
        let application = h.application()
        try await application.test(.live) { client in
            let app = "/v1/apps/\(h.app.appId)"
            let sk = headers(h.app.secretKey)
            let pk = headers(h.app.publicKey)
            let purchase = Purchase(
                transactionId: "1", originalTransactionId: "1", purchase: at(0), expires: at(30), signed: at(0), token: "live")
            let second = Purchase(transactionId: "2", originalTransactionId: "2", purchase: at(0), expires: at(30), signed: at(0))
            let calls: [(String, HTTPRequest.Method, HTTPFields, ByteBuffer?, HTTPResponse.Status)] = [
                ("/health", .get, [:], nil, .ok),
                ("/ping", .get, [:], nil, .ok),
                ("/openapi.yaml", .get, operatorHeaders(), nil, .ok),
                ("/openapi.yaml", .get, [:], nil, .unauthorized),
                (
                    "\(app)/notifications/appstore", .post, headers(nil),
                    body(["signedPayload": try notification(.subscribed, purchase: purchase, signed: at(0))]), .ok
                ),
                ("/v1/customers/live", .get, pk, nil, .ok),
                ("/v1/customers/live/transactions", .post, pk, body(["signedTransaction": try second.signed()]), .ok),
                ("/v1/customers/live/alias", .post, pk, body(["alias": "$device:live"]), .ok),
                ("/v1/customers/live/events", .get, sk, nil, .ok),
                ("/v1/subscribers/live", .get, sk, nil, .ok),
                (app, .get, sk, nil, .ok),
                (app, .patch, sk, body(["transferPolicy": "keep"]), .ok),
                ("\(app)/products", .get, sk, nil, .ok),
                (
                    "\(app)/products", .put, sk,
                    ByteBuffer(
                        string:
                            #"{"products":[{"id":"pro.monthly","type":"autoRenewable","group":"pro","period":"P1M","entitlements":["pro"]}]}"#
                    ), .ok
                ),
                ("\(app)/entitlements", .get, sk, nil, .ok),
                ("\(app)/events", .get, sk, nil, .ok),
                ("\(app)/audit", .get, sk, nil, .ok),
                ("/metrics", .get, operatorHeaders(), nil, .ok),
                ("/metrics", .get, sk, nil, .unauthorized),
                ("\(app)/keys/rotate", .post, sk, body(["kind": "secret"]), .created),
            ]
            for (uri, method, fields, payload, status) in calls {
                let response = try await client.execute(uri: uri, method: method, headers: fields, body: payload)
                #expect(response.status == status, "\(method) \(uri): \(String(buffer: response.body))")
            }
            #expect(try customer(try await client.customer("live", key: h.app.publicKey)).state == .active)
            // The rotated secret key is gone.
            #expect(try await client.execute(uri: app, method: .get, headers: sk).status == .unauthorized)
        }
        await h.close()
    }
}
