#!/usr/bin/env bash
# End-to-end load: `storekeeper simulate population` against a live `storekeeper serve`, on SQLite and (with
# STOREKEEPER_BENCH_POSTGRES_URL set, e.g. from .ci/postgres.sh) on PostgreSQL. Prints notifications/s and the
# mismatches with the simulator's ground truth (there must be none).
#
#   [CONCURRENCY=N] [ENVIRONMENTS="production sandbox"] Benchmarks/population.sh [customers=2000] [days=365] [configuration=release]
# CONCURRENCY: the simulator's --concurrency (connections at once, each customer's notifications in order; default 1).
# ENVIRONMENTS: the app's environments (default: sandbox); the simulator plays Sandbox, and each customer is read back in
# it. "production sandbox" is an app as it ships (TestFlight and App Review buy in the Sandbox).
set -euo pipefail
# The simulator checks metrics at its own rates: no server fetches the ECB's.
export STOREKEEPER_RATES_URL=off
customers=${1:-2000}
days=${2:-365}
configuration=${3:-release}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source "$root/.ci/lib.sh"
storekeeper_binary "$configuration"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
simulated_world "$bin"

run() {  # $1: label, $2: database URL or path
  "$bin" migrate --database-url "$2" >/dev/null 2>&1 || true
  local environments=()
  for environment in ${ENVIRONMENTS:-sandbox}; do environments+=(--environment "$environment"); done
  # Production data must carry the app's Apple id (the simulator's Sandbox data is checked without it).
  case " ${ENVIRONMENTS:-sandbox} " in *" production "*) environments+=(--app-apple-id 1234567890) ;; esac
  "$bin" apps create --database-url "$2" --bundle-id com.example.load "${environments[@]}" \
    --trusted-root root.der --catalog catalog.json > app-$1.json
  local app pk
  app=$(python3 -c "import json,sys;print(json.load(open('app-$1.json'))['appId'])")
  pk=$(python3 -c "import json,sys;print(json.load(open('app-$1.json'))['publicKey'])")
  serve "$bin" "serve-$1.log" --database-url "$2" --log-level warning
  echo "== $1 ($configuration build, $customers customers over $days days, concurrency ${CONCURRENCY:-1}, environments: ${ENVIRONMENTS:-sandbox})"
  "$bin" simulate population --state "$work/sim" --customers "$customers" --days "$days" --seed 42 --bundle-id com.example.load \
    --concurrency "${CONCURRENCY:-1}" \
    --webhook "$base/v1/apps/$app/notifications/appstore" --verify-with "$pk" 2>/dev/null | tail -5
  kill "$server"; wait "$server" 2>/dev/null || true
}

run sqlite "$work/load.sqlite"
if [ -n "${STOREKEEPER_BENCH_POSTGRES_URL:-}" ]; then
  # A fresh database beside the given one: postgres://user:pass@host:port/<db>?options
  given=${STOREKEEPER_BENCH_POSTGRES_URL%%\?*}
  query=${STOREKEEPER_BENCH_POSTGRES_URL#"$given"}
  database="load_$(date +%s)"
  psql "${given%/*}/postgres" -qc "CREATE DATABASE $database"
  run postgres "${given%/*}/$database$query"
fi
