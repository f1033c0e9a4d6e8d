import Foundation
import Integrations
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle
import Storage

/// Sends the outbox's deliveries while the server runs.
///
/// Each enabled destination with something due gets a lane of its own, so a slow or failing destination never holds
/// up another. A lane claims a batch of due deliveries under a lease (a claim pushes `next_attempt_at` past the
/// batch's end; on PostgreSQL rows another server is claiming are skipped), reads their messages, sends them outside
/// any transaction (at most the destination's concurrency at once, no faster than its rate limit), and records every
/// outcome in one transaction, each only if its claim still holds. While a batch is sent the next one is claimed and
/// read, so the database's round trips overlap the requests; a claimed batch whose lease is a quarter gone before its
/// turn is given back untried. A lease that runs out (a killed server) makes the
/// rows due again: a delivery is sent at least once, with the same id every time.
///
/// Deliveries give way to ingest: while notifications or purchases are being recorded, a lane rests after each batch
/// in proportion to how busy ingest was (`yield`, at most `longestRest`), so a server saturated by Apple's
/// notifications spends its cores on them first; what waits goes out as soon as ingest quietens.
///
/// On graceful shutdown requests in flight finish and are recorded; a batch claimed ahead is given back untried.
///
/// All of it runs on `DeliveryThreads`, apart from the threads that answer requests.
public struct DeliveryWorker: Service {
    let database: StorageDatabase
    let registry: AppRegistry
    let sender: DeliverySender
    let signal: OutboxSignal
    /// How busy ingest is: lanes give way to it (`yield`).
    let activity: IngestActivity
    let metrics: ServerMetrics
    let logger: Logger
    let clock: @Sendable () -> Date
    /// How long a claimed batch may take before its rows are due again.
    let lease: Duration
    /// While ingest is busy, how many times as long as a batch took a lane rests after it (scaled by ingest's busy
    /// share; see `CoreSettings.deliveryYield`).
    let yield: Double
    /// The longest rest after one batch: a second, and well within a claim's lease (an eighth of it), so the batch
    /// claimed meanwhile stays usable.
    var longestRest: Duration
    /// How often due deliveries are looked for without a poke (retries come due this way).
    var pollInterval: Duration = .seconds(1)
    /// How often the queue's depth is measured for `/metrics`.
    var depthInterval: Duration = .seconds(10)
    /// The least time between two looks for due deliveries: a burst of commits (each pokes) is looked at once, not
    /// once per commit. Running lanes claim on their own meanwhile.
    var scanSpacing: Duration = .milliseconds(25)
    /// How long a lane that has caught up (its last claim was not full) waits before claiming again: the deliveries
    /// that come due meanwhile go out in one batch, at a claim's and a record's cost, instead of one by one as each
    /// commit makes them due.
    var gatherDelay: Duration = .milliseconds(200)
    private let lanes = NIOLockedValueBox(Set<String>())
    /// The waits destinations asked for with a 429, by integration id, while they last: a held destination gets no
    /// lane, and a held key's deliveries wait (uncounted) until the hold ends, so each lane keeps its order. Kept in
    /// this process: another server on the same PostgreSQL learns of a wait from its own 429.
    private let holds = NIOLockedValueBox([String: ThrottleHolds]())

    init(
        database: StorageDatabase, registry: AppRegistry, sender: DeliverySender, signal: OutboxSignal, activity: IngestActivity,
        metrics: ServerMetrics, logger: Logger, clock: @escaping @Sendable () -> Date, lease: Duration, yield: Double
    ) {
        self.database = database
        self.registry = registry
        self.sender = sender
        self.signal = signal
        self.activity = activity
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        self.lease = lease
        self.yield = yield
        self.longestRest = min(.seconds(1), lease / 8)
    }

    private var now: Int64 { clock().millisecondsSince1970 }

    public func run() async throws {
        // Everything the worker does runs on the delivery threads, never queued ahead of a request's work.
        await withTaskExecutorPreference(DeliveryThreads.shared) { await work() }
    }

    private func work() async {
        if database.kind == .sqlite {
            // One server writes a SQLite file: leases left in it are a previous run's, killed mid-batch.
            let now = self.now
            do { try await database.writing { try await $0.releaseAllDeliveryLeases(at: now) } } catch {
                if !Task.isCancelled {
                    logger.warning("could not release the previous run's delivery leases", metadata: ["error": "\(error)"])
                }
            }
        }
        await withDiscardingTaskGroup { group in
            var depthMeasured: ContinuousClock.Instant?
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                do {
                    for integration in try await dueIntegrations() {
                        group.addTask {
                            await self.serve(integration)
                            self.lanes.withLockedValue { _ = $0.remove(integration.id) }
                            // Whatever came due meanwhile is looked at now rather than at the next poll.
                            self.signal.poke()
                        }
                    }
                    if depthMeasured.map({ ContinuousClock.now - $0 >= depthInterval }) ?? true {
                        depthMeasured = .now
                        metrics.outbox(try await database.reading { try await $0.outboxDepth() }, now: now)
                    }
                } catch {
                    logger.warning("could not look for due deliveries", metadata: ["error": "\(error)"])
                }
                let signal = self.signal
                let pollInterval = self.pollInterval
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: scanSpacing) }
                await withGracefulShutdownHandler {
                    await signal.wait(timeout: pollInterval)
                } onGracefulShutdown: {
                    signal.poke()
                }
            }
        }
    }

    /// The enabled destinations without a lane that have a delivery due, each now marked as having one. Tells the signal
    /// which apps have an enabled destination, read at the same time (`OutboxSignal.poke(app:)`).
    private func dueIntegrations() async throws -> [IntegrationRecord] {
        let now = self.now
        let enabled = try await database.reading { try await $0.enabledIntegrations(dueAt: now) }
        let due = enabled.due
        signal.delivering(to: enabled.apps)
        let held = holds.withLockedValue { holds in
            for id in holds.keys { holds[id]?.expire(now: now) }
            holds = holds.filter { !$0.value.isEmpty }
            return Set(holds.filter { $0.value.destinationHeld(now: now) }.keys)
        }
        return due.filter { integration in
            !held.contains(integration.id) && lanes.withLockedValue { $0.insert(integration.id).inserted }
        }
    }

    /// One destination's lane: batches until nothing is due, the server stops, or the destination is disabled.
    func serve(_ integration: IntegrationRecord) async {
        let id = integration.id
        do {
            let secrets = try await database.reading { try await IntegrationAdministration.secrets($0, id) }
            let bundleId = try await registry.app(id: integration.appId).config.bundleId
            let schedule = integration.retrySchedule.flatMap { try? RetrySchedule(seconds: $0) } ?? .standardWebhooks
            let secretValues = DeliverySender.secretValues(secrets)
            let destination: any Destination
            do {
                destination = try DeliverySender.destination(integration, secrets: secrets, now: now)
            } catch {
                let reason = "the destination cannot be used: \(error)"
                let now = self.now
                _ = try await database.writing { try await $0.disableIntegration(id: id, reason: reason, at: now) }
                logger.error("disabled a destination", metadata: ["integration": "\(id)", "reason": "\(reason)"])
                return
            }
            var pacer = Pacer(interval: destination.minimumInterval)
            let lane = Lane(
                integration: integration, bundleId: bundleId, destination: destination, schedule: schedule, limit: destination.claimLimit,
                leaseMs: lease.wholeMilliseconds)
            var batch = try await claim(lane)
            var ingest = activity.read()
            while let current = batch {
                if Task.isShuttingDownGracefully {
                    try await release(current, lane)
                    return
                }
                // Claimed while the batch before was sent: if that took long, too little of this one's lease is left
                // to send it (another server could claim the rows meanwhile), so it goes back and a fresh claim follows.
                if now - current.claimedAt > lane.leaseMs / 4 {
                    try await release(current, lane)
                    batch = try await claim(lane)
                    continue
                }
                // The next batch is claimed and read while this one is sent: the database's round trips overlap the
                // requests instead of following them. Once the lane has caught up, it gathers for a moment first.
                let gather = current.claimed.count < lane.limit ? gatherDelay : .zero
                // Timed on the clock ingest's busy share is measured with.
                let started = activity.now()
                async let following = claim(lane, after: gather)
                let judged = await judge(current, lane, secrets: secretValues, pacer: &pacer)
                try await record(judged, lane, token: current.token)
                let recorded = activity.now()
                let next = try await following
                if let disable = judged.disable {
                    if let next { try await release(next, lane) }
                    logger.error(
                        "disabled a destination after a permanent answer", metadata: ["integration": "\(id)", "reason": "\(disable)"])
                    return
                }
                if judged.moved != nil {
                    if let next { try await release(next, lane) }
                    // The next lane reads the new configuration.
                    logger.notice("a destination moved; its configuration was updated", metadata: ["integration": "\(id)"])
                    return
                }
                if destinationHeld(id) {
                    // A 429 holds the whole destination: the lane ends, and the next one starts when the wait is over,
                    // with the refused delivery first.
                    if let next { try await release(next, lane) }
                    return
                }
                await giveWay(worked: recorded - started, idle: activity.now() - recorded, since: &ingest)
                batch = next
            }
        } catch {
            // The claimed rows come back when their lease ends.
            logger.warning("a delivery batch failed", metadata: ["integration": "\(id)", "error": "\(error)"])
        }
    }

    /// After a batch sent and recorded in `worked`, and `idle` spent waiting for the next claim (a caught-up lane's
    /// gathering): rests until the lane has been idle `yield` times as long as it worked, scaled by the share of the
    /// time since the last batch during which notifications or purchases were being ingested (at most `longestRest`),
    /// so that a busy server's cores go to recording what Apple says first. With nothing ingested, the next batch
    /// follows at once.
    private func giveWay(worked: Duration, idle: Duration, since reading: inout IngestActivity.Reading) async {
        let rest = Self.rest(
            worked: worked, idle: idle, busyShare: activity.busyShare(since: reading), yield: yield, longest: longestRest)
        reading = activity.read()
        guard rest > .zero else { return }
        try? await cancelWhenGracefulShutdown { try await Task.sleep(for: rest) }
    }

    /// `yield` × `busyShare` times `worked` (at most `longest`), less the `idle` time already spent; nothing when
    /// ingest was idle or `yield` is 0.
    static func rest(worked: Duration, idle: Duration, busyShare: Double, yield: Double, longest: Duration) -> Duration {
        guard yield > 0, busyShare > 0, worked > .zero else { return .zero }
        return max(.zero, min(longest, worked * (yield * busyShare)) - idle)
    }

    /// What a lane sends to, and how.
    struct Lane: Sendable {
        let integration: IntegrationRecord
        let bundleId: String
        let destination: any Destination
        let schedule: RetrySchedule
        let limit: Int
        let leaseMs: Int64
    }

    /// A claimed batch: its deliveries with their messages, and the attempts already known (events no longer stored).
    struct ClaimedBatch: Sendable {
        let token: String
        let claimedAt: Int64
        let claimed: [DeliveryRecord]
        let sendable: [(DeliveryRecord, OutboundEvent)]
        let attempts: [AttemptRecord]
    }

    /// A sent batch's outcomes, and what they say about the destination.
    struct JudgedBatch: Sendable {
        let attempts: [AttemptRecord]
        let disable: String?
        let moved: [String: String]?
    }

    /// Claims the lane's next due deliveries under a lease and reads their messages, after `delay` (cut short when the
    /// server stops); nil when nothing is due.
    private func claim(_ lane: Lane, after delay: Duration = .zero) async throws -> ClaimedBatch? {
        if delay > .zero { try? await cancelWhenGracefulShutdown { try await Task.sleep(for: delay) } }
        let id = lane.integration.id
        let claimedAt = now
        let token = Hex.random(bytes: 8)
        let claimed = try await database.writing {
            try await $0.claimDeliveries(
                integration: id, now: claimedAt, leaseUntil: claimedAt + lane.leaseMs, token: token, limit: lane.limit)
        }
        if claimed.isEmpty { return nil }
        let messages = try await database.reading {
            try await OutboundEvents.read(
                claimed, appId: lane.integration.appId, bundleId: lane.bundleId, details: lane.destination.details, session: $0)
        }
        var attempts: [AttemptRecord] = []
        var sendable: [(DeliveryRecord, OutboundEvent)] = []
        for delivery in claimed {
            if let message = messages[delivery.eventSeq] {
                sendable.append((delivery, message))
            } else {
                attempts.append(
                    Self.attempt(delivery, .rejected(reason: "the event is no longer stored"), nil, schedule: lane.schedule, now: claimedAt)
                )
            }
        }
        return ClaimedBatch(token: token, claimedAt: claimedAt, claimed: claimed, sendable: sendable, attempts: attempts)
    }

    /// Gives a claimed batch back untried: due at once (for this lane's next claim, or another server's).
    private func release(_ batch: ClaimedBatch, _ lane: Lane) async throws {
        let now = self.now
        let id = lane.integration.id
        let seqs = batch.claimed.map(\.eventSeq)
        try await database.writing { try await $0.releaseDeliveries(integration: id, eventSeqs: seqs, token: batch.token, at: now) }
    }

    /// Whether a 429 holds the whole destination now.
    private func destinationHeld(_ id: String) -> Bool {
        let now = self.now
        return holds.withLockedValue { $0[id]?.destinationHeld(now: now) ?? false }
    }

    /// Sends a claimed batch and judges every delivery by its answer.
    private func judge(_ batch: ClaimedBatch, _ lane: Lane, secrets: [String], pacer: inout Pacer) async -> JudgedBatch {
        let kind = lane.integration.kind
        let sendable = batch.sendable
        let groups = lane.destination.batches(sendable.map(\.1)).map { Array(sendable[$0]) }
        let outcomes = await send(
            groups.map { $0.map(\.1) }, via: lane.destination, integration: lane.integration.id, secrets: secrets, pacer: &pacer)
        var attempts = batch.attempts
        var disabledFor: String?
        var movedTo: [String: String]?
        let now = self.now
        for (group, outcome) in zip(groups, outcomes) {
            for ((delivery, _), verdict) in zip(group, outcome.verdicts) {
                let attempt = Self.attempt(delivery, verdict, outcome, schedule: lane.schedule, now: now)
                attempts.append(attempt)
                switch verdict {
                case .disableDestination(let reason):
                    disabledFor = reason
                    metrics.delivery(kind: kind, outcome: "disabled")
                case .moved(_, let config):
                    movedTo = (movedTo ?? [:]).merging(config) { _, new in new }
                    metrics.delivery(kind: kind, outcome: "moved")
                case .retryNow:
                    metrics.delivery(kind: kind, outcome: "requeued")
                case .throttled:
                    metrics.delivery(kind: kind, outcome: "throttled")
                case .delivered, .retry, .rejected:
                    metrics.delivery(kind: kind, outcome: attempt.status.rawValue)
                }
            }
        }
        return JudgedBatch(attempts: attempts, disable: disabledFor, moved: movedTo)
    }

    /// Records a judged batch's outcomes (each only if its claim still holds) and what they did to the destination.
    private func record(_ judged: JudgedBatch, _ lane: Lane, token: String) async throws {
        let id = lane.integration.id
        let finishedAt = now
        try await database.writing { session in
            try await session.recordAttempts(judged.attempts, integration: id, token: token)
            if let disable = judged.disable { try await session.disableIntegration(id: id, reason: disable, at: finishedAt) }
            if let moved = judged.moved, judged.disable == nil {
                try await session.mergeIntegrationConfig(id: id, fields: moved, at: finishedAt)
            }
        }
    }

    /// Sends each group as one request: up to the destination's concurrency at once, starts spaced by its rate limit.
    /// What a 429 holds (the whole destination, or some of its keys) is not sent: it waits for the hold, uncounted,
    /// and a 429 that comes back holds what follows it.
    private func send(
        _ groups: [[OutboundEvent]], via destination: any Destination, integration id: String, secrets: [String], pacer: inout Pacer
    ) async -> [SendOutcome] {
        var outcomes = [SendOutcome?](repeating: nil, count: groups.count)
        let sender = self.sender
        let clock = self.clock
        await withTaskGroup(of: StartedGroup.self) { tasks in
            var next = 0
            var inFlight = 0
            while next < groups.count || inFlight > 0 {
                while next < groups.count && inFlight < max(1, destination.concurrency) {
                    let index = next
                    next += 1
                    let group = groups[index]
                    let held = heldVerdicts(group, via: destination, integration: id)
                    let subset = group.indices.filter { held[$0] == nil }
                    guard !subset.isEmpty else {
                        outcomes[index] = SendOutcome(
                            answer: AttemptAnswer(failure: Self.waiting),
                            verdicts: group.indices.map { held[$0] ?? .retryNow(reason: Self.waiting) },
                            latencyMs: 0, redactedBody: nil, redactedFailure: nil)
                        continue
                    }
                    await pacer.waitForTurn()
                    let events = subset.map { group[$0] }
                    tasks.addTask {
                        StartedGroup(
                            index: index, sent: subset, held: held,
                            outcome: await sender.send(events, via: destination, secrets: secrets, now: clock().millisecondsSince1970))
                    }
                    inFlight += 1
                }
                guard let started = await tasks.next() else { break }
                inFlight -= 1
                let answeredAt = clock().millisecondsSince1970
                var outcome = started.outcome
                var verdicts = [AttemptVerdict?](repeating: nil, count: groups[started.index].count)
                for (position, index) in started.sent.enumerated() where position < outcome.verdicts.count {
                    verdicts[index] = outcome.verdicts[position]
                    if case .throttled(_, let wait, let lane) = outcome.verdicts[position] {
                        holds.withLockedValue { $0[id, default: ThrottleHolds()].hold(lane, until: answeredAt + max(0, wait)) }
                    }
                }
                for (index, verdict) in started.held { verdicts[index] = verdict }
                outcome.verdicts = verdicts.map { $0 ?? .retry(reason: "not sent", retryAfter: nil) }
                outcomes[started.index] = outcome
            }
        }
        // Every group is answered above; a group that somehow was not gets a retry per event rather than no record.
        return zip(groups, outcomes).map { group, outcome in
            outcome
                ?? SendOutcome(
                    answer: AttemptAnswer(failure: "not sent"), verdicts: group.map { _ in .retry(reason: "not sent", retryAfter: nil) },
                    latencyMs: 0, redactedBody: nil, redactedFailure: "not sent")
        }
    }

    /// What a destination's reason to wait reads like on a delivery that was held back.
    static let waiting = "held: the destination asked to slow down (429); sent after the wait, in order"

    /// The events of a group a 429 holds now, by their position, each to wait until its hold ends.
    private func heldVerdicts(_ group: [OutboundEvent], via destination: any Destination, integration id: String) -> [Int: AttemptVerdict] {
        let now = self.now
        guard let current = holds.withLockedValue({ $0[id] }), !current.isEmpty else { return [:] }
        var held: [Int: AttemptVerdict] = [:]
        for (index, event) in group.enumerated() {
            if let until = current.heldUntil(destination.laneKeys(event), now: now) {
                held[index] = .throttled(reason: Self.waiting, retryAfter: until - now, lane: .destination)
            }
        }
        return held
    }

    /// A group whose request was started: the positions sent, those held back with their verdicts, and the outcome.
    struct StartedGroup: Sendable {
        let index: Int
        let sent: [Int]
        let held: [Int: AttemptVerdict]
        let outcome: SendOutcome
    }

    /// What one attempt comes to (the outcome's texts are already without secrets). A destination disabled by its answer keeps the delivery waiting, uncounted, for when
    /// the operator enables it again; a delivery requeued (its batch refused for another event) or whose destination
    /// moved is due again at once, uncounted.
    static func attempt(
        _ delivery: DeliveryRecord, _ verdict: AttemptVerdict, _ outcome: SendOutcome?, schedule: RetrySchedule, now: Int64
    ) -> AttemptRecord {
        var attempts = delivery.attempts + 1
        var first: Int64? = delivery.firstAttemptAt ?? now
        let status: DeliveryStatus
        var next: Int64?
        switch verdict {
        case .delivered:
            status = .delivered
        case .retry(_, let retryAfter):
            next = schedule.nextAttempt(
                afterFailed: attempts, firstAttemptAt: first ?? now, now: now, jitter: Double.random(in: -1...1), retryAfter: retryAfter)
            status = next == nil ? .dead : .retrying
        case .rejected:
            status = .dead
        case .disableDestination, .retryNow, .moved:
            attempts = delivery.attempts
            first = delivery.firstAttemptAt
            status = delivery.attempts == 0 ? .pending : .retrying
            next = now
        case .throttled(_, let retryAfter, _):
            // Asked to wait: no failure, so not counted; due again exactly when the wait ends, with its lane.
            attempts = delivery.attempts
            first = delivery.firstAttemptAt
            status = delivery.attempts == 0 ? .pending : .retrying
            next = now + max(0, retryAfter)
        }
        return AttemptRecord(
            eventSeq: delivery.eventSeq, status: status, attempts: attempts, nextAttemptAt: next,
            firstAttemptAt: first, lastStatus: outcome?.answer.status, lastResponse: outcome?.redactedBody,
            lastLatencyMs: outcome?.latencyMs, lastError: outcome?.redactedFailure ?? verdict.reason,
            at: now)
    }
}

/// Spaces requests' starts by a destination's rate limit.
struct Pacer {
    let interval: Duration?
    private var last: ContinuousClock.Instant?

    init(interval: Duration?) { self.interval = interval }

    mutating func waitForTurn() async {
        if let interval, let last {
            let wait = last + interval - .now
            if wait > .zero { try? await Task.sleep(for: wait) }
        }
        last = .now
    }
}
