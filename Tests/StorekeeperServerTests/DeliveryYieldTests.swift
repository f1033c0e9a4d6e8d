import Configuration
import Testing

@testable import StorekeeperCore

/// How deliveries give way to ingest: the busy time ingest is measured by, and the rest a lane takes after a batch.
@Suite("Deliveries give way to ingest")
struct DeliveryYieldTests {
    /// Instants on the harness's hand-set clock (ms from a fixed start).
    static func activity(_ clock: TestClock) -> IngestActivity {
        let start = ContinuousClock.now
        return IngestActivity(now: { start + .milliseconds(clock.now) })
    }

    @Test("busy time is the time with at least one ingest running, overlapping ones counted once")
    func busyTimeIsTheUnionOfIngests() async {
        let clock = TestClock(0)
        let activity = Self.activity(clock)
        let start = activity.read()
        clock.set(clock.now + 10)
        #expect(activity.busyShare(since: start) == 0)
        await activity.measure {
            clock.set(clock.now + 20)
            // A second ingest while the first runs adds no busy time of its own.
            await activity.measure { clock.set(clock.now + 30) }
            clock.set(clock.now + 10)
        }
        clock.set(clock.now + 30)
        // 60 ms busy of 100.
        #expect(activity.read().busy == .milliseconds(60))
        #expect(abs(activity.busyShare(since: start) - 0.6) < 1e-9)
        let later = activity.read()
        clock.set(clock.now + 50)
        #expect(activity.busyShare(since: later) == 0)
    }

    @Test("an ingest still running counts up to now, and one that fails counts too")
    func runningAndFailedIngestsCount() async throws {
        let clock = TestClock(0)
        let activity = Self.activity(clock)
        let start = activity.read()
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await activity.measure {
                clock.set(clock.now + 40)
                throw Refused()
            }
        }
        clock.set(clock.now + 60)
        #expect(abs(activity.busyShare(since: start) - 0.4) < 1e-9)
        let (entered, release) = AsyncStream.makeStream(of: Void.self)
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let running = Task {
            await activity.measure {
                release.yield()
                for await _ in gate { break }
            }
        }
        for await _ in entered { break }
        let during = activity.read()
        clock.set(clock.now + 25)
        #expect(activity.busyShare(since: during) == 1)
        open.yield()
        await running.value
        #expect(activity.read().busy == .milliseconds(65))
    }

    @Test("a lane rests yield × busy share × its batch's time, at most the longest rest, and not at all when ingest is idle")
    func restAfterABatch() {
        let batch = Duration.milliseconds(100)
        #expect(DeliveryWorker.rest(worked: batch, idle: .zero, busyShare: 1, yield: 3, longest: .seconds(1)) == .milliseconds(300))
        #expect(DeliveryWorker.rest(worked: batch, idle: .zero, busyShare: 0.5, yield: 3, longest: .seconds(1)) == .milliseconds(150))
        #expect(DeliveryWorker.rest(worked: batch, idle: .zero, busyShare: 0, yield: 3, longest: .seconds(1)) == .zero)
        #expect(DeliveryWorker.rest(worked: batch, idle: .zero, busyShare: 1, yield: 0, longest: .seconds(1)) == .zero)
        #expect(DeliveryWorker.rest(worked: .seconds(2), idle: .zero, busyShare: 1, yield: 3, longest: .seconds(1)) == .seconds(1))
        // The time a caught-up lane already spent gathering counts towards its rest.
        #expect(
            DeliveryWorker.rest(worked: batch, idle: .milliseconds(200), busyShare: 1, yield: 3, longest: .seconds(1)) == .milliseconds(100)
        )
        #expect(DeliveryWorker.rest(worked: batch, idle: .milliseconds(400), busyShare: 1, yield: 3, longest: .seconds(1)) == .zero)
    }

    @Test("STOREKEEPER_DELIVERY_YIELD is a number from 0 to 100, 10 unless set; anything else is refused by name")
    func yieldSetting() throws {
        func settings(_ yield: String?) throws(SettingError) -> CoreSettings {
            var values: [AbsoluteConfigKey: ConfigValue] = [:]
            if let yield {
                values[AbsoluteConfigKey(stringLiteral: CoreSettings.Key.deliveryYield)] = ConfigValue(.string(yield), isSecret: false)
            }
            return try CoreSettings(reader: ConfigReader(providers: [InMemoryProvider(name: "test", values: values)]))
        }
        #expect(try settings(nil).deliveryYield == 10)
        #expect(try settings("0").deliveryYield == 0)
        #expect(try settings("1.5").deliveryYield == 1.5)
        for refused in ["-1", "101", "nan", "inf", "fast"] {
            #expect {
                _ = try settings(refused)
            } throws: { error in
                (error as? SettingError)?.key == "storekeeper.delivery.yield" && "\(error)".contains("'\(refused)'")
            }
        }
    }
}
