import AppStoreSimulator
import Foundation
import StorekeeperSDK
import StorekeeperSDKTesting
import Testing

/// The app's tests on the SDK's simulated store: it signs transactions the way the App Store does, with no server and
/// no Apple device.
@Suite("The sample app on the simulated store")
struct PurchaseTests {
    static func store() throws -> SimulatedStoreClient {
        let ca = try SimulatorCA(validity: Date(timeIntervalSince1970: 1_700_000_000)...Date(timeIntervalSince1970: 2_100_000_000))
        let app = SimulatedApp(bundleId: "com.example.sample", environment: .sandbox, catalog: SimulatedApp.defaultCatalog)
        return try SimulatedStoreClient(model: StoreModel(app: app, ca: ca, time: .calendar, runId: 1, start: 1_767_571_200_000))
    }

    @Test("a purchase hands over a signed transaction that stays unfinished until the app finishes it")
    func purchase() async throws {
        let store = try Self.store()
        let outcome = try await store.purchase(productId: "pro.monthly", appAccountToken: UUID(), promotionalOffer: nil)
        guard case .purchased(let transaction) = outcome else {
            Issue.record("expected a purchase, got \(outcome)")
            return
        }
        #expect(transaction.productId == "pro.monthly")
        #expect(transaction.jwsRepresentation.split(separator: ".").count == 3)
        #expect(await store.unfinishedTransactions().map(\.id) == [transaction.id])
        await store.finish(transaction)
        #expect(await store.unfinishedTransactions().isEmpty)
        #expect(store.finishCount(transaction.id) == 1)
    }

    @Test("a product the store does not sell is a store error")
    func unknownProduct() async throws {
        let store = try Self.store()
        await #expect(throws: StorekeeperError.self) {
            _ = try await store.purchase(productId: "no.such.product", appAccountToken: nil, promotionalOffer: nil)
        }
    }
}
