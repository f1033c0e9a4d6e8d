#!/usr/bin/env bash
# Runs README.md's "first ten minutes" as written (the shell block between <!-- quickstart --> and
# <!-- /quickstart -->), from the repository's folder, so that a newcomer's first commands are known to work. The one
# change: port 8080 becomes a free port, so that a server already on 8080 cannot fail the run.
set -euo pipefail
cd "$(dirname "$0")/.."
script=$(awk '/<!-- quickstart -->/{on=1; next} /<!-- \/quickstart -->/{on=0} on && !/^```/' README.md)
[ -n "$script" ] || { echo "README.md has no quickstart block" >&2; exit 1; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
rm -rf try # the walk-through's own folder: it starts from nothing, as on a fresh clone
bash -euo pipefail -c "trap 'kill \$(jobs -p) 2> /dev/null || true' EXIT
${script//8080/$port}" > quickstart.log 2>&1 || {
    cat quickstart.log
    echo "the README's first ten minutes failed (output above)" >&2
    exit 1
}
grep -q '"state"' quickstart.log || { cat quickstart.log; echo "the customer read answered no state" >&2; exit 1; }
# The quick start's app takes Production and Sandbox: the customer's answer covers both.
grep -q '"environments":\["Production","Sandbox"\]' quickstart.log ||
    { cat quickstart.log; echo "the customer read did not cover both environments" >&2; exit 1; }
grep -q '"password"' quickstart.log || { cat quickstart.log; echo "no dashboard user was made" >&2; exit 1; }
echo "quickstart: the README's first ten minutes ran as written"
[ -n "${KEEP_QUICKSTART_LOG:-}" ] || rm -f quickstart.log
