#!/usr/bin/env bash
# Importing existing customers end to end: `storekeeper simulate population --drop 1` makes a world where Apple (the
# simulator's fake App Store Server API) knows every purchase and the server none, exports its customers in one of the
# three import formats, and waits; `storekeeper import` brings them in from the fake API; the simulator then reads every
# customer and the metrics back and compares them with its ground truth (there must be no mismatch). Prints the import's
# rate (customers a second, unpaced: against Apple it is paced at its documented limits).
#
#   Benchmarks/import.sh [customers=10000] [days=365] [formats="plain revenuecat apphud"] [configuration=release]
set -euo pipefail
# The simulator checks metrics at its own rates: no server fetches the ECB's.
export STOREKEEPER_RATES_URL=off
# The app's serverAPI.baseURL is the simulator's fake API on loopback: allowed here only.
export STOREKEEPER_ALLOW_CUSTOM_APPLE_URLS=true STOREKEEPER_ALLOW_PRIVATE_WEBHOOKS=true
customers=${1:-10000}
days=${2:-365}
formats=${3:-plain revenuecat apphud}
configuration=${4:-release}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source "$root/.ci/lib.sh"
storekeeper_binary "$configuration"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
simulated_world "$bin"
"$bin" simulate rates > rates.csv
openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -out key.pem
status=0
api=18091   # the fake App Store Server API's port (the simulator's --api-port), one per format
for format in $formats; do
  api=$((api + 1))
  db="$work/import-$format.sqlite"
  "$bin" apps create --database-url "$db" --bundle-id com.example.import --environment sandbox \
    --trusted-root root.der --catalog catalog.json > app.json
  app=$(python3 -c "import json;print(json.load(open('app.json'))['appId'])")
  sk=$(python3 -c "import json;print(json.load(open('app.json'))['secretKey'])")
  "$bin" rates import --database-url "$db" rates.csv >/dev/null
  serve "$bin" "serve-$format.log" --database-url "$db" --log-level warning
  python3 - "$port" "$app" "$sk" "$api" <<'PY'
import json, sys, urllib.request
port, app, sk, api = sys.argv[1:]
body = json.dumps({"serverAPI": {"issuerId": "issuer", "keyId": "BENCHKEY", "privateKey": open("key.pem").read(),
                                 "baseURL": f"http://127.0.0.1:{api}"}}).encode()
request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/apps/{app}", data=body, method="PATCH",
                                 headers={"Authorization": f"Bearer {sk}", "Content-Type": "application/json"})
urllib.request.urlopen(request).read()
PY
  rm -f imported
  echo "== $format: $customers customers over $days days ($configuration build)"
  "$bin" simulate population --state "$work/sim" --customers "$customers" --days "$days" --seed 42 --bundle-id com.example.import \
    --drop 1 --api-port "$api" --export-ids "ids-$format" --export-format "$format" --verify-after imported \
    --webhook "$base/v1/apps/$app/notifications/appstore" --verify-with "$sk" > "simulate-$format.log" 2>&1 &
  simulator=$!
  for _ in $(seq 1 2400); do grep -q "waiting for imported" "simulate-$format.log" && break; sleep 0.5; done
  start=$(date +%s.%N)
  if ! "$bin" import "ids-$format" --app "$app" --database-url "$db" --rate 0 --concurrency 8 > "import-$format.out" 2> "import-$format.err"; then
    status=1
  fi
  end=$(date +%s.%N)
  imported=$(grep -o "^imported [0-9]*" "import-$format.out" | grep -o "[0-9]*")
  cat "import-$format.out"
  python3 -c "print(f'import rate: {$imported / ($end - $start):.0f} customers/s ({$end - $start:.1f} s for $imported), unpaced, against the fake API')"
  touch imported
  wait "$simulator" || status=1
  grep -E "^verified|mismatch" "simulate-$format.log" | head -8
  kill "$server"; wait "$server" 2>/dev/null || true
done
exit $status
