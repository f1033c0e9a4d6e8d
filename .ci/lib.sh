# What the CI scripts share (sourced): a work folder whose server stops with the script, simulated apps, the server
# on a free port, a field of a JSON file.

# A fresh work folder, made current; when the script exits, the server started there is stopped and the folder removed.
enter_work_folder() {
    work=$(mktemp -d)
    server=
    trap 'if [ -n "$server" ]; then kill "$server" 2> /dev/null; fi; wait 2> /dev/null || true; cd /; rm -rf "$work"' EXIT
    cd "$work"
}

# field FILE KEY: a top-level field of a JSON file.
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }

# simulated_app BIN DB BUNDLE_ID OUT: an app (sandbox, the simulator's catalog) that trusts the simulator's CA in
# ./sim (made on first use); its appId and keys as JSON in OUT.
simulated_app() {
    [ -f root.der ] || "$1" simulate ca --state "$work/sim" --export root.der > /dev/null
    [ -f catalog.json ] || "$1" simulate catalog > catalog.json
    "$1" apps create --database-url "$2" --bundle-id "$3" --environment sandbox --trusted-root root.der \
        --catalog catalog.json > "$4"
}

# start_server BIN DB: `serve` on a free port, without reconciliation; sets $server (its pid) and $base (its URL).
start_server() {
    ("$1" serve --database-url "$2" --port 0 --reconcile-interval 0 > serve.log 2>&1) &
    server=$!
    for _ in $(seq 1 100); do grep -q "listening on" serve.log 2> /dev/null && break; sleep 0.1; done
    base="http://127.0.0.1:$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' serve.log)"
}
