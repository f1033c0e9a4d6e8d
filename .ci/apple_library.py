"""Apple's own Python library (app-store-server-library) against what the simulator signs and what Storekeeper decodes.

Serves a webhook for `storekeeper simulate run`; for every notification it receives it verifies and decodes the
notification and its nested signed data with Apple's SignedDataVerifier (the simulator's root, online checks off), and
with `storekeeper verify`, and compares every field Storekeeper prints with the value Apple's library decoded (an
enumeration by its raw value). Exits non-zero on any difference or on a payload either side rejects.

Usage: python apple_library.py <storekeeper binary> <root.der> <bundle id> <port> <done file>
It serves until <done file> exists, then prints its tally and exits.
"""

import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier

binary, root_path, bundle_id, port, done_file = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
with open(root_path, "rb") as f:
    root = f.read()
verifier = SignedDataVerifier([root], False, Environment.SANDBOX, bundle_id)

lock = threading.Lock()
tally = {"notifications": 0, "fields": 0, "types": set()}
problems = []

# Nested signed data: Storekeeper prints it decoded under these names; Apple's library decodes the signed string.
NESTED = {
    ("data", "transactionInfo"): ("signedTransactionInfo", verifier.verify_and_decode_signed_transaction),
    ("data", "renewalInfo"): ("signedRenewalInfo", verifier.verify_and_decode_renewal_info),
    ("appData", "appTransactionInfo"): ("signedAppTransactionInfo", verifier.verify_and_decode_app_transaction),
}


def theirs(obj, key):
    """Apple's library's value for a field: the raw value of an enumeration, the attribute otherwise."""
    raw = "raw" + key[0].upper() + key[1:]
    if hasattr(obj, raw):
        return getattr(obj, raw)
    if not hasattr(obj, key):
        raise KeyError(key)
    return getattr(obj, key)


def compare(ours, obj, path):
    for key, value in ours.items():
        where = f"{path}.{key}"
        parent = path.rsplit(".", 1)[-1]
        nested = NESTED.get((parent, key))
        if nested is not None:
            signed_name, decode = nested
            signed = getattr(obj, signed_name, None)
            if signed is None:
                problems.append(f"{where}: Storekeeper decoded it, Apple's library has no {signed_name}")
                continue
            compare(value, decode(signed), where)
            continue
        try:
            other = theirs(obj, key)
        except KeyError:
            problems.append(f"{where}: Apple's library has no such field (Storekeeper: {value!r})")
            continue
        if isinstance(value, dict):
            if other is None:
                problems.append(f"{where}: Apple's library decoded nothing (Storekeeper: {value!r})")
            else:
                compare(value, other, where)
            continue
        with lock:
            tally["fields"] += 1
        if isinstance(value, list) and not isinstance(other, list):
            other = list(other) if other is not None else None
        if value != other:
            problems.append(f"{where}: Storekeeper {value!r}, Apple's library {other!r}")


def check(signed_payload):
    decoded = verifier.verify_and_decode_notification(signed_payload)
    run = subprocess.run(
        [binary, "verify", "-", "--root", root_path, "--bundle-id", bundle_id, "--environment", "sandbox"],
        input=json.dumps({"signedPayload": signed_payload}), capture_output=True, text=True)
    if run.returncode != 0:
        problems.append(f"storekeeper verify rejected a {decoded.rawNotificationType}: {run.stderr.strip()}")
        return
    ours = json.loads(run.stdout)
    compare(ours, decoded, decoded.rawNotificationType or "notification")
    with lock:
        tally["notifications"] += 1
        tally["types"].add(decoded.rawNotificationType + ("/" + decoded.rawSubtype if decoded.rawSubtype else ""))


class Webhook(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            check(json.loads(body)["signedPayload"])
        except Exception as error:  # Apple's library refused what the simulator signed: a difference too.
            problems.append(f"Apple's library refused a notification: {type(error).__name__}: {error}")
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", port), Webhook)
threading.Thread(target=server.serve_forever, daemon=True).start()
while not os.path.exists(done_file):
    time.sleep(0.2)
server.shutdown()
print(f"Apple's library and Storekeeper agree on {tally['fields']} fields of {tally['notifications']} notifications "
      f"({len(tally['types'])} types and subtypes)" if not problems else f"{len(problems)} differences:")
for problem in problems[:50]:
    print("  " + problem)
sys.exit(1 if problems or tally["notifications"] == 0 else 0)
