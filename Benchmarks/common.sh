# Shared by server.sh, outbox.sh and experiments.sh (sourced after .ci/lib.sh, as soon as they have read $connections,
# so that a bad CONNECTIONS stops them before any build): its functions use $root, $work and $bin.

# wrk needs a connection per thread: 2 threads, 1 for a single connection.
case "${connections:-}" in
    '' | *[!0-9]* | 0) echo "CONNECTIONS must be a whole number of at least 1, not '${connections:-}'" >&2; exit 2 ;;
esac
threads=$((connections < 2 ? connections : 2))

# wrk with the rest of its arguments, at $connections on $threads. post.lua reads THREADS, to share one list of
# requests between the threads. (Run in the background, it would be a shell of its own: killing that leaves wrk.)
load() {
    THREADS=$threads wrk -t"$threads" -c"$connections" "$@"
}

# The benchmarks' servers fetch no exchange rates: a fetch mid-run would be work the measure does not mean.
export STOREKEEPER_RATES_URL=off
# wrk is one client standing for a population of devices, each new to the server: no limit on new ids per client.
export STOREKEEPER_NEW_IDS_PER_MINUTE=1000000

bench_server() {  # $1 database url, $2 log (a full path); sets pid and port (.ci/lib.sh's serve, in $work)
    local here=$PWD
    cd "$work"
    serve "$bin" "$2" --database-url "$1" --log-level error
    cd "$here"
    pid=$server
}

fresh_database() {  # $1 sqlite|postgres, $2 name; sets url, migrated by $bin
    if [ "$1" = sqlite ]; then
        url="$work/$2.sqlite"
        rm -f "$url" "$url-wal" "$url-shm"
    else
        base=$("$root/.ci/postgres.sh" | tail -1)
        su postgres -c "dropdb --if-exists $2 && createdb $2"
        url="${base/storekeeper_test/$2}"
    fi
    "$bin" migrate --database-url "$url" > /dev/null
}

median_ratio() {  # lines "without <rate>" / "with <rate>" on stdin, $1 label, $2 what: the median of the rounds' ratios,
    # and the same rounds as time added per notification (1/rate with - 1/rate without, in µs), a figure that does not
    # move when ingest gets faster or slower elsewhere
    awk -v db="$1" -v what="$2" '
        function median(a, n,    i, j, t) {
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        $2 == "" || $2 == 0 { print "no request rate for \"" $1 "\": wrk did not run (see above)" > "/dev/stderr"; failed = 1; next }
        $1 == "without" { w = $2 } $1 == "with" { n++; r[n] = w / $2; d[n] = 1e6 / $2 - 1e6 / w; b[n] = 1e6 / w; sw += w; sx += $2 }
        END {
            if (failed) exit 1
            m = median(r, n); dm = median(d, n); bm = median(b, n)
            printf "    [%s] ingest time with %s / without = %.3f (median of %d rounds; %.3f to %.3f; mean %.0f req/s with, %.0f without)\n", db, what, m, n, r[1], r[n], sx / n, sw / n
            printf "    [%s] time %s adds per notification = %.0f µs (median; %.0f to %.0f) on %.0f µs without\n", db, what, dm, d[1], d[n], bm }'
}

summary() {  # wrk output on stdin: requests/s, p50, p99, non-2xx
    awk '/Requests\/sec/ {rps=$2} /^ +50%/ {p50=$2} /^ +99%/ {p99=$2} /Non-2xx/ {bad=$NF} /requests in/ {total=$1}
         END {printf "%s req/s, p50 %s, p99 %s, %s requests, non-2xx %s\n", rps, p50, p99, total, (bad == "" ? 0 : bad)}'
}

rate_ratio() {  # $1 label, $2 and $3 wrk outputs: "    <label> = <rate of $2 / rate of $3>"
    python3 - "$1" "$2" "$3" <<'PY'
import re, sys
rate = lambda text: float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
print(f"    {sys.argv[1]} = {rate(sys.argv[2]) / rate(sys.argv[3]):.2f}")
PY
}

memory_mb() {  # $1 pid, $2 VmRSS (resident now) or VmHWM (its peak): in MB, from /proc
    awk -v field="$2:" '$1 == field {printf "%.0f", $2 / 1024}' "/proc/$1/status"
}

rate_of() {  # wrk output on stdin: its requests a second
    sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p'
}

cpu_ticks() {  # pids: their CPU time (user + system) in clock ticks, summed, from /proc (a pid gone counts 0)
    local total=0 pid fields
    for pid in "$@"; do
        fields=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null) || continue
        total=$((total + $(echo "$fields" | awk '{print $12 + $13}')))
    done
    echo "$total"
}

postgres_cpu() {  # "<pid> <ticks>" for every PostgreSQL process now (its backends and workers)
    local pid
    for pid in $(pgrep -x postgres); do echo "$pid $(cpu_ticks "$pid")"; done
}

machine_busy_ticks() {  # all cores' busy time since boot (user, nice, system, irq, softirq), in clock ticks
    awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat
}
