#!/usr/bin/env python3
"""Instructions per request, and whose they are: `httpd -X` under
callgrind (as bench/run.py's scenario 4: a run with N requests less a run
with none, both after 200 warm-up requests, h2load -c 10 -m 10 on the
653-byte file), split by bench/cgparse.py into mod_h2's own (mod_h2.so's
code and the libc/APR work it calls), nghttp2's, httpd's (core and the
other modules), OpenSSL's (with mod_ssl) and the rest.

    python3 bench/instr.py [--n 5000] [--cases ours,stock,h1] [--tls] [--tag T]

Cases: ours (mod_h2, h2c), stock (mod_http2, h2c), h1 (HTTP/1.1 on the
mod_h2 httpd), nginx (Debian's, one process, h2c, no access log, as
refs.py runs it); --tls adds the httpd ones over TLS. Ports: bench/run.py's
cg-* instances (466xx, 467xx), nginx 49980. Results:
results/<date>-instr<tag>.json/.md."""

import argparse
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys

import cgparse
import refs
import run as bench
from run import callgrind_total, h2load, log, wait_port

NGINX_PORT = 49980

CASES = {"ours": ("ours", False, False), "stock": ("stock", False, False),
         "h1": ("ours", True, False),
         "ours-tls": ("ours", False, True), "stock-tls": ("stock", False, True),
         "h1-tls": ("ours", True, True)}
COLUMNS = ["mod_h2", "nghttp2", "httpd", "openssl", "unattributed shared", "total"]


def nginx_total(n, keep_dir):
    """Ir of one nginx process (master_process off) under callgrind for 200
    warm-up requests + n, as callgrind_total() does for httpd: refs.py's
    nginx configuration, but one process."""
    ours = os.path.join(bench.RUN_DIR, "ours")
    nx = refs.Nginx("nginx", os.path.join(ours, "htdocs"),
                    os.path.join(ours, "ca", "server.pem"),
                    os.path.join(ours, "ca", "server.key"),
                    port_base=NGINX_PORT - 80, run_name="cg-nginx")
    nx.processes = "master_process off;\nworker_processes 1;"
    os.makedirs(os.path.join(nx.run_dir, "tmp"), exist_ok=True)
    dump = os.path.join(keep_dir, "nginx-%d.out" % n)
    proc = subprocess.Popen(["valgrind", "--tool=callgrind", "--vgdb=no",
                             "--callgrind-out-file=" + dump] + nx.command(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    res = {"dump": dump, "s2xx": 0}
    try:
        wait_port(nx.h2c_port, 60)
        url = nx.url("/653b.txt")
        h2load(url, n=200, c=10, m=10, t=1, timeout=120)
        if n:
            res["s2xx"] = h2load(url, n=n, c=10, m=10, t=1, timeout=600).get("s2xx") or 0
    finally:
        proc.send_signal(signal.SIGQUIT)     # graceful: the dump is written
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    return res


def measure(key, n, keep_dir):
    if key == "nginx":
        runs = [nginx_total(0, keep_dir), nginx_total(n, keep_dir)]
        served = runs[1]["s2xx"]
        if not served:
            return {"error": "nginx served nothing"}
        a, b = cgparse.shares(runs[0]["dump"]), cgparse.shares(runs[1]["dump"])
        return {"n": served, "per_request": {k: (b[k] - a.get(k, 0)) / served for k in b},
                "dumps": [runs[0]["dump"], runs[1]["dump"]]}
    module, h1, tls = CASES[key]
    dumps = []
    runs = []
    for count in (0, n):
        r = callgrind_total(key, module, count, h1, tls)
        if "error" in r:
            return {"error": r["error"]}
        kept = os.path.join(keep_dir, "%s-%d.out" % (key, count))
        shutil.copy(r["dump"], kept)
        dumps.append(kept)
        runs.append(r)
    served = runs[1]["s2xx"] - runs[0]["s2xx"]
    a, b = cgparse.shares(dumps[0]), cgparse.shares(dumps[1])
    per_req = {k: (b[k] - a.get(k, 0)) / served for k in b}
    return {"n": served, "per_request": per_req, "dumps": dumps}


def table(results):
    L = ["| case | " + " | ".join(COLUMNS) + " |",
         "|---|" + "---|" * len(COLUMNS)]
    for key, r in results.items():
        if "error" in r:
            L.append("| %s | %s |" % (key, r["error"]))
            continue
        pr = r["per_request"]
        L.append("| %s | " % key + " | ".join("%.0f" % pr.get(c, 0) for c in COLUMNS) + " |")
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--cases", default="ours,stock,h1")
    ap.add_argument("--tls", action="store_true")
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    cases = args.cases.split(",")
    if args.tls:
        cases += [c + "-tls" for c in cases if c in ("ours", "h1")]
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    keep = os.path.join(bench.RUN_DIR, "instr-" + stamp)
    os.makedirs(keep, exist_ok=True)
    commit = subprocess.run(["git", "-C", bench.REPO_DIR, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    results = {}
    try:
        for key in cases:
            log("instr %s: %d requests under callgrind" % (key, args.n))
            results[key] = measure(key, args.n, keep)
            log("instr %s: %s" % (key, results[key].get("per_request", results[key])))
    finally:
        for s in reversed(list(bench.STARTED)):
            s.stop()
    md = ["# Instructions per request by owner (%s%s, commit %s)" % (stamp, args.tag, commit), "",
          "callgrind, `httpd -X`, h2load -c 10 -m 10 on /653b.txt, (run with N requests"
          " - run with 0) / N; shared libraries (libc, APR, APR-util, ld.so) charged to"
          " their caller (bench/cgparse.py).", "", table(results), ""]
    base = os.path.join(bench.RESULTS_DIR, "%s-instr%s" % (stamp, args.tag))
    with open(base + ".json", "w") as f:
        json.dump({"commit": commit, "n": args.n, "results": results}, f, indent=1)
    with open(base + ".md", "w") as f:
        f.write("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    sys.exit(main())
