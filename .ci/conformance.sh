#!/usr/bin/env bash
# Conformance with the outside world: Schemathesis (pinned, from PyPI) with all its checks against the live server, on
# a fresh SQLite database holding simulated data, as three callers: the app's secret key, its public key, and another
# app's secret key (whose answers must never carry the first app's data). Any failure fails the run.
# Usage: .ci/conformance.sh [path to the storekeeper binary]   (default: .build/debug/storekeeper)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
bin=$(realpath "${1:-$repo/.build/debug/storekeeper}")   # absolute: the script works in a temporary folder
budget=${SCHEMATHESIS_MAX_TIME:-60}   # seconds per caller

venv=$repo/.build/ci-venv
.ci/venv.sh "$venv" schemathesis "schemathesis==4.32.5" "PyYAML==6.0.3"

work=$(mktemp -d)
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT
cd "$work"
db="$work/conformance.sqlite"

# The document is YAML that a YAML library other than ours reads.
# Two apps trusting the simulator's CA; the first gets a population of simulated customers.
"$bin" simulate ca --state "$work/sim" --export root.der > /dev/null
"$bin" simulate catalog > catalog.json
"$bin" apps create --database-url "$db" --bundle-id com.example.first --environment sandbox --trusted-root root.der \
    --catalog catalog.json > first.json
"$bin" apps create --database-url "$db" --bundle-id com.example.other --environment sandbox --trusted-root root.der \
    --catalog catalog.json > other.json
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
first_app=$(field first.json appId); first_public=$(field first.json publicKey); first_secret=$(field first.json secretKey)
other_app=$(field other.json appId); other_secret=$(field other.json secretKey)

("$bin" serve --database-url "$db" --port 0 --reconcile-interval 0 > serve.log 2>&1) &
server=$!
for _ in $(seq 1 100); do grep -q "listening on" serve.log 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' serve.log)
base="http://127.0.0.1:$port"

curl -sf "$base/openapi.yaml" > openapi.yaml
"$venv/bin/python" -c "import sys, yaml; yaml.safe_load(open(sys.argv[1]))" openapi.yaml

# The simulator's exchange rates, then its population; --verify-with reads every customer back and compares the
# server's overview and revenue with the simulator's own bookkeeping (any mismatch fails the run).
"$bin" simulate rates > rates.csv
"$bin" rates import --database-url "$db" rates.csv > /dev/null
"$bin" simulate population --state "$work/sim" --customers 40 --days 60 --seed 7 --bundle-id com.example.first \
    --webhook "$base/v1/apps/$first_app/notifications/appstore" --verify-with "$first_secret" > population.log 2>&1 \
    || { cat population.log; exit 1; }
grep "verified metrics" population.log
run() { # name, key, appId, schemathesis's own options…
    local name=$1 key=$2 app=$3
    shift 3
    echo "== Schemathesis as $name"
    cat > "schemathesis-$name.toml" <<TOML
[checks.positive_data_acceptance]
# Valid signed data cannot be described by a schema (it takes Apple's signature): a well-formed but unsigned payload
# is 400, and so is a catalog or configuration the schema allows but the app's rules refuse (a group without period).
# 304 answers If-None-Match.
expected-statuses = ["2xx", 304, 400, 401, 403, 404, 409]

[parameters]
"path.appId" = "$app"
TOML
    "$venv/bin/schemathesis" --config-file "schemathesis-$name.toml" run "$base/openapi.yaml" --url "$base" \
        --checks all --max-time "$budget" --workers 2 --seed 42 \
        -H "Authorization: Bearer $key" --report har --report-dir "reports-$name" --no-color "$@"
}

# Key rotation revokes the key the run uses: it gets a run of its own, last.
run secret "$first_secret" "$first_app" --exclude-path-regex 'keys/rotate$'
run public "$first_public" "$first_app"
run other-app "$other_secret" "$first_app"
run rotation "$first_secret" "$first_app" --include-path-regex 'keys/rotate$'

# Another app's key: no answer may carry the first app's data (its id, bundle id or keys).
"$venv/bin/python" - "$work/reports-other-app" "$first_app" com.example.first "$first_secret" "$first_public" <<'PY'
import json, pathlib, sys
folder, *secrets = sys.argv[1:]
secrets = [s for s in secrets if s]
leaks = []
for har in pathlib.Path(folder).glob("*.har"):
    for entry in json.load(open(har))["log"]["entries"]:
        text = entry["response"].get("content", {}).get("text", "") or ""
        url = entry["request"]["url"]
        for secret in secrets:
            # The app id may be echoed from the request's own path; nothing else of the first app may appear.
            if secret in text and not (secret == secrets[0] and secret in url and "error" in text):
                leaks.append((url, secret))
if leaks:
    print("another app's key saw the first app's data:", leaks[:5])
    sys.exit(1)
print("another app's key saw none of the first app's data")
PY
