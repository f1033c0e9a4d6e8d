// swift-tools-version: 6.1
// Benchmarks live in their own package so that `swift test` never builds them.
// Run: cd Benchmarks && swift package benchmark
import PackageDescription

let package = Package(
    name: "StorekeeperBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // The pure modules and what signs (the SDKTesting trait): the server's packages (NIO, AsyncHTTPClient, the
        // databases) are not built for these benchmarks, so CI builds them in a few minutes.
        .package(name: "storekeeper", path: "..", traits: ["SDKTesting"]),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    ],
    targets: [
        // What every micro-benchmark measures, and its thresholds' tolerances.
        .target(
            name: "BenchmarkSettings", dependencies: [.product(name: "Benchmark", package: "benchmark")],
            path: "Benchmarks/BenchmarkSettings"),
        .executableTarget(
            name: "AppStoreBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSettings",
                .product(name: "AppStore", package: "storekeeper"),
                .product(name: "AppStoreSimulator", package: "storekeeper"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Benchmarks/AppStoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "EntitlementsBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSettings",
                .product(name: "AppStore", package: "storekeeper"),
                .product(name: "Entitlements", package: "storekeeper"),
            ],
            path: "Benchmarks/EntitlementsBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "ExperimentsBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSettings",
                .product(name: "Experiments", package: "storekeeper"),
            ],
            path: "Benchmarks/ExperimentsBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The SDK: a cold start to cached customer info, a cached read, the device's own entitlement computation, the
        // check of a signed answer.
        .executableTarget(
            name: "SDKBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                "BenchmarkSettings",
                .product(name: "StorekeeperSDK", package: "storekeeper"),
                .product(name: "Entitlements", package: "storekeeper"),
                .product(name: "AppStoreModels", package: "storekeeper"),
                .product(name: "ResponseSigning", package: "storekeeper"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Benchmarks/SDKBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The load generator of `server.sh` (signed notifications for the webhook); not a Benchmark target.
        .executableTarget(
            name: "ServerLoad",
            dependencies: [
                .product(name: "AppStore", package: "storekeeper"),
                .product(name: "AppStoreSimulator", package: "storekeeper"),
            ],
            path: "Benchmarks/ServerLoad"
        ),
        // The fast local webhook receiver of `outbox.sh`; not a Benchmark target.
        .executableTarget(
            name: "WebhookReceiver",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Benchmarks/WebhookReceiver"
        ),
    ],
    swiftLanguageModes: [.v6]
)
