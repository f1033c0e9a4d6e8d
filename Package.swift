// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "storekeeper",
    // macOS 15 for the server and its tools; the SDK's floor on Apple's other platforms (Duration, ContinuousClock).
    platforms: [.macOS(.v15), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "AppStoreModels", targets: ["AppStoreModels"]),
        .library(name: "AppStore", targets: ["AppStore"]),
        .library(name: "AppStoreSimulator", targets: ["AppStoreSimulator"]),
        .library(name: "Entitlements", targets: ["Entitlements"]),
        .library(name: "Analytics", targets: ["Analytics"]),
        .library(name: "Experiments", targets: ["Experiments"]),
        .library(name: "Integrations", targets: ["Integrations"]),
        .library(name: "StorekeeperSDK", targets: ["StorekeeperSDK"]),
        .library(name: "StorekeeperStoreKit", targets: ["StorekeeperStoreKit"]),
        .library(name: "StorekeeperSDKTesting", targets: ["StorekeeperSDKTesting"]),
        .executable(name: "storekeeper", targets: ["storekeeper"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.17.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // The OpenAPI document as a typed value (without external loading, which only slows the build), and its YAML.
        .package(url: "https://github.com/mattpolzin/OpenAPIKit.git", from: "6.4.0", traits: []),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
    ],
    targets: [
        // Apple's payload models, enumerations, `Timestamp` and their decoding: Foundation only, so that apps link it.
        .target(name: "AppStoreModels"),
        .target(
            name: "AppStore",
            dependencies: [
                "AppStoreModels",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        .target(
            name: "AppStoreSimulator",
            dependencies: [
                "AppStore",
                // The catalog format and the state vocabulary the ground truth is written in (never the engine).
                "Entitlements",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            resources: [.copy("Scenarios")]
        ),
        // The simulator's fake App Store Server API, over HTTP.
        .target(
            name: "AppStoreSimulatorAPI",
            dependencies: [
                "AppStore",
                "AppStoreSimulator",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // Pure: the App Store models in, states and events out. No I/O, no clock.
        .target(name: "Entitlements", dependencies: ["AppStoreModels"]),
        .target(name: "Experiments"),
        // The SDK apps embed: Foundation, Apple's models and the server's own engines (entitlements, assignment); no
        // crypto, no server packages.
        .target(name: "StorekeeperSDK", dependencies: ["AppStoreModels", "Entitlements", "Experiments"]),
        // The StoreKit 2 adapter: every file is `#if canImport(StoreKit)`, so it is empty on Linux.
        .target(name: "StorekeeperStoreKit", dependencies: ["StorekeeperSDK"]),
        // A store for tests: the App Store simulator behind the SDK's StoreClient, signing real transactions.
        .target(name: "StorekeeperSDKTesting", dependencies: ["StorekeeperSDK", "AppStoreSimulator", "AppStore", "Entitlements"]),
        // Facts, derived state and events on SQLKit: one code path for SQLite (the default) and PostgreSQL.
        .target(
            name: "Storage",
            dependencies: [
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The money ledger (periods, refunds, USD at stored rates, estimated proceeds) and the metrics computed from it,
        // with the formulas of docs/metrics.md. No HTTP.
        .target(
            name: "Analytics",
            dependencies: [
                "AppStore",
                "Entitlements",
                "Storage",
                .product(name: "SQLKit", package: "sql-kit"),
            ]
        ),
        // Events out: the durable outbox's destinations (Standard Webhooks signatures, retry schedules). No HTTP server.
        .target(
            name: "Integrations",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The domain: use cases (ingestion, purchase linking, customer reads, app administration, reconciliation),
        // caches and the domain error. No HTTP.
        .target(
            name: "StorekeeperCore",
            dependencies: [
                "AppStore",
                "Entitlements",
                "Storage",
                "Analytics",
                "Integrations",
                "Experiments",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                // The dashboard's password hashes (a C bcrypt and its Swift face; no HTTP in it), off the async pool.
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // HTTP only: routes, authentication middleware and contexts, the error mapping, the OpenAPI document.
        .target(
            name: "StorekeeperServer",
            dependencies: [
                "AppStore",
                "Entitlements",
                "Storage",
                "Analytics",
                "Experiments",
                "StorekeeperCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OpenAPIKit", package: "OpenAPIKit"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .executableTarget(
            name: "storekeeper",
            dependencies: [
                "AppStore",
                "Entitlements",
                "Experiments",
                "Storage",
                "Analytics",
                "StorekeeperCore",
                "StorekeeperServer",
                "AppStoreSimulator",
                "AppStoreSimulatorAPI",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // What every test target shares: time helpers, the test catalogs, payload builders, a fresh database per test,
        // running the storekeeper executable, a seeded random source.
        .target(
            name: "TestSupport",
            dependencies: [
                "AppStore", "Entitlements", "Storage", .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/TestSupport"
        ),
        .testTarget(
            name: "AppStoreTests",
            dependencies: [
                "AppStore",
                // Built before the tests, which run it as users do (CLITests).
                "storekeeper",
                "TestSupport",
                "AppStoreSimulator",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                // A local stand-in for Apple's servers in the client tests.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "EntitlementsTests",
            dependencies: [
                "Entitlements",
                "AppStore",
                "storekeeper",
                "TestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "StorekeeperServerTests",
            dependencies: [
                "StorekeeperCore",
                "StorekeeperServer",
                "Storage",
                "AppStore",
                "AppStoreSimulator",
                "AppStoreSimulatorAPI",
                "Entitlements",
                "TestSupport",
                "storekeeper",
                // JSONValue, for the OpenAPI conformance checker.
                "Experiments",
                "Analytics",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "OpenAPIKit", package: "OpenAPIKit"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Configuration", package: "swift-configuration"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "AnalyticsTests",
            dependencies: ["Analytics", "AppStore", "Entitlements", "Storage", "TestSupport", .product(name: "SQLKit", package: "sql-kit")]
        ),
        .testTarget(
            name: "StorageTests",
            dependencies: [
                "Storage", "TestSupport", .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "AppStoreSimulatorTests",
            dependencies: [
                "AppStoreSimulator",
                "AppStore",
                "Entitlements",
                // Built before the tests, which run it as users do.
                "storekeeper",
                "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "ExperimentsTests",
            dependencies: ["Experiments", "storekeeper", "TestSupport"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "StorekeeperSDKTests",
            dependencies: [
                "StorekeeperSDK", "StorekeeperSDKTesting", "StorekeeperCore", "StorekeeperServer", "Storage", "AppStore",
                "AppStoreSimulator", "Entitlements", "Experiments", "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "IntegrationsTests",
            dependencies: ["Integrations", .product(name: "Crypto", package: "swift-crypto")],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
