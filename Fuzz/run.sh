#!/usr/bin/env bash
# Builds the fuzz target with libFuzzer and AddressSanitizer, seeds a corpus from the test fixtures, and fuzzes.
# Usage: ./run.sh jws|receipt [seconds=600] [extra libFuzzer flags...]
set -euo pipefail
cd "$(dirname "$0")"
target="${1:-jws}"; shift || true
seconds="${1:-600}"; shift || true
swift build -c release --scratch-path .build-fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
binary="$(swift build -c release --scratch-path .build-fuzz --show-bin-path)/AppStoreFuzzer"

corpus="corpus-$target"
mkdir -p "$corpus"
fixtures=../Tests/AppStoreTests/Fixtures
if [ "$target" = receipt ]; then
    for f in "$fixtures"/receipts/* "$fixtures"/xcode/xcode-app-receipt-*; do
        { printf '\x00'; cat "$f"; } > "$corpus/receipt-$(basename "$f")"
        # The signed payload alone, for mode 1.
        { printf '\x01'; openssl cms -verify -noverify -inform DER -in <(base64 -d "$f" 2>/dev/null) 2>/dev/null || true; } > "$corpus/payload-$(basename "$f")"
    done
    { printf '\x02'; cat "$fixtures"/appstore-test-ca/legacyTransaction; } > "$corpus/legacy"
else
    for f in "$fixtures"/appstore-test-ca/* "$fixtures"/xcode/xcode-signed-*; do
        { printf '\x00'; cat "$f"; } > "$corpus/jws-$(basename "$f")"
    done
    for f in "$fixtures"/payload-shapes/signed*.json "$fixtures"/payload-shapes/appTransaction.json; do
        { printf '\x03'; cat "$f"; } > "$corpus/payload-$(basename "$f")"
    done
    { printf '\x01'; cat "$fixtures"/appstore-test-ca/testCA.der; } > "$corpus/der-leaf-testCA"
    { printf '\x02'; cat "$fixtures"/appstore-test-ca/testCA.der; } > "$corpus/der-intermediate-testCA"
fi

# Leak detection is off: a few objects (1-5 KB, the same after 500k runs) are still referenced by the harness and
# swift-crypto when libFuzzer exits, which LeakSanitizer
# reports at exit as leaks. Crashes, traps and AddressSanitizer errors still end the run.
ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" FUZZ_TARGET="$target" exec "$binary" "$corpus" -max_total_time="$seconds" -max_len=16384 -detect_leaks=0 \
    -print_final_stats=1 "$@"
