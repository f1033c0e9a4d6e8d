import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import NIOCore
import StorekeeperCore
import TestSupport
import Testing

@testable import StorekeeperServer

/// Server-side request forgery through an app's configuration or the rates feed (issue 61, item 6): the calls made
/// with an app's credentials go to Apple only unless the operator allows other URLs, never to an internal address
/// the destinations' policy refuses, and never follow a redirect; the rates feed follows redirects only where the
/// same policy allows.
@Suite("Outbound URLs")
struct OutboundURLTests {
    static func patch(_ client: some TestClientProtocol, _ h: Harness, _ json: String) async throws -> TestResponse {
        try await client.execute(
            uri: "/v1/apps/\(h.app.appId)", method: .patch, headers: headers(h.app.secretKey), body: ByteBuffer(string: json))
    }

    static func serverAPI(_ baseURL: String) -> String {
        let key = String(decoding: (try? JSONEncoder().encode(ServerAPIKey.pem)) ?? Data(), as: UTF8.self)
        return #"{"serverAPI": {"issuerId": "i", "keyId": "K", "privateKey": \#(key), "baseURL": "\#(baseURL)"}}"#
    }

    enum ServerAPIKey {
        static let pem = EndToEndReconciliationTests.signingKey.pemRepresentation
    }

    @Test("by default only https on Apple's hosts: loopback, metadata, other hosts and credentials in URLs are 400 naming the field")
    func appleOnly() async throws {
        let clock = TestClock(at(0))
        let core = try await Harness.openCore(try await TestDatabase.sqlite.fresh(), clock: clock, customAppleURLs: false)
        let app = try await core.administration.create(Harness.config())
        let strict = Harness(core: core, clock: clock, app: app, database: .sqlite)
        try await strict.test { client in
            for (url, field) in [
                ("http://127.0.0.1:9/", "serverAPI.baseURL"), ("https://169.254.169.254/latest", "serverAPI.baseURL"),
                ("http://api.storekit.apple.com", "serverAPI.baseURL"),
                ("https://api.storekit.apple.com.evil.example", "serverAPI.baseURL"),
                ("https://user:pw@api.storekit.apple.com", "serverAPI.baseURL"),
                ("https://api.storekit.apple.com:8443", "serverAPI.baseURL"),
            ] {
                let refused = try await Self.patch(client, strict, Self.serverAPI(url))
                #expect(refused.status == .badRequest, "\(url)")
                #expect(try decode(ErrorBody.self, refused).error.field == field, "\(url)")
            }
            let receipts = try await Self.patch(
                client, strict, #"{"verifyReceiptURLs": ["https://buy.itunes.apple.com/verifyReceipt", "http://[::1]/verifyReceipt"]}"#)
            #expect(try decode(ErrorBody.self, receipts).error.field == "verifyReceiptURLs[1]")
            #expect(try await Self.patch(client, strict, Self.serverAPI("https://api.storekit-sandbox.apple.com")).status == .ok)
            #expect(
                try await Self.patch(
                    client, strict,
                    #"{"verifyReceiptURLs": ["https://buy.itunes.apple.com/verifyReceipt", "https://sandbox.itunes.apple.com/verifyReceipt"]}"#
                ).status == .ok)
        }
        // Allowed other URLs, but not internal addresses: the destinations' policy.
        let custom = try await Harness.openCore(
            try await TestDatabase.sqlite.fresh(), clock: clock, allowPrivateWebhooks: false, customAppleURLs: true)
        defer { Task { await custom.database.close() } }
        await #expect(throws: CoreError.self) {
            _ = try await custom.administration.create(
                Harness.config(
                    serverAPI: .init(issuerId: "i", keyId: "K", privateKey: ServerAPIKey.pem, baseURL: "http://169.254.169.254/")))
        }
        // A public address of someone else's: allowed by the operator's setting.
        _ = try await custom.administration.create(
            Harness.config(serverAPI: .init(issuerId: "i", keyId: "K", privateKey: ServerAPIKey.pem, baseURL: "https://17.253.144.10/")))
    }

    @Test("a redirect from the App Store Server API's URL is never followed: the app's token reaches no other URL")
    func noRedirectWithCredentials() async throws {
        let stolen = NIOLockedValueBox<[String]>([])
        let asked = NIOLockedValueBox(0)
        let router = Router()
        router.get("/stolen/**") { request, _ -> Response in
            stolen.withLockedValue { $0.append(request.headers[.authorization] ?? "") }
            return Response(status: .ok)
        }
        router.get("/inApps/**") { request, _ -> Response in
            asked.withLockedValue { $0 += 1 }
            return Response(status: .found, headers: [.location: "/stolen" + request.uri.path])
        }
        try await ReceiptAndReconciliationTests.withFakeAppleAPI(router) { credentials in
            let h = try await Harness.make(.sqlite, serverAPI: credentials)
            let purchase = Purchase(transactionId: "71", originalTransactionId: "71", purchase: at(0), expires: at(30), signed: at(0))
            try await h.test { client in
                let posted = try await client.execute(
                    uri: "/v1/customers/alice/transactions", method: .post, headers: headers(h.app.secretKey),
                    body: body(["signedTransaction": try purchase.signed()]))
                #expect(posted.status == .ok)
                try await eventually("the history pull asked the fake", seconds: 10) { asked.withLockedValue { $0 } > 0 }
            }
            #expect(stolen.withLockedValue { $0 }.isEmpty)
        }
    }

    @Test("the rates feed follows a redirect to a public or allowed address, never to one the policy refuses")
    func ratesRedirects() async throws {
        let xml = try RatesFeedTests.fixture()
        let router = Router()
        router.get("/ok.xml") { _, _ in xml }
        router.get("/moved.xml") { _, _ -> Response in Response(status: .movedPermanently, headers: [.location: "/ok.xml"]) }
        router.get("/metadata.xml") { _, _ -> Response in
            Response(status: .found, headers: [.location: "http://169.254.169.254/latest/meta-data/"])
        }
        router.get("/loop.xml") { _, _ -> Response in Response(status: .found, headers: [.location: "/loop.xml"]) }
        let fake = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await fake.test(.live) { fakeClient in
            let base = "http://127.0.0.1:\(try #require(fakeClient.port))"
            // Internal destinations allowed (the test's feed is on loopback): a redirect on loopback is followed.
            let open = try await Harness.make(.sqlite)
            let moved = await open.core.ratesFeed(url: base + "/moved.xml").fetch()
            #expect(moved.error == nil && moved.latestDay?.description == "2026-10-30", "\(moved)")
            let loop = await open.core.ratesFeed(url: base + "/loop.xml").fetch()
            #expect(loop.error?.contains("more than 3 redirects") == true, "\(loop)")
            await open.close()
            // Not allowed: the metadata address is not fetched.
            let strict = try await Harness.make(.sqlite, allowPrivateWebhooks: false)
            let metadata = await strict.core.ratesFeed(url: base + "/metadata.xml").fetch()
            #expect(metadata.error?.contains("169.254.169.254") == true && metadata.error?.contains("not followed") == true, "\(metadata)")
            await strict.close()
        }
    }
}
