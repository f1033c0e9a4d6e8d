import AppStore
import AppStoreSimulator
import Foundation
import Hummingbird
import HummingbirdTesting
import TestSupport
import Testing

@testable import AppStoreSimulatorAPI
@testable import StorekeeperCore
@testable import StorekeeperServer

/// A purchase made without the app's appAccountToken (in the App Store, or before the app passed one) is posted by the
/// app: with a Server API key, Storekeeper asks Apple to carry the customer's token from then on (Set App Account
/// Token), so the renewal's notification finds that customer by it.
@Suite("Set App Account Token")
struct AppAccountTokenTests {
    @Test("a tokenless purchase posted by the app: Apple is asked once to carry the customer's token; its renewal finds the customer")
    func tokenless() async throws {
        try await RefundRequestTests.withRig(.sqlite, policy: nil) { rig in
            let client = rig.client
            let admin = rig.admin
            let appUserId = "zoe@example.com"
            // Zoe bought in the App Store: no token on her transaction.
            try await rig.store.with { try $0.addCustomer("zoe", withToken: false) }
            try await rig.player.play(ScenarioStep(day: 0, .subscribe, customer: "zoe", product: "pro.monthly"))
            let signed = try #require(
                await rig.store.with { model in model.transactions.values.first { $0.value.productId == "pro.monthly" }?.jws })

            let posted = try await client.execute(
                uri: "/v1/customers/\(appUserId)/transactions", method: .post, headers: headers(rig.harness.app.publicKey),
                body: ByteBuffer(string: #"{"signedTransaction": "\#(signed)"}"#))
            #expect(posted.status == .ok, "\(String(buffer: posted.body))")
            #expect(rig.api.requests.withLockedValue { $0["appAccountToken"] } == 1)
            let token = AccountTokens.token(app: rig.appId, appUserId: appUserId)
            #expect(await rig.store.with { $0.appUserId(of: "zoe") } == token, "the store carries the customer's token from now on")

            // Her renewal a month later carries the token: it finds zoe@example.com, whose subscription renews.
            try await rig.player.play(ScenarioStep(day: 35, .wait))
            let renewed = await rig.store.with { $0.history.last?.notification }
            #expect(renewed?.type == .didRenew)
            let state = try decode(
                RescindedConsentTests.Customer.self,
                try await client.execute(uri: TruthCheck.customerPath(appUserId), method: .get, headers: admin))
            #expect(state.state == "active" && state.entitlements["pro"]?.active == true)
            let expected = try #require(await rig.store.with { $0.truth(of: "zoe") })
            let body = try await client.execute(uri: TruthCheck.customerPath(appUserId), method: .get, headers: admin)
            #expect(
                TruthCheck.compare(customerBody: Data(body.body.readableBytesView), truth: expected, catalog: EndToEndTests.catalog) == nil)

            // Posting again asks nothing more: the purchases now carry the token.
            let again = try await client.execute(
                uri: "/v1/customers/\(appUserId)/transactions", method: .post, headers: headers(rig.harness.app.publicKey),
                body: ByteBuffer(string: #"{"signedTransaction": "\#(signed)"}"#))
            #expect(again.status == .ok)
            #expect(rig.api.requests.withLockedValue { $0["appAccountToken"] } == 1)
        }
    }
}
