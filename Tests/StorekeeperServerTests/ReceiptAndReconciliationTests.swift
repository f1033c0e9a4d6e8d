import AppStore
import Crypto
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

@Suite("Receipts and reconciliation")
struct ReceiptAndReconciliationTests {
    @Test("a real sandbox app receipt is verified locally and its purchases become the customer's")
    func receipt() async throws {
        let url = try #require(Bundle.module.url(forResource: "receipt-sandbox-g5", withExtension: nil, subdirectory: "Fixtures"))
        let base64 = try String(contentsOf: url, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let clock = TestClock(1_766_771_000_000)  // During the first annual (sandbox: one hour) period.
        let core = try await Harness.openCore(try await TestDatabase.sqlite.fresh(), clock: clock, httpClient: nil)
        let catalog = try Catalog(products: [
            CatalogProduct(
                id: "dev.bonzer.weeka.app.subscription.pro.annual", type: .autoRenewable, group: "pro",
                period: try ISO8601Duration("P1Y"), entitlements: ["pro"])
        ])
        // Apple's own roots: no trustedRoots.
        let app = try await core.administration.create(
            AppConfiguration(bundleId: "dev.bonzer.weeka.app", environments: ["Sandbox"], catalog: catalog))
        try await Harness.application(core).test(.router) { client in
            let posted = try await client.execute(
                uri: "/v1/customers/weeka-user/transactions", method: .post,
                headers: headers(app.publicKey), body: body(["receipt": base64]))
            #expect(posted.status == .ok)
            let state = try customer(posted)
            #expect(state.customer.subscriptions.first?.originalTransactionId == "2000001092134138")
            #expect(state.state == .active)

            let garbage = try await client.execute(
                uri: "/v1/customers/weeka-user/transactions", method: .post,
                headers: headers(app.publicKey), body: body(["receipt": "bm90IGEgcmVjZWlwdA=="]))
            #expect(garbage.status == .badRequest)
            #expect(try errorCode(garbage) == "invalidReceiptFormat")
        }
        await core.database.close()
    }

    /// A fake App Store Server API that knows one subscription and one notification Apple failed to deliver.
    static func fakeAppleAPI(missed: String, history: [String], status: (transaction: String, renewal: String)) -> Router<
        BasicRequestContext
    > {
        let router = Router()
        router.post("/inApps/v1/notifications/history") { _, _ in
            try jsonResponse([
                "notificationHistory": [
                    ["signedPayload": missed, "sendAttempts": [["attemptDate": at(40), "sendAttemptResult": "NO_RESPONSE"]]]
                ],
                "hasMore": false,
            ])
        }
        router.get("/inApps/v2/history/:id") { _, _ in
            try jsonResponse(["signedTransactions": history, "hasMore": false, "bundleId": bundleId, "environment": "Sandbox"])
        }
        router.get("/inApps/v1/subscriptions/:id") { _, context in
            try jsonResponse([
                "environment": "Sandbox", "bundleId": bundleId,
                "data": [
                    [
                        "subscriptionGroupIdentifier": "pro",
                        "lastTransactions": [
                            [
                                "status": 1, "originalTransactionId": context.parameters.get("id") ?? "",
                                "signedTransactionInfo": status.transaction, "signedRenewalInfo": status.renewal,
                            ]
                        ],
                    ]
                ],
            ])
        }
        return router
    }

    /// Serves `router` on a free local port while `body` runs, with Server API credentials pointing at it.
    static func withFakeAppleAPI(
        _ router: Router<BasicRequestContext>, key: P256.Signing.PrivateKey = P256.Signing.PrivateKey(),
        _ body: @escaping @Sendable (AppConfiguration.ServerAPICredentials) async throws -> Void
    ) async throws {
        let fake = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await fake.test(.live) { fakeClient in
            let port = try #require(fakeClient.port)
            try await body(
                AppConfiguration.ServerAPICredentials(
                    issuerId: "issuer", keyId: "KEY123", privateKey: key.pemRepresentation, baseURL: "http://127.0.0.1:\(port)"))
        }
    }

    static func jsonResponse(_ object: Any) throws -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(data: try JSONSerialization.data(withJSONObject: object))))
    }

    @Test("reconciliation fetches a notification Apple failed to deliver, and the app's post pulls the whole history")
    func reconciliation() async throws {
        let token = "5c0a7e2f-0000-4000-8000-00000000abcd"
        let first = Purchase(
            transactionId: "4000", originalTransactionId: "4000", purchase: at(0), expires: at(30), signed: at(0), token: token)
        let renewed = Purchase(
            transactionId: "4001", originalTransactionId: "4000", purchase: at(30), expires: at(60), signed: at(30), token: token)
        // A renewal that only the Server API tells of (its notification is older than the history window).
        let third = Purchase(
            transactionId: "4002", originalTransactionId: "4000", purchase: at(60), expires: at(90), signed: at(60), token: token)
        let missed = try notification(.didRenew, purchase: renewed, renewal: renewalInfo(original: "4000", signed: at(30)), signed: at(30))
        try await Self.withFakeAppleAPI(
            Self.fakeAppleAPI(
                missed: missed, history: [try first.signed(), try renewed.signed(), try third.signed()],
                status: (try third.signed(), try testCA.sign(renewalInfo(original: "4000", signed: at(61)))))
        ) { credentials in
            let h = try await Harness.make(.sqlite, serverAPI: credentials)
            h.clock.set(at(65))
            try await h.test { client in
                // Only the first purchase's notification arrived: the customer looks expired at day 65.
                try await client.postNotification(h.app.appId, try notification(.subscribed, .initialBuy, purchase: first, signed: at(0)))
                #expect(try customer(try await client.customer(token, key: h.app.publicKey)).state == .inactive)

                let report = await h.core.reconciler.run()
                #expect(report.errors.isEmpty, "\(report.errors)")
                #expect(report.notificationsNew == 1)
                // The missed notification, then the subscription's status near its expiry: renewed to day 90.
                #expect(report.subscriptionsChecked == 1)
                let after = try customer(try await client.customer(token, key: h.app.publicKey))
                #expect(after.state == .active)
                #expect(after[entitlement: "pro"]?.expiresDate?.millisecondsSince1970 == at(90))
                let sources = try await h.core.database.reading { session in
                    try await session.sql.raw("SELECT DISTINCT source FROM transactions ORDER BY source").all()
                        .map { try $0.decode(column: "source", as: String.self) }
                }
                #expect(sources == ["notification", "serverAPI"])

                // A second pass finds nothing new.
                #expect(await h.core.reconciler.run().notificationsNew == 0)
            }
        }
    }

    @Test("the app's post of one transaction pulls its whole history when the app has Server API credentials")
    func postPullsHistory() async throws {
        let first = Purchase(transactionId: "4500", originalTransactionId: "4500", purchase: at(0), expires: at(30), signed: at(0))
        let renewed = Purchase(transactionId: "4501", originalTransactionId: "4500", purchase: at(30), expires: at(60), signed: at(30))
        try await Self.withFakeAppleAPI(
            Self.fakeAppleAPI(
                missed: try notification(.test, purchase: nil, signed: at(0)), history: [try first.signed(), try renewed.signed()],
                status: (try renewed.signed(), try testCA.sign(renewalInfo(original: "4500", signed: at(31)))))
        ) { credentials in
            let h = try await Harness.make(.sqlite, serverAPI: credentials)
            h.clock.set(at(40))
            try await h.test { client in
                // The device only has its first transaction; Apple knows of the renewal.
                let posted = try await client.execute(
                    uri: "/v1/customers/restorer/transactions", method: .post,
                    headers: headers(h.app.publicKey), body: body(["signedTransaction": try first.signed()]))
                #expect(posted.status == .ok)
                let state = try customer(posted)
                #expect(state.state == .active)
                #expect(state[entitlement: "pro"]?.expiresDate?.millisecondsSince1970 == at(60))
            }
        }
    }

    @Test(
        "reconciliation re-evaluates customers whose state changed with time alone, recording the expiry", arguments: TestDatabase.available
    )
    func timeDriven(database: TestDatabase) async throws {
        let h = try await Harness.make(database)
        let purchase = Purchase(
            transactionId: "4100", originalTransactionId: "4100", purchase: at(0), expires: at(30), signed: at(0), token: "tim")
        let cancelled = {
            var info = renewalInfo(original: "4100", autoRenew: false, signed: at(10))
            info.expirationIntent = .customerCancelled
            return info
        }()
        try await h.test { client in
            h.clock.set(at(10))
            try await client.postNotification(h.app.appId, try notification(.subscribed, .initialBuy, purchase: purchase, signed: at(0)))
            try await client.postNotification(
                h.app.appId,
                try notification(
                    .didChangeRenewalStatus, .autoRenewDisabled, purchase: purchase, renewal: cancelled, signed: at(10)))
            let before = try await h.core.database.reading {
                try await $0.events(app: h.app.appId, after: .start, limit: 100, settledOnly: false)
            }
            #expect(!before.contains { $0.type == "subscription_expired" })
            // Day 31: nobody reads the customer, but reconciliation notices the expiry.
            h.clock.set(at(31))
            let report = await h.core.reconciler.run()
            #expect(report.customersRefreshed == 1)
            let after = try await h.core.database.reading {
                try await $0.events(app: h.app.appId, after: .start, limit: 100, settledOnly: false)
            }
            #expect(after.contains { $0.type == "subscription_expired" })
        }
    }
}
