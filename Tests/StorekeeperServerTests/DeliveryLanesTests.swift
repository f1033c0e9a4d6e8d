import AppStoreSimulator
import Foundation
import NIOConcurrencyHelpers
import TestSupport
import Testing

/// The simulator's `--concurrency`: notifications sent several at once, each customer's in the order the store made them,
/// every answer recorded and every failure retried as when they go one at a time.
@Suite("Simulator: delivery on several lanes")
struct DeliveryLanesTests {
    /// What the fake webhook saw.
    struct Seen {
        var firstAttempts: [String: [String]] = [:]
        var attempts: [String: Int] = [:]
        var inFlight = 0
        var mostInFlight = 0
    }

    @Test("eight lanes: several at once, each customer's in order, failures retried, every attempt in the history")
    func lanes() async throws {
        let population = Population(customers: 60, days: 120, seed: 11).scenario(catalog: EndToEndTests.catalog)
        let store = SimulatedStore(StoreModel(app: EndToEndTests.simulatedApp(), ca: testCA, runId: 31, start: at(0)))
        let seen = NIOLockedValueBox(Seen())
        let sender: WebhookSender = { notification in
            let first = seen.withLockedValue { seen -> Bool in
                seen.attempts[notification.uuid, default: 0] += 1
                seen.inFlight += 1
                seen.mostInFlight = max(seen.mostInFlight, seen.inFlight)
                guard seen.attempts[notification.uuid] == 1 else { return false }
                seen.firstAttempts[notification.customer ?? "-", default: []].append(notification.uuid)
                return true
            }
            try? await Task.sleep(for: .milliseconds(1))
            seen.withLockedValue { $0.inFlight -= 1 }
            // Every seventh notification's first attempt fails (a 500): Apple, and the simulator, retry it.
            return first && notification.uuid.utf8.reduce(0, { $0 &+ Int($1) }) % 7 == 0 ? 500 : 200
        }
        let player = ScenarioPlayer(
            store: store, delivery: Delivery(send: sender, seed: 3, lanes: 8), start: at(0), clock: .virtual)
        for step in population.steps { try await player.play(step, lenient: true) }
        try await player.advance(to: at(121))
        await player.drain()

        let history = await store.with { $0.history }
        let state = seen.withLockedValue { $0 }
        #expect(history.count > 150)
        #expect(state.mostInFlight > 1, "one at a time: the lanes did not overlap")
        #expect(state.mostInFlight <= 8)
        // Each customer's first attempts in the order the store made the notifications.
        var made: [String: [String]] = [:]
        for entry in history { made[entry.notification.customer ?? "-", default: []].append(entry.notification.uuid) }
        #expect(state.firstAttempts == made)
        // Everything delivered, the failed ones on their retry, and each attempt in the store's history.
        #expect(history.allSatisfy { $0.delivered })
        let retried = state.attempts.values.filter { $0 == 2 }.count
        #expect(retried > 0)
        #expect(state.attempts.values.allSatisfy { $0 <= 2 })
        #expect(player.delivery.stats.delivered == history.count)
        #expect(player.delivery.stats.attempts == history.count + retried)
        #expect(player.delivery.stats.retries == retried)
        #expect(history.map(\.attempts.count).reduce(0, +) == history.count + retried)
        #expect(!player.delivery.pending)
    }
}
