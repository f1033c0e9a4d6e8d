import Experiments
import Foundation
import Testing

@Suite struct AssignmentTests {
    func experiment(_ keys: [String] = ["control", "control_check", "paywall_b"], status: ExperimentDefinition.Status = .running)
        -> ExperimentDefinition
    {
        var definition = ExperimentDefinition(
            key: "paywall-2026", status: status, variants: keys.map { .init(key: $0, payload: .object(["paywall": .string($0)])) })
        definition.seed = "paywall-2026-seed"
        return definition
    }

    @Test func sameUserSameVariantEverywhere() {
        let definition = experiment()
        let first = Assigner.assign(definition, userId: "user-42")
        for _ in 0..<10 { #expect(Assigner.assign(definition, userId: "user-42") == first) }
        #expect(first.inExperiment && first.reason == .assigned)
        #expect(first.hashValue == GrowthBookHashing.hash(seed: "paywall-2026-seed", value: "user-42"))
        #expect(first.payload == .object(["paywall": .string(first.variant)]))
        #expect(first.newStickyAssignment?.variant == first.variant)
    }

    /// 100,000 ids split 50/50 stay within the binomial bounds: 50,000 ± 4σ, σ = √(n·p·(1−p)) ≈ 158.
    @Test func fiftyFiftySplitIsWithinBinomialBounds() {
        let definition = experiment(["control", "treatment"])
        var treatment = 0
        for index in 0..<100_000 where Assigner.assign(definition, userId: "u\(index)").variant == "treatment" {
            treatment += 1
        }
        #expect(abs(treatment - 50_000) <= 4 * 158, "\(treatment)")
    }

    /// The A/A arm and the control get statistically indistinguishable shares of 90,000 users (three equal arms):
    /// their difference stays within 4σ of a binomial difference, σ = √(2·n·p) for p = 1/3 of n = 90,000.
    @Test func controlCheckMatchesControl() {
        let definition = experiment()
        var counts: [String: Int] = [:]
        for index in 0..<90_000 { counts[Assigner.assign(definition, userId: "customer-\(index)").variant, default: 0] += 1 }
        let control = counts["control", default: 0]
        let check = counts["control_check", default: 0]
        let sigma: Double = (2 * 30_000 * (2.0 / 3)).squareRoot()
        #expect(Double(abs(control - check)) <= 4 * sigma, "\(counts)")
        let within = counts.values.allSatisfy { abs($0 - 30_000) <= 4 * 141 }
        #expect(within, "\(counts)")
    }

    @Test func stickyAssignmentWinsUntilANewPhaseOrSeed() {
        var definition = experiment()
        let stored = StickyAssignment(experimentKey: definition.key, phase: 1, seed: "paywall-2026-seed", variant: "paywall_b")
        let user = (0..<1000).map { "u\($0)" }.first { Assigner.assign(definition, userId: $0).variant == "control" } ?? ""
        #expect(Assigner.assign(definition, userId: user, stored: stored).variant == "paywall_b")
        #expect(Assigner.assign(definition, userId: user, stored: stored).reason == .sticky)
        // Weights change: the stored assignment still wins.
        definition.variants[0].weight = 0.9
        definition.variants[1].weight = 0.05
        definition.variants[2].weight = 0.05
        #expect(Assigner.assign(definition, userId: user, stored: stored).variant == "paywall_b")
        // A new phase re-randomises on purpose.
        definition.phase = 2
        #expect(Assigner.assign(definition, userId: user, stored: stored).reason == .assigned)
        definition.phase = 1
        definition.seed = "new-seed"
        #expect(Assigner.assign(definition, userId: user, stored: stored).reason == .assigned)
    }

    @Test func killSwitchServesControlOrWinnerToEveryone() {
        let stored = StickyAssignment(experimentKey: "paywall-2026", phase: 1, seed: "paywall-2026-seed", variant: "paywall_b")
        for status in [ExperimentDefinition.Status.paused, .rolledBack, .draft] {
            let result = Assigner.assign(experiment(status: status), userId: "u1", stored: stored)
            #expect(result.variant == "control" && !result.inExperiment && result.reason == .notRunning)
        }
        var stopped = experiment(status: .stopped)
        stopped.winner = "paywall_b"
        for index in 0..<100 {
            let result = Assigner.assign(stopped, userId: "u\(index)")
            #expect(result.variant == "paywall_b" && !result.inExperiment && result.reason == .stopped)
        }
    }

    @Test func coverageExpandsWithoutMovingUsers() {
        var definition = experiment(["control", "treatment"])
        definition.coverage = 0.3
        let users = (0..<2000).map { "u\($0)" }
        let before = users.map { Assigner.assign(definition, userId: $0) }
        definition.coverage = 0.8
        let after = users.map { Assigner.assign(definition, userId: $0) }
        for (old, new) in zip(before, after) where old.inExperiment {
            #expect(new.inExperiment && new.variant == old.variant)
        }
        #expect(before.filter(\.inExperiment).count < after.filter(\.inExperiment).count)
        #expect(before.contains { $0.reason == .outsideCoverage })
    }

    @Test func namespacesKeepExperimentsApart() {
        var first = experiment(["control", "treatment"])
        first.namespace = Namespace(id: "paywalls", start: 0, end: 0.5)
        var second = experiment(["control", "treatment"])
        second.key = "price-2026"
        second.namespace = Namespace(id: "paywalls", start: 0.5, end: 1)
        for index in 0..<2000 {
            let a = Assigner.assign(first, userId: "u\(index)")
            let b = Assigner.assign(second, userId: "u\(index)")
            #expect(!(a.inExperiment && b.inExperiment))
            #expect(a.inExperiment || b.inExperiment)
        }
    }

    @Test func targeting() {
        var definition = experiment(["control", "treatment"])
        var targeting = ExperimentDefinition.Targeting()
        targeting.storefronts = ["USA", "CAN"]
        targeting.minAppVersion = "2.4"
        targeting.maxAppVersion = "2.10.3"
        targeting.customerStates = [.new]
        targeting.newUsersOnly = true
        definition.targeting = targeting
        definition.startedAt = 1_000
        let fits = UserAttributes(storefront: "usa", appVersion: "2.10", customerState: .new, firstSeenAt: 2_000)
        #expect(Assigner.assign(definition, userId: "u1", attributes: fits).inExperiment)
        for attributes in [
            UserAttributes(storefront: "DEU", appVersion: "2.10", customerState: .new, firstSeenAt: 2_000),
            UserAttributes(storefront: "USA", appVersion: "2.3.9", customerState: .new, firstSeenAt: 2_000),
            UserAttributes(storefront: "USA", appVersion: "2.11", customerState: .new, firstSeenAt: 2_000),
            UserAttributes(storefront: "USA", appVersion: "2.10", customerState: .active, firstSeenAt: 2_000),
            UserAttributes(storefront: "USA", appVersion: "2.10", customerState: .new, firstSeenAt: 500),
            UserAttributes(),
        ] {
            let result = Assigner.assign(definition, userId: "u1", attributes: attributes)
            #expect(!result.inExperiment && result.reason == .notTargeted && result.variant == "control")
        }
        #expect(Assigner.compareVersions("1.10", "1.9") == 1)
        #expect(Assigner.compareVersions("2", "2.0.0") == 0)
    }

    @Test func emptyUserIdIsNotAssigned() {
        #expect(Assigner.assign(experiment(), userId: "").reason == .noUserId)
    }

    @Test func exposureIsRecordedOnceAtTheFirstTime() {
        var ledger = ExposureLedger()
        let first = ledger.record(Exposure(experimentKey: "e", phase: 1, customerId: "c", variant: "b", exposedAt: 200))
        let again = ledger.record(Exposure(experimentKey: "e", phase: 1, customerId: "c", variant: "b", exposedAt: 300))
        let earlier = ledger.record(Exposure(experimentKey: "e", phase: 1, customerId: "c", variant: "b", exposedAt: 100))
        #expect(first && !again && !earlier)
        #expect(ledger.exposure(experimentKey: "e", customerId: "c")?.exposedAt == 100)
        #expect(ledger.count == 1)
        let other = ledger.record(Exposure(experimentKey: "e", phase: 1, customerId: "d", variant: "a", exposedAt: 100))
        #expect(other && ledger.count == 2)
    }

    @Test func definitionsAreValidated() throws {
        var weights = experiment(["control", "treatment"])
        weights.variants[0].weight = 0
        weights.variants[1].weight = 0
        #expect(throws: ExperimentError.self) { try weights.validate() }
        var winner = experiment(status: .stopped)
        #expect(throws: ExperimentError.self) { try winner.validate() }
        winner.winner = "control_check"
        #expect(throws: ExperimentError.self) { try winner.validate() }
        winner.winner = "paywall_b"
        try winner.validate()
        var coverage = experiment()
        coverage.coverage = 1.5
        #expect(throws: ExperimentError.self) { try coverage.validate() }
        #expect(throws: ExperimentError.self) { try experiment(["only"]).validate() }
        #expect(throws: ExperimentError.self) { try experiment(["a", "a"]).validate() }
    }
}
