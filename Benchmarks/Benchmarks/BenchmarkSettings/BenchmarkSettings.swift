import Benchmark
import Foundation

/// What every micro-benchmark measures, and the tolerances `swift package benchmark thresholds check` allows against
/// the p90 figures checked in under `Thresholds/` (made with `thresholds update` on the machine CI runs on):
/// - allocations (`mallocCountTotal`): the same on any machine, so a 10% rise fails;
/// - throughput and time: machines and runs differ, so only a collapse fails (under 30% of the checked-in throughput,
///   over 3.3 times its time: a lost cache, a quadratic loop); a faster machine is not a failure
///   (`.ci/micro-benchmarks.sh` reads that exit as a pass).
/// `STOREKEEPER_BENCHMARK_QUICK=1` (CI) runs each benchmark for about a second instead of five.
public enum BenchmarkSettings {
    public static var thresholds: [BenchmarkMetric: BenchmarkThresholds] {
        [
            .mallocCountTotal: .init(relative: [.p90: 10]),
            .throughput: .init(relative: [.p90: 70]),
            .wallClock: .init(relative: [.p90: 233]),
        ]
    }

    public static var quick: Bool { ProcessInfo.processInfo.environment["STOREKEEPER_BENCHMARK_QUICK"] == "1" }

    /// The default configuration of a benchmark target: `warmupIterations` and `scalingFactor` as it needs them.
    public static func configuration(warmupIterations: Int, scalingFactor: BenchmarkScalingFactor = .one) -> Benchmark.Configuration {
        .init(
            metrics: [.throughput, .wallClock, .mallocCountTotal], warmupIterations: warmupIterations, scalingFactor: scalingFactor,
            maxDuration: .seconds(quick ? 1 : 5), maxIterations: quick ? 10_000 : 1_000_000, thresholds: thresholds)
    }
}
