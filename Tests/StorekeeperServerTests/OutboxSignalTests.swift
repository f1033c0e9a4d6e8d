import Testing

@testable import StorekeeperCore

/// When a commit wakes the delivery worker: only for an app with an enabled destination, once the worker has looked.
@Suite("The outbox signal")
struct OutboxSignalTests {
    @Test("an ingest pokes the worker only for an app with an enabled destination; the worker's own pokes always")
    func pokesOnlyForAppsThatDeliver() async {
        let signal = OutboxSignal()
        // Before the worker's first look, every app's ingest pokes.
        signal.poke(app: "app_quiet")
        #expect(signal.isPending)
        await signal.wait(timeout: .seconds(60))
        #expect(!signal.isPending)

        signal.delivering(to: ["app_loud"])
        signal.poke(app: "app_quiet")
        #expect(!signal.isPending, "an app without an enabled destination has nothing to send")
        signal.poke(app: "app_loud")
        #expect(signal.isPending)
        await signal.wait(timeout: .seconds(60))

        // An operator's change (a destination created or enabled, a retry) pokes whatever the worker last read.
        signal.delivering(to: [])
        signal.poke()
        #expect(signal.isPending)
        await signal.wait(timeout: .seconds(60))
        #expect(!signal.isPending)
    }
}
