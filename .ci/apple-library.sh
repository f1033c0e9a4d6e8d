#!/usr/bin/env bash
# Apple's own Python library (app-store-server-library, pinned, from PyPI) decodes every notification the simulator
# signs in every library scenario, with its nested transactions, renewal infos and app transactions, to the same values
# as `storekeeper verify` (.ci/apple_library.py compares field by field).
# Usage: .ci/apple-library.sh [path to the storekeeper binary]   (default: .build/debug/storekeeper)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$(dirname "${1:-.build/debug/storekeeper}")" && pwd)/$(basename "${1:-.build/debug/storekeeper}")
venv="$repo/.build/ci-venv-apple-library"
"$repo/.ci/venv.sh" "$venv" appstoreserverlibrary "app-store-server-library==3.1.1"
source "$repo/.ci/lib.sh"
enter_work_folder
"$bin" simulate ca --state "$work/sim" --export root.der > /dev/null
port=$("$venv/bin/python" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
"$venv/bin/python" "$repo/.ci/apple_library.py" "$bin" root.der com.example.app "$port" done > compare.log 2>&1 &
checker=$!
for _ in $(seq 1 100); do (echo > "/dev/tcp/127.0.0.1/$port") 2> /dev/null && break; sleep 0.1; done
for scenario in $("$bin" simulate scenarios | awk -F: '{print $1}'); do
    "$bin" simulate run "$scenario" --state "$work/sim" --bundle-id com.example.app \
        --webhook "http://127.0.0.1:$port/" > "run-$scenario.log" 2>&1 || { echo "simulate run $scenario failed:"; cat "run-$scenario.log"; exit 1; }
done
touch done
status=0
wait "$checker" || status=$?
cat compare.log
exit $status
