#!/usr/bin/env bash
# Split-test benchmarks, apart from `swift test`, with the release build:
#  1. GET /v1/customers/{id}/placements/{placement} for customers already assigned to a running experiment, against
#     the no-op /ping route in the same run (wrk over loopback; wrk and the server share this machine's cores), on SQLite.
#  2. GET …/experiments/{key}/results for an experiment with EXPOSED (default 1,000,000) exposed customers on
#     PostgreSQL, PAYERS_PER_MILLE of them (default 50) with a paid month in the money ledger: the median of ROUNDS
#     (default 5) timed requests.
#
#   Benchmarks/experiments.sh
#   PHASES=placement USERS_COUNT=5000 CONNECTIONS=16 DURATION=10 Benchmarks/experiments.sh
#   PHASES=results EXPOSED=200000 Benchmarks/experiments.sh
#   STOREKEEPER_BIN=/path/to/storekeeper Benchmarks/experiments.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
source "$root/.ci/lib.sh"
need_packages wrk wrk

phases=${PHASES:-"placement results"}
users_count=${USERS_COUNT:-5000}
connections=${CONNECTIONS:-16}
duration=${DURATION:-10}
exposed=${EXPOSED:-1000000}
payers=${PAYERS_PER_MILLE:-50}
rounds=${ROUNDS:-5}
. "$root/Benchmarks/common.sh"

storekeeper_binary release
work=$(mktemp -d)
cat > "$work/catalog.json" <<'JSON'
{"products": [{"id": "pro.monthly", "type": "autoRenewable", "group": "pro", "period": "P1M", "entitlements": ["pro"]},
 {"id": "pro.yearly", "type": "autoRenewable", "group": "pro", "period": "P1Y", "entitlements": ["pro"]}]}
JSON
# Under set -e a failing command ends the trap too: the server, already stopped by then, must not keep $work behind.
trap 'if [ -n "${pid:-}" ]; then kill "$pid" 2> /dev/null || true; fi; rm -rf "$work"' EXIT


setup_app() {  # $1 database url: an app with two paywalls, a placement and a running 50/50 experiment; sets app_id, secret, public
    local app
    app=$("$bin" apps create --database-url "$1" --bundle-id com.example.bench --environment sandbox --catalog "$work/catalog.json")
    app_id=$(echo "$app" | python3 -c 'import json,sys; print(json.load(sys.stdin)["appId"])')
    secret=$(echo "$app" | python3 -c 'import json,sys; print(json.load(sys.stdin)["secretKey"])')
    public=$(echo "$app" | python3 -c 'import json,sys; print(json.load(sys.stdin)["publicKey"])')
    bench_server "$1" "$work/serve.log"
    local api="http://127.0.0.1:$port/v1/apps/$app_id"
    curl -sf -X PUT "$api/paywalls/plain" -H "Authorization: Bearer $secret" -d '{"products": ["pro.monthly"]}' > /dev/null
    curl -sf -X PUT "$api/paywalls/bold" -H "Authorization: Bearer $secret" \
        -d '{"products": ["pro.yearly", "pro.monthly"], "config": {"headline": "Unlock everything"}}' > /dev/null
    curl -sf -X PUT "$api/placements/onboarding" -H "Authorization: Bearer $secret" -d '{"defaultPaywall": "plain"}' > /dev/null
    curl -sf -X POST "$api/experiments" -H "Authorization: Bearer $secret" -d '{"key": "bench", "placement": "onboarding",
        "status": "running", "variants": [{"key": "control"}, {"key": "treatment", "paywall": "bold"}]}' > /dev/null
}

if [[ " $phases " == *" placement "* ]]; then
    fresh_database sqlite experiments_bench
    setup_app "$url"
    seq 1 "$users_count" | sed 's/^/bench-user-/' > "$work/users.txt"
    # Every customer asks once: assigned and stored (what the run measures is the assigned customers' path).
    while read -r user; do
        curl -sf "http://127.0.0.1:$port/v1/customers/$user/placements/onboarding" -H "Authorization: Bearer $public" > /dev/null
    done < "$work/users.txt"
    placements=$(USERS="$work/users.txt" PUBLIC_KEY="$public" SUFFIX="/placements/onboarding" load \
        -d"${duration}s" --latency -s "$root/Benchmarks/get.lua" "http://127.0.0.1:$port")
    plain=$(load -d"${duration}s" --latency "http://127.0.0.1:$port/ping")
    echo "[sqlite] GET /v1/customers/{id}/placements/onboarding (assigned): $(echo "$placements" | summary)"
    echo "[sqlite] GET /ping (plain route): $(echo "$plain" | summary)"
    rate_ratio "placements / plain route" "$placements" "$plain"
    kill -TERM "$pid"
    wait "$pid" || true
fi

if [[ " $phases " == *" results "* ]]; then
    fresh_database postgres experiments_bench
    setup_app "$url"
    # The exposures and the ledger written straight into the database: EXPOSED customers exposed over 30 days, half to
    # each arm, and PAYERS_PER_MILLE of them with a paid month of pro.monthly a day after their exposure.
    su postgres -c "psql -q -v ON_ERROR_STOP=1 experiments_bench" <<SQL
INSERT INTO experiment_exposures (app_id, experiment_key, phase, customer_id, variant, placement_id, environment, exposed_at)
SELECT '$app_id', 'bench', 0, 'cus_bench_' || i, CASE WHEN i % 2 = 0 THEN 'control' ELSE 'treatment' END, 'onboarding',
    'Sandbox', 1790000000000 + i * 2592
FROM generate_series(1::bigint, $exposed::bigint) AS i;
INSERT INTO ledger (app_id, environment, transaction_id, customer_id, original_transaction_id, product_id, group_id, kind,
    start_at, end_at, active_until, renewal_number, price, currency, storefront, family_shared, commission_per_mille,
    monthly_price, purchase_day, usd_rate)
SELECT '$app_id', 'Sandbox', 't' || i, 'cus_bench_' || i, 't' || i, 'pro.monthly', 'pro', 'regular',
    1790000000000 + i * 2592 + 86400000, 1790000000000 + i * 2592 + 86400000 + 2592000000,
    1790000000000 + i * 2592 + 86400000 + 2592000000, 0, CASE WHEN i % 2 = 0 THEN 9990 ELSE 11990 END, 'USD', 'USA', 0, 300,
    9990, (1790000000000 + i * 2592) / 86400000, 1.0
FROM generate_series(1::bigint, $exposed::bigint) AS i WHERE i % 1000 < $payers;
ANALYZE experiment_exposures; ANALYZE ledger;
SQL
    times=()
    for round in $(seq 1 "$rounds"); do
        seconds=$(curl -sf -o "$work/results.json" -w '%{time_total}' \
            "http://127.0.0.1:$port/v1/apps/$app_id/experiments/bench/results?environment=Sandbox&window=unbounded" \
            -H "Authorization: Bearer $secret")
        times+=("$seconds")
        echo "[postgres] results with $exposed exposed customers, round $round: ${seconds} s"
    done
    python3 - "$work/results.json" "${times[@]}" <<'PY'
import json, statistics, sys
results = json.load(open(sys.argv[1]))
times = sorted(float(t) for t in sys.argv[2:])
arms = ", ".join(f"{a['key']} {a['exposed']} exposed / {a['paid']} paid" for a in results["arms"])
print(f"    median {statistics.median(times):.2f} s ({times[0]:.2f} to {times[-1]:.2f}); {arms}; {results['recommendation']['action']}")
PY
    kill -TERM "$pid"
    wait "$pid" || true
fi
