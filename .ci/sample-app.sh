#!/usr/bin/env bash
# The SDK in an app, as README "In your app" tells apps to add it (this repository without its default trait):
# 1. an app that links StorekeeperSDK and StorekeeperStoreKit (`traits: []`) resolves no package at all;
# 2. Samples/App, which also tests with StorekeeperSDKTesting (`traits: ["SDKTesting"]`), resolves only what that test
#    store signs with (swift-crypto, swift-certificates, swift-asn1) and swift-log (its verifier's), none of the server's;
# 3. Samples/App builds and its tests pass.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

checkouts() { if [ -d "$1/.build/checkouts" ]; then ls "$1/.build/checkouts" | sort | tr '\n' ' '; fi; }

app=$(mktemp -d)
trap 'rm -rf "$app"' EXIT
mkdir -p "$app/Sources/App"
cat > "$app/Package.swift" <<MANIFEST
// swift-tools-version: 6.1
import PackageDescription
let package = Package(
    name: "App",
    platforms: [.macOS(.v15), .iOS(.v16)],
    dependencies: [.package(name: "storekeeper", path: "$repo", traits: [])],
    targets: [
        .executableTarget(
            name: "App",
            dependencies: [
                .product(name: "StorekeeperSDK", package: "storekeeper"),
                .product(name: "StorekeeperStoreKit", package: "storekeeper"),
            ])
    ]
)
MANIFEST
echo 'import StorekeeperSDK' > "$app/Sources/App/main.swift"
(cd "$app" && swift package resolve > /dev/null)
fetched=$(checkouts "$app")
if [ -n "$fetched" ]; then
    echo "an app with the SDK and its StoreKit adapter fetched: $fetched(expected none)" >&2
    exit 1
fi
echo "sample app: an app with StorekeeperSDK and StorekeeperStoreKit resolves no package"

(cd Samples/App && swift package resolve > /dev/null)
fetched=$(checkouts Samples/App)
allowed="swift-asn1 swift-certificates swift-crypto swift-log "
for package in $fetched; do
    case " $allowed" in
        *" $package "*) ;;
        *) echo "Samples/App fetched $package, which the SDK and its test store do not import (all: $fetched)" >&2; exit 1 ;;
    esac
done
echo "sample app: with StorekeeperSDKTesting it resolves $fetched"
(cd Samples/App && swift build --build-tests && swift test)
