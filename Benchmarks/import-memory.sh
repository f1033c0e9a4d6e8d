#!/usr/bin/env bash
# An import's memory does not grow with its file: a RevenueCat export of about 1 MB and one of about 60 MB are posted
# to a release server (each to a fresh one, on a fresh SQLite file), and the server's peak resident memory (VmHWM) is
# read once the file is stored (the 202) and once it is read into customers. Prints each size's peaks, the time to the
# 202 and to the end of reading, and the ratio of the peaks (about 1 when memory is bounded; the release before this
# one held the whole file, its parse and every customer: 2.4 GB at 60 MB).
#
#   Benchmarks/import-memory.sh [small MB=1] [large MB=60]     (STOREKEEPER_BIN: a built binary to use)
set -euo pipefail
small=${1:-1}
large=${2:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/.ci/lib.sh"
connections=1  # common.sh wants it; nothing here uses wrk
source "$root/Benchmarks/common.sh"
export STOREKEEPER_RATES_URL=off
# The app's serverAPI.baseURL is a closed loopback port: reading needs no Apple; the run after it is paced at the
# sandbox's 5 a second and fails to connect, which the measure stops before.
export STOREKEEPER_ALLOW_CUSTOM_APPLE_URLS=true STOREKEEPER_ALLOW_PRIVATE_WEBHOOKS=true
storekeeper_binary release
enter_work_folder
openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -out key.pem

export_file() {  # $1 MB, $2 path: a RevenueCat transactions export, three renewals a customer, one Play Store row in ten
    python3 - "$1" "$2" <<'PY'
import sys
size, path = int(sys.argv[1]) * 1024 * 1024, sys.argv[2]
header = "rc_original_app_user_id,rc_last_seen_app_user_id_alias,product_identifier,store,is_sandbox,store_transaction_id,original_store_transaction_id,purchased_at,price_in_usd,custom_subscriber_attributes\n"
with open(path, "w") as out:
    out.write(header)
    written, n = len(header), 0
    while written < size:
        customer = n // 3
        store = "play_store" if n % 10 == 9 else "app_store"
        original = 2000000000000000 + customer * 10
        line = f"$RCAnonymousID:{customer:032x},user-{customer},pro.monthly,{store},false,{original + n % 3},{original},2026-01-0{1 + n % 3}T00:00:00Z,9.99,\"{{\"\"plan\"\": \"\"a, b\"\"}}\"\n"
        out.write(line)
        written += len(line)
        n += 1
PY
}

measure() {  # $1 MB
    local mb=$1 db="$work/import-$1.sqlite" file="$work/export-$1.csv"
    export_file "$mb" "$file"
    "$bin" apps create --database-url "$db" --bundle-id com.example.memory --environment sandbox --format shell > app.env
    eval "$(cat app.env)"
    serve "$bin" "$work/serve-$mb.log" --database-url "$db" --log-level warning
    python3 - "$port" "$STOREKEEPER_APP" "$STOREKEEPER_SK" <<'PY'
import json, sys, urllib.request
port, app, sk = sys.argv[1:]
body = json.dumps({"serverAPI": {"issuerId": "issuer", "keyId": "BENCHKEY", "privateKey": open("key.pem").read(),
                                 "baseURL": "http://127.0.0.1:9"}}).encode()
request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/apps/{app}", data=body, method="PATCH",
                                 headers={"Authorization": f"Bearer {sk}", "Content-Type": "application/json"})
urllib.request.urlopen(request).read()
PY
    local idle; idle=$(memory_mb "$server" VmHWM)
    python3 - "$port" "$STOREKEEPER_APP" "$STOREKEEPER_SK" "$file" "$server" "$mb" "$idle" <<'PY'
import json, os, sys, time, urllib.request
port, app, sk, path, pid, mb, idle = sys.argv[1:]
def hwm():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"): return int(line.split()[1]) / 1024
headers = {"Authorization": f"Bearer {sk}", "Content-Type": "text/csv"}
start = time.monotonic()
with open(path, "rb") as body:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/apps/{app}/imports?name=export.csv", data=body,
                                     method="POST", headers={**headers, "Content-Length": str(os.path.getsize(path))})
    job = json.load(urllib.request.urlopen(request))
stored, at_202 = time.monotonic() - start, hwm()
while True:
    read = urllib.request.Request(f"http://127.0.0.1:{port}/v1/apps/{app}/imports/{job['id']}", headers=headers)
    job = json.load(urllib.request.urlopen(read))
    if job["status"] != "reading": break
    time.sleep(0.1)
done = time.monotonic() - start
print(f"  {mb:>3} MB file ({os.path.getsize(path) / 1048576:.1f} MB): {job['total']} customers, {job['droppedLines']} lines left out, "
      f"status {job['status']}; 202 after {stored:.1f} s, read after {done:.1f} s; peak memory idle {idle} MB, "
      f"at the 202 {at_202:.0f} MB, read {hwm():.0f} MB")
with open("peaks", "a") as out: out.write(f"{mb} {hwm():.0f}\n")
PY
    kill "$server"; wait "$server" 2>/dev/null || true
}

echo "== import memory: a ${small} MB and a ${large} MB RevenueCat export, each posted to a fresh release server (SQLite)"
rm -f peaks
measure "$small"
measure "$large"
python3 - <<'PY'
peaks = dict(line.split() for line in open("peaks"))
small, large = sorted(peaks, key=int)
print(f"    peak memory {large} MB / {small} MB = {int(peaks[large]) / int(peaks[small]):.2f} "
      f"({peaks[large]} MB / {peaks[small]} MB; 1.00 is memory independent of the file's size)")
PY
