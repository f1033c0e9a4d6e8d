#!/usr/bin/env bash
# The SDK's public surface is documented: every public or open declaration of the SDK's targets has a `///` comment
# (attributes between them allowed), and DocC builds the SDK's documentation from its symbol graph without a warning
# about a missing or broken symbol link.
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
