#!/usr/bin/env bash
# Conformance with the outside world: Schemathesis (pinned, from PyPI) with all its checks against the live server, on
# a fresh SQLite database holding simulated data, as three callers: the app's secret key, its public key, and another
# app's secret key (whose answers must never carry the first app's data); then every constraint of the request bodies'
# schemas broken one at a time (schema_probe.py). Any failure fails the run.
# Usage: .ci/conformance.sh [path to the storekeeper binary]   (default: .build/debug/storekeeper)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
bin=$(realpath "${1:-$repo/.build/debug/storekeeper}")   # absolute: the script works in a temporary folder
budget=${SCHEMATHESIS_MAX_TIME:-60}   # seconds per caller
seed=${SCHEMATHESIS_SEED:-42}   # another seed (and a longer budget) to explore beyond what CI tries

venv=$repo/.build/ci-venv
.ci/venv.sh "$venv" schemathesis "schemathesis==4.32.5" "PyYAML==6.0.3"

source .ci/lib.sh
enter_work_folder
db="$work/conformance.sqlite"

# The document is YAML that a YAML library other than ours reads.
# Two apps trusting the simulator's CA; the first gets a population of simulated customers.
simulated_app "$bin" "$db" com.example.first first.json
simulated_app "$bin" "$db" com.example.other other.json
first_app=$(field first.json appId); first_public=$(field first.json publicKey); first_secret=$(field first.json secretKey)
other_app=$(field other.json appId); other_secret=$(field other.json secretKey)
start_server "$bin" "$db"

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
# A second population against the same app: it compares what it adds to what the app had (no false mismatch).
"$bin" simulate population --state "$work/sim" --customers 20 --days 30 --seed 8 --bundle-id com.example.first \
    --webhook "$base/v1/apps/$first_app/notifications/appstore" --verify-with "$first_secret" > population2.log 2>&1 \
    || { cat population2.log; exit 1; }
grep -E "^metrics: compared with this run's ground truth added to|verified metrics" population2.log
# A paywall test on a placement, so that those routes (and the dashboard's pages) are fuzzed past their 404.
admin() { curl -sf -X "$1" -H "Authorization: Bearer $first_secret" "$base/v1/apps/$first_app/$2" -d "$3" > /dev/null; }
admin PUT paywalls/plain '{"products": ["pro.monthly"]}'
admin PUT paywalls/bold '{"products": ["pro.yearly", "pro.monthly"], "config": {"hero": "stars"}}'
admin PUT placements/onboarding '{"defaultPaywall": "plain"}'
admin POST experiments '{"key": "conformance", "placement": "onboarding", "status": "running",
    "variants": [{"key": "control"}, {"key": "bold", "paywall": "bold"}]}'
run() { # name, appId, extra expected statuses (comma-separated, may be empty), extra TOML, schemathesis's options…
    # (RUN_BUDGET=seconds before it: this run's budget instead of $budget)
    local name=$1 app=$2 extra=$3 toml=$4 time=${RUN_BUDGET:-$budget}
    shift 4
    echo "== Schemathesis as $name"
    cat > "schemathesis-$name.toml" <<TOML
[checks.positive_data_acceptance]
# Valid signed data cannot be described by a schema (it takes Apple's signature): a well-formed but unsigned payload
# is 400, and so is a catalog or configuration the schema allows but the app's rules refuse (a group without period).
# 304 answers If-None-Match.
expected-statuses = ["2xx", 304, 400, 401, 403, 404, 409${extra:+, $extra}]

[parameters]
"path.appId" = "$app"
"path.experimentKey" = "conformance"
"path.placementId" = "onboarding"
"path.paywallId" = "bold"
# The extra TOML goes on here: its first lines (before a table) are more parameters.
$toml
TOML
    "$venv/bin/schemathesis" --config-file "schemathesis-$name.toml" run "$base/openapi.yaml" --url "$base" \
        --checks all --max-time "$time" --workers 2 --seed "$seed" --report har --report-dir "reports-$name" --no-color "$@"
}

# The dashboard as a signed-in user (a session cookie from the sign-in form, as a browser gets it), first, while the
# app is as created (the key runs PATCH its configuration): a valid form without this session's token is 403, a search
# with one match and a signed-in sign-in page redirect (303), a lock is 429, a form over 16 KB is 413.
dashboard_password="conformance-$(python3 -c 'import secrets; print(secrets.token_hex(8))')"
echo "$dashboard_password" | "$bin" users create --database-url "$db" --email conformance@example.com --apps "$first_app" \
    --password-stdin > /dev/null
jar="$work/cookies.txt"
csrf=$(curl -sf -c "$jar" "$base/dashboard/sign-in" | sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' | head -1)
curl -sf -o /dev/null -b "$jar" -c "$jar" --data-urlencode "email=conformance@example.com" \
    --data-urlencode "password=$dashboard_password" --data-urlencode "csrf=$csrf" "$base/dashboard/sign-in"
session=$(awk '$6 == "storekeeper_session" { print $7 }' "$jar" | tail -1)
[ -n "$session" ] || { echo "could not sign in to the dashboard"; exit 1; }
# A customer and a transaction of the population, so that those pages are fuzzed past their 404.
page() { curl -sf -H "Cookie: storekeeper_session=$session" "$base/dashboard/apps/$first_app/$1"; }
customer= fact=
for candidate in $(page events | grep -o 'customers/cus_[^?"]*' | cut -d/ -f2 | sort -u); do
    fact=$(page "customers/$candidate" | grep -o 'raw/[^?"]*' | head -1 | cut -d/ -f2 || true)
    if [ -n "$fact" ]; then customer=$candidate; break; fi
done
[ -n "$customer" ] && [ -n "$fact" ] || { echo "no customer or transaction to show in the dashboard"; exit 1; }
# The cookie is the document's dashboardSession scheme, so that Schemathesis also sends requests without it: a page
# without its session answers by redirecting (303) to the sign-in page, as a browser needs, not with a 401.
run dashboard "$first_app" "303, 413, 429" "\"path.customerId\" = \"$customer\"
\"path.factId\" = \"$fact\"

[checks.negative_data_rejection]
expected-statuses = [303, 400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429]

[auth.openapi.dashboardSession]
api_key = \"$session\"" --include-path-regex '^/dashboard'

# The API as its callers: the dashboard's pages take a session cookie, not a key (their own run, above). Key rotation
# revokes the key the run uses: it gets a run of its own, last of the key runs.
run secret "$first_app" "" "" -H "Authorization: Bearer $first_secret" --exclude-path-regex '(keys/rotate$|^/dashboard)'
run public "$first_app" "" "" -H "Authorization: Bearer $first_public" --exclude-path-regex '^/dashboard'
run other-app "$first_app" "" "" -H "Authorization: Bearer $other_secret" --exclude-path-regex '^/dashboard'
# Every constraint of the request bodies' schemas, broken one at a time (Schemathesis meets them only by chance): each
# must be a 4xx. After the runs that need the first app as the population left it (the probe changes its
# configuration), before the rotation revokes its key.
"$venv/bin/python" "$repo/.ci/schema_probe.py" "$base" "$first_app" "$first_secret"
# One operation: a sixth of the budget tries it thousands of times (the full budget spent 3,000 cases on it).
RUN_BUDGET=$(( (budget + 5) / 6 )) run rotation "$first_app" "" "" -H "Authorization: Bearer $first_secret" --include-path-regex 'keys/rotate$'

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
