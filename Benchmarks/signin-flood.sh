#!/usr/bin/env bash
# One client must not stall everyone (issue 61, item 1): customer reads' and /health's latency alone, then while 48
# connections post wrong passwords to the sign-in page, with wrk over loopback (wrk and the server share this machine's
# cores: compare within one run). The flood runs twice: as the server is configured (attempts throttled per client
# address, so most are answered 429 at once), and with the throttle raised out of the way
# (STOREKEEPER_SIGNIN_PER_MINUTE=1000000), so that every attempt reaches bcrypt: its own threads and queue (the rest
# 429) are what keep the reads' latency then. A third run floods GET /ping (a no-op) from as many connections: what any
# traffic at that rate costs the reads on this machine, the yardstick for the sign-in floods.
#
#   Benchmarks/signin-flood.sh                  # release build
#   CONFIGURATION=debug DURATION=5 Benchmarks/signin-flood.sh
#   STOREKEEPER_BIN=/path/to/storekeeper Benchmarks/signin-flood.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
source "$root/.ci/lib.sh"
need_packages wrk wrk
duration=${DURATION:-10}
connections=${CONNECTIONS:-8}
flooders=${FLOODERS:-48}
. "$root/Benchmarks/common.sh"
storekeeper_binary "${CONFIGURATION:-release}"
enter_work_folder

run() {  # $1 label, $2 extra environment for the server, $3 the flood's path (the sign-in page by default)
    local url="$work/$1.sqlite"
    app=$("$bin" apps create --database-url "$url" --bundle-id com.example.flood --environment sandbox)
    app_id=$(echo "$app" | python3 -c 'import json,sys; print(json.load(sys.stdin)["appId"])')
    public_key=$(echo "$app" | python3 -c 'import json,sys; print(json.load(sys.stdin)["publicKey"])')
    echo "a dashboard password" | "$bin" users create --database-url "$url" --email ops@example.com --apps "$app_id" \
        --password-stdin > /dev/null
    seq 1 1000 | sed 's/^/reader-/' > "$work/users.txt"
    env $2 "$bin" serve --port 0 --reconcile-interval 0 --database-url "$url" --log-level error > "$work/$1.log" 2>&1 &
    server=$!
    wait_until_listening "$work/$1.log"
    local target=$listening
    # Warm: every reader seen once.
    USERS="$work/users.txt" PUBLIC_KEY=$public_key wrk -t1 -c1 -d2s -s "$root/Benchmarks/get.lua" "$target" > /dev/null
    local alone health_alone
    alone=$(USERS="$work/users.txt" PUBLIC_KEY=$public_key load -d"${duration}s" --latency -s "$root/Benchmarks/get.lua" "$target")
    health_alone=$(wrk -t1 -c2 -d"${duration}s" --latency "$target/health")
    if [ -n "${3:-}" ]; then
        wrk -t2 -c"$flooders" -d"$((duration * 2 + 4))s" --latency "$target$3" > "$work/flood-$1.txt" &
    else
        EMAIL=ops@example.com wrk -t2 -c"$flooders" -d"$((duration * 2 + 4))s" --latency -s "$root/Benchmarks/signin.lua" \
            "$target/dashboard/sign-in" > "$work/flood-$1.txt" &
    fi
    local flood=$!
    sleep 2
    local during health_during
    during=$(USERS="$work/users.txt" PUBLIC_KEY=$public_key load -d"${duration}s" --latency -s "$root/Benchmarks/get.lua" "$target")
    health_during=$(wrk -t1 -c2 -d"${duration}s" --latency "$target/health")
    wait "$flood"
    echo "[$1] customer reads alone:        $(echo "$alone" | summary)"
    echo "[$1] customer reads during flood: $(echo "$during" | summary)"
    echo "[$1] /health alone:               $(echo "$health_alone" | summary)"
    echo "[$1] /health during flood:        $(echo "$health_during" | summary)"
    echo "[$1] the flood ($flooders connections on ${3:-/dashboard/sign-in}): $(summary < "$work/flood-$1.txt")"
    python3 - "$alone" "$during" "$1" <<'PY'
import re, sys
def p99(text):
    m = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
    value, unit = float(m.group(1)), m.group(2)
    return value * {"us": 0.001, "ms": 1, "s": 1000}[unit]
alone, during, label = sys.argv[1:]
print(f"[{label}] reads' p99 during the flood / alone = {p99(during) / p99(alone):.2f} ({p99(during):.2f} ms / {p99(alone):.2f} ms)")
PY
    kill "$server"
    wait "$server" 2> /dev/null || true
    server=
}

echo "== sign-in flood: $flooders connections posting wrong passwords; reads at $connections connections, ${duration}s each"
run throttled ""
run bcrypt-bound "STOREKEEPER_SIGNIN_PER_MINUTE=1000000"
run ping-flood "" /ping
