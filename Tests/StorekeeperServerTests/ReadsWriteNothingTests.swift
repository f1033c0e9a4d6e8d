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

/// Reads do not let a client grow the database at will (issue 61, item 3): an unknown app user id's first sighting is
/// recorded once, in a batch off the read's latency, at most `newIdsPerMinute` new ids a minute per client address;
/// sightings that never became a customer are pruned; a placement read past the allowance stores nothing.
@Suite("Reads write nothing at will")
struct ReadsWriteNothingTests {
    /// The production default.
    static let allowance = CoreSettings().newIdsPerMinute

    static func tokenRows(_ h: Harness) async throws -> Int {
        try await h.core.database.reading { session in
            try await session.sql.raw("SELECT COUNT(*) AS n FROM account_tokens").first()?.decode(column: "n", as: Int.self) ?? -1
        }
    }

    @Test("200 unknown ids read by one client: every read answered, nothing written by the reads, 120 recorded in one batch")
    func firstSightings() async throws {
        let h = try await Harness.make(.sqlite, newIdsPerMinute: Self.allowance)
        h.clock.set(at(1))
        try await h.application().test(.router) { client in
            for index in 0..<200 {
                let response = try await client.execute(
                    uri: "/v1/customers/reader-\(index)", method: .get, headers: headers(h.app.publicKey))
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains(AccountTokens.token(app: h.app.appId, appUserId: "reader-\(index)")))
            }
        }
        // The application's shutdown wrote the last batch before the database closed; reopen to count.
        let reopened = try await Harness.openCore(h.core.settings.database, clock: h.clock, newIdsPerMinute: Self.allowance)
        let rows = try await reopened.database.reading { session in
            try await session.sql.raw("SELECT COUNT(*) AS n FROM account_tokens").first()?.decode(column: "n", as: Int.self) ?? -1
        }
        #expect(rows == Self.allowance)
        await reopened.database.close()
    }

    @Test("per client: another address has its own allowance; a minute later more are recorded; reads wait for no write")
    func perClient() async throws {
        let h = try await Harness.make(.sqlite, newIdsPerMinute: Self.allowance)
        let tokens = h.core.accountTokens
        h.clock.set(at(1))
        for index in 0..<130 { _ = tokens.token(forRead: "a-\(index)", app: h.app.appId, client: "198.51.100.1") }
        for index in 0..<5 { _ = tokens.token(forRead: "b-\(index)", app: h.app.appId, client: "198.51.100.2") }
        // A UUID is its own token: nothing to record.
        _ = tokens.token(forRead: UUID().uuidString, app: h.app.appId, client: "198.51.100.2")
        #expect(try await Self.tokenRows(h) == 0)
        #expect(try await tokens.flush() == 125)
        #expect(try await Self.tokenRows(h) == 125)
        // Read again: already recorded, nothing new.
        for index in 0..<5 { _ = tokens.token(forRead: "b-\(index)", app: h.app.appId, client: "198.51.100.2") }
        #expect(try await tokens.flush() == 0)
        h.clock.set(at(1) + 60_000)
        for index in 130..<140 { _ = tokens.token(forRead: "a-\(index)", app: h.app.appId, client: "198.51.100.1") }
        #expect(try await tokens.flush() == 10)
        await h.close()
    }

    @Test("sightings that never became a customer are pruned after the retention; a customer's is kept", arguments: TestDatabase.available)
    func prune(database: TestDatabase) async throws {
        let h = try await Harness.make(database, newIdsPerMinute: Self.allowance)
        h.clock.set(at(1))
        let tokens = h.core.accountTokens
        _ = tokens.token(forRead: "window-shopper", app: h.app.appId, client: "198.51.100.1")
        _ = tokens.token(forRead: "buyer", app: h.app.appId, client: "198.51.100.1")
        try await tokens.flush()
        let purchase = Purchase(transactionId: "90", originalTransactionId: "90", purchase: at(1), expires: at(31), signed: at(1))
        try await h.test { client in
            let posted = try await client.execute(
                uri: "/v1/customers/buyer/transactions", method: .post, headers: headers(h.app.publicKey),
                body: body(["signedTransaction": try purchase.signed()]))
            #expect(posted.status == .ok)
            #expect(try await tokens.pruneUnclaimed() == 0)
            h.clock.set(at(32))
            #expect(try await tokens.pruneUnclaimed() == 1)
            let left = try await h.core.database.reading { session in
                try await session.sql.raw("SELECT app_user_id FROM account_tokens").all().map {
                    try $0.decode(column: "app_user_id", as: String.self)
                }
            }
            #expect(left == ["buyer"])
        }
    }

    @Test("a notification within a second of the first read, before the batch is written, still finds its customer by the token")
    func notificationBeforeTheBatch() async throws {
        let h = try await Harness.make(.sqlite, newIdsPerMinute: Self.allowance)
        h.clock.set(at(1))
        let token = h.core.accountTokens.token(forRead: "early-bird", app: h.app.appId, client: "198.51.100.3")
        #expect(try await Self.tokenRows(h) == 0)
        let purchase = Purchase(
            transactionId: "95", originalTransactionId: "95", purchase: at(1), expires: at(31), signed: at(1), token: token)
        try await h.test { client in
            let delivered = try await client.execute(
                uri: "/v1/apps/\(h.app.appId)/notifications/appstore", method: .post, headers: headers(nil),
                body: body(["signedPayload": try notification(.subscribed, purchase: purchase, signed: at(1))]))
            #expect(delivered.status == .ok)
            #expect(try customer(try await client.customer("early-bird", key: h.app.publicKey)).state == .active)
            // Registered with the notification, in its transaction.
            #expect(try await Self.tokenRows(h) == 1)
        }
    }

    struct Served: Decodable {
        struct Part: Decodable { var key: String }
        var experiment: Part?
    }

    @Test("a placement read past the client's allowance of new ids is answered outside the test, and stores no customer")
    func placementAllowance() async throws {
        let h = try await Harness.make(.sqlite, newIdsPerMinute: Self.allowance)
        h.clock.set(at(1))
        try await h.test { client in
            try await ExperimentAPITests.setUp(client, h)
            let base = "/v1/apps/\(h.app.appId)"
            #expect(
                try await client.send(.patch, base + "/experiments/paywall-test", h.app.secretKey, #"{"status": "running"}"#).status == .ok)
            let allowance = Self.allowance
            var outside = 0
            for index in 0..<(allowance + 10) {
                let response = try await client.send(
                    .get, "/v1/customers/visitor-\(index)/placements/onboarding", h.app.publicKey)
                #expect(response.status == .ok)
                if try decode(Served.self, response).experiment == nil { outside += 1 }
            }
            // Past the allowance every one is outside; within it, some are in the test (two equal arms, full coverage).
            #expect(outside == 10)
            let customers = try await h.core.database.reading { session in
                try await session.sql.raw("SELECT COUNT(*) AS n FROM customers").first()?.decode(column: "n", as: Int.self) ?? -1
            }
            #expect(customers == allowance)
        }
    }
}
