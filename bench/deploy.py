#!/usr/bin/env python3
"""Front-end benchmark: clients speak h2 over TLS to HAProxy (Debian's
2.6), which balances over 2 httpd instances (deploy/topology.py, PROXY
protocol v2): instances with mod_h2 (h2c to HAProxy), with Debian's
mod_http2 (h2c) and without HTTP/2 (HTTP/1.1 to HAProxy), one after the
other in one run. Small files (1 KB, h2load -c 200 -m 10) and a 10 MB file
(-c 10 -m 1); req/s and MB/s as ratios, and the requests lost (failed,
errored or never answered).

    python3 bench/deploy.py [--rounds 2] [--tag T]

Ports 24xxx on 127.0.0.1; everything is stopped again at the end."""

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCH_DIR)
RESULTS_DIR = os.path.join(BENCH_DIR, "results")
sys.path.insert(0, os.path.join(REPO_DIR, "deploy"))
os.environ.setdefault("H2_DEPLOY_PORT_BASE", "24000")
os.environ.setdefault("H2_DEPLOY_DIR", os.path.join(BENCH_DIR, "run", "deploy"))

import topology  # noqa: E402


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def h2load(url, n, c, m):
    out = subprocess.run(["h2load", "-n", str(n), "-c", str(c), "-m", str(m), "-t", "2", url],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         timeout=300).stdout
    req = re.search(r"finished in ([\d.]+)s, ([\d.]+) req/s, ([\d.]+)([KMG]?B)/s", out)
    cnt = re.search(r"requests: (\d+) total, \d+ started, \d+ done, (\d+) succeeded, "
                    r"(\d+) failed, (\d+) errored", out)
    if not (req and cnt):
        return {"error": out[-500:]}
    unit = {"B": 1e-6, "KB": 1e-3, "MB": 1, "GB": 1e3}[req.group(4)]
    return {"req_s": float(req.group(2)), "mb_s": round(float(req.group(3)) * unit * 1.048576, 1),
            "lost": int(cnt.group(1)) - int(cnt.group(2))}


def run_one(module, rounds):
    t = topology.Topology(front="haproxy", client_ip="proxy", instances=2, module=module)
    t.stop()
    t.start()
    try:
        base = "https://127.0.0.1:%d" % t.tls_port
        h2load(base + "/1k.txt", 2000, 50, 10)     # warm-up
        small, big = [], []
        for _ in range(rounds):
            small.append(h2load(base + "/1k.txt", 60000, 200, 10))
            big.append(h2load(base + "/10m.txt", 100, 10, 1))
        return {"small": small, "big": big}
    finally:
        t.stop()


def best(runs, key):
    vals = [r[key] for r in runs if key in r]
    return max(vals) if vals else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--tag", default="deploy")
    args = ap.parse_args()
    res = {}
    for module in ("ours", "stock", "none"):
        log("instances with %s" % module)
        res[module] = run_one(module, args.rounds)
        log("  %s" % json.dumps(res[module]))
    rows = []
    for module, label in (("ours", "mod_h2 (h2c)"), ("stock", "mod_http2 (h2c)"),
                          ("none", "HTTP/1.1")):
        r = res[module]
        rows.append({"instances": label, "small_req_s": best(r["small"], "req_s"),
                     "big_mb_s": best(r["big"], "mb_s"),
                     "lost": sum(x.get("lost", 0) for x in r["small"] + r["big"])
                     + sum(1 for x in r["small"] + r["big"] if "error" in x)})
    ours = rows[0]
    print("\n| instances | 1 KB req/s (-c 200 -m 10) | vs mod_h2 | 10 MB MB/s (-c 10) "
          "| vs mod_h2 | requests lost |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %.0f | %.2f | %.1f | %.2f | %d |" % (
            r["instances"], r["small_req_s"], r["small_req_s"] / ours["small_req_s"]
            if ours["small_req_s"] else 0, r["big_mb_s"],
            r["big_mb_s"] / ours["big_mb_s"] if ours["big_mb_s"] else 0, r["lost"]))
    os.makedirs(RESULTS_DIR, exist_ok=True)
    out = os.path.join(RESULTS_DIR, "%s-%s.json" % (
        datetime.datetime.now().strftime("%Y%m%d-%H%M%S"), args.tag))
    with open(out, "w") as f:
        json.dump({"rows": rows, "raw": res}, f, indent=1)
    print("\nresults: %s" % out)


if __name__ == "__main__":
    main()
