#!/usr/bin/env bash
# The release binary: `storekeeper` built in release mode from the committed tree (HEAD) with the Swift runtime and
# Foundation linked in (--static-swift-stdlib), so that it runs on a Linux machine without the toolchain; stripped, and
# packed with its checksum. The commit is stamped into the binary (`storekeeper --version`, `/health`). The container
# image's build stage and CI (.ci/release-check.sh) run this script: it is the one way a release is built.
#
#   scripts/release.sh [OUT=dist]   → OUT/storekeeper-<version>-linux-<arch>/ and its .tar.gz with a .sha256
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/dist}" && cd "${1:-$root/dist}" && pwd)
cd "$root"
commit=$(git rev-parse --short=12 HEAD)
# A copy of the committed tree, so that stamping the commit changes nothing in the working one (a build going on there
# would see it).
source=$(mktemp -d)
trap 'rm -rf "$source"' EXIT
git archive HEAD | tar -x -C "$source"
version=$(sed -n 's/^    public static let version = "\(.*\)"$/\1/p' "$source/Sources/StorekeeperCore/Release/Release.swift")
[ -n "$version" ] || { echo "no version in Sources/StorekeeperCore/Release/Release.swift" >&2; exit 1; }
sed -i "s/static let value = \".*\"/static let value = \"$commit\"/" "$source/Sources/StorekeeperCore/Release/BuildCommit.swift"
grep -q "\"$commit\"" "$source/Sources/StorekeeperCore/Release/BuildCommit.swift"
# The build directory stays in the working tree (.build-release, ignored by git), so a second release builds less.
(cd "$source" && swift build -c release --product storekeeper --static-swift-stdlib --scratch-path "$root/.build-release")
bin=$root/.build-release/release/storekeeper
name=storekeeper-$version-linux-$(uname -m)
rm -rf "${out:?}/$name" "$out/$name.tar.gz" "$out/$name.tar.gz.sha256"
mkdir "$out/$name"
strip -o "$out/$name/storekeeper" "$bin"
cp CHANGELOG.md "$out/$name/"
tar -C "$out" -czf "$out/$name.tar.gz" "$name"
(cd "$out" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
echo "built $out/$name.tar.gz: binary $(du -h "$out/$name/storekeeper" | cut -f1), version $version, commit $commit"
