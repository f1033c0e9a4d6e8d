import Benchmark
import BenchmarkSettings
import Experiments
import Foundation

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = BenchmarkSettings.configuration(warmupIterations: 3)

    var definition = ExperimentDefinition(
        key: "paywall-2026",
        variants: [
            .init(key: "control"), .init(key: "control_check"), .init(key: "paywall_b", payload: .object(["paywall": .string("b")])),
        ])
    definition.seed = "paywall-2026-seed"
    let experiment = definition
    let userIds = (0..<1_000).map { "customer-\($0)-7e3fb20b-4cdb-47cc" }

    // One assignment of a running three-arm experiment, prepared once as a server would: hashing and choice
    // (a million per sample).
    let prepared = PreparedExperiment(experiment)
    Benchmark("Experiments.assign", configuration: .init(scalingFactor: .mega)) { benchmark in
        var index = 0
        for _ in benchmark.scaledIterations {
            blackHole(prepared.assign(userId: userIds[index]))
            index = index == 999 ? 0 : index + 1
        }
    }

    // The full analysis of 1,000,000 exposed users in three arms.
    var generator = SystemRandomNumberGenerator()
    let users: [ExposedUser] = (0..<1_000_000).map { index in
        let paid = Double.random(in: 0..<1, using: &generator) < 0.03
        return ExposedUser(
            userId: "u\(index)", variant: experiment.variants[index % 3].key, exposedAt: 1_700_000_000_000 + Int64(index),
            startedTrial: Double.random(in: 0..<1, using: &generator) < 0.2, paid: paid,
            revenue: paid ? Double.random(in: 4.99...49.99, using: &generator) : 0)
    }
    Benchmark("Experiments.analyze.1M", configuration: .init(scalingFactor: .one, maxDuration: .seconds(20), maxIterations: 10)) {
        benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(Analysis.analyze(users, experiment: experiment))
        }
    }
}
