#!/usr/bin/env bash
# The outbox's benchmarks, apart from `swift test`, on this machine (the server, wrk and the receiver share its cores:
# compare figures within one run).
#
# 1. Delivery throughput: ~100,000 events recorded for a paused webhook destination (a fast local receiver that
#    answers 204 and counts distinct webhook-ids), then the destination enabled: deliveries a second until every one
#    is delivered, and the CPU each delivery took meanwhile (the server's; PostgreSQL's on PostgreSQL).
# 2. What the outbox adds to ingest: `server.sh`'s ingest (wrk POSTing new signed notifications) with one webhook
#    destination, paused (the outbox's rows alone) and enabled (its worker delivering meanwhile, on the same cores),
#    against no destination; the three alternated on fresh databases ROUNDS times (default 5), the median of the
#    rounds' ratios and their spread, and the median time added per notification (µs).
#
#   Benchmarks/outbox.sh                      # both databases (PostgreSQL through .ci/postgres.sh)
#   DATABASES=sqlite EVENTS_CUSTOMERS=25000 ROUNDS=3 Benchmarks/outbox.sh
#   STOREKEEPER_BIN=/path/to/storekeeper Benchmarks/outbox.sh
#   WORK=/var/tmp/outbox Benchmarks/outbox.sh # keep the generated notifications there, and reuse them next time
#   PHASES=cost Benchmarks/outbox.sh          # only the ingest comparison (PHASES=delivery: only the throughput)
#   COST_LOADS=fresh PHASES=cost Benchmarks/outbox.sh   # only its new-subscriptions load (COST_LOADS=load: renewals)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
source "$root/.ci/lib.sh"
need_packages wrk wrk

events_customers=${EVENTS_CUSTOMERS:-25000}   # × (1 + 3 renewals) notifications: 100,000 events
customers=${CUSTOMERS:-6000}
connections=${CONNECTIONS:-16}
duration=${DURATION:-10}
databases=${DATABASES:-"sqlite postgres"}
rounds=${ROUNDS:-5}
cost_loads=${COST_LOADS:-"load fresh"}   # the ingest comparison's loads: renewals, new subscriptions (see 2.)
. "$root/Benchmarks/common.sh"

storekeeper_binary release
(cd Benchmarks && swift build -c release --product ServerLoad > /dev/null && swift build -c release --product WebhookReceiver > /dev/null)
# WORK=<a directory> keeps the generated notifications, and reuses those already there (100,000 take minutes to sign).
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
echo "work directory: $work"
[ -s "$work/events/payloads.txt" ] || "$root/Benchmarks/.build/release/ServerLoad" "$work/events" "$events_customers" 3 com.example.load
[ -s "$work/load/payloads.txt" ] || "$root/Benchmarks/.build/release/ServerLoad" "$work/load" "$customers" 4 com.example.load
[ -s "$work/fresh/payloads.txt" ] || "$root/Benchmarks/.build/release/ServerLoad" "$work/fresh" "$((customers * 5))" 0 com.example.load
cat > "$work/catalog.json" <<'JSON'
{"products": [{"id": "pro.monthly", "type": "autoRenewable", "group": "pro", "period": "P1M", "entitlements": ["pro"]}]}
JSON
export STOREKEEPER_ALLOW_PRIVATE_WEBHOOKS=true

"$root/Benchmarks/.build/release/WebhookReceiver" > "$work/receiver.log" 2>&1 &
receiver_pid=$!
# A directory made here goes at the end; one given as WORK stays, to be given again.
trap 'kill $receiver_pid 2> /dev/null || true; [ -n "${WORK:-}" ] || rm -rf "$work"' EXIT
wait_until_listening "$work/receiver.log"
receiver=$listening

sql() {  # $1 sqlite|postgres, $2 url or database name, $3 query
    if [ "$1" = sqlite ]; then
        python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])" "$2" "$3"
    else
        su postgres -c "psql -tA $2 -c \"$3\""
    fi
}

create_app() {  # $1 url, $2 the load's directory (its CA signed the payloads); sets app_id, secret_key
    local app
    app=$("$bin" apps create --database-url "$1" --bundle-id com.example.load --environment sandbox \
        --trusted-root "$2/root.der" --catalog "$work/catalog.json")
    app_id=$(echo "$app" | python3 -c 'import json,sys; print(json.load(sys.stdin)["appId"])')
    secret_key=$(echo "$app" | python3 -c 'import json,sys; print(json.load(sys.stdin)["secretKey"])')
}

create_webhook() {  # $1 enabled true|false; prints the integration id
    curl -sf -X POST "http://127.0.0.1:$port/v1/apps/$app_id/integrations" -H "Authorization: Bearer $secret_key" \
        -H 'Content-Type: application/json' \
        -d "{\"kind\": \"webhook\", \"config\": {\"url\": \"$receiver\"}, \"environments\": [\"Sandbox\"], \"enabled\": $1}" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'
}

now() { date +%s.%N; }

ticks_per_second=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # $1 pid: its user and system CPU time, in clock ticks
postgres_ticks() {  # every PostgreSQL process's user and system CPU time, in clock ticks (0 without PostgreSQL)
    local total=0 pg
    for pg in $(pgrep -x postgres || true); do total=$((total + $(cpu_ticks "$pg" 2> /dev/null || echo 0))); done
    echo "$total"
}

for database in $databases; do
  if [[ " ${PHASES:-delivery cost} " == *" delivery "* ]]; then
    # 1. Delivery throughput.
    fresh_database "$database" storekeeper_bench_outbox
    name=storekeeper_bench_outbox
    target=$url; [ "$database" = sqlite ] && target=$url || target=$name
    create_app "$url" "$work/events"
    bench_server "$url" "$work/serve-outbox.log"
    integration=$(create_webhook false)
    # Every notification posted once (wrk goes round the list; it is stopped once all are stored).
    total=$(wc -l < "$work/events/payloads.txt")
    # wrk itself, not `load`: a function run in the background is a shell of its own, and killing it would leave wrk.
    PAYLOADS="$work/events/payloads.txt" THREADS=$threads wrk -t"$threads" -c"$connections" -d3600s \
        -s "$root/Benchmarks/post.lua" "http://127.0.0.1:$port/v1/apps/$app_id/notifications/appstore" > /dev/null &
    wrk_pid=$!
    ingest_started=$(now)
    while [ "$(sql "$database" "$target" "select count(*) from notifications")" -lt "$total" ]; do sleep 1; done
    ingest_finished=$(now)
    kill "$wrk_pid" 2> /dev/null || true
    wait "$wrk_pid" 2> /dev/null || true
    waiting=$(sql "$database" "$target" "select count(*) from deliveries")
    [ "$waiting" -gt 0 ] || { echo "no deliveries were recorded: see $work/serve-outbox.log" >&2; exit 1; }
    recorded=$(sql "$database" "$target" "select count(*) from events")
    before=$(curl -sf "$receiver/count" | cut -d' ' -f1)
    server_cpu=$(cpu_ticks "$pid")
    database_cpu=$(postgres_ticks)
    started=$(now)
    curl -sf -X PATCH "http://127.0.0.1:$port/v1/apps/$app_id/integrations/$integration" -H "Authorization: Bearer $secret_key" \
        -H 'Content-Type: application/json' -d '{"enabled": true}' > /dev/null
    # The receiver is asked first (counting in the database meanwhile would take PostgreSQL's CPU), then the database
    # until every outcome is recorded.
    while [ $(( $(curl -sf "$receiver/count" | cut -d' ' -f1) - before )) -lt "$waiting" ]; do sleep 0.2; done
    while [ "$(sql "$database" "$target" "select count(*) from deliveries where status = 'delivered'")" -lt "$waiting" ]; do sleep 0.2; done
    finished=$(now)
    after=$(curl -sf "$receiver/count")
    server_cpu=$(( $(cpu_ticks "$pid") - server_cpu ))
    database_cpu=$(( $(postgres_ticks) - database_cpu ))
    kill -TERM "$pid"; wait "$pid" || true
    python3 - "$database" "$recorded" "$waiting" "$started" "$finished" "$before" "$after" "$total" "$ingest_started" "$ingest_finished" \
        "$server_cpu" "$database_cpu" "$ticks_per_second" <<'PY'
import sys
database, recorded, waiting, started, finished, before, after, total, ingest_started, ingest_finished = sys.argv[1:11]
server_ticks, database_ticks, hz = (int(x) for x in sys.argv[11:14])
distinct, requests = (int(x) for x in after.split())
seconds = float(finished) - float(started)
ingest = float(ingest_finished) - float(ingest_started)
print(f"[{database}] ingest of {total} notifications for a paused destination: {ingest:.0f} s ({int(total) / ingest:.0f}/s)")
print(f"[{database}] outbox: {recorded} events recorded, {waiting} deliveries delivered in {seconds:.1f} s: "
      f"{int(waiting) / seconds:.0f} deliveries/s (receiver: {distinct - int(before)} new distinct ids, {requests} requests in all)")
# The CPU each delivery took while only delivering (the figure that decides what delivering costs a busy server).
per_delivery = lambda ticks: 1e6 * ticks / hz / int(waiting)
print(f"[{database}] CPU per delivery: server {per_delivery(server_ticks):.0f} µs"
      + (f", PostgreSQL {per_delivery(database_ticks):.0f} µs" if database == "postgres" else ""))
PY
  fi

  if [[ " ${PHASES:-delivery cost} " == *" cost "* ]]; then
    # 2. What the outbox adds to ingest: its rows alone (a paused destination), and its rows with their delivery
    #    running on the same cores (an enabled one). Two loads: server.sh's renewals (each subscriber's five
    #    notifications posted back to back, all dated in the past: each period has expired by the time it arrives, so
    #    every renewal also records an expiry and retracts the one before, about 2.7 deliveries a notification), and
    #    new subscriptions (each period current when it arrives, as live traffic is: one event, one delivery each).
    for load in $cost_loads; do
        results=()
        for round in $(seq 1 "$rounds"); do
            for build in without paused with; do
                fresh_database "$database" storekeeper_bench_outbox_cost
                target=$url; [ "$database" = postgres ] && target=storekeeper_bench_outbox_cost
                create_app "$url" "$work/$load"
                bench_server "$url" "$work/serve-cost.log"
                [ "$build" = with ] && create_webhook true > /dev/null
                [ "$build" = paused ] && create_webhook false > /dev/null
                server_cpu=$(cpu_ticks "$pid")
                receiver_cpu=$(cpu_ticks "$receiver_pid")
                rate=$(PAYLOADS="$work/$load/payloads.txt" load -d"${duration}s" \
                    -s "$root/Benchmarks/post.lua" "http://127.0.0.1:$port/v1/apps/$app_id/notifications/appstore" | rate_of)
                # The CPU the server and the receiver took during the load, as shares of the two cores' time: the
                # receiver stands for a destination elsewhere, yet takes its share of the cores here.
                cpu=$(awk -v s="$server_cpu" -v r="$receiver_cpu" -v s2="$(cpu_ticks "$pid")" -v r2="$(cpu_ticks "$receiver_pid")" \
                    -v hz="$ticks_per_second" -v d="$duration" -v cores="$(nproc)" \
                    'BEGIN { printf "server CPU %.0f%%, receiver CPU %.1f%% of the cores", 100 * (s2 - s) / hz / d / cores, 100 * (r2 - r) / hz / d / cores }')
                sleep 1
                delivered=$(sql "$database" "$target" "select count(*) from deliveries where status = 'delivered'")
                written=$(sql "$database" "$target" "select count(*) from deliveries")
                kill -TERM "$pid"; wait "$pid" || true
                echo "[$database] ingest ($load), $build destination, round $round: $rate req/s ($written deliveries written, $delivered delivered meanwhile; $cpu)"
                results+=("$build $rate")
            done
        done
        printf '%s\n' "${results[@]}" | grep -v '^paused' |
            median_ratio "$database" "an enabled webhook destination (writing and delivering; $load)"
        printf '%s\n' "${results[@]}" | grep -v '^with ' | sed 's/^paused/with/' |
            median_ratio "$database" "a paused webhook destination (the outbox's rows alone; $load)"
    done
  fi
done
