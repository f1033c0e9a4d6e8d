// swift-tools-version: 6.1
// A libFuzzer target for JWS and certificate parsing, kept out of `swift test` and CI.
// Run: ./run.sh [seconds]   (builds with -sanitize=fuzzer,address and runs libFuzzer)
import PackageDescription

let package = Package(
    name: "StorekeeperFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "storekeeper", path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "AppStoreFuzzer",
            dependencies: [
                .product(name: "AppStore", package: "storekeeper"),
                .product(name: "AppStoreSimulator", package: "storekeeper"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
