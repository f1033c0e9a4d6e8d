import Foundation

/// What a simulated app does with a split test on one placement: every arriving customer asks the server for the
/// placement (as an app would at launch), logs the exposure when it is in the test, and subscribes with its arm's
/// chance (the control's times the arm's effect); a customer who does not subscribe does nothing more. Its ground
/// truth is what each arm's exposed customers did, from the store's own bookkeeping.
public struct PopulationExperiment: Sendable {
    /// The experiment's key and placement, as the server knows them.
    public var key: String
    public var placement: String
    /// The control's chance that an arriving customer subscribes.
    public var baseConversion: Double
    /// An arm's chance relative to the control's (1.5: +50%); absent arms convert like the control.
    public var effects: [String: Double]
    /// A broken app: the share of an arm's exposures it fails to log (a 52/48 delivery of a 50/50 test).
    public var exposureLoss: [String: Double]
    public var seed: UInt64

    public init(
        key: String, placement: String, baseConversion: Double, effects: [String: Double] = [:], exposureLoss: [String: Double] = [:],
        seed: UInt64
    ) {
        self.key = key
        self.placement = placement
        self.baseConversion = baseConversion
        self.effects = effects
        self.exposureLoss = exposureLoss
        self.seed = seed
    }

    /// `treatment=+50%`, `b=-20%` or `b=1.5x` → (`treatment`, 1.5).
    public static func parseEffect(_ text: String) throws(StoreError) -> (variant: String, multiplier: Double) {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[0].isEmpty else { throw StoreError("an effect is variant=+50% (or variant=1.5x): '\(text)'") }
        let value = parts[1].trimmingCharacters(in: .whitespaces)
        var multiplier: Double?
        if value.hasSuffix("%"), let percent = Double(value.dropLast()) {
            multiplier = 1 + percent / 100
        } else if value.hasSuffix("x"), let times = Double(value.dropLast()) {
            multiplier = times
        }
        guard let multiplier, multiplier.isFinite, multiplier >= 0 else {
            throw StoreError("an effect is variant=+50% (or variant=1.5x), not '\(value)'")
        }
        return (parts[0], multiplier)
    }

    /// Whether the customer subscribes in its arm (nil: not in the test, the control's chance). The draw is fixed by the
    /// seed and the name, so every arm's customers face the same odds.
    public func converts(_ name: String, variant: String?) -> Bool {
        let chance = baseConversion * (variant.flatMap { effects[$0] } ?? 1)
        return draw(name, salt: "convert") < chance
    }

    /// Whether the app logs this customer's exposure.
    public func logsExposure(_ name: String, variant: String) -> Bool {
        draw(name, salt: "expose") >= (exposureLoss[variant] ?? 0)
    }

    /// A uniform number in [0, 1) from the seed, a salt and the name.
    func draw(_ name: String, salt: String) -> Double {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325 ^ seed
        for byte in (salt + ":" + name).utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        var random = SimulatorRandom(seed: hash)
        return Double(random.next() >> 11) / Double(1 << 53)
    }
}

/// The app's side of the server: the placement's answer (the arm and phase, or nil outside the test) and the exposure.
/// `instant` is the store's time of the request (a server on a test clock is set to it).
public protocol PlacementAsker: Sendable {
    func placement(appUserId: String, at instant: Int64) async throws -> (variant: String, phase: Int)?
    func expose(appUserId: String, variant: String, phase: Int, at instant: Int64) async throws
}

/// Per arm, what its exposed customers did after their exposure, from the store's bookkeeping.
public struct ExperimentTruth: Sendable, Hashable, CustomStringConvertible {
    public struct Arm: Sendable, Hashable {
        public var exposed = 0
        /// Customers who started a free trial.
        public var trials = 0
        /// Customers who paid for anything (refunded or not).
        public var paid = 0
        /// Gross minus refunds, in USD at the storefront rates (`Storefront.usdRates`).
        public var netUSD = 0.0

        public init() {}
    }

    public var arms: [String: Arm] = [:]
    /// Customers who asked while the test was not running, or were outside it.
    public var outside = 0
    /// Exposures the app failed to log (`exposureLoss`).
    public var lostExposures = 0

    public var description: String {
        arms.keys.sorted().map { key in
            let arm = arms[key] ?? Arm()
            return String(format: "%@: exposed %d, trials %d, paid %d, net %.2f USD", key, arm.exposed, arm.trials, arm.paid, arm.netUSD)
        }.joined(separator: "; ") + "; outside the test \(outside), exposures not logged \(lostExposures)"
    }
}

extension PopulationExperiment {
    /// The scenario with every step but the arrivals `days` later: on a live server, which stamps an exposure with its
    /// own clock, a purchase made at the arrival's instant would come before the exposure it follows.
    public static func delayingPurchases(_ scenario: Scenario, by days: Double) -> Scenario {
        var delayed = scenario
        delayed.steps = scenario.steps.enumerated().map { offset, step in
            var moved = step
            if step.action != .customer { moved.day += days }
            return (moved, offset)
        }.sorted { ($0.0.day, $0.1) < ($1.0.day, $1.1) }.map(\.0)
        return delayed
    }

    /// Plays a population with the experiment: at each arrival the app asks the placement and logs the exposure; a
    /// customer who does not subscribe is left out of the rest of the scenario. `beforeStep` runs before each step
    /// (a test pauses the experiment there). Returns the ground truth once the store is at `end`.
    public func play(
        _ scenario: Scenario, player: ScenarioPlayer, asker: some PlacementAsker, end: Int64,
        beforeStep: (Int, ScenarioStep) async throws -> Void = { _, _ in }
    ) async throws -> ExperimentTruth {
        var truth = ExperimentTruth()
        var armOf: [String: String] = [:]
        var idle: Set<String> = []
        for (index, step) in scenario.steps.enumerated() {
            try await beforeStep(index, step)
            if let name = step.customer, idle.contains(name) { continue }
            try await player.play(step, lenient: true)
            guard step.action == .customer, let name = step.customer else { continue }
            let store = player.store
            guard let appUserId = await store.with({ $0.appUserId(of: name) }) else { continue }
            let instant = await store.with { $0.now }
            let answer = try await asker.placement(appUserId: appUserId, at: instant)
            if let answer {
                if logsExposure(name, variant: answer.variant) {
                    try await asker.expose(appUserId: appUserId, variant: answer.variant, phase: answer.phase, at: instant)
                    armOf[name] = answer.variant
                } else {
                    truth.lostExposures += 1
                }
            } else {
                truth.outside += 1
            }
            if !converts(name, variant: answer?.variant) { idle.insert(name) }
        }
        try await player.advance(to: end)
        let model = await player.store.with { $0 }
        for (name, variant) in armOf {
            let outcome = model.outcome(of: name)
            var arm = truth.arms[variant] ?? ExperimentTruth.Arm()
            arm.exposed += 1
            arm.trials += outcome.startedTrial ? 1 : 0
            arm.paid += outcome.paid ? 1 : 0
            arm.netUSD += outcome.netUSD
            truth.arms[variant] = arm
        }
        return truth
    }
}
