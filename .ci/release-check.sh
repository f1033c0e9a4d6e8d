#!/usr/bin/env bash
# The release binary runs where the Swift toolchain does not: built by scripts/release.sh (the one way a release is
# built), it must load no Swift library (ldd lists none, the running server maps none), start with the toolchain out of
# reach (an empty environment, no library path), migrate a fresh SQLite file, answer /health with its version and
# commit, and stop on SIGTERM. Prints its size.
#
#   .ci/release-check.sh build   # build it into .build-release/dist (CI starts this early, at a low priority)
#   .ci/release-check.sh         # check what was built
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dist=$root/.build-release/dist
cd "$root"
if [ "${1:-check}" = build ]; then
    scripts/release.sh "$dist"
    exit 0
fi
source .ci/lib.sh
version=$(sed -n 's/^    public static let version = "\(.*\)"$/\1/p' Sources/StorekeeperCore/Release/Release.swift)
bin=$(ls "$dist"/storekeeper-"$version"-linux-*/storekeeper)
archive=$(ls "$dist"/storekeeper-"$version"-linux-*.tar.gz)
(cd "$dist" && sha256sum -c "$(basename "$archive").sha256" > /dev/null)
swift_libraries='libswift|libFoundation|lib_Foundation|libdispatch|libBlocksRuntime|libXCTest'
if ldd "$bin" | grep -E "$swift_libraries"; then
    echo "release-check: the binary loads Swift's libraries (above): not built with the runtime linked in" >&2
    exit 1
fi
# SwiftPM's only run path is the binary's own folder ($ORIGIN); any other (the toolchain's) would be a dependency.
if readelf -d "$bin" | grep -iE 'rpath|runpath' | grep -v 'path: \[\$ORIGIN\]$'; then
    echo "release-check: the binary names a library path other than its own folder (above)" >&2
    exit 1
fi
work=$(mktemp -d)
server=
trap 'if [ -n "$server" ]; then kill "$server" 2> /dev/null; fi; rm -rf "$work"' EXIT
cd "$work"
# The toolchain out of reach: no environment but a PATH without it, no library path.
clean() { env -i PATH=/usr/bin:/bin HOME="$work" STOREKEEPER_RATES_URL=off "$@"; }
reported=$(clean "$bin" --version)
case "$reported" in
    "$version (commit "*")") ;;
    *) echo "release-check: --version said '$reported', not $version with its commit" >&2; exit 1 ;;
esac
commit=${reported#*commit }
commit=${commit%)}
[ "$commit" != development ] || { echo "release-check: the release binary was not stamped with its commit" >&2; exit 1; }
clean "$bin" migrate --database-url "$work/fresh.sqlite" > migrate.log
grep -q "applied 1 " migrate.log
# Not through the function: $! must be the server itself (env executes it in its own process).
env -i PATH=/usr/bin:/bin HOME="$work" STOREKEEPER_RATES_URL=off \
    "$bin" serve --port 0 --reconcile-interval 0 --database-url "$work/fresh.sqlite" > serve.log 2>&1 &
server=$!
wait_until_listening serve.log
health=$(curl -sf "$listening/health")
echo "$health" | grep -q "\"version\":\"$version\"" && echo "$health" | grep -q "\"commit\":\"$commit\"" \
    || { echo "release-check: /health said $health" >&2; exit 1; }
grep -q "$bin" "/proc/$server/maps" || { echo "release-check: process $server is not the server" >&2; exit 1; }
if grep -E "$swift_libraries" "/proc/$server/maps"; then
    echo "release-check: the running server mapped Swift's libraries (above)" >&2
    exit 1
fi
kill -TERM "$server"
wait "$server"
server=
echo "release-check: needs $(ldd "$bin" | awk '$1 !~ /vdso/ {print $1}' | tr '\n' ' ')"
echo "release-check: $(basename "$archive") ($(du -h "$archive" | cut -f1); binary $(du -h "$bin" | cut -f1)) runs without the toolchain: version $version, commit $commit, migrated a fresh SQLite file, answered /health, stopped on SIGTERM"
