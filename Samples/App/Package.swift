// swift-tools-version: 6.1
import PackageDescription

// A minimal app package that adds the SDK the way README "In your app" says: this repository without its default
// `Server` trait (`traits: []`), so that no other package is fetched. It names the repository by path so that CI builds
// this checkout; an app names it by URL: `.package(url: "https://github.com/<you>/storekeeper.git", branch: "main",
// traits: [])`, or `traits: ["SDKTesting"]` when its tests use StorekeeperSDKTesting (.ci/sample-app.sh checks both).
let package = Package(
    name: "SampleApp",
    platforms: [.macOS(.v15), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    dependencies: [
        .package(name: "storekeeper", path: "../..", traits: [])
    ],
    targets: [
        .executableTarget(
            name: "SampleApp",
            dependencies: [
                .product(name: "StorekeeperSDK", package: "storekeeper"),
                .product(name: "StorekeeperStoreKit", package: "storekeeper"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
