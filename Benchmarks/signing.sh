#!/usr/bin/env bash
# What signing the customer API's answers costs (README "Answers the device can trust"): GET /v1/customers/{id} with
# wrk over loopback for the customers of a simulated population on one SQLite database, with the server signing every
# answer (the default) and with STOREKEEPER_RESPONSE_SIGNING=false, every request with its own X-Nonce as the SDK sends
# it (so no answer can be signed once for many), alternated ROUNDS times (default 3): each round's
# ratio of signed to unsigned requests per second, and their median. Needs only the storekeeper executable; server.sh
# measures the same pair beside ingest, with its own load generator.
#
#   Benchmarks/signing.sh
#   CUSTOMERS=500 ROUNDS=5 DURATION=10 CONNECTIONS=16 Benchmarks/signing.sh
#   STOREKEEPER_BIN=/path/to/storekeeper Benchmarks/signing.sh   # a build made elsewhere (release)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
source "$root/.ci/lib.sh"
need_packages wrk wrk

customers=${CUSTOMERS:-300}
rounds=${ROUNDS:-3}
connections=${CONNECTIONS:-16}
duration=${DURATION:-10}
. "$root/Benchmarks/common.sh"

storekeeper_binary release
work=$(mktemp -d)
trap 'kill "${pid:-}" 2> /dev/null || true; rm -rf "$work"' EXIT

cd "$work"
simulated_world "$bin"
url="$work/bench.sqlite"
app=$("$bin" apps create --database-url "$url" --bundle-id com.example.load --environment sandbox \
    --trusted-root root.der --catalog catalog.json)
app_id=$(echo "$app" | python3 -c 'import json,sys; print(json.load(sys.stdin)["appId"])')
public_key=$(echo "$app" | python3 -c 'import json,sys; print(json.load(sys.stdin)["publicKey"])')
bench_server "$url" "$work/serve-populate.log"
"$bin" simulate population --state "$work/sim" --customers "$customers" --days 90 --bundle-id com.example.load --export-ids ids.csv \
    --webhook "http://127.0.0.1:$port/v1/apps/$app_id/notifications/appstore" > /dev/null
kill -TERM "$pid"
wait "$pid" || true
tail -n +2 ids.csv | cut -d, -f1 > users.txt
echo "signing: $(wc -l < users.txt) customers, $rounds rounds of ${duration} s each way, $connections connections"

reads() {  # $1 STOREKEEPER_RESPONSE_SIGNING; prints wrk's output
    STOREKEEPER_RESPONSE_SIGNING=$1 bench_server "$url" "$work/serve-$1.log"
    NONCE=1 USERS="$work/users.txt" PUBLIC_KEY="$public_key" load -d"${duration}s" --latency -s "$root/Benchmarks/get.lua" \
        "http://127.0.0.1:$port"
    kill -TERM "$pid"
    wait "$pid" || true
}

ratios=()
for round in $(seq 1 "$rounds"); do
    signed=$(reads true)
    unsigned=$(reads false)
    echo "round $round: signed $(echo "$signed" | summary)"
    echo "round $round: unsigned $(echo "$unsigned" | summary)"
    for output in "$signed" "$unsigned"; do
        if echo "$output" | grep -q "Non-2xx"; then echo "some reads were refused: $output" >&2; exit 1; fi
    done
    ratio=$(rate_ratio "signed / unsigned" "$signed" "$unsigned" | sed 's/.*= //')
    echo "round $round: signed / unsigned = $ratio"
    ratios+=("$ratio")
done
python3 -c 'import statistics,sys; r=[float(x) for x in sys.argv[1:]]; print(f"signing: median signed / unsigned = {statistics.median(r):.3f} (rounds {min(r):.3f} to {max(r):.3f})")' "${ratios[@]}"
