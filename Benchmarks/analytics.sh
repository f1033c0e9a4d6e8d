#!/usr/bin/env bash
# Analytics benchmarks, apart from `swift test`: fills a database with a synthetic money ledger in bulk (SQL, not the
# webhook) and times the metrics API on the real server: a 365-day daily MRR series, the overview, and a 12-month
# trial-conversion cohort, each the median of three requests.
#
#   Benchmarks/analytics.sh                          # PostgreSQL 1,000,000 subscriptions, SQLite 100,000
#   DATABASES=sqlite Benchmarks/analytics.sh
#   PG_SUBSCRIPTIONS=100000 SQLITE_SUBSCRIPTIONS=10000 Benchmarks/analytics.sh   # a quick run
#   STOREKEEPER_BIN=/path/to/storekeeper Benchmarks/analytics.sh                   # another build
#   EVERY_METRIC=1 Benchmarks/analytics.sh           # and every metric as a 12-month series by month
#
# Each subscription has 1 to 19 monthly periods (10 on average: 1,000,000 subscriptions are 10,000,000 ledger rows);
# half begin with a free trial; starts are spread over the two years before now.
set -euo pipefail
# The simulator checks metrics at its own rates: no server fetches the ECB's.
export STOREKEEPER_RATES_URL=off
cd "$(dirname "$0")/.."
root=$(pwd)
source "$root/.ci/lib.sh"
databases=${DATABASES:-"postgres sqlite"}
pg_subscriptions=${PG_SUBSCRIPTIONS:-1000000}
sqlite_subscriptions=${SQLITE_SUBSCRIPTIONS:-100000}

storekeeper_binary release
work=$(mktemp -d)
# The server of the database being timed, if one is running: stopped however the script ends.
trap 'if [ -n "${pid:-}" ]; then kill -TERM "$pid" 2> /dev/null || true; fi; rm -rf "$work"' EXIT
now_ms=$(python3 -c 'import time; print(int(time.time() * 1000))')

# The ledger rows of subscriptions 1…N, as one INSERT … SELECT over a series of subscriptions and one of periods.
# $1: the series of subscriptions (FROM item named s(i)), $2: of periods (p(j)).
ledger_sql() {
    cat <<SQL
INSERT INTO ledger (app_id, environment, transaction_id, customer_id, original_transaction_id, product_id, group_id, kind,
    start_at, end_at, active_until, renewal_number, price, currency, storefront, family_shared, refunded_at, refund_amount,
    monthly_price, commission_per_mille, tax_per_mille, will_renew, grace_until, acquisition, next_start,
    next_monthly_price, next_refunded, purchase_day, usd_rate, rate_day)
SELECT '$app_id', 'Sandbox', 't' || i || '-' || j, 'c' || i, 's' || i, 'pro.monthly', 'pro',
    CASE WHEN j = 0 AND i % 2 = 0 THEN 'trial' ELSE 'regular' END,
    b + j * 2592000000, b + (j + 1) * 2592000000, b + (j + 1) * 2592000000,
    CASE WHEN j = 0 AND i % 2 = 0 THEN NULL ELSE j - (1 - i % 2) END,
    CASE WHEN j = 0 AND i % 2 = 0 THEN 0 ELSE 9990 END, 'USD', 'USA', 0,
    CASE WHEN i % 50 = 0 AND j = 1 THEN b + (j + 1) * 2592000000 - 86400000 END,
    CASE WHEN i % 50 = 0 AND j = 1 THEN 9990 END,
    CASE WHEN j = 0 AND i % 2 = 0 THEN NULL ELSE 9990 END, 300, NULL,
    CASE WHEN j = n - 1 THEN (CASE WHEN i % 3 = 0 THEN 0 ELSE 1 END) END, NULL,
    CASE WHEN j = 0 AND i % 2 = 1 THEN 'new' WHEN j = 1 AND i % 2 = 0 THEN 'trialConversion' END,
    CASE WHEN j < n - 1 THEN b + (j + 1) * 2592000000 END, CASE WHEN j < n - 1 THEN 9990 END, CASE WHEN j < n - 1 THEN 0 END,
    (b + j * 2592000000) / 86400000, 1.0, NULL
FROM (SELECT i, 1 + (i * 7919) % 19 AS n, $now_ms - 63072000000 + (i % 700) * 86400000 + (i % 96) * 900000 AS b FROM $1) AS s
JOIN $2 ON j < n
WHERE b + j * 2592000000 < $now_ms
SQL
}

time_get() {  # path: the median of three requests' seconds, and the answer's size
    local times=()
    for _ in 1 2 3; do
        times+=("$(curl -s -o "$work/answer.json" -w '%{time_total}' -H "Authorization: Bearer $secret" "http://127.0.0.1:$port$1")")
    done
    printf '%s\n' "${times[@]}" | sort -n | sed -n 2p
}

for database in $databases; do
    if [ "$database" = postgres ]; then
        base=$("$root/.ci/postgres.sh" | tail -1)
        su postgres -c "dropdb --if-exists storekeeper_analytics_bench && createdb storekeeper_analytics_bench"
        url="${base/storekeeper_test/storekeeper_analytics_bench}"
        subscriptions=$pg_subscriptions
    else
        url="$work/bench.sqlite"
        subscriptions=$sqlite_subscriptions
    fi
    "$bin" migrate --database-url "$url" > /dev/null
    "$bin" simulate ca --state "$work/sim" --export "$work/root.der" > /dev/null
    app=$("$bin" apps create --database-url "$url" --bundle-id com.example.analytics --environment sandbox \
        --trusted-root "$work/root.der")
    app_id=$(echo "$app" | python3 -c 'import json,sys; print(json.load(sys.stdin)["appId"])')
    secret=$(echo "$app" | python3 -c 'import json,sys; print(json.load(sys.stdin)["secretKey"])')

    started=$(date +%s)
    if [ "$database" = postgres ]; then
        # The ledger's triggers (which append every written row to ledger_moves for the summary) are off for this
        # session: the summary is computed from the ledger below, as after any bulk load.
        { echo "SET session_replication_role = replica;"
          ledger_sql "generate_series(1::bigint, $subscriptions) AS g(i)" "generate_series(0::bigint, 18) AS p(j)"; } \
            | su postgres -c "psql -q -v ON_ERROR_STOP=1 storekeeper_analytics_bench" > /dev/null
        su postgres -c "psql -q storekeeper_analytics_bench -c 'VACUUM ANALYZE ledger'" > /dev/null
        rows=$(su postgres -c "psql -tA storekeeper_analytics_bench -c 'SELECT count(*) FROM ledger'")
    else
        ledger_sql "(WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < $subscriptions) SELECT i FROM g) AS g" \
            "(WITH RECURSIVE p(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM p WHERE j < 18) SELECT j FROM p) AS p" > "$work/fill.sql"
        python3 - "$url" "$work/fill.sql" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript(open(sys.argv[2]).read())
db.execute("ANALYZE")
db.commit()
PY
        rows=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from ledger').fetchone()[0])" "$url")
    fi
    echo "[$database] $subscriptions subscriptions, $rows ledger rows, filled in $(( $(date +%s) - started )) s"
    # The ledger was written by SQL, not by the server: its hourly summary is computed from it, as an operator would
    # (on SQLite the triggers also appended its rows to ledger_moves, which this discards).
    started=$(date +%s)
    "$bin" analytics rebuild --summary-only --app "$app_id" --database-url "$url" > /dev/null
    echo "[$database] hourly summary computed from the ledger in $(( $(date +%s) - started )) s"

    cd "$work"
    serve "$bin" "$work/serve-$database.log" --database-url "$url" --log-level error
    pid=$server
    cd "$root"

    read -r today year_ago month_start months_ago <<< "$(python3 - <<'PY'
import datetime
t = datetime.datetime.now(datetime.timezone.utc).date()
m = t.replace(day=1)
y, mo = m.year, m.month - 12
while mo <= 0: y, mo = y - 1, mo + 12
print(t + datetime.timedelta(days=1), t - datetime.timedelta(days=364), m, datetime.date(y, mo, 1))
PY
)"
    mrr=$(time_get "/v1/apps/$app_id/metrics/mrr?environment=Sandbox&interval=day&from=$year_ago&to=$today")
    last_mrr=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["points"][-1]["value"])' "$work/answer.json")
    overview=$(time_get "/v1/apps/$app_id/metrics/overview?environment=Sandbox")
    actives=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["activeSubscriptions"])' "$work/answer.json")
    cohort=$(time_get "/v1/apps/$app_id/metrics/trialConversion?environment=Sandbox&interval=month&from=$months_ago&to=$month_start")
    echo "[$database] 365-day daily MRR: ${mrr} s (MRR now $last_mrr USD)"
    echo "[$database] overview: ${overview} s ($actives active subscriptions)"
    echo "[$database] 12-month trial-conversion cohorts: ${cohort} s"
    if [ -n "${EVERY_METRIC:-}" ]; then
        # The synthetic ledger has no events and no customers: billing, the free-trials report's event columns and
        # LTV have little to read here.
        metrics=$(curl -s -H "Authorization: Bearer $secret" "http://127.0.0.1:$port/v1/apps/$app_id/metrics" \
            | python3 -c 'import json,sys; print(" ".join(m["name"] for m in json.load(sys.stdin)["metrics"]))')
        for metric in $metrics; do
            took=$(time_get "/v1/apps/$app_id/metrics/$metric?environment=Sandbox&interval=month&from=$months_ago&to=$month_start")
            python3 -c 'import json,sys; json.load(open(sys.argv[1]))["points"]' "$work/answer.json" \
                || { echo "[$database] $metric did not answer a series: $(head -c 300 "$work/answer.json")" >&2; exit 1; }
            echo "[$database] $metric, 12 months by month: ${took} s"
        done
    fi
    kill -TERM "$pid"
    wait "$pid" || true
    pid=
done
