#!/usr/bin/env bash
# Builds the fuzz target with libFuzzer and AddressSanitizer, seeds a corpus from the test fixtures, and fuzzes.
# Usage: ./run.sh [seconds=600] [extra libFuzzer flags...]
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-600}"; shift || true
swift build -c release --scratch-path .build-fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
binary="$(swift build -c release --scratch-path .build-fuzz --show-bin-path)/AppStoreFuzzer"

mkdir -p corpus
fixtures=../Tests/AppStoreTests/Fixtures
for f in "$fixtures"/appstore-test-ca/* "$fixtures"/xcode/*; do
    { printf '\x00'; cat "$f"; } > "corpus/jws-$(basename "$f")"
done
for f in "$fixtures"/payload-shapes/*.json; do
    { printf '\x03'; cat "$f"; } > "corpus/payload-$(basename "$f")"
done
{ printf '\x01'; cat "$fixtures"/appstore-test-ca/testCA.der; } > corpus/der-leaf-testCA
{ printf '\x02'; cat "$fixtures"/appstore-test-ca/testCA.der; } > corpus/der-intermediate-testCA

exec "$binary" corpus -max_total_time="$seconds" -max_len=16384 -print_final_stats=1 "$@"
