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
        .library(name: "ResponseSigning", targets: ["ResponseSigning"]),
        .library(name: "StorekeeperStoreKit", targets: ["StorekeeperStoreKit"]),
        .library(name: "StorekeeperSDKTesting", targets: ["StorekeeperSDKTesting"]),
        .executable(name: "storekeeper", targets: ["storekeeper"]),
    ],
    // The server is a default trait, so `swift run storekeeper serve` and `swift test` build everything here. An app
    // depends on this package with `traits: []`: every package below is conditioned on a trait, so the SDK and its
    // StoreKit adapter resolve none. An app whose tests use StorekeeperSDKTesting adds the `SDKTesting` trait, which
    // brings what the test store signs with (swift-crypto, swift-certificates, swift-asn1) and swift-log, never the
    // server's packages. README "In your app"; .ci/sample-app.sh checks both.
    traits: [
        .trait(
            name: "Server",
            description: "The storekeeper server, its command-line tool, the App Store clients and the simulator's HTTP delivery."),
        .trait(
            name: "SDKTesting",
            description: "StorekeeperSDKTesting, the App Store simulator behind the SDK's StoreClient, for an app's tests."),
        .default(enabledTraits: ["Server"]),
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
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
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
        // gzip for `storekeeper export`'s files (zlib).
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
    ],
    targets: [
        // Apple's payload models, enumerations, `Timestamp` and their decoding: Foundation only, so that apps link it.
        .target(name: "AppStoreModels"),
        .target(
            name: "AppStore",
            dependencies: [
                "AppStoreModels",
                .signing("Crypto", "swift-crypto"),
                .signing("X509", "swift-certificates"),
                .signing("SwiftASN1", "swift-asn1"),
                .signing("Logging", "swift-log"),
                .server("AsyncHTTPClient", "async-http-client"),
            ]
        ),
        .target(
            name: "AppStoreSimulator",
            dependencies: [
                "AppStore",
                // The catalog format and the state vocabulary the ground truth is written in (never the engine).
                "Entitlements",
                .server("AsyncHTTPClient", "async-http-client"),
                .server("NIOCore", "swift-nio"),
                .server("NIOConcurrencyHelpers", "swift-nio"),
                .signing("Crypto", "swift-crypto"),
                .signing("X509", "swift-certificates"),
                .signing("SwiftASN1", "swift-asn1"),
            ],
            resources: [.copy("Scenarios")]
        ),
        // The simulator's fake App Store Server API, over HTTP.
        .target(
            name: "AppStoreSimulatorAPI",
            dependencies: [
                "AppStore",
                "AppStoreSimulator",
                .server("Crypto", "swift-crypto"),
                .server("Hummingbird", "hummingbird"),
                .server("NIOConcurrencyHelpers", "swift-nio"),
            ]
        ),
        // Pure: the App Store models in, states and events out. No I/O, no clock.
        .target(name: "Entitlements", dependencies: ["AppStoreModels"]),
        .target(name: "Experiments"),
        // The SDK apps embed: Foundation, Apple's models and the server's own engines (entitlements, assignment); no
        // crypto, no server packages.
        .target(
            name: "StorekeeperSDK",
            dependencies: [
                "AppStoreModels", "Entitlements", "Experiments", "ResponseSigning",
                // Ed25519 for the server's signatures: CryptoKit on Apple platforms, swift-crypto on Linux, where an app
                // without the package's traits has none (and so verifies nothing).
                .product(name: "Crypto", package: "swift-crypto", condition: .when(platforms: [.linux], traits: ["Server", "SDKTesting"])),
            ]
        ),
        // Signed answers: the message the server signs and the SDK checks, and the X-Signature header. Foundation only.
        .target(name: "ResponseSigning"),
        // The StoreKit 2 adapter: every file is `#if canImport(StoreKit)`, so it is empty on Linux.
        .target(name: "StorekeeperStoreKit", dependencies: ["StorekeeperSDK"]),
        // A store for tests: the App Store simulator behind the SDK's StoreClient, signing real transactions.
        .target(name: "StorekeeperSDKTesting", dependencies: ["StorekeeperSDK", "AppStoreSimulator", "AppStore", "Entitlements"]),
        // Facts, derived state and events on SQLKit: one code path for SQLite (the default) and PostgreSQL.
        .target(
            name: "Storage",
            dependencies: [
                .server("SQLKit", "sql-kit"),
                .server("SQLiteKit", "sqlite-kit"),
                .server("PostgresKit", "postgres-kit"),
                .server("NIOCore", "swift-nio"),
                .server("NIOPosix", "swift-nio"),
                .server("NIOConcurrencyHelpers", "swift-nio"),
                .server("Logging", "swift-log"),
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
                .server("SQLKit", "sql-kit"),
            ]
        ),
        // Events out: the durable outbox's destinations (Standard Webhooks signatures, retry schedules). No HTTP server.
        .target(
            name: "Integrations",
            dependencies: [
                .server("Crypto", "swift-crypto"),
                .server("AsyncHTTPClient", "async-http-client"),
                .server("NIOCore", "swift-nio"),
                .server("NIOHTTP1", "swift-nio"),
                .server("NIOPosix", "swift-nio"),
                .server("NIOConcurrencyHelpers", "swift-nio"),
            ]
        ),
        // The domain: use cases (ingestion, purchase linking, customer reads, app administration, reconciliation),
        // caches and the domain error. No HTTP.
        .target(
            name: "StorekeeperCore",
            dependencies: [
                "AppStore",
                "ResponseSigning",
                "Entitlements",
                "Storage",
                "Analytics",
                "Integrations",
                "Experiments",
                .server("Crypto", "swift-crypto"),
                .server("Configuration", "swift-configuration"),
                .server("ServiceLifecycle", "swift-service-lifecycle"),
                .server("Metrics", "swift-metrics"),
                .server("Prometheus", "swift-prometheus"),
                .server("Logging", "swift-log"),
                .server("AsyncHTTPClient", "async-http-client"),
                .server("NIOConcurrencyHelpers", "swift-nio"),
                // The dashboard's password hashes (a C bcrypt and its Swift face; no HTTP in it), off the async pool.
                .server("HummingbirdBcrypt", "hummingbird-auth"),
                .server("NIOPosix", "swift-nio"),
                .server("CompressNIO", "compress-nio"),
            ]
        ),
        // HTTP only: routes, authentication middleware and contexts, the error mapping, the OpenAPI document.
        .target(
            name: "StorekeeperServer",
            dependencies: [
                "AppStore",
                "ResponseSigning",
                "Entitlements",
                "Storage",
                "Analytics",
                "Experiments",
                "StorekeeperCore",
                .server("Hummingbird", "hummingbird"),
                .server("HummingbirdAuth", "hummingbird-auth"),
                .server("Mustache", "swift-mustache"),
                .server("Configuration", "swift-configuration"),
                .server("Logging", "swift-log"),
                .server("OpenAPIKit", "OpenAPIKit"),
                .server("Yams", "Yams"),
                .server("NIOHTTPTypes", "swift-nio-extras"),
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
                .server("ArgumentParser", "swift-argument-parser"),
                .server("AsyncHTTPClient", "async-http-client"),
                .server("Configuration", "swift-configuration"),
                .server("Hummingbird", "hummingbird"),
                .server("Logging", "swift-log"),
                .server("NIOCore", "swift-nio"),
            ]
        ),
        // What every test target shares: time helpers, the test catalogs, payload builders, a fresh database per test,
        // running the storekeeper executable, a seeded random source.
        .target(
            name: "TestSupport",
            dependencies: [
                "AppStore", "Entitlements", "Storage", .server("SQLKit", "sql-kit"),
                .server("Crypto", "swift-crypto"),
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
                .server("Crypto", "swift-crypto"),
                .server("_CryptoExtras", "swift-crypto"),
                // A local stand-in for Apple's servers in the client tests.
                .server("Hummingbird", "hummingbird"),
                .server("HummingbirdTesting", "hummingbird"),
                .server("X509", "swift-certificates"),
                .server("SwiftASN1", "swift-asn1"),
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
                .server("PropertyBased", "swift-property-based"),
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
                .server("Hummingbird", "hummingbird"),
                .server("HummingbirdTesting", "hummingbird"),
                .server("NIOConcurrencyHelpers", "swift-nio"),
                .server("AsyncHTTPClient", "async-http-client"),
                .server("Crypto", "swift-crypto"),
                .server("OpenAPIKit", "OpenAPIKit"),
                .server("Yams", "Yams"),
                .server("SQLKit", "sql-kit"),
                .server("Configuration", "swift-configuration"),
                // To read `storekeeper export`'s gzip files back.
                .server("CompressNIO", "compress-nio"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "AnalyticsTests",
            dependencies: ["Analytics", "AppStore", "Entitlements", "Storage", "TestSupport", .server("SQLKit", "sql-kit")]
        ),
        .testTarget(
            name: "StorageTests",
            dependencies: [
                "Storage", "TestSupport", .server("SQLKit", "sql-kit"),
                .server("NIOConcurrencyHelpers", "swift-nio"),
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
                .server("Crypto", "swift-crypto"),
                .server("X509", "swift-certificates"),
                .server("SwiftASN1", "swift-asn1"),
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
                .server("Hummingbird", "hummingbird"),
                .server("HummingbirdTesting", "hummingbird"),
                .server("Logging", "swift-log"),
                .server("Crypto", "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "IntegrationsTests",
            dependencies: ["Integrations", .server("Crypto", "swift-crypto")],
            resources: [.copy("Fixtures")]
        ),
    ],
    swiftLanguageModes: [.v6]
)

extension Target.Dependency {
    /// A product the App Store simulator signs with (and Apple's data is verified with): for the server, and for
    /// StorekeeperSDKTesting in an app's tests.
    static func signing(_ name: String, _ package: String) -> Target.Dependency {
        .product(name: name, package: package, condition: .when(traits: ["Server", "SDKTesting"]))
    }

    /// A product only the server side uses: fetched and linked only with the `Server` trait on (the default here;
    /// off for apps, which depend on this package with `traits: []`).
    static func server(_ name: String, _ package: String) -> Target.Dependency {
        .product(name: name, package: package, condition: .when(traits: ["Server"]))
    }
}
