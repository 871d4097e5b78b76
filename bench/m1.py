#!/usr/bin/env python3
"""One stream at a time: mod_h2 against HTTP/1.1 on the same httpd with the
same client, h2load -c 100 -m 1 -t 2 on /653b.txt over h2c and TLS, rounds
interleaved. Per case: req/s, the server's CPU microseconds, context
switches and (with --strace or --perf) system calls per request, so a
change to the hand-off between the connection thread and the workers shows
what it saves. --perf counts every system call of the server's processes
exactly (perf's raw_syscalls tracepoint, all CPUs, kept for the server's
pids), without slowing the server as strace does: on a noisy machine the
counts hold where times do not.

    python3 bench/m1.py [--rounds 3] [--n 40000] [--strace] [--perf] [--tag T]

The mod_h2 httpd is bench/run.py's "ours" instance (ports 46xxx), started
and stopped by pid. Results: results/<date>-m1<tag>.json/.md."""

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import run as bench
from run import HttpdInstance, h2load, h2load_measured, log

CASES = [("h2c", False, False), ("h1", True, False),
         ("h2 TLS", False, True), ("h1 TLS", True, True)]


def strace_counts(inst, name, url, n, h1):
    """System calls per request (bench/run.py's strace_run): a profile,
    strace slows the server."""
    r = bench.strace_run("m1-" + name.replace(" ", "-"), inst, n, h1, c=100, m=1, url=url)
    per = r.get("per_req", {})
    top = sorted(per.items(), key=lambda kv: -kv[1])[:8]
    return {"all": r.get("total_per_req"), "top": dict(top)}


SYSCALL_NAMES = {0: "read", 1: "write", 3: "close", 7: "poll", 9: "mmap", 11: "munmap",
                 17: "pread64", 20: "writev", 45: "recvfrom", 100: "times",
                 202: "futex", 232: "epoll_wait", 233: "epoll_ctl", 257: "openat",
                 262: "newfstatat"}


def perf_counts(inst, url, n, h1):
    """System calls per request of the server's processes, counted by perf
    on all CPUs while h2load runs n requests (-c 100 -m 1)."""
    data = os.path.join(bench.RUN_DIR, "m1-perf.data")
    rec = subprocess.Popen(["perf", "record", "-q", "-a", "-m", "8192", "-o", data,
                            "-e", "raw_syscalls:sys_enter"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.5)                  # perf is set up on every CPU
        r = h2load(url, n=n, c=100, m=1, h1=h1, timeout=300)
    finally:
        rec.send_signal(2)
        rec.wait()
    pids = set(inst.pids())              # children the run may have added
    out = subprocess.run(["perf", "script", "-i", data, "-F", "pid,trace"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode()
    counts = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) > 3 and f[0].isdigit() and int(f[0]) in pids and "NR" in f:
            name = SYSCALL_NAMES.get(int(f[f.index("NR") + 1]), "NR " + f[f.index("NR") + 1])
            counts[name] = counts.get(name, 0) + 1
    os.unlink(data)
    done = r.get("s2xx") or 0
    if not done:
        return {}
    top = sorted(counts.items(), key=lambda kv: -kv[1])[:10]
    return {"all": sum(counts.values()) / done,
            "top": {k: v / done for k, v in top}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--n", type=int, default=40000)
    ap.add_argument("--strace", action="store_true")
    ap.add_argument("--perf", action="store_true")
    ap.add_argument("--tag", default="")
    args = ap.parse_args()
    inst = HttpdInstance("ours", "ours")
    inst.start()
    runs = {name: [] for name, _, _ in CASES}
    straced = {}
    try:
        h2load(inst.url("/653b.txt"), n=5000, c=100, m=1)       # warm-up
        for rnd in range(args.rounds):
            order = CASES[rnd % len(CASES):] + CASES[:rnd % len(CASES)]
            for name, h1, tls in order:
                r = h2load_measured(inst, inst.url("/653b.txt", tls=tls),
                                    n=args.n, c=100, m=1, h1=h1, timeout=300)
                runs[name].append(r)
                log("m1 %s round %d: %.0f req/s, %.1f us, %.2f cs per request" % (
                    name, rnd, r.get("rps", 0), r.get("server_cpu_us_per_req", 0),
                    r.get("ctxsw_per_req", 0)))
        if args.strace and shutil.which("strace"):
            for name, h1, tls in CASES:
                straced[name] = strace_counts(inst, name, inst.url("/653b.txt", tls=tls),
                                              10000, h1)
        if args.perf and shutil.which("perf"):
            for name, h1, tls in CASES:
                straced[name] = perf_counts(inst, inst.url("/653b.txt", tls=tls), 20000, h1)
    finally:
        inst.stop()
    med = {}
    for name in runs:
        ok = [r for r in runs[name] if r.get("s2xx")]
        med[name] = {k: statistics.median(r[k] for r in ok) if ok else None
                     for k in ("rps", "server_cpu_us_per_req", "ctxsw_per_req")}
    L = ["# One stream at a time (-c 100 -m 1, 653 B), medians of %d rounds%s" % (
        args.rounds, args.tag), "",
         "| case | req/s | CPU us/req | ctx switches/req | syscalls/req |", "|---|---|---|---|---|"]
    for name, _, _ in CASES:
        m = med[name]
        sc = straced.get(name, {}).get("all")
        L.append("| %s | %.0f | %.1f | %.2f | %s |" % (
            name, m["rps"] or 0, m["server_cpu_us_per_req"] or 0, m["ctxsw_per_req"] or 0,
            "%.1f" % sc if sc else "n/a"))
    for proto, a, b in (("h2c", "h2c", "h1"), ("TLS", "h2 TLS", "h1 TLS")):
        if med[a]["rps"] and med[b]["rps"]:
            L.append("\n%s: h2/h1 req/s %.2f, CPU/req %.2f" % (
                proto, med[a]["rps"] / med[b]["rps"],
                med[a]["server_cpu_us_per_req"] / med[b]["server_cpu_us_per_req"]))
    for name, s in straced.items():
        L.append("\nsyscalls/req %s: " % name + ", ".join(
            "%s %.2f" % kv for kv in s["top"].items()))
    text = "\n".join(L)
    print(text)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = os.path.join(bench.RESULTS_DIR, "%s-m1%s" % (stamp, args.tag))
    with open(base + ".json", "w") as f:
        json.dump({"runs": runs, "medians": med, "strace": straced}, f, indent=1)
    with open(base + ".md", "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
