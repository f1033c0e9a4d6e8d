import Foundation

#if Server
    import AsyncHTTPClient
    import NIOCore
#endif

/// The store behind a lock: the run performs actions on it while the fake Server API reads it.
public actor SimulatedStore {
    public private(set) var model: StoreModel

    public init(_ model: StoreModel) { self.model = model }

    /// Runs `body` on the model, alone.
    public func with<T: Sendable>(_ body: @Sendable (inout StoreModel) throws -> T) rethrows -> T {
        try body(&model)
    }

    public func recordAttempt(_ uuid: String, at instant: Int64, result: String) {
        model.recordAttempt(uuid, at: instant, result: result)
    }
}

/// Faults in delivery, each a probability per notification, drawn from the run's seed.
public struct FaultPlan: Codable, Hashable, Sendable {
    /// Delivered twice.
    public var duplicate: Double
    /// Held back and delivered after the next one.
    public var reorder: Double
    /// Never delivered: every attempt fails, as when the server is unreachable; it stays in Notification History
    /// as a failure, for reconciliation to find.
    public var drop: Double
    /// Delivered at the next step, later in simulated time.
    public var delay: Double

    public init(duplicate: Double = 0, reorder: Double = 0, drop: Double = 0, delay: Double = 0) {
        self.duplicate = duplicate
        self.reorder = reorder
        self.drop = drop
        self.delay = delay
    }

    public static let none = FaultPlan()
}

/// SplitMix64: small, fast and the same on every platform, so a seed repeats a run exactly.
public struct SimulatorRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { p > 0 && Double.random(in: 0..<1, using: &self) < p }
}

/// Posts a notification's `{"signedPayload": …}`; answers the HTTP status, or nil when there was no response.
public typealias WebhookSender = @Sendable (SimulatedNotification) async -> Int?

public enum Webhook {
    /// Apple's `sendAttemptResult` for a delivered notification.
    public static let success = "SUCCESS"

    /// Apple's `sendAttemptResult` for an attempt that got `status` (nil: no response).
    public static func attemptResult(status: Int?) -> String {
        guard let status else { return "NO_RESPONSE" }
        return (200..<300).contains(status) ? success : "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
    }

    /// The body Apple posts.
    public static func body(_ notification: SimulatedNotification) -> [UInt8] {
        Array(#"{"signedPayload":""#.utf8) + Array(notification.signedPayload.utf8) + Array(#""}"#.utf8)
    }

    #if Server
        /// The App Store's way to post: a refused or failed connection is a failed attempt, left to Apple's retry
        /// schedule (AsyncHTTPClient's default would keep reconnecting until the request's deadline). It lives as long
        /// as the process, so it is never shut down.
        public static let client: HTTPClient = {
            var configuration = HTTPClient.Configuration()
            configuration.timeout = HTTPClient.Configuration.Timeout(connect: .seconds(5), read: .seconds(30))
            configuration.connectionPool.retryConnectionEstablishment = false
            return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        }()

        /// A sender that posts to `url` with AsyncHTTPClient. Every failed attempt is told to `failed` at once, in words:
        /// the server's status and the start of its error body, or why no answer came (Apple retries either way, and so
        /// does the simulator, but a user should see at once why the server refused).
        public static func http(
            _ url: String, client: HTTPClient = Webhook.client, timeout: TimeAmount = .seconds(30),
            failed: (@Sendable (String) -> Void)? = nil
        ) -> WebhookSender {
            { notification in
                var request = HTTPClientRequest(url: url)
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: body(notification)))
                do {
                    let response = try await client.execute(request, timeout: timeout)
                    let answer = try? await response.body.collect(upTo: 1 << 20)
                    let status = Int(response.status.code)
                    if !(200..<300).contains(status), let failed {
                        failed(refusal(status: status, body: answer.map { String(buffer: $0) } ?? ""))
                    }
                    return status
                } catch {
                    failed?("no answer from \(url): \(error)")
                    return nil
                }
            }
        }
    #endif

    /// A refused delivery in words: `the server answered 403: invalidAppIdentifier: …` (the error's code and message
    /// when the body is the server's error document, else the body's first 300 characters).
    public static func refusal(status: Int, body: String) -> String {
        struct ErrorDocument: Decodable {
            struct Inner: Decodable {
                var code: String
                var message: String
            }
            var error: Inner
        }
        if let document = try? JSONDecoder().decode(ErrorDocument.self, from: Data(body.utf8)) {
            return "the server answered \(status): \(document.error.code): \(document.error.message)"
        }
        let text = body.trimmingCharacters(in: .whitespacesAndNewlines)
        return "the server answered \(status)" + (text.isEmpty ? "" : ": \(text.prefix(300))")
    }
}

/// What delivery did in a run.
public struct DeliveryStats: Codable, Hashable, Sendable, CustomStringConvertible {
    public var attempts = 0
    public var delivered = 0
    public var duplicated = 0
    public var reordered = 0
    public var delayed = 0
    public var dropped = 0
    public var retries = 0
    /// Notifications still undelivered after Apple's last retry.
    public var failed = 0

    public var description: String {
        "attempts \(attempts), delivered \(delivered), duplicated \(duplicated), reordered \(reordered), delayed \(delayed), dropped \(dropped), retries \(retries), failed \(failed)"
    }
}

/// Delivers notifications to a webhook as the App Store does: at once, and when that fails, again 1, 12, 24, 48
/// and 72 hours after the previous attempt (Apple's schedule for version 2 notifications), on the store's time, so
/// compressed time compresses the retries too. Faults come from the seed.
public struct Delivery: Sendable {
    /// Apple's retry delays after each failed attempt, in hours.
    public static let retryHours: [Int64] = [1, 12, 24, 48, 72]

    let send: WebhookSender
    let faults: FaultPlan
    let time: PeriodTime
    var random: SimulatorRandom
    var delayed: [SimulatedNotification] = []
    var held: SimulatedNotification?
    var retries: [(at: Int64, failures: Int, notification: SimulatedNotification)] = []
    public private(set) var stats = DeliveryStats()
    /// With lanes, attempts are sent several at once (each customer's in order) and their answers recorded when
    /// next looked at (`recordAnswered`); without, each is sent and recorded before the next.
    let lanes: DeliveryLanes?

    public init(
        send: @escaping WebhookSender, faults: FaultPlan = .none, time: PeriodTime = .calendar, seed: UInt64 = 0, lanes: Int = 1
    ) {
        self.send = send
        self.faults = faults
        self.time = time
        self.random = SimulatorRandom(seed: seed ^ 0x5EED_DE11_7E57)
        self.lanes = lanes > 1 ? DeliveryLanes(count: lanes, send: send) : nil
    }

    /// Whether anything waits: delayed, held back or due for a retry.
    public var pending: Bool { !delayed.isEmpty || held != nil || !retries.isEmpty }

    func retryDelay(afterFailures failures: Int) -> Int64 {
        let hours = Self.retryHours[min(failures, Self.retryHours.count) - 1]
        return time.days(1) * hours / 24
    }

    /// Delivers what a step produced at `now`, after what was delayed from earlier steps and the retries now due.
    public mutating func deliver(_ batch: [SimulatedNotification], store: SimulatedStore, now: Int64) async {
        await recordAnswered(store: store)
        let earlier = delayed
        delayed = []
        for notification in earlier { await attempt(notification, store: store, now: now) }
        await retryDue(store: store, now: now)
        for notification in batch {
            if random.chance(faults.drop) {
                stats.dropped += 1
                var at = now
                for failures in 0...Self.retryHours.count {
                    if failures > 0 { at += retryDelay(afterFailures: failures) }
                    await store.recordAttempt(notification.uuid, at: at, result: Webhook.attemptResult(status: nil))
                }
                stats.failed += 1
                continue
            }
            if random.chance(faults.delay) {
                stats.delayed += 1
                delayed.append(notification)
                continue
            }
            if held == nil, random.chance(faults.reorder) {
                stats.reordered += 1
                held = notification
                continue
            }
            await attempt(notification, store: store, now: now)
            if random.chance(faults.duplicate) {
                stats.duplicated += 1
                await attempt(notification, store: store, now: now)
            }
            if let late = held {
                held = nil
                await attempt(late, store: store, now: now)
            }
        }
    }

    /// Attempts the retries due by `now`.
    public mutating func retryDue(store: SimulatedStore, now: Int64, all: Bool = false) async {
        let due = retries.filter { all || $0.at <= now }.sorted { $0.at < $1.at }
        retries.removeAll { all || $0.at <= now }
        for retry in due {
            stats.retries += 1
            await attempt(retry.notification, store: store, now: now, failures: retry.failures)
        }
    }

    /// Sends everything still waiting (delayed, held back, and retries whatever their time), as at the end of a run.
    public mutating func drain(store: SimulatedStore, now: Int64) async {
        var rounds = 0
        await settle(store: store)
        while pending, rounds <= Self.retryHours.count {
            rounds += 1
            let waiting = delayed + (held.map { [$0] } ?? [])
            delayed = []
            held = nil
            for notification in waiting { await attempt(notification, store: store, now: now) }
            await retryDue(store: store, now: now, all: true)
            await settle(store: store)
        }
    }

    /// With lanes: waits for every attempt under way and records their answers (retries they need included).
    public mutating func settle(store: SimulatedStore) async {
        guard let lanes else { return }
        await lanes.idle()
        await recordAnswered(store: store)
    }

    /// With lanes: records the answers that came back since last time.
    mutating func recordAnswered(store: SimulatedStore) async {
        guard let lanes else { return }
        for answered in lanes.collect() {
            await record(answered.notification, status: answered.status, store: store, now: answered.now, failures: answered.failures)
        }
    }

    mutating func attempt(_ notification: SimulatedNotification, store: SimulatedStore, now: Int64, failures: Int = 0) async {
        stats.attempts += 1
        if let lanes {
            await lanes.submit(notification, now: now, failures: failures)
        } else {
            await record(notification, status: await send(notification), store: store, now: now, failures: failures)
        }
    }

    /// One attempt's answer: in the store's notification history, and a retry on Apple's schedule when it failed.
    mutating func record(_ notification: SimulatedNotification, status: Int?, store: SimulatedStore, now: Int64, failures: Int) async {
        let result = Webhook.attemptResult(status: status)
        await store.recordAttempt(notification.uuid, at: now, result: result)
        if result == Webhook.success {
            stats.delivered += 1
        } else if failures < Self.retryHours.count {
            retries.append((now + retryDelay(afterFailures: failures + 1), failures + 1, notification))
        } else {
            stats.failed += 1
        }
    }
}
