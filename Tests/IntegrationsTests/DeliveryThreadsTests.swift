import Integrations
import Testing

@Suite struct DeliveryThreadsTests {
    /// Work that prefers the delivery threads runs there, child tasks included; the caller's work stays where it was.
    @Test func deliveriesRunOnTheirOwnThreads() async {
        let threads = DeliveryThreads.shared
        #expect(!threads.isCurrent)
        let (own, child, grouped) = await withTaskExecutorPreference(threads) {
            async let child = threads.isCurrent
            let grouped = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<4 { group.addTask { threads.isCurrent } }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            return (threads.isCurrent, await child, grouped)
        }
        #expect(own && child)
        #expect(grouped == [true, true, true, true])
        #expect(!threads.isCurrent)
    }
}
