#!/usr/bin/env bash
# Server benchmarks, apart from `swift test`: the webhook's ingest throughput (signed notifications, verified and
# committed) on SQLite and on PostgreSQL, and GET /v1/customers/{id} against the no-op /ping route, all with wrk over
# loopback on this machine (wrk and the server share its cores: compare within one run); and the same reads with the
# answers' signing off (STOREKEEPER_RESPONSE_SIGNING=false), for what signing costs; and Apple's Get Retention Message
# requests (POST …/retention/appstore, signed, answered by a retention policy over the customer's state and recorded)
# after the ingest, with their p99 (the issue's bar: under 50 ms on SQLite); and the reads again once the app takes
# Production and Sandbox (combined answers). It ends with one table of the measures with their targets (issue 47), the
# server's resident memory idle, at its peak under the ingest, and over the run.
#
#   Benchmarks/server.sh            # both databases (PostgreSQL through .ci/postgres.sh)
#   DATABASES=sqlite Benchmarks/server.sh
#   CUSTOMERS=6000 RENEWALS=4 CONNECTIONS=16 DURATION=10 Benchmarks/server.sh
#   STOREKEEPER_BIN=/path/to/other/storekeeper Benchmarks/server.sh   # measure another build (e.g. before a change)
#   LEDGER_COST=1 Benchmarks/server.sh   # also what the money ledger adds to ingest: a copy of this tree without its
#                                        # ledger writes (Benchmarks/without-ledger.patch applied, built in
#                                        # .build-without-ledger; the production code has no switch for it),
#                                        # the two runs alternated on fresh databases, ROUNDS times (default 5): the
#                                        # median of the rounds' ratios and their spread (this machine is noisy), and
#                                        # the median time the ledger adds per notification, in µs
#   LEDGER_COST=1 STOREKEEPER_BIN=a STOREKEEPER_BIN_WITHOUT_LEDGER=b Benchmarks/server.sh   # two builds made elsewhere
#   LEDGER_COST=1 WAL_FRAMES=1 Benchmarks/server.sh   # also, on SQLite, the pages each notification's commits write to
#                                                     # the WAL with and without the ledger (one 10 s run of each under
#                                                     # strace, which slows it): a count that does not move with this
#                                                     # machine's noise, where the ratio above moves by several points
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
source "$root/.ci/lib.sh"
need_packages wrk wrk
[ -z "${WAL_FRAMES:-}" ] || need_packages strace strace

customers=${CUSTOMERS:-6000}
renewals=${RENEWALS:-4}
connections=${CONNECTIONS:-16}
duration=${DURATION:-10}
databases=${DATABASES:-"sqlite postgres"}
. "$root/Benchmarks/common.sh"

storekeeper_binary release
(cd Benchmarks && swift build -c release --product ServerLoad > /dev/null)
if [ -n "${LEDGER_COST:-}" ] && [ -z "${STOREKEEPER_BIN_WITHOUT_LEDGER:-}" ]; then
    # The working tree as it is (tracked and new files), copied, with the ledger's writes taken out by the patch.
    copy="$root/.build-without-ledger/source"
    rm -rf "$copy"
    mkdir -p "$copy"
    git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$copy"
    (cd "$copy" && git apply "$root/Benchmarks/without-ledger.patch") \
        || { echo "Benchmarks/without-ledger.patch no longer applies to StateRecomputer: update it" >&2; exit 1; }
    swift build -c release --product storekeeper --package-path "$copy" --scratch-path .build-without-ledger > /dev/null
fi
bin_without_ledger="${STOREKEEPER_BIN_WITHOUT_LEDGER:-$root/.build-without-ledger/release/storekeeper}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$root/Benchmarks/.build/release/ServerLoad" "$work/load" "$customers" "$renewals" com.example.load
cat > "$work/catalog.json" <<'JSON'
{"products": [{"id": "pro.monthly", "type": "autoRenewable", "group": "pro", "period": "P1M", "entitlements": ["pro"]}]}
JSON

ingest_run() {  # $1 binary, $2 database url, $3 seconds, $4 (optional) a file for strace's log of the server's pwrite64
    # calls: POSTs the generated notifications; prints wrk's output (run it in a subshell)
    bin=$1
    local app app_id tracer=
    app=$("$bin" apps create --database-url "$2" --bundle-id com.example.load --environment sandbox \
        --trusted-root "$work/load/root.der" --catalog "$work/catalog.json")
    app_id=$(echo "$app" | python3 -c 'import json,sys; print(json.load(sys.stdin)["appId"])')
    bench_server "$2" "$work/serve-ledger-cost.log"
    if [ -n "${4:-}" ]; then
        strace -f -y -qq -e trace=pwrite64 -e signal=none -o "$4" -p "$pid" &
        tracer=$!
        sleep 1
    fi
    PAYLOADS="$work/load/payloads.txt" load -d"$3s" --latency \
        -s "$root/Benchmarks/post.lua" "http://127.0.0.1:$port/v1/apps/$app_id/notifications/appstore"
    # The server ends the requests under way before it exits, and strace ends with it: every commit is traced.
    kill -TERM "$pid"
    wait "$pid" || true
    if [ -n "$tracer" ]; then wait "$tracer" || true; fi
}

wal_frames_run() {  # $1 binary: a 10 s ingest on a fresh SQLite database, the server's writes traced; prints the pages
    # it wrote to the WAL per notification stored (SQLite writes a frame as its 24-byte header, then the page)
    bin=$1
    fresh_database sqlite storekeeper_bench_frames
    ingest_run "$bin" "$url" 10 "$work/pwrites.txt" > /dev/null
    python3 - "$work/pwrites.txt" "$url" <<'PY'
import re, sqlite3, sys
# A call another thread's interrupts is logged as "<unfinished ...>" and resumed on a line of its own: counted where it starts.
writes = (re.search(r'pwrite64\(\d+<[^>]*-wal>, ".*"(?:\.\.\.)?, (\d+), \d+', line) for line in open(sys.argv[1]))
pages = sum(1 for write in writes if write and int(write.group(1)) > 32)
stored = sqlite3.connect(sys.argv[2]).execute("select count(*) from notifications").fetchone()[0]
if stored == 0 or pages == 0: sys.exit(f"no notification stored or no WAL write traced ({stored}, {pages})")
print(f"{pages / stored:.1f} a notification ({pages} for {stored})")
PY
}

if [ -n "${LEDGER_COST:-}" ]; then
    for database in $databases; do
        if [ "$database" = sqlite ] && [ -n "${WAL_FRAMES:-}" ]; then
            # Assigned before they are printed: set -e stops the script when a run fails, not when echo succeeds.
            frames_without=$(wal_frames_run "$bin_without_ledger")
            frames_with=$(wal_frames_run "$bin")
            echo "[sqlite] pages written to the WAL: without the ledger $frames_without; with it $frames_with"
        fi
        results=()
        for round in $(seq 1 "${ROUNDS:-5}"); do
            for build in without with; do
                fresh_database "$database" storekeeper_bench_ledger
                if [ "$build" = with ]; then binary=$bin; else binary=$bin_without_ledger; fi
                output=$(ingest_run "$binary" "$url" "$duration")
                echo "[$database] ingest $build the ledger, round $round: $(echo "$output" | summary)"
                results+=("$build $(echo "$output" | rate_of)")
            done
        done
        # Ingest time per notification is the inverse of the throughput at the same concurrency; each round's ratio
        # compares two runs made back to back, and the median of the rounds' ratios is the figure.
        printf '%s\n' "${results[@]}" | median_ratio "$database" "the ledger"
    done
fi

# The closing table: "measure|result|target" rows, printed once every database has run.
table=()
for database in $databases; do
    if [ "$database" = sqlite ]; then
        url="$work/bench.sqlite"
    else
        base=$("$root/.ci/postgres.sh" | tail -1)
        su postgres -c "dropdb --if-exists storekeeper_bench && createdb storekeeper_bench"
        url="${base/storekeeper_test/storekeeper_bench}"
        "$bin" migrate --database-url "$url" > /dev/null
    fi
    app=$("$bin" apps create --database-url "$url" --bundle-id com.example.load --environment sandbox \
        --trusted-root "$work/load/root.der" --catalog "$work/catalog.json")
    app_id=$(echo "$app" | python3 -c 'import json,sys; print(json.load(sys.stdin)["appId"])')
    public_key=$(echo "$app" | python3 -c 'import json,sys; print(json.load(sys.stdin)["publicKey"])')
    secret_key=$(echo "$app" | python3 -c 'import json,sys; print(json.load(sys.stdin)["secretKey"])')
    bench_server "$url" "$work/serve-$database.log"
    sleep 1
    idle_memory=$(memory_mb "$pid" VmRSS)

    ingest=$(PAYLOADS="$work/load/payloads.txt" load -d"${duration}s" --latency \
        -s "$root/Benchmarks/post.lua" "http://127.0.0.1:$port/v1/apps/$app_id/notifications/appstore")
    echo "[$database] ingest (POST webhook, new signed notifications): $(echo "$ingest" | summary)"
    ingest_memory=$(memory_mb "$pid" VmHWM)
    if [ "$database" = sqlite ]; then target=1500; else target=2000; fi
    table+=("[$database] webhook ingest, notifications/s (p99)|$(echo "$ingest" | rate_of) ($(echo "$ingest" | awk '/^ +99%/ {print $2}'))|>= $target")
    reads=$(NONCE=1 USERS="$work/load/users.txt" PUBLIC_KEY="$public_key" load -d"${duration}s" --latency \
        -s "$root/Benchmarks/get.lua" "http://127.0.0.1:$port")
    plain=$(load -d"${duration}s" --latency "http://127.0.0.1:$port/ping")
    echo "[$database] GET /v1/customers/{id}: $(echo "$reads" | summary)"
    echo "[$database] GET /ping (plain route): $(echo "$plain" | summary)"
    rate_ratio "customer reads / plain route" "$reads" "$plain"
    table+=("[$database] customer read / /ping (read p99)|$(rate_ratio x "$reads" "$plain" | sed 's/.*= //') ($(echo "$reads" | awk '/^ +99%/ {print $2}'))|>= 0.5, p99 < 5 ms")
    # A policy whose rules read the subscription's state (days subscribed), the locale, and a default.
    python3 - "http://127.0.0.1:$port/v1/apps/$app_id/retention-policy" "$secret_key" <<'PY'
import json, sys, urllib.request
policy = {"rules": [
    {"name": "german", "locales": ["de"], "answer": {"type": "message", "messageIdentifier": "a1b2c3d4-e5f6-4890-a1b2-c3d4e5f67890"}},
    {"name": "loyal", "minDaysSubscribed": 60,
     "answer": {"type": "alternateProduct", "messageIdentifier": "b2c3d4e5-f6a7-4901-b2c3-d4e5f6a78901", "productId": "pro.yearly"}}],
  "defaultAnswer": {"type": "message", "messageIdentifier": "c3d4e5f6-a789-4012-c3d4-e5f6a7890123"}}
request = urllib.request.Request(sys.argv[1], data=json.dumps(policy).encode(), method="PUT",
    headers={"Authorization": "Bearer " + sys.argv[2], "Content-Type": "application/json"})
urllib.request.urlopen(request).read()
PY
    # The customers the requests are about are known to the server (their subscriptions, posted again: duplicates
    # for those the ingest stored), so each request reads a real state.
    PAYLOADS="$work/load/retention-subscribe.txt" load -d5s \
        -s "$root/Benchmarks/post.lua" "http://127.0.0.1:$port/v1/apps/$app_id/notifications/appstore" > /dev/null
    retention=$(PAYLOADS="$work/load/retention.txt" load -d"${duration}s" --latency \
        -s "$root/Benchmarks/post.lua" "http://127.0.0.1:$port/v1/apps/$app_id/retention/appstore")
    echo "[$database] POST retention/appstore (Get Retention Message, policy over the customer's state, recorded): $(echo "$retention" | summary)"
    if [ "$database" = sqlite ]; then
        known=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*), count(customer_id) from retention_requests').fetchone())" "$url")
    else
        known=$(su postgres -c "psql -tA storekeeper_bench -c 'select count(*), count(customer_id) from retention_requests'")
    fi
    echo "[$database] retention requests recorded, and of those about a known customer: $known"
    table+=("[$database] resident memory idle / peak under the ingest|$idle_memory MB / $ingest_memory MB|< 100 MB / < 300 MB")
    table+=("[$database] server's peak resident memory, whole run|$(memory_mb "$pid" VmHWM) MB|")
    kill -TERM "$pid"
    wait "$pid" || true
    # What signing the answers costs: the same reads from the same database with STOREKEEPER_RESPONSE_SIGNING=false.
    STOREKEEPER_RESPONSE_SIGNING=false bench_server "$url" "$work/serve-$database-unsigned.log"
    unsigned=$(NONCE=1 USERS="$work/load/users.txt" PUBLIC_KEY="$public_key" load -d"${duration}s" --latency \
        -s "$root/Benchmarks/get.lua" "http://127.0.0.1:$port")
    echo "[$database] GET /v1/customers/{id} unsigned: $(echo "$unsigned" | summary)"
    rate_ratio "signed customer reads / unsigned" "$reads" "$unsigned"
    kill -TERM "$pid"
    wait "$pid" || true
    # The same reads once the app takes Production too (as an app that ships does): each answer combines the two
    # environments' states (cached per customer once combined). A first pass computes the new states, then the measure.
    bench_server "$url" "$work/serve-$database-two.log"
    curl -sf -X PATCH "http://127.0.0.1:$port/v1/apps/$app_id" -H "Authorization: Bearer $secret_key" \
        -H 'Content-Type: application/json' -d '{"appAppleId": 1234567890, "environments": ["Production", "Sandbox"]}' > /dev/null
    NONCE=1 USERS="$work/load/users.txt" PUBLIC_KEY="$public_key" load -d"${duration}s" \
        -s "$root/Benchmarks/get.lua" "http://127.0.0.1:$port" > /dev/null
    two=$(NONCE=1 USERS="$work/load/users.txt" PUBLIC_KEY="$public_key" load -d"${duration}s" --latency \
        -s "$root/Benchmarks/get.lua" "http://127.0.0.1:$port")
    echo "[$database] GET /v1/customers/{id}, an app of Production and Sandbox: $(echo "$two" | summary)"
    rate_ratio "customer reads, two environments / one" "$two" "$reads"
    table+=("[$database] customer read, two environments / one (read p99)|$(rate_ratio x "$two" "$reads" | sed 's/.*= //') ($(echo "$two" | awk '/^ +99%/ {print $2}'))|")
    kill -TERM "$pid"
    wait "$pid" || true
    if [ "$database" = sqlite ]; then
        stored=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from notifications').fetchone()[0])" "$url")
    else
        stored=$(su postgres -c "psql -tA storekeeper_bench -c 'select count(*) from notifications'")
    fi
    echo "[$database] notifications stored: $stored (of $(wc -l < "$work/load/payloads.txt") generated)"
done

# Two server processes on one PostgreSQL database, the ingest split between them (half the payloads and half the
# connections each, two wrk processes at once), against one server on a fresh database with all of it, in turn.
if [[ " $databases " == *" postgres "* ]]; then
    awk 'NR % 2 == 1' "$work/load/payloads.txt" > "$work/load/payloads-a.txt"
    awk 'NR % 2 == 0' "$work/load/payloads.txt" > "$work/load/payloads-b.txt"
    results=()
    for round in $(seq 1 "${TWO_SERVER_ROUNDS:-2}"); do
        fresh_database postgres storekeeper_bench_two
        app_id=$("$bin" apps create --database-url "$url" --bundle-id com.example.load --environment sandbox \
            --trusted-root "$work/load/root.der" --catalog "$work/catalog.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["appId"])')
        bench_server "$url" "$work/serve-one.log"
        # Where the CPU goes, per notification stored: the server, PostgreSQL's processes, and the rest (wrk, the
        # kernel's share not charged to either): the paper behind what more cores would give two servers.
        postgres_cpu > "$work/pg-before.txt"
        server_before=$(cpu_ticks "$pid")
        busy_before=$(machine_busy_ticks)
        one=$(PAYLOADS="$work/load/payloads.txt" load -d"${duration}s" -s "$root/Benchmarks/post.lua" \
            "http://127.0.0.1:$port/v1/apps/$app_id/notifications/appstore" | rate_of)
        busy=$(( $(machine_busy_ticks) - busy_before ))
        server_cpu=$(( $(cpu_ticks "$pid") - server_before ))
        postgres_cpu > "$work/pg-after.txt"
        kill -TERM "$pid"
        wait "$pid" || true
        stored=$(su postgres -c "psql -tA storekeeper_bench_two -c 'select count(*) from notifications'")
        if [ "$round" = 1 ]; then
            python3 - "$work/pg-before.txt" "$work/pg-after.txt" "$server_cpu" "$busy" "$stored" "$(getconf CLK_TCK)" <<'PY'
import sys
before = dict(line.split() for line in open(sys.argv[1]))
after = dict(line.split() for line in open(sys.argv[2]))
postgres = sum(int(t) - int(before.get(p, 0)) for p, t in after.items())
server, busy, stored, hz = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
ms = lambda ticks: 1000.0 * ticks / hz / stored
print(f"[postgres] CPU per notification stored ({stored}): server {ms(server):.2f} ms, PostgreSQL {ms(postgres):.2f} ms, "
      f"the rest (wrk, kernel) {ms(busy - server - postgres):.2f} ms; all {ms(busy):.2f} ms ({busy / hz:.1f} core-seconds busy)")
PY
        fi
        fresh_database postgres storekeeper_bench_two
        app_id=$("$bin" apps create --database-url "$url" --bundle-id com.example.load --environment sandbox \
            --trusted-root "$work/load/root.der" --catalog "$work/catalog.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["appId"])')
        bench_server "$url" "$work/serve-two-a.log"
        pids=("$pid")
        ports=("$port")
        bench_server "$url" "$work/serve-two-b.log"
        pids+=("$pid")
        ports+=("$port")
        half=$((connections / 2))
        loaders=()
        for side in 0 1; do
            letter=$([ "$side" = 0 ] && echo a || echo b)
            (connections=$half threads=$((half < 2 ? half : 2)) PAYLOADS="$work/load/payloads-$letter.txt" load -d"${duration}s" \
                -s "$root/Benchmarks/post.lua" "http://127.0.0.1:${ports[$side]}/v1/apps/$app_id/notifications/appstore" \
                > "$work/two-$letter.txt") &
            loaders+=($!)
        done
        wait "${loaders[@]}"
        two=$(python3 -c 'import re,sys; print(round(sum(float(re.search(r"Requests/sec:\s+([\d.]+)", open(f).read()).group(1)) for f in sys.argv[1:]), 1))' \
            "$work/two-a.txt" "$work/two-b.txt")
        kill -TERM "${pids[@]}"
        wait "${pids[@]}" || true
        echo "[postgres] ingest, round $round: one server $one/s; two servers on one database $two/s (together)"
        results+=("$(python3 -c "print(f'{$two / $one:.2f}')")")
    done
    two_servers=$(printf '%s\n' "${results[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}')
    table+=("[postgres] two servers on one database / one server|$two_servers (rounds: ${results[*]})|>= 1.6")
else
    table+=("[postgres] two servers on one database / one server|not measured (DATABASES has no postgres)|>= 1.6")
fi
# The simulator's population against a release server on SQLite, sent on several connections (each customer's
# notifications in order), read back and compared with its ground truth.
population_customers=${POPULATION_CUSTOMERS:-2000}
population_concurrency=${POPULATION_CONCURRENCY:-8}
fresh_database sqlite storekeeper_bench_population
(cd "$work" && "$bin" simulate ca --export "$work/simulator-root.der" > /dev/null && "$bin" simulate catalog > "$work/simulator-catalog.json")
app=$("$bin" apps create --database-url "$url" --bundle-id com.example.population --environment sandbox \
    --trusted-root "$work/simulator-root.der" --catalog "$work/simulator-catalog.json")
app_id=$(echo "$app" | python3 -c 'import json,sys; print(json.load(sys.stdin)["appId"])')
public_key=$(echo "$app" | python3 -c 'import json,sys; print(json.load(sys.stdin)["publicKey"])')
bench_server "$url" "$work/serve-population.log"
population=$(cd "$work" && "$bin" simulate population --customers "$population_customers" --days 365 --seed 42 \
    --bundle-id com.example.population --concurrency "$population_concurrency" --verify-with "$public_key" \
    --webhook "http://127.0.0.1:$port/v1/apps/$app_id/notifications/appstore" 2> /dev/null) || true
kill -TERM "$pid"
wait "$pid" || true
echo "$population" | grep -E "^(end to end|verified)" | sed 's/^/[sqlite] simulator population: /'
population_rate=$(echo "$population" | sed -n 's/^end to end: .*, \([0-9]*\) notifications\/s.*/\1/p')
population_check=$(echo "$population" | sed -n 's/^verified \([0-9]*\) customers.*: \([0-9]*\) mismatches/\2 mismatches in \1/p')
table+=("[sqlite] simulator population --concurrency $population_concurrency, notifications/s|${population_rate:-failed} (${population_check:-not verified})|>= 1,000 notifications/s")
echo
printf '%-60s %-28s %s\n' "measure" "result" "target"
for row in "${table[@]}"; do
    IFS='|' read -r measure result target <<< "$row"
    printf '%-60s %-28s %s\n' "$measure" "$result" "$target"
done
