// swift-tools-version: 6.1
import PackageDescription

// A minimal app package that adds the SDK the way README "In your app" says: this repository without its default
// `Server` trait, so that nothing of the server is fetched, and with `SDKTesting` because its tests use the simulated
// store. It names the repository by path so that CI builds this checkout; an app names it by URL:
// `.package(url: "https://github.com/<you>/storekeeper.git", branch: "main", traits: ["SDKTesting"])`.
let package = Package(
    name: "SampleApp",
    platforms: [.macOS(.v15), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    dependencies: [
        .package(name: "storekeeper", path: "../..", traits: ["SDKTesting"])
    ],
    targets: [
        .executableTarget(
            name: "SampleApp",
            dependencies: [
                .product(name: "StorekeeperSDK", package: "storekeeper"),
                .product(name: "StorekeeperStoreKit", package: "storekeeper"),
            ]
        ),
        .testTarget(
            name: "SampleAppTests",
            dependencies: [
                "SampleApp",
                .product(name: "StorekeeperSDK", package: "storekeeper"),
                .product(name: "StorekeeperSDKTesting", package: "storekeeper"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
