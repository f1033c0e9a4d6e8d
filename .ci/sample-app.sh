#!/usr/bin/env bash
# The SDK in an app, as README "In your app" tells apps to add it (this repository without its default trait):
# 1. Samples/App, which links StorekeeperSDK and StorekeeperStoreKit with `traits: []`, resolves no package at all,
#    and builds;
# 2. an app whose tests also use StorekeeperSDKTesting (`traits: ["SDKTesting"]`) resolves only what that test store
#    signs with (swift-crypto, swift-certificates, swift-asn1) and swift-log (its verifier's), none of the server's.
#    It is resolved, not built: the root package's tests run StorekeeperSDKTesting, and building the signing packages
#    again would cost minutes CI does not have.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

checkouts() { if [ -d "$1/.build/checkouts" ]; then ls "$1/.build/checkouts" | sort | tr '\n' ' '; fi; }

(cd Samples/App && swift package resolve > /dev/null)
fetched=$(checkouts Samples/App)
if [ -n "$fetched" ]; then
    echo "Samples/App (the SDK and its StoreKit adapter) fetched: $fetched(expected none)" >&2
    exit 1
fi
echo "sample app: Samples/App, with StorekeeperSDK and StorekeeperStoreKit, resolves no package"
(cd Samples/App && swift build --product SampleApp > /dev/null)
echo "sample app: Samples/App builds"

app=$(mktemp -d)
trap 'rm -rf "$app"' EXIT
mkdir -p "$app/Sources/App" "$app/Tests/AppTests"
cat > "$app/Package.swift" <<MANIFEST
// swift-tools-version: 6.1
import PackageDescription
let package = Package(
    name: "App",
    platforms: [.macOS(.v15), .iOS(.v16)],
    dependencies: [.package(name: "storekeeper", path: "$repo", traits: ["SDKTesting"])],
    targets: [
        .executableTarget(
            name: "App",
            dependencies: [
                .product(name: "StorekeeperSDK", package: "storekeeper"),
                .product(name: "StorekeeperStoreKit", package: "storekeeper"),
            ]),
        .testTarget(
            name: "AppTests",
            dependencies: ["App", .product(name: "StorekeeperSDKTesting", package: "storekeeper")]),
    ]
)
MANIFEST
echo 'import StorekeeperSDK' > "$app/Sources/App/main.swift"
echo 'import StorekeeperSDKTesting' > "$app/Tests/AppTests/AppTests.swift"
(cd "$app" && swift package resolve > /dev/null)
fetched=$(checkouts "$app")
allowed="swift-asn1 swift-certificates swift-crypto swift-log "
for package in $fetched; do
    case " $allowed" in
        *" $package "*) ;;
        *) echo "an app testing with StorekeeperSDKTesting fetched $package, which the SDK and its test store do not import (all: $fetched)" >&2; exit 1 ;;
    esac
done
echo "sample app: with StorekeeperSDKTesting an app resolves $fetched"
