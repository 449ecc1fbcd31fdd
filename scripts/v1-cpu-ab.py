#!/usr/bin/env python3
"""Server CPU of a card payment through Stripe's /v1 against Tender's /v2, A/B on one server.

Usage: scripts/v1-cpu-ab.py [TENDER_BIN]   (default: $CARGO_TARGET_DIR or ~/.cache/tender-target,
release build). Starts `tender serve` on a fresh data directory, then sends blocks of 1,600
creates (4 clients x 400), alternating /v1 (`POST /v1/payment_intents`, form-encoded,
confirm=true) and /v2 (`POST /v2/payments`, JSON), six blocks each, and prints the server's
CPU (user + system, from /proc) per request of each block and the ratio of the medians.
Alternating on one server cancels the drift of a growing database and of a shared machine,
which sequential runs on one server (tender-bench) do not. Standard library only; Linux.
"""

import base64
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/tender-target"))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(TARGET, "release", "tender")
PORT = 4590

V1 = ("amount=2000&currency=usd&description=Benchmark+order&confirm=true"
      "&payment_method_data%5Btype%5D=card&payment_method_data%5Bcard%5D%5Bnumber%5D=4242424242424242"
      "&payment_method_data%5Bcard%5D%5Bexp_month%5D=12&payment_method_data%5Bcard%5D%5Bexp_year%5D=2034"
      "&payment_method_data%5Bcard%5D%5Bcvc%5D=123")
V2 = json.dumps({"amount": 2000, "currency": "usd", "description": "Benchmark order",
                 "payment_method": {"type": "card", "card": {"number": "4242424242424242",
                                                             "exp_month": 12, "exp_year": 2034, "cvc": "123"}}})


def start(data):
    log = open(os.path.join(data, "log"), "w")
    proc = subprocess.Popen([BIN, "serve", "--data-dir", data, "--listen", f"127.0.0.1:{PORT}",
                             "--receipt-listen", f"127.0.0.1:{PORT + 1}", "--rate-limit", "0"],
                            stdout=log, stderr=log)
    for _ in range(200):
        time.sleep(0.1)
        text = open(os.path.join(data, "log")).read()
        if "listening" in text:
            key = [l.split()[-1] for l in text.splitlines() if "test secret key" in l][0]
            return proc, key
    raise SystemExit("tender did not start")


def cpu(pid):
    fields = open(f"/proc/{pid}/stat").read().split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


BLOCK = [0]


def load(key, v1, n, clients=4):
    BLOCK[0] += 1
    block = BLOCK[0]
    auth = "Basic " + base64.b64encode((key + ":").encode()).decode()

    def run(w):
        conn = http.client.HTTPConnection("127.0.0.1", PORT)
        for i in range(n):
            headers = {"Authorization": auth, "Idempotency-Key": f"ab-{block}-{w}-{i}"}
            if v1:
                headers["Content-Type"] = "application/x-www-form-urlencoded"
                conn.request("POST", "/v1/payment_intents", V1, headers)
            else:
                headers["Content-Type"] = "application/json"
                conn.request("POST", "/v2/payments", V2, headers)
            resp = conn.getresponse()
            resp.read()
            assert resp.status == 200, resp.status

    threads = [threading.Thread(target=run, args=(w,)) for w in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def main():
    data = tempfile.mkdtemp(prefix="tender-ab-")
    proc, key = start(data)
    try:
        load(key, True, 50)
        load(key, False, 50)
        per = {True: [], False: []}
        for round_ in range(6):
            for v1 in ([True, False] if round_ % 2 == 0 else [False, True]):
                before = cpu(proc.pid)
                load(key, v1, 400)
                per[v1].append((cpu(proc.pid) - before) * 1e6 / 1600)
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(data, ignore_errors=True)
    for v1, name in [(True, "/v1 create-and-confirm"), (False, "/v2 create")]:
        print(f"{name}: {' '.join(f'{x:.0f}' for x in per[v1])} µs/req, median {statistics.median(per[v1]):.0f}")
    print(f"ratio of medians: x{statistics.median(per[True]) / statistics.median(per[False]):.2f} (target <= x1.15)")


if __name__ == "__main__":
    main()
