// swift-tools-version: 6.1
// A libFuzzer target for JWS and certificate parsing, and for PKCS#7 receipt parsing, kept out of `swift test` and CI.
// Run: ./run.sh jws|receipt [seconds]   (builds with -sanitize=fuzzer,address and runs libFuzzer)
import PackageDescription

let package = Package(
    name: "StorekeeperFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "storekeeper", path: ".."),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
    ],
    targets: [
        .executableTarget(
            name: "AppStoreFuzzer",
            dependencies: [
                .product(name: "AppStore", package: "storekeeper"),
                .product(name: "AppStoreSimulator", package: "storekeeper"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
