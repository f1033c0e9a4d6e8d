#!/usr/bin/env bash
# Type-checks the StoreKit adapter (Sources/StorekeeperStoreKit), which only compiles where StoreKit exists, against
# .ci/StoreKitInterface: Apple's StoreKit interface as published in the iOS 26.0 SDK, transcribed (see its header).
# Four ways, each with warnings as errors:
#   as on iOS/tvOS (UIKit, a scene to confirm purchases in),
#   as on visionOS (what visionOS marks unavailable is unavailable: `#if os(visionOS)` taken, STOREKIT_AS_VISIONOS),
#   as on macOS/watchOS (no UIKit),
#   as on iOS with an iOS 26 deployment target (what iOS 26 deprecates is deprecated).
# The SDK modules it imports are built here from the sources, as the package builds them (Swift 6, strict concurrency).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
swiftc=(swiftc -parse-as-library -package-name storekeeper)

module() { # name, output folder, flags..., -- sources...
    local name=$1 dir=$2
    shift 2
    mkdir -p "$dir"
    "${swiftc[@]}" -emit-module -module-name "$name" -emit-module-path "$dir/$name.swiftmodule" -I "$dir" "$@"
}

# ios26: Apple's interface with what iOS 26 deprecates deprecated here too (on Linux a platform's own deprecation is
# never in force), as an app whose deployment target is iOS 26 sees it.
mkdir -p "$out/interface26"
sed -E 's/@available\((iOS|macOS|tvOS|watchOS|visionOS), introduced: [0-9.]+, deprecated: 26\.0, message: (".*")\)/@available(*, deprecated, message: \2)/' \
    .ci/StoreKitInterface/StoreKit.swift > "$out/interface26/StoreKit.swift"
grep -q '@available(\*, deprecated' "$out/interface26/StoreKit.swift" || { echo "storekit: no iOS 26 deprecation to put in force" >&2; exit 1; }
for variant in ios visionos ios26; do
    flags=()
    [ "$variant" = visionos ] && flags=(-D STOREKIT_AS_VISIONOS)
    interface=.ci/StoreKitInterface/StoreKit.swift
    [ "$variant" = ios26 ] && interface="$out/interface26/StoreKit.swift"
    # As Apple builds them (Swift 5 mode, library evolution); their own warnings (Foundation has no library evolution
    # here) are not the adapter's.
    module UIKit "$out/$variant" -swift-version 5 -enable-library-evolution -suppress-warnings .ci/StoreKitInterface/UIKit.swift
    module StoreKit "$out/$variant" -swift-version 5 -enable-library-evolution -suppress-warnings ${flags[@]+"${flags[@]}"} \
        "$interface"
done
sdk="$out/sdk"
module AppStoreModels "$sdk" -swift-version 6 Sources/AppStoreModels/*.swift $(find Sources/AppStoreModels -mindepth 2 -name '*.swift')
module Entitlements "$sdk" -swift-version 6 $(find Sources/Entitlements -name '*.swift')
module Experiments "$sdk" -swift-version 6 $(find Sources/Experiments -name '*.swift')
module ResponseSigning "$sdk" -swift-version 6 $(find Sources/ResponseSigning -name '*.swift')
module StorekeeperSDK "$sdk" -swift-version 6 $(find Sources/StorekeeperSDK -name '*.swift')

adapter=$(find Sources/StorekeeperStoreKit -name '*.swift')
check() { # what it is as, interface folder, sed expression for the adapter's platform conditions
    local as=$1 interface=$2 platform=$3 copy="$out/adapter-$1"
    mkdir -p "$copy"
    for file in $adapter; do sed -e "$platform" "$file" > "$copy/$(basename "$file")"; done
    "${swiftc[@]}" -typecheck -swift-version 6 -warnings-as-errors -module-name StorekeeperStoreKit -I "$interface" -I "$sdk" "$copy"/*.swift
    echo "storekit: the adapter type-checks as on $as"
}
check "iOS and tvOS" "$out/ios" 's/os(visionOS)/false/g'
check "visionOS" "$out/visionos" 's/os(visionOS)/true/g'
check "macOS and watchOS" "$out/ios" 's/canImport(UIKit)/false/g'
# With an iOS 26 deployment target: no deprecation warning (the signature form of promotional offers is a fallback).
check "iOS with an iOS 26 deployment target" "$out/ios26" 's/os(visionOS)/false/g'
