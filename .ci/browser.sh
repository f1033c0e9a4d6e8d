#!/usr/bin/env bash
# The dashboard in a real Chromium: Debian's chromium and chromium-driver (installed here when missing), Selenium from
# PyPI (pinned), against the live server on a fresh SQLite database holding a simulated population. Any failure fails
# the run. The overview's screenshot (a fresh install whose rates loaded by themselves) is saved as
# .build/dashboard-overview.png.
# Usage: .ci/browser.sh [path to the storekeeper binary]   (default: .build/debug/storekeeper)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
bin=$(realpath "${1:-$repo/.build/debug/storekeeper}")

source .ci/lib.sh
need_packages chromium chromium chromium-driver
need_packages chromedriver chromium chromium-driver

venv=$repo/.build/browser-venv
.ci/venv.sh "$venv" selenium "selenium==4.45.0"

enter_work_folder
db="$work/browser.sqlite"

simulated_app "$bin" "$db" com.example.browser app.json
app=$(field app.json appId); secret=$(field app.json secretKey)
# A second app, without customers: the app list shows both, and its overview says what to do first.
simulated_app "$bin" "$db" com.example.fresh fresh.json
fresh=$(field fresh.json appId)
email=browser@example.com
password="browser-test-$(python3 -c 'import secrets; print(secrets.token_hex(8))')"
echo "$password" | "$bin" users create --database-url "$db" --email "$email" --apps "$app,$fresh" --password-stdin > /dev/null
# A fresh install whose exchange rates load by themselves: the server's feed points at a local copy of the ECB's
# 90-day file (the tests' fixture: real reference rates to 2026-10-30), served here as the ECB serves it.
python3 -c '
import functools, http.server, sys
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()' "$repo/Tests/StorekeeperServerTests/Fixtures" > feed.log 2>&1 &
feed=$!
trap 'kill "$feed" 2> /dev/null; if [ -n "$server" ]; then kill "$server" 2> /dev/null; fi; wait 2> /dev/null || true; cd /; rm -rf "$work"' EXIT
wait_until_listening feed.log
export STOREKEEPER_RATES_URL="$listening/eurofxref-hist-90d.xml"
start_server "$bin" "$db"

"$bin" simulate population --state "$work/sim" --customers 40 --days 60 --seed 11 --bundle-id com.example.browser \
    --webhook "$base/v1/apps/$app/notifications/appstore" > population.log 2>&1 || { cat population.log; exit 1; }

"$venv/bin/python" "$repo/.ci/browser_test.py" "$base" "$app" "$secret" "$email" "$password" "$repo/.build/dashboard-overview.png" \
    "$fresh"
