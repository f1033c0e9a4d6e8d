#!/usr/bin/env bash
# The micro-benchmarks that guard themselves (Benchmarks/, ordo-one's package-benchmark): JWS verification, the
# entitlement engine, split-test assignment, the SDK's launch and its check of a signed answer, each about a second
# (STOREKEEPER_BENCHMARK_QUICK=1), compared with the p90 figures checked in under Benchmarks/Thresholds/. A figure past
# its tolerance (Benchmarks/Benchmarks/BenchmarkSettings: allocations +10%, throughput under 30% of the figure) fails
# the run; one better than its figure passes, with a note (a faster machine, or an improvement worth checking in).
# The slow benchmarks (Experiments.analyze.1M, the heavy customer, the wrk scripts) are not run here.
#
#   .ci/micro-benchmarks.sh build    # build them only (CI starts this early, at the lowest priority)
#   .ci/micro-benchmarks.sh          # check them
#   .ci/micro-benchmarks.sh update   # write new figures to Benchmarks/Thresholds/ (on the machine CI runs on; quiet)
set -euo pipefail
cd "$(dirname "$0")/../Benchmarks"
targets=(ExperimentsBenchmarks EntitlementsBenchmarks SDKBenchmarks AppStoreBenchmarks)
filter='^(Experiments\.assign|Entitlements\.(evaluate|state)\.typical|P256\.verify\.raw|JWS\.verify\.(cached|uncached)|Notification\.verifyAndDecode|SDK (cold start to cached customer info|customerInfo\(\) from the cache|signed answer check, intermediate known))$'
export STOREKEEPER_BENCHMARK_QUICK=1

case "${1:-check}" in
build)
    # The plugin, its tool and the targets, built by listing the benchmarks (nothing is measured).
    swift package benchmark list $(printf -- '--target %s ' "${targets[@]}") > /dev/null
    echo "micro-benchmarks: built"
    ;;
update)
    swift package --allow-writing-to-package-directory benchmark thresholds update $(printf -- '--target %s ' "${targets[@]}") \
        --filter "$filter" --no-progress
    ;;
check)
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    status=0
    swift package benchmark thresholds check $(printf -- '--target %s ' "${targets[@]}") --filter "$filter" --no-progress \
        > "$log" 2>&1 || status=$?
    cat "$log"
    if [ "$status" != 0 ]; then
        if grep -q "is WORSE than the defined" "$log" || ! grep -q "is BETTER than the defined" "$log"; then
            echo "micro-benchmarks: a regression past its threshold, or the check failed (above)" >&2
            exit 1
        fi
        echo "micro-benchmarks: every figure within its threshold or better (better ones above: consider 'update')"
    else
        echo "micro-benchmarks: every figure within its threshold"
    fi
    ;;
*) echo "usage: $0 [build|check|update]" >&2; exit 2 ;;
esac
