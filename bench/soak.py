#!/usr/bin/env python3
"""mod_h2 soak test: 10 minutes of mixed-size load, memory over time.

    python3 bench/soak.py            # 60 s warm-up + 600 s soak (~12 min)
    python3 bench/soak.py --quick    # 10 s warm-up + 60 s soak (~1.5 min)
    make -C bench soak [ARGS=...]

One mod_h2 httpd (the bench sandbox configuration, event MPM, ports 47080
h2c and 47443 h2) gets `h2load -c 200 -m 50 -t 2 -D <soak> --warm-up-time
<warm-up>` over h2c with a weighted mix of the docroot's files (plus, by
default, a smaller parallel h2load over TLS), and, beside it, uploads: to
PHP-FPM (a private php-fpm, test/phpfpm.py, behind mod_proxy_fcgi) and to
slow consumers (slow_read.php and a python CGI reading at 256 KB/s), each
h2load paced with --rps over the same duration. Every 10 s the script records
VmRSS, Pss and the anonymous memory of the parent and of every child
process. At the end it compares the server's memory at the end of the soak
with its value after the warm-up and checks h2load's counters and the error
log. Pass: zero failed requests (the uploads included) and end RSS within 10%
of the after-warm-up RSS (and no crashed child). See bench/README.md.

Helpers (sandbox instance, h2load parsing, /proc readers) come from
bench/run.py; everything started here is stopped again at the end, also on
Ctrl-C.
"""

import argparse
import datetime
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from statistics import median

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "test"))

import run  # noqa: E402
from run import log, RESULTS_DIR, RUN_DIR, H2LOAD  # noqa: E402

# a page-like mix: many small objects, some medium, a few large ones
# (weights in percent of the regular requests)
MIX = [("653b.txt", 20), ("1k.txt", 20), ("2k.txt", 15), ("4k.txt", 15),
       ("7.5k.txt", 10), ("10k.txt", 12), ("100k.txt", 8)]
# rare requests: one of each per `--rare` regular requests
RARE = ["cgi-bin/hello.py", "10m.txt"]

# uploads beside the page mix (off with --no-uploads): (name, URIs, body bytes, h2load
# clients, streams per client, requests per second per client). Each
# load's URIs are walked in turn; every request posts the same body.
UPLOADS = [
    ("uploads to php-fpm", ["fpm/upload.php"], 256 * 1024, 2, 2, 2),
    ("slow consumers", ["fpm/slow_read.php?rate=262144", "cgi-bin/slow_read.py?rate=262144"],
     512 * 1024, 1, 1, 1),
]

RSS_LIMIT = 0.10        # end RSS within 10% of the after-warm-up RSS
LEVEL_SECS = 60         # RSS level: median of the samples over this long

CRASH_RE = re.compile(r"exit signal|Segmentation fault|nasty error|dumped core|"
                      r"AH00051|AH00052|AH00060|Aborted|double free|corrupted",
                      re.IGNORECASE)
LEVEL_RE = re.compile(r"\] \[([\w.]+):(emerg|alert|crit|error|warn)\] ")


# ---------------------------------------------------------------- load
def uri_list(rare_every, seed=1):
    """Relative paths, weighted by MIX, shuffled (fixed seed): h2load -i
    walks the list in order on every connection."""
    n = max(100, rare_every)
    paths = []
    for name, w in MIX:
        paths += [name] * max(1, round(n * w / 100.0))
    random.Random(seed).shuffle(paths)
    if rare_every:
        step = len(paths) // (len(RARE) + 1)
        for i, name in enumerate(RARE):
            paths.insert((i + 1) * step + i, name)
    return paths


def mix_table(paths):
    counts = {}
    for p in paths:
        counts[p] = counts.get(p, 0) + 1
    sizes = dict(run.SIZED_FILES)
    return [{"path": p, "count": c, "share": c / len(paths),
             "size": sizes.get(p)} for p, c in sorted(
                 counts.items(), key=lambda x: (sizes.get(x[0], -1), x[0]))]


class H2loadProc:
    """One h2load in its own session (Ctrl-C in the terminal does not
    reach it; we stop it by pid), output to a file."""

    def __init__(self, name, args, out_path):
        self.name = name
        self.cmd = [H2LOAD] + args
        self.out_path = out_path
        self.proc = None
        self.out = None
        self.killed = False

    def start(self):
        self.out = open(self.out_path, "w")
        self.proc = subprocess.Popen(self.cmd, stdout=self.out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        run.STARTED.append(self)

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        if self.running():
            self.killed = True
            for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
                try:
                    self.proc.send_signal(sig)
                    self.proc.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if self.proc is not None:
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        if self.out and not self.out.closed:
            self.out.close()
        if self in run.STARTED:
            run.STARTED.remove(self)

    def result(self):
        res = {"name": self.name, "cmd": " ".join(self.cmd[1:]),
               "returncode": self.proc.returncode if self.proc else None,
               "killed": self.killed}
        try:
            with open(self.out_path, errors="replace") as f:
                out = f.read()
        except OSError:
            out = ""
        if run.parse_h2load(out, res, res["returncode"] or 0):
            m = re.search(r"time for request:\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)", out)
            if m:
                res["request_time"] = dict(zip(("min", "max", "mean", "sd"), m.groups()))
            res["not_done"] = res["started"] - res["done"]
            res["lost"] = res["failed"] + res["errored"] + res["timeout"] + res["non2xx"]
            res["mbps"] = res.get("traffic_bytes", 0) / res["secs"] / (1 << 20)
        return res


# ---------------------------------------------------------------- memory
def smaps_classes(pid):
    """Resident kB of one process by mapping kind (heap, anonymous, stack,
    file, other) and the number of anonymous mappings."""
    res = {"heap_kb": 0, "anon_kb": 0, "anon_maps": 0, "file_kb": 0, "other_kb": 0}
    try:
        with open("/proc/%d/smaps" % pid) as f:
            kind = None
            for line in f:
                first = line.split(None, 1)[0]
                if "-" in first and not first.endswith(":"):
                    parts = line.split()
                    name = parts[5] if len(parts) > 5 else ""
                    if name == "[heap]":
                        kind = "heap_kb"
                    elif name == "":
                        kind = "anon_kb"
                        res["anon_maps"] += 1
                    elif name.startswith("/"):
                        kind = "file_kb"
                    else:
                        kind = "other_kb"
                elif first == "Rss:" and kind:
                    res[kind] += int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return res


def sample(inst, t, phase, h2loads, detail=True):
    """Memory of the server's processes. Only a detail sample reads Pss
    and the mappings (smaps_rollup, smaps): both walk a process's page
    tables under its memory map lock, and on a saturated machine the
    reading thread gets preempted holding it, stalling the server's page
    faults and mmap calls for seconds. RSS comes from status, lock-free."""
    parent = inst.sb.pid()
    procs = []
    for role, pid in ([("parent", parent)] if parent else []) + [
            ("child", p) for p in sorted(inst.pids())]:
        m = run.proc_memory(pid, pss=detail)
        if m is None:
            continue
        if role == "child" and m.get("threads", 0) == 1:
            role = "cgid"          # mod_cgid's daemon: the one single-threaded child
        m["role"] = role
        if role == "child" and detail:
            m.update(smaps_classes(pid) or {})
        procs.append(m)
    keys = ("rss_kb", "rss_anon_kb", "threads") + (("pss_kb", "pss_anon_kb") if detail else ())
    tot = {k: sum(p.get(k, 0) for p in procs) for k in keys}
    cpu = run.proc_counters([p["pid"] for p in procs])
    return dict(tot, t=round(t, 1), phase=phase, procs=procs,
                n_procs=len(procs), n_children=sum(1 for p in procs if p["role"] == "child"),
                cpu_secs=cpu["cpu"], loadavg=open("/proc/loadavg").read().split()[0],
                load_running=all(h.running() for h in h2loads))


# ---------------------------------------------------------------- error log
def scan_error_log(text):
    counts = {}
    examples = {}
    crashes = []
    for line in text.splitlines():
        if CRASH_RE.search(line):
            crashes.append(line)
        m = LEVEL_RE.search(line)
        if not m:
            continue
        code = re.search(r"\b(AH\d{5})\b", line)
        key = "%s:%s %s" % (m.group(1), m.group(2), code.group(1) if code else "")
        counts[key] = counts.get(key, 0) + 1
        examples.setdefault(key, line[:300])
    return {"counts": counts, "examples": examples, "crashes": crashes[:50],
            "n_crashes": len(crashes),
            "module_errors": sum(c for k, c in counts.items()
                                 if k.startswith("h2:") and ":warn" not in k)}


# ---------------------------------------------------------------- analysis
def analyze(res):
    samples = res["samples"]
    warm, dur = res["warm_up_secs"], res["duration_secs"]
    under_load = [s for s in samples if s["phase"] != "idle after" and s["load_running"]]
    ref = next((s for s in under_load if s["t"] >= warm - 1), None)
    end = next((s for s in reversed(under_load) if s["t"] <= warm + dur + 1), None)
    an = {}
    if ref and end:
        soak = [s for s in under_load if ref["t"] <= s["t"] <= end["t"]]
        for k in ("rss_kb", "pss_kb", "rss_anon_kb"):
            have = [s for s in soak if k in s]   # Pss: detail samples only
            if k not in ref or k not in end or not have:
                continue
            mx = max(have, key=lambda s: s[k])
            an[k] = {"after_warm_up": ref[k], "end": end[k], "max": mx[k], "max_t": mx["t"],
                     "ratio_end": end[k] / ref[k] if ref[k] else None,
                     "ratio_max": mx[k] / ref[k] if ref[k] else None}
        an["ref_t"], an["end_t"] = ref["t"], end["t"]
        # The RSS of a busy server swings with how many requests it holds
        # at the moment (here between a few hundred and 3000 streams per
        # child, ~20 kB each): two single samples compare two moments, not
        # two levels. The level is the median over a window of LEVEL_SECS,
        # the first after the warm-up and the last of the soak.
        first_w = [s["rss_kb"] for s in soak if s["t"] <= ref["t"] + LEVEL_SECS]
        last_w = [s["rss_kb"] for s in soak if s["t"] >= end["t"] - LEVEL_SECS]
        if len(first_w) >= 3 and len(last_w) >= 3:
            lo, hi = median(first_w), median(last_w)
            an["rss_level"] = {"after_warm_up": lo, "end": hi, "ratio": hi / lo,
                               "n": [len(first_w), len(last_w)]}
        an["n_procs"] = sorted(set(s["n_procs"] for s in soak))
        an["n_children"] = sorted(set(s["n_children"] for s in soak))
        an["cpu_cores"] = ((end["cpu_secs"] - ref["cpu_secs"]) / (end["t"] - ref["t"])
                           if end["t"] > ref["t"] else None)
        # per child: first and last RSS while under load (children that
        # exist in both the reference and the end sample)
        first = {p["pid"]: p for p in ref["procs"]}
        last = {p["pid"]: p for p in end["procs"]}
        an["per_process"] = [
            {"pid": pid, "role": last[pid]["role"],
             "rss_kb": [first[pid]["rss_kb"], last[pid]["rss_kb"]],
             "rss_anon_kb": [first[pid].get("rss_anon_kb"), last[pid].get("rss_anon_kb")],
             "heap_kb": [first[pid].get("heap_kb"), last[pid].get("heap_kb")],
             "anon_maps": [first[pid].get("anon_maps"), last[pid].get("anon_maps")],
             "threads": [first[pid].get("threads"), last[pid].get("threads")]}
            for pid in sorted(set(first) & set(last))]
        mid = (ref["t"] + end["t"]) / 2.0
        for p in an["per_process"]:
            pts = [(x["t"], q.get("rss_anon_kb", 0)) for x in soak for q in x["procs"]
                   if q["pid"] == p["pid"]]
            p["anon_trend_kb_per_min"] = [slope([(t, v) for t, v in pts if lo <= t <= hi])
                                          for lo, hi in ((ref["t"], mid), (mid, end["t"]))]
        # growth rate (least squares, kB/min) in each half of the soak: a
        # leak keeps its rate, allocator/arena high-water growth flattens
        an["trend_kb_per_min"] = {}
        for k in ("rss_kb", "rss_anon_kb"):
            an["trend_kb_per_min"][k] = [slope([(x["t"], x[k]) for x in soak if lo <= x["t"] <= hi])
                                         for lo, hi in ((ref["t"], mid), (mid, end["t"]))]
        idle = [x for x in samples if x["phase"] == "idle after"]
        if idle:
            an["idle_after"] = {k: idle[-1].get(k, 0)
                                for k in ("rss_kb", "pss_kb", "rss_anon_kb", "t")}
    # child processes that came or went during the run
    seen, events, prev = {}, [], None
    for s in samples:
        pids = set(p["pid"] for p in s["procs"] if p["role"] == "child")
        if prev is not None:
            for p in sorted(pids - prev):
                events.append({"t": s["t"], "event": "new child %d" % p})
            for p in sorted(prev - pids):
                events.append({"t": s["t"], "event": "child %d gone" % p})
        for p in pids:
            seen.setdefault(p, s["t"])
        prev = pids
    an["child_events"] = events
    an["children_seen"] = len(seen)
    loads = [r for r in res["h2load"]]
    an["requests"] = sum(r.get("total", 0) for r in loads)
    an["succeeded"] = sum(r.get("succeeded", 0) for r in loads)
    an["lost"] = sum(r.get("lost", 0) for r in loads)
    an["failed"] = sum(r.get("failed", 0) for r in loads)
    an["errored"] = sum(r.get("errored", 0) for r in loads)
    an["timeout"] = sum(r.get("timeout", 0) for r in loads)
    an["non2xx"] = sum(r.get("non2xx", 0) for r in loads)
    an["not_done"] = sum(r.get("not_done", 0) for r in loads)
    an["rps"] = sum(r.get("rps", 0) for r in loads)
    reasons = []
    for r in loads:
        if "error" in r or r.get("killed"):
            reasons.append("h2load %s did not complete (%s)" % (
                r["name"], r.get("error") or "killed"))
    if an["lost"]:
        reasons.append("%d failed requests (failed %d, errored %d, timeout %d, non-2xx %d)" % (
            an["lost"], an["failed"], an["errored"], an["timeout"], an["non2xx"]))
    level = an.get("rss_level")
    if not level:
        reasons.append("too few RSS samples for the level after warm-up and at the end")
    elif abs(level["ratio"] - 1) > RSS_LIMIT:
        reasons.append("RSS level at the end %.1f%% of the level after warm-up "
                       "(limit ±%d%%)" % (level["ratio"] * 100, RSS_LIMIT * 100))
    if res.get("fpm_log_problems"):
        reasons.append("php-fpm logged errors: %s" % res["fpm_log_problems"][0])
    elog = res.get("error_log", {})
    if elog.get("n_crashes"):
        reasons.append("%d crash lines in the error log" % elog["n_crashes"])
    if res.get("interrupted"):
        reasons.append("interrupted")
    an["verdict"] = "FAIL" if reasons else "PASS"
    an["reasons"] = reasons
    res["analysis"] = an
    return an


def slope(pts):
    if len(pts) < 2:
        return None
    n = float(len(pts))
    mx, my = sum(x for x, _ in pts) / n, sum(y for _, y in pts) / n
    d = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / d * 60 if d else None


# ---------------------------------------------------------------- report
def mb(kb):
    return "%.1f" % (kb / 1024.0)


def mb_of(sample, key):
    """MB of key in a sample, "-" if the sample has none (Pss: detail
    samples only)."""
    return mb(sample[key]) if key in sample else "-"


def write_report(res):
    an = analyze(res)
    stamp = res["timestamp"]
    L = ["# mod_h2 soak test %s" % stamp, "",
         "Commit: `%s` (mod_h2.so built %s). %s, %d core(s), load average %s at start, "
         "%s at end; %.0f s in total." % (
             res["git"], res.get("mod_h2_so_mtime"), res["versions"]["httpd"],
             res["machine"]["nproc"], " ".join(res["machine"]["loadavg_start"]),
             " ".join(res["machine"]["loadavg_end"]), res["elapsed_secs"]), "",
         "## Verdict: **%s**" % an["verdict"], ""]
    if an["reasons"]:
        L += ["- " + r for r in an["reasons"]] + [""]
    if res.get("warm_up_secs", 60) < 60:
        L += ["Note: a warm-up of %d s ends while the children are still growing to "
              "their working size (about a minute under this load), so the memory "
              "ratio of this run is not meaningful; use the default 60 s." %
              res["warm_up_secs"], ""]
    rss = an.get("rss_kb")
    L += ["Criteria: zero failed requests (h2load failed + errored + timeout + non-2xx) "
          "and the RSS level at the end within ±%d%% of the level after the warm-up "
          "(level: median of the samples of %d s, the first after the warm-up and "
          "the last of the soak; single samples swing with the number of requests "
          "the server holds at that moment); also no crashed child in the error "
          "log." % (RSS_LIMIT * 100, LEVEL_SECS), ""]
    L += ["## Setup", "",
          "One mod_h2 httpd: the bench sandbox configuration (event MPM, %s, "
          "no access log, LogLevel warn), http 127.0.0.1:%d (h2c), https :%d (h2). "
          "Warm-up %d s, soak %d s (h2load's `--warm-up-time` and `-D`; h2load's "
          "counters cover the soak part only, the error log covers the whole run); "
          "memory sampled every %d s. h2load and the server share the 2 cores." % (
              res["mpm"], res["http_port"], res["https_port"], res["warm_up_secs"],
              res["duration_secs"], res["interval_secs"]), ""]
    L += ["| load | command |", "|---|---|"]
    for r in res["h2load"]:
        L.append("| %s | `h2load %s` |" % (r["name"], r["cmd"]))
    L += ["", "URI mix (h2load `-i`, each connection walks the shuffled list of %d "
          "URIs in order):" % res["uri_count"], "",
          "| path | size | URIs in list | share |", "|---|---|---|---|"]
    for m in res["mix"]:
        L.append("| %s | %s | %d | %.2f%% |" % (m["path"], m["size"] if m["size"] else "CGI",
                                                m["count"], m["share"] * 100))
    L += ["", "## Requests", "",
          "| load | protocol | requests | succeeded | failed | errored | timeout | non-2xx "
          "| started − done | req/s | MB/s | request time mean (max) |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["h2load"]:
        if "error" in r:
            L.append("| %s | %s | | | | | | | | | | |" % (r["name"], r["error"]))
            continue
        rt = r.get("request_time", {})
        L.append("| %s | %s | %d | %d | %d | %d | %d | %d | %d | %.0f | %.1f | %s (%s) |" % (
            r["name"], r["proto"], r["total"], r["succeeded"], r["failed"], r["errored"],
            r["timeout"], r["non2xx"], r["not_done"], r["rps"], r["mbps"],
            rt.get("mean", "?"), rt.get("max", "?")))
    if len(res["h2load"]) > 1:
        L.append("| **all** | | %d | %d | %d | %d | %d | %d | %d | %.0f | | |" % (
            an["requests"], an["succeeded"], an["failed"], an["errored"], an["timeout"],
            an["non2xx"], an["not_done"], an["rps"]))
    L += ["", "## Memory", ""]
    if rss:
        L += ["Sum over the httpd processes (parent, children, cgid daemon). "
              "After warm-up = sample at t = %.0f s, end = sample at t = %.0f s (h2load "
              "still running); max over the soak part. RSS counts shared pages once "
              "per process, Pss splits them; anon = RssAnon (heap, thread arenas, stacks)."
              % (an["ref_t"], an["end_t"]), "",
              "| measure | after warm-up MB | end MB | max MB (at t) | end / after warm-up "
              "| max / after warm-up |", "|---|---|---|---|---|---|"]
        for k, label in (("rss_kb", "RSS"), ("pss_kb", "Pss"), ("rss_anon_kb", "RSS anon")):
            if k not in an:
                continue
            a = an[k]
            L.append("| %s | %s | %s | %s (%.0f s) | **%.3f** | %.3f |" % (
                label, mb(a["after_warm_up"]), mb(a["end"]), mb(a["max"]), a["max_t"],
                a["ratio_end"], a["ratio_max"]))
        level = an.get("rss_level")
        if level:
            L += ["", "RSS level (median of %d and %d samples over %d s): %s MB after "
                  "the warm-up, %s MB at the end: **%.3f**." % (
                      level["n"][0], level["n"][1], LEVEL_SECS, mb(level["after_warm_up"]),
                      mb(level["end"]), level["ratio"])]
        tr = an.get("trend_kb_per_min", {})
        if tr:
            f = lambda v: "%+.0f" % v if v is not None else "n/a"  # noqa: E731
            L += ["", "Growth rate (least-squares slope over the samples, kB/min), first "
                  "half → second half of the soak: RSS %s → %s, RSS anon %s → %s (a "
                  "leak keeps its rate; allocator high-water growth flattens out)." % (
                      f(tr["rss_kb"][0]), f(tr["rss_kb"][1]),
                      f(tr["rss_anon_kb"][0]), f(tr["rss_anon_kb"][1]))]
        ia = an.get("idle_after")
        if ia:
            L += ["", "After the load (t = %.0f s, connections closed): RSS %s MB (%.3f of "
                  "after warm-up), Pss %s MB, RSS anon %s MB (%.3f)." % (
                      ia["t"], mb(ia["rss_kb"]), ia["rss_kb"] / an["rss_kb"]["after_warm_up"],
                      mb(ia["pss_kb"]), mb(ia["rss_anon_kb"]),
                      ia["rss_anon_kb"] / an["rss_anon_kb"]["after_warm_up"])]
        L += ["", "Processes during the soak: %s (children: %s); %d child process(es) "
              "seen over the whole run; server CPU during the soak: %s cores." % (
                  "/".join(map(str, an["n_procs"])), "/".join(map(str, an["n_children"])),
                  an["children_seen"],
                  "%.2f" % an["cpu_cores"] if an.get("cpu_cores") is not None else "n/a")]
        if an["child_events"]:
            L.append("Child process changes: " + "; ".join(
                "t=%.0f s %s" % (e["t"], e["event"]) for e in an["child_events"]) + ".")
        L += ["", "Per process, after warm-up → end (MB; heap = `[heap]`, anon maps = "
              "anonymous mappings, from smaps):", "",
              "| pid | role | RSS | RSS anon | RSS anon kB/min (1st → 2nd half) | heap "
              "| anon maps | threads |",
              "|---|---|---|---|---|---|---|---|"]
        for p in an["per_process"]:
            def pair(v, f=mb):
                return "%s → %s" % (f(v[0]), f(v[1])) if v[0] is not None else ""
            tr = p.get("anon_trend_kb_per_min") or [None, None]
            L.append("| %d | %s | %s | %s | %s | %s | %s | %s |" % (
                p["pid"], p["role"], pair(p["rss_kb"]), pair(p["rss_anon_kb"]),
                " → ".join("%+.0f" % v if v is not None else "n/a" for v in tr),
                pair(p["heap_kb"]), pair(p["anon_maps"], str), pair(p["threads"], str)))
    L += ["", "### Over time", "",
          "| t s | phase | procs | threads | RSS MB | Pss MB | RSS anon MB "
          "| children RSS MB (pid) | load avg |", "|---|---|---|---|---|---|---|---|---|"]
    for s in res["samples"]:
        kids = ", ".join("%s (%d)" % (mb(p["rss_kb"]), p["pid"]) for p in s["procs"]
                         if p["role"] == "child")
        L.append("| %.0f | %s | %d | %d | %s | %s | %s | %s | %s |" % (
            s["t"], s["phase"], s["n_procs"], s["threads"], mb(s["rss_kb"]),
            mb_of(s, "pss_kb"), mb(s["rss_anon_kb"]), kids,
            s["loadavg"]))
    elog = res.get("error_log", {})
    L += ["", "## Error log", "",
          "Lines at warn and above written during the run (LogLevel warn), by "
          "module:level and message code; crash lines (child exit signal, segfault, "
          "abort): %d." % elog.get("n_crashes", 0), ""]
    if elog.get("counts"):
        L += ["| module:level code | count | first line |", "|---|---|---|"]
        for k, c in sorted(elog["counts"].items(), key=lambda x: -x[1]):
            L.append("| %s | %d | `%s` |" % (k, c, elog["examples"][k].replace("|", "\\|")))
    else:
        L.append("(no lines at warn or above)")
    for line in elog.get("crashes", [])[:10]:
        L.append("    " + line)
    if res.get("findings"):
        L += ["", "## Findings", "", res["findings"]]
    base = os.path.join(RESULTS_DIR, stamp)
    img = plot(res, base)
    if img:
        res["plot"] = os.path.basename(img)
        L += ["", "![server memory over time](%s)" % os.path.basename(img)]
    text = "\n".join(L) + "\n"
    print(text)
    with open(base + ".md", "w") as f:
        f.write(text)
    with open(base + ".json", "w") as f:
        json.dump(res, f, indent=1, default=str)
        f.write("\n")
    log("wrote %s.md, %s.json%s" % (base, base, ", " + img if img else ""))
    return an


def plot(res, base):
    samples = [s for s in res["samples"] if s["phase"] != "idle after"]
    if not samples:
        return None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    an = res.get("analysis", {})
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8))
    ax = axes[0]
    for k, label, color in (("rss_kb", "RSS", "#d62728"), ("pss_kb", "Pss", "#1f77b4"),
                            ("rss_anon_kb", "RSS anon", "#2ca02c")):
        have = [s for s in samples if k in s]
        ax.plot([s["t"] for s in have], [s[k] / 1024.0 for s in have], marker="o", ms=2,
                color=color, label=label)
    if "rss_kb" in an:
        ref = an["rss_kb"]["after_warm_up"] / 1024.0
        ax.axhspan(ref * (1 - RSS_LIMIT), ref * (1 + RSS_LIMIT), color="#d62728", alpha=0.08,
                   label="RSS after warm-up ±%d%%" % (RSS_LIMIT * 100))
    ax.axvline(res["warm_up_secs"], color="gray", ls="--", lw=1, label="end of warm-up")
    ax.set_xlabel("time since load start (s)")
    ax.set_ylabel("MB, sum over httpd processes")
    ax.set_title("mod_h2 httpd memory under h2load -c 200 -m 50")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    ax = axes[1]
    series = {}
    for s in samples:
        for p in s["procs"]:
            series.setdefault((p["role"], p["pid"]), []).append((s["t"], p["rss_kb"] / 1024.0))
    for (role, pid), pts in sorted(series.items()):
        ax.plot([x for x, _ in pts], [y for _, y in pts], marker=".", ms=2,
                label="%s %d" % (role, pid), ls="--" if role != "child" else "-")
    ax.axvline(res["warm_up_secs"], color="gray", ls="--", lw=1)
    ax.set_xlabel("time since load start (s)")
    ax.set_ylabel("RSS MB")
    ax.set_title("RSS per process")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=6, ncol=2, loc="lower right")
    fig.tight_layout()
    path = base + ".png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


# ---------------------------------------------------------------- main
def start_app_stack(inst):
    """The tests' private php-fpm (test/phpfpm.py: 5 children, socket, pid
    file and log under <run dir>/fpm/, scripts in <docroot>/fpm/) and the
    slow CGI, for the httpd instance inst (not started yet), whose config
    gets mod_proxy_fcgi's part. Returns the PhpFpm (stopped by stop_all
    on any exit)."""
    from phpfpm import PhpFpm
    from h2client import CGI_SLOW_READ
    fpm = PhpFpm(inst.sb.run_dir)
    fpm.start()
    run.STARTED.append(fpm)
    cgi = inst.sb.path("cgi-bin", "slow_read.py")
    os.makedirs(os.path.dirname(cgi), exist_ok=True)
    with open(cgi, "w") as f:
        f.write("#!%s\n%s" % (inst.sb.cgi_python(), CGI_SLOW_READ))
    os.chmod(cgi, 0o755)
    inst.extra_conf += "\n" + fpm.httpd_conf()
    return fpm


def soak(cfg, res):
    inst = run.HttpdInstance("soak", "ours", run.threads_conf(cfg.threads_per_child)
                             + ("\nLogLevel %s\n" % cfg.log_level if cfg.log_level else ""))
    fpm = start_app_stack(inst) if cfg.uploads else None
    log_offset = inst.sb.log_size()
    inst.start()
    log("started %s" % inst.sb.status())
    res.update({"http_port": inst.sb.http_port, "https_port": inst.sb.https_port,
                "mpm": ("event, ThreadsPerChild %d, MaxRequestWorkers %d" % (
                    cfg.threads_per_child, 4 * cfg.threads_per_child)
                    if cfg.threads_per_child else
                    "StartServers 1, ThreadsPerChild 25, MaxRequestWorkers 100")})
    paths = uri_list(cfg.rare)
    res["uri_count"] = len(paths)
    res["mix"] = mix_table(paths)
    loads = []
    timing = ["-D", "%ds" % cfg.duration, "--warm-up-time", "%ds" % cfg.warm_up]
    for name, tls, args in (("h2c", False, ["-c", "200", "-m", "50", "-t", "2"]),
                            ("h2 (TLS)", True, ["-c", str(cfg.tls_clients), "-m", "10",
                                                "-t", "1"])):
        if tls and not cfg.tls_clients:
            continue
        key = "tls" if tls else "h2c"
        upath = os.path.join(inst.sb.run_dir, "uris-%s.txt" % key)
        with open(upath, "w") as f:
            f.write("".join(inst.url("/" + p, tls=tls) + "\n" for p in paths))
        loads.append(H2loadProc(name, args + timing + ["-i", upath],
                                os.path.join(inst.sb.run_dir, "h2load-%s.txt" % key)))
    for i, (name, uris, size, clients, streams, rps) in enumerate(UPLOADS if cfg.uploads
                                                                  else []):
        key = "upload%d" % i
        body = os.path.join(inst.sb.run_dir, "%s.bin" % key)
        with open(body, "wb") as f:
            f.write(os.urandom(size))
        upath = os.path.join(inst.sb.run_dir, "uris-%s.txt" % key)
        with open(upath, "w") as f:
            f.write("".join(inst.url("/" + u) + "\n" for u in uris))
        loads.append(H2loadProc(name, ["-c", str(clients), "-m", str(streams), "-t", "1",
                                       "--rps", str(rps), "-d", body] + timing
                                + ["-i", upath],
                                os.path.join(inst.sb.run_dir, "h2load-%s.txt" % key)))
    total = cfg.warm_up + cfg.duration
    hard_deadline = None
    res["samples"] = samples = []
    try:
        t0 = time.time()
        for h in loads:
            h.start()
            log("h2load %s: %s" % (h.name, " ".join(h.cmd[1:])))
        hard_deadline = t0 + total + 120
        # every interval, at the end of the warm-up, and 2 s before h2load
        # ends; details (Pss, mappings) at those two and once a minute
        detail_times = set(range(0, total, 60)) | {cfg.warm_up, total - 2}
        times = sorted(set(range(0, total, cfg.interval)) | detail_times)
        i = 0
        while any(h.running() for h in loads):
            now = time.time()
            if now > hard_deadline:
                log("h2load still running %ds after its end: stopping it" % (now - t0 - total))
                break
            if i < len(times) and now - t0 >= times[i]:
                # one sample for all points due (a late one must not be
                # followed by a burst of catch-up samples)
                due = [x for x in times[i:] if now - t0 >= x]
                i += len(due)
                t = now - t0
                s = sample(inst, t, "warm-up" if t < cfg.warm_up - 1 else "soak", loads,
                           detail=any(x in detail_times for x in due))
                samples.append(s)
                log("t=%4.0f %-7s procs %d threads %d RSS %s MB Pss %s MB anon %s MB "
                    "load %s" % (t, s["phase"], s["n_procs"], s["threads"],
                                 mb(s["rss_kb"]), mb_of(s, "pss_kb"),
                                 mb(s["rss_anon_kb"]), s["loadavg"]))
                continue
            time.sleep(0.2)
    finally:
        for h in loads:
            h.stop()
        res["h2load"] = [h.result() for h in loads]
    for r in res["h2load"]:
        log("h2load %s: %s" % (r["name"], r.get("error") or
                               "%d requests, %d failed, %d errored, %d timeout, %d non-2xx, "
                               "%.0f req/s" % (r["total"], r["failed"], r["errored"],
                                               r["timeout"], r["non2xx"], r["rps"])))
    # idle: KeepAliveTimeout (5 s) closes the connections
    time.sleep(7)
    samples.append(sample(inst, time.time() - t0, "idle after", loads))
    res["error_log"] = scan_error_log(inst.sb.log_since(log_offset))
    inst.stop()
    if fpm is not None:
        res["fpm_log_problems"] = fpm.log_problems()[:20]
        fpm.stop()
        run.STARTED.remove(fpm)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10 s warm-up, 60 s soak")
    ap.add_argument("--warm-up", type=int, help="warm-up seconds (default 60)")
    ap.add_argument("--duration", type=int, help="soak seconds after the warm-up (default 600)")
    ap.add_argument("--interval", type=int, default=5, help="memory sample interval (s)")
    ap.add_argument("--tls-clients", type=int, default=20,
                    help="connections of the parallel TLS h2load (-m 10 -t 1); 0 = none")
    ap.add_argument("--rare", type=int, default=10000,
                    help="one CGI request and one 10 MB request per RARE URIs (0 = none)")
    ap.add_argument("--port-base", type=int, default=run.PORTS["soak"],
                    help="http port = base+80, https = base+443 (default %(default)s)")
    ap.add_argument("--no-uploads", dest="uploads", action="store_false",
                    help="leave out the uploads to php-fpm and the slow consumers")
    ap.add_argument("--threads-per-child", type=int, default=0,
                    help="event MPM ThreadsPerChild (4 x this workers); default: the "
                         "sandbox's 25 (100 workers)")
    ap.add_argument("--log-level", default="",
                    help="LogLevel for the run (default: warn), e.g. 'warn h2:debug' to see "
                         "why connections end")
    ap.add_argument("--no-setup", action="store_true", help="skip the install step")
    ap.add_argument("--tag", default="", help="suffix for the result file names")
    ap.add_argument("--report", metavar="JSON",
                    help="only rewrite the .md/.png (and JSON) of an earlier run")
    cfg = ap.parse_args()
    run.PORTS["soak"] = cfg.port_base
    if cfg.report:
        with open(cfg.report) as f:
            res = json.load(f)
        an = write_report(res)
        return 0 if an["verdict"] == "PASS" else 1
    cfg.warm_up = cfg.warm_up if cfg.warm_up is not None else (10 if cfg.quick else 60)
    cfg.duration = cfg.duration if cfg.duration is not None else (60 if cfg.quick else 600)
    if not cfg.no_setup:
        run.ensure_tools(False, False)
    os.makedirs(RUN_DIR, exist_ok=True)
    os.makedirs(RESULTS_DIR, exist_ok=True)

    def on_signal(signum, frame):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_signal)

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + "-soak" + (
        "-" + cfg.tag if cfg.tag else "") + ("-quick" if cfg.quick else "")
    res = dict(run.run_info(stamp), warm_up_secs=cfg.warm_up, duration_secs=cfg.duration,
               interval_secs=cfg.interval, rare_every=cfg.rare, tls_clients=cfg.tls_clients,
               threads_per_child=cfg.threads_per_child, quick=cfg.quick, samples=[],
               h2load=[])
    t0 = time.time()
    try:
        soak(cfg, res)
    except KeyboardInterrupt:
        log("interrupted")
        res["interrupted"] = True
    except run.SandboxError as e:
        log("sandbox: %s" % e)
        res["error"] = str(e)
        res["interrupted"] = True
    finally:
        run.stop_all()
    res["elapsed_secs"] = round(time.time() - t0, 1)
    res["machine"]["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
    an = write_report(res)
    return 0 if an["verdict"] == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
