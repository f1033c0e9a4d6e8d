# The one shell library of CI and the benchmarks (sourced, never run): installing a Debian package a script needs, a
# server started and waited for until it listens, a work folder whose server stops with the script, simulated apps,
# a field of a JSON file. Functions only, and $repo_root: sourcing it changes nothing else.

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# storekeeper_binary [CONFIGURATION]: sets $bin to $STOREKEEPER_BIN when it is given (a build made elsewhere), else
# builds the storekeeper product in CONFIGURATION (default release) and sets $bin to it.
storekeeper_binary() {
    if [ -n "${STOREKEEPER_BIN:-}" ]; then
        bin=$STOREKEEPER_BIN
        return 0
    fi
    (cd "$repo_root" && swift build -c "${1:-release}" --product storekeeper > /dev/null)
    bin="$repo_root/.build/${1:-release}/storekeeper"
}

# need_packages COMMAND PACKAGE…: installs the Debian packages (as root, or through sudo) unless COMMAND is on the PATH.
need_packages() {
    local command=$1
    shift
    command -v "$command" > /dev/null && return 0
    local sudo=
    [ "$(id -u)" != 0 ] && sudo=sudo
    $sudo apt-get update -qq > /dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" > /dev/null
}

# wait_until_listening LOG: waits up to 10 s for a server's "listening on URL" line in LOG and sets $listening to the
# URL; a server that never listens (a crash, a taken port) stops the script with the end of its log.
wait_until_listening() {
    local attempt
    listening=
    for attempt in $(seq 1 100); do
        listening=$(sed -n 's/.*listening on \(http:\/\/[^ ]*\).*/\1/p' "$1" 2> /dev/null | head -1)
        [ -n "$listening" ] && return 0
        sleep 0.1
    done
    echo "nothing listened within 10 s; the end of $1:" >&2
    tail -20 "$1" >&2 || true
    return 1
}

# serve BIN LOG ARGUMENT…: `BIN serve --port 0 --reconcile-interval 0 ARGUMENT…` in the background, its output in LOG,
# waited for until it listens; sets $server (its pid), $base (its URL) and $port.
serve() {
    local bin=$1 log=$2
    shift 2
    "$bin" serve --port 0 --reconcile-interval 0 "$@" > "$log" 2>&1 &
    server=$!
    wait_until_listening "$log"
    base=$listening
    port=${base##*:}
}

# A fresh work folder, made current; when the script exits, the server started there is stopped and the folder removed.
enter_work_folder() {
    work=$(mktemp -d)
    server=
    trap 'if [ -n "$server" ]; then kill "$server" 2> /dev/null; fi; wait 2> /dev/null || true; cd /; rm -rf "$work"' EXIT
    cd "$work"
}

# field FILE KEY: a top-level field of a JSON file.
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }

# simulated_world BIN: the simulator's CA (./sim, exported as root.der) and catalog (catalog.json) in the current
# folder, once.
simulated_world() {
    [ -f root.der ] || "$1" simulate ca --state "$(pwd)/sim" --export root.der > /dev/null
    [ -f catalog.json ] || "$1" simulate catalog > catalog.json
}

# simulated_app BIN DB BUNDLE_ID OUT: an app (sandbox, the simulator's catalog) that trusts the simulator's CA in
# ./sim (made on first use); its appId and keys as JSON in OUT.
simulated_app() {
    simulated_world "$1"
    "$1" apps create --database-url "$2" --bundle-id "$3" --environment sandbox --trusted-root root.der \
        --catalog catalog.json > "$4"
}

# start_server BIN DB: `serve` on a free port, without reconciliation; sets $server (its pid) and $base (its URL).
start_server() { serve "$1" serve.log --database-url "$2"; }
