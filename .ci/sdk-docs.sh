#!/usr/bin/env bash
# The SDK's public surface is documented: every public or open declaration of the SDK's targets has a `///` comment
# (attributes between them allowed), and DocC builds the SDK's documentation from its symbol graph, warnings as errors
# (swift-symbolgraph-extract on the debug build's module, then the toolchain's `docc convert`: what
# `swift package generate-documentation` does, without adding the plugin to every app's dependencies). Run after a
# debug build of the SDK (CI: after `swift test`); SDK_DOCS=<folder> keeps the site.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - <<'PY'
import glob, re, sys
missing = []
for path in sorted(glob.glob("Sources/StorekeeperSDK/*.swift") + glob.glob("Sources/StorekeeperStoreKit/*.swift")
                   + glob.glob("Sources/StorekeeperSDKTesting/*.swift") + glob.glob("Sources/ResponseSigning/*.swift")):
    lines = open(path, encoding="utf-8").read().split("\n")
    for number, line in enumerate(lines):
        if re.match(r"(@\w+(\(.*?\))?\s+)*(public|open)\s", line.strip()):
            previous = number - 1
            while previous >= 0 and lines[previous].strip().startswith("@"):
                previous -= 1
            if not lines[previous].strip().startswith("///"):
                missing.append(f"{path}:{number + 1}: {line.strip()[:90]}")
if missing:
    print("public SDK declarations without a /// comment:", *missing, sep="\n  ", file=sys.stderr)
    sys.exit(1)
print("sdk docs: every public declaration of the SDK's targets is documented")
PY
out=${SDK_DOCS:-$(mktemp -d)}
graphs=$(mktemp -d)
trap 'rm -rf "$graphs"; [ -n "${SDK_DOCS:-}" ] || rm -rf "$out"' EXIT
swift-symbolgraph-extract -module-name StorekeeperSDK -I .build/debug/Modules -target "$(uname -m)-unknown-linux-gnu" \
    -output-dir "$graphs" -minimum-access-level public
docc convert --additional-symbol-graph-dir "$graphs" --fallback-display-name StorekeeperSDK \
    --fallback-bundle-identifier storekeeper.StorekeeperSDK --output-path "$out" --warnings-as-errors > /dev/null
echo "sdk docs: DocC built $(ls "$out/data/documentation/storekeepersdk" | wc -l) pages of StorekeeperSDK's documentation"
