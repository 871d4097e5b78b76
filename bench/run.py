#!/usr/bin/env python3
"""mod_h2 benchmark suite: mod_h2 vs Debian's mod_http2 vs HTTP/1.1 (and nghttpd).

    python3 bench/run.py                 # full run (~15 min on 2 cores)
    python3 bench/run.py --quick         # smoke test (~3 min, 1 round, fewer points)
    python3 bench/run.py --scenarios 1,3 # only some scenarios
    make -C bench [quick]

Scenarios (see bench/README.md):
  1  10 MB file throughput (MB/s): h2c/h2/HTTP/1.1, EnableSendfile off/on,
     TLS warm-up on/off
  2  small files, req/s against parallel streams (-m), 100 connections;
     653 bytes with nghttpd and HTTP/1.1 pipelining as references, and the
     1k..10k "wave"; server CPU time and context switches per request
  3  memory per idle h2c connection (500 connections), before and after
     one request on each
  4  instructions per request (callgrind, httpd -X), syscalls per request
     (strace -c -f)

Every httpd is a sandbox instance (sandbox/sandbox.py) on 127.0.0.1 with
its own run dir under bench/run/ and its own ports (46xxx); everything the
script starts is stopped again by pid / the sandbox's stop().
"""

import argparse
import datetime
import json
import os
import pwd
import re
import select
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCH_DIR)
RUN_DIR = os.path.join(BENCH_DIR, "run")
RESULTS_DIR = os.path.join(BENCH_DIR, "results")
sys.path.insert(0, os.path.join(REPO_DIR, "sandbox"))

from sandbox import Sandbox, SandboxError, SIZED_FILES, HTTPD_BIN, port_open  # noqa: E402

# port bases: http = base+80, https = base+443; extra vhosts on base+81
# (EnableSendfile on) and base+444 (H2TLSWarmUpSize 0)
PORTS = {"ours": 46000, "stock": 46200, "nghttpd": 46400,
         "cg-ours": 46600, "cg-stock": 46700,
         "soak": 47000}     # bench/soak.py

H2LOAD = shutil.which("h2load") or "/usr/bin/h2load"
NGHTTPD = shutil.which("nghttpd") or "/usr/sbin/nghttpd"

STARTED = []        # objects with .stop(), stopped in reverse order at exit


def log(msg):
    sys.stderr.write("[bench %s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


# ---------------------------------------------------------------- setup
def ensure_tools(need_valgrind, need_strace):
    """The bench's own setup step: install what is missing."""
    pkgs = []
    if not os.access(H2LOAD, os.X_OK):
        pkgs.append("nghttp2-client")
    if not os.access(NGHTTPD, os.X_OK):
        pkgs.append("nghttp2-server")
    if need_valgrind and not shutil.which("valgrind"):
        pkgs.append("valgrind")
    if need_strace and not shutil.which("strace"):
        pkgs.append("strace")
    if pkgs:
        log("installing %s" % " ".join(pkgs))
        subprocess.run(["apt-get", "install", "-y", "-q"] + pkgs,
                       stdout=subprocess.DEVNULL, timeout=600)
    for mod, pip_name in (("h2", "h2"), ("matplotlib", "matplotlib")):
        try:
            __import__(mod)
        except ImportError:
            log("pip installing %s" % pip_name)
            subprocess.run([sys.executable, "-m", "pip", "install", "-q", pip_name],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=600)


# ---------------------------------------------------------------- servers
class BenchSandbox(Sandbox):
    """The sandbox httpd with two extra vhosts and without per-request
    logging (the access log and the module's info level would otherwise be
    part of every number; nghttpd does not log either)."""

    extra_conf = ""

    def httpd_conf(self):
        text = super().httpd_conf()
        text = re.sub(r"(?m)^CustomLog .*$", "# CustomLog disabled by bench/run.py", text)
        text = re.sub(r"(?m)^LogLevel .*$", "LogLevel warn", text)
        return text

    def bench_setup(self, extra=""):
        r = self.run_dir
        sf_port, nowarm_port = self.http_port + 1, self.https_port + 1
        warm = "H2TLSWarmUpSize 0" if self.module != "none" else ""
        conf = """\
EnableSendfile off
Listen 127.0.0.1:{sf}
Listen 127.0.0.1:{nw}
<VirtualHost 127.0.0.1:{sf}>
    ServerName {sname}
    Protocols {p1}
    DocumentRoot "{r}/htdocs"
    EnableSendfile on
</VirtualHost>
<VirtualHost 127.0.0.1:{nw}>
    ServerName {sname}
    Protocols {p2}
    SSLEngine on
    SSLCertificateFile "{r}/ca/server.pem"
    SSLCertificateKeyFile "{r}/ca/server.key"
    DocumentRoot "{r}/htdocs"
    {warm}
</VirtualHost>
{extra}
""".format(sf=sf_port, nw=nowarm_port, sname=self.server_name, r=r, warm=warm,
           p1="h2c http/1.1" if self.module != "none" else "http/1.1",
           p2="h2 http/1.1" if self.module != "none" else "http/1.1", extra=extra)
        self.setup()
        self.clear_conf()
        self.add_conf("bench", conf)

    def children(self):
        return self.child_pids()


class HttpdInstance:
    def __init__(self, name, module, extra_conf=""):
        self.name = name
        self.sb = BenchSandbox(run_dir=os.path.join(RUN_DIR, name),
                               port_base=PORTS[name], module=module, mpm="event")
        self.extra_conf = extra_conf

    def start(self):
        if self.sb.is_running():
            self.sb.stop()
        for p in (self.sb.http_port + 1, self.sb.https_port + 1):
            if port_open(p):
                raise SandboxError("port %d already in use" % p)
        self.sb.bench_setup(self.extra_conf)
        STARTED.append(self)
        for attempt in range(21):
            try:
                self.sb.start()
                break
            except SandboxError as e:
                # our ports lie in the ephemeral range: a client socket of
                # an earlier run (500 of them in scenario 3) may hold one
                # until its TIME_WAIT ends, 60 s at most
                if attempt == 20 or "in use" not in str(e):
                    raise
                log("start %s: port busy, retrying" % self.name)
                time.sleep(3)
        for p in (self.sb.http_port + 1, self.sb.https_port + 1):
            wait_port(p, 10)

    def stop(self):
        try:
            self.sb.stop()
        except SandboxError as e:
            log("stop %s: %s" % (self.name, e))
        if self in STARTED:
            STARTED.remove(self)

    def pids(self):
        return self.sb.children()

    @property
    def docroot(self):
        return self.sb.docroot

    def url(self, path, tls=False, variant=""):
        if tls:
            port = self.sb.https_port + (1 if variant == "nowarm" else 0)
            return "https://127.0.0.1:%d%s" % (port, path)
        port = self.sb.http_port + (1 if variant == "sendfile" else 0)
        return "http://127.0.0.1:%d%s" % (port, path)


class NghttpdInstance:
    name = "nghttpd"

    def __init__(self, docroot):
        self.docroot = docroot
        self.port = PORTS["nghttpd"] + 80
        self.proc = None

    def start(self):
        if port_open(self.port):
            raise SandboxError("port %d already in use" % self.port)
        self.proc = subprocess.Popen([NGHTTPD, "--no-tls", "-d", self.docroot,
                                      str(self.port)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        STARTED.append(self)
        wait_port(self.port, 10)

    def stop(self):
        stop_process(self)

    def pids(self):
        return [self.proc.pid] if self.proc else []

    def url(self, path, tls=False, variant=""):
        return "http://127.0.0.1:%d%s" % (self.port, path)


def stop_process(obj):
    """Stop obj.proc (a Popen we started): SIGTERM, SIGKILL after 10 s."""
    if obj.proc and obj.proc.poll() is None:
        obj.proc.terminate()
        try:
            obj.proc.wait(10)
        except subprocess.TimeoutExpired:
            obj.proc.kill()
            obj.proc.wait(5)
    if obj in STARTED:
        STARTED.remove(obj)


def threads_conf(threads_per_child):
    """Event MPM settings for ThreadsPerChild N and 4 x N workers ("" for
    the sandbox's 4 x 25)."""
    if not threads_per_child:
        return ""
    return ("<IfModule mpm_event_module>\nThreadLimit {t}\nThreadsPerChild {t}\n"
            "MaxRequestWorkers {w}\n</IfModule>\n").format(
                t=threads_per_child, w=4 * threads_per_child)


def wait_port(port, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if port_open(port):
            return
        time.sleep(0.1)
    raise SandboxError("nothing listens on port %d after %ds" % (port, timeout))


def stop_all():
    for obj in list(reversed(STARTED)):
        try:
            obj.stop()
        except Exception as e:  # keep stopping the others
            log("stopping %s failed: %s" % (getattr(obj, "name", obj), e))


# ---------------------------------------------------------------- /proc
def proc_counters(pids, reaped=False):
    """CPU seconds (whole process, incl. exited threads) and context
    switches (summed over the live threads) of the given processes.
    reaped: add the CPU of their children that have exited and been
    waited for (cutime, cstime), so that a parent's total stays whole
    when its MPM or pool retires a child during the measurement."""
    cpu = 0.0
    vol = nonvol = 0
    tck = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / tck
            if reaped:
                cpu += (int(fields[13]) + int(fields[14])) / tck
            for tid in os.listdir("/proc/%d/task" % pid):
                with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                    for line in f:
                        if line.startswith("voluntary_ctxt_switches"):
                            vol += int(line.split()[1])
                        elif line.startswith("nonvoluntary_ctxt_switches"):
                            nonvol += int(line.split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return {"cpu": cpu, "vcsw": vol, "nvcsw": nonvol}


def proc_memory(pid, pss=True):
    """Memory of one process in kB from /proc/<pid>/status and
    smaps_rollup (VmRSS, its anon/file/shmem parts, VmData, Pss, Pss_Anon,
    threads); None if the process is gone. pss=False leaves out
    smaps_rollup: it walks the page tables under the process's memory map
    lock, which stalls the process's page faults and mmap calls meanwhile
    (status only reads counters)."""
    keys = {"VmRSS:": "rss_kb", "RssAnon:": "rss_anon_kb", "RssFile:": "rss_file_kb",
            "RssShmem:": "rss_shmem_kb", "VmData:": "vm_data_kb", "Threads:": "threads"}
    res = {"pid": pid}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                k = line.split(None, 1)[0] if line.strip() else ""
                if k in keys:
                    res[keys[k]] = int(line.split()[1])
        if pss:
            with open("/proc/%d/smaps_rollup" % pid) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        res["pss_kb"] = int(line.split()[1])
                    elif line.startswith("Pss_Anon:"):
                        res["pss_anon_kb"] = int(line.split()[1])
        if "rss_kb" not in res:
            return None      # a zombie: its memory is gone already
    except (OSError, ValueError, IndexError):
        return None
    return res


def memory_of(pids):
    rss = pss = threads = 0
    for pid in pids:
        m = proc_memory(pid)
        if m is None:
            continue
        rss += m.get("rss_kb", 0)
        pss += m.get("pss_kb", 0)
        threads += m.get("threads", 0)
    return {"rss_kb": rss, "pss_kb": pss, "procs": len(pids), "threads": threads}


# ---------------------------------------------------------------- h2load
UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}


def parse_duration(s):
    m = re.match(r"([\d.]+)(us|ms|s)", s)
    v = float(m.group(1))
    return v / {"us": 1e6, "ms": 1e3, "s": 1}[m.group(2)]


def h2load(url, n, c, m, t=2, h1=False, timeout=60, extra=()):
    cmd = [H2LOAD, "-n", str(n), "-c", str(c), "-m", str(m), "-t", str(t),
           "-N", "10s"] + (["--h1"] if h1 else []) + list(extra) + [url]
    res = {"cmd": " ".join(cmd[1:]), "n": n}
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout)
        out = p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        res["error"] = "h2load killed after %ds" % timeout
        out = (e.stdout or b"").decode(errors="replace")
        res["output_tail"] = out[-500:]
        return res
    if parse_h2load(out, res, p.returncode):
        res["missing"] = n - res["s2xx"]
    return res


def h2load_measured(srv, url, **kw):
    """h2load (same arguments), plus the server's CPU microseconds and
    context switches per successful request (/proc, srv.pids())."""
    before = proc_counters(srv.pids())
    r = h2load(url, **kw)
    after = proc_counters(srv.pids())
    if r.get("s2xx"):
        r["server_cpu_us_per_req"] = (after["cpu"] - before["cpu"]) * 1e6 / r["s2xx"]
        r["ctxsw_per_req"] = ((after["vcsw"] + after["nvcsw"])
                              - (before["vcsw"] + before["nvcsw"])) / r["s2xx"]
    return r


def parse_h2load(out, res, returncode=0):
    """Fill `res` from h2load's summary; False (and res["error"]) if the
    output has no summary."""
    mm = re.search(r"finished in (\S+), ([\d.]+) req/s", out)
    mr = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                   r"(\d+) failed, (\d+) errored, (\d+) timeout", out)
    ms = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
    if not (mm and mr and ms):
        res["error"] = "unparsable h2load output (rc %d)" % returncode
        res["output_tail"] = out[-500:]
        return False
    res["secs"] = parse_duration(mm.group(1))
    res["rps"] = float(mm.group(2))
    (res["total"], res["started"], res["done"], res["succeeded"], res["failed"],
     res["errored"], res["timeout"]) = [int(x) for x in mr.groups()]
    res["s2xx"] = int(ms.group(1))
    res["non2xx"] = sum(int(x) for x in ms.groups()[1:])
    mt = re.search(r"traffic: [\d.]+\w+ \((\d+)\) total", out)
    if mt:
        res["traffic_bytes"] = int(mt.group(1))
    mp = re.search(r"Application protocol: (\S+)", out)
    res["proto"] = mp.group(1) if mp else None
    return True


def summary(values):
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals),
            "n": len(vals), "values": vals}


def fmt(s, digits=0, unit=""):
    if not s:
        return "n/a"
    f = "%%.%df" % digits
    if s["n"] == 1:
        return (f % s["median"]) + unit
    return "%s%s (%s–%s)" % (f % s["median"], unit, f % s["min"], f % s["max"])


def ratio(a, b, digits=2):
    if not a or not b or not b["median"]:
        return "n/a"
    return ("%%.%df" % digits) % (a["median"] / b["median"])


def paired(a, b, key="mbps"):
    """"median ratio | ahead/rounds" of a over b, round by round."""
    q = [x[key] / y[key] for x, y in zip(a["runs"], b["runs"])
         if x.get(key) is not None and y.get(key)]
    if not q:
        return "n/a | n/a"
    return "%.2f | %d/%d" % (statistics.median(q), sum(1 for v in q if v > 1), len(q))


# ---------------------------------------------------------------- scenario 1
def scenario1(cfg, servers, out):
    ours, stock = servers["ours"], servers["stock"]
    size = SIZED_FILES["10m.txt"]
    path = "/10m.txt"
    cases = [
        # key, label, server, tls, variant, h1
        ("ours-h2c", "mod_h2 h2c", ours, False, "", False),
        ("ours-h2c-sf", "mod_h2 h2c", ours, False, "sendfile", False),
        ("ours-h2", "mod_h2 h2 (TLS)", ours, True, "", False),
        ("ours-h2-nowarm", "mod_h2 h2 (TLS)", ours, True, "nowarm", False),
        ("stock-h2c", "mod_http2 h2c", stock, False, "", False),
        ("stock-h2c-sf", "mod_http2 h2c", stock, False, "sendfile", False),
        ("stock-h2", "mod_http2 h2 (TLS)", stock, True, "", False),
        ("stock-h2-nowarm", "mod_http2 h2 (TLS)", stock, True, "nowarm", False),
        ("h1-http", "HTTP/1.1 http", ours, False, "", True),
        ("h1-http-sf", "HTTP/1.1 http", ours, False, "sendfile", True),
        ("h1-https", "HTTP/1.1 https", ours, True, "", True),
    ]
    runs = {k: [] for k, *_ in cases}
    for rnd in range(cfg.rounds):
        order = cases[rnd % len(cases):] + cases[:rnd % len(cases)]
        for key, label, srv, tls, variant, h1 in order:
            before = proc_counters(srv.pids())
            r = h2load(srv.url(path, tls, variant), n=cfg.n_10m, c=8, m=1, t=2, h1=h1,
                       timeout=120)
            after = proc_counters(srv.pids())
            if "error" not in r:
                r["mbps"] = r["s2xx"] * size / r["secs"] / (1 << 20)
                if r["s2xx"]:
                    # less noisy than MB/s on a shared machine: the work
                    # one response costs the server, whoever else runs
                    r["server_cpu_ms_per_resp"] = (after["cpu"] - before["cpu"]) * 1e3 / r["s2xx"]
            runs[key].append(r)
            log("s1 round %d %-16s %s" % (rnd + 1, key, "%.0f MB/s (%s missing)" % (
                r["mbps"], r["missing"]) if "mbps" in r else r.get("error")))
    res = {}
    for key, label, srv, tls, variant, h1 in cases:
        res[key] = {"label": label, "tls": tls, "h1": h1,
                    "sendfile": variant == "sendfile",
                    "warmup": (variant != "nowarm") if tls else None,
                    "mbps": summary([r.get("mbps") for r in runs[key]]),
                    "server_cpu_ms_per_resp": summary([r.get("server_cpu_ms_per_resp")
                                                       for r in runs[key]]),
                    "failed": sum(r.get("failed", 0) for r in runs[key]),
                    "missing": sum(r.get("missing", r.get("n", 0)) for r in runs[key]),
                    "runs": runs[key]}
    out["scenario1"] = {"cmd": "h2load -c 8 -t 2 -m 1 -n %d <url>/10m.txt" % cfg.n_10m,
                        "results": res}


def scenario1_md(s1):
    r = s1["results"]
    lines = ["## Scenario 1: 10 MB file, `%s`" % s1["cmd"], "",
             "MB/s = MiB of response bodies per second; median (min–max) over rounds; "
             "ratios of medians.", "",
             "| case | mod_h2 MB/s | mod_http2 MB/s | HTTP/1.1 MB/s | mod_h2/HTTP1.1 "
             "| mod_h2/mod_http2 | lost reqs (h2/stock/h1) |",
             "|---|---|---|---|---|---|---|"]
    rows = [("h2c, EnableSendfile off", "ours-h2c", "stock-h2c", "h1-http"),
            ("h2c, EnableSendfile on", "ours-h2c-sf", "stock-h2c-sf", "h1-http-sf"),
            ("h2 (TLS), warm-up on (default)", "ours-h2", "stock-h2", "h1-https"),
            ("h2 (TLS), H2TLSWarmUpSize 0", "ours-h2-nowarm", "stock-h2-nowarm", "h1-https")]
    for label, o, s, h in rows:
        lines.append("| %s | %s | %s | %s | %s | %s | %d/%d/%d |" % (
            label, fmt(r[o]["mbps"]), fmt(r[s]["mbps"]), fmt(r[h]["mbps"]),
            ratio(r[o]["mbps"], r[h]["mbps"]), ratio(r[o]["mbps"], r[s]["mbps"]),
            r[o]["missing"], r[s]["missing"], r[h]["missing"]))
    lines.append("")
    lines.append("HTTP/1.1 rows use the mod_h2 httpd (`h2load --h1`); the TLS rows compare "
                 "against HTTP/1.1 over TLS (no sendfile with mod_ssl).")
    lines += ["", "Per round: each round measures every case back to back, so the ratio "
              "within a round is less exposed to the machine's load swings than the ratio "
              "of medians. Median of the rounds' MB/s ratios, and in how many rounds "
              "mod_h2 was ahead:", "",
              "| case | mod_h2/HTTP1.1 | ahead | mod_h2/mod_http2 | ahead |",
              "|---|---|---|---|---|"]
    for label, o, s, h in rows:
        lines.append("| %s | %s | %s |" % (label, paired(r[o], r[h]), paired(r[o], r[s])))
    lines += ["", "Server CPU per 10 MB response (user+system ms of the server processes / "
              "responses; h2load shares the CPUs, so MB/s also depends on what it gets):", "",
              "| case | mod_h2 ms | mod_http2 ms | HTTP/1.1 ms | mod_h2/HTTP1.1 | mod_h2/mod_http2 |",
              "|---|---|---|---|---|---|"]
    for label, o, s, h in rows:
        c = [r[k].get("server_cpu_ms_per_resp") for k in (o, s, h)]
        lines.append("| %s | %s | %s | %s | %s | %s |" % (
            label, fmt(c[0], 2), fmt(c[1], 2), fmt(c[2], 2), ratio(c[0], c[2]),
            ratio(c[0], c[1])))
    return "\n".join(lines)


# ---------------------------------------------------------------- scenario 2
class RateEstimator:
    def __init__(self, target_secs, default=8000.0):
        self.target = target_secs
        self.est = {}
        self.default = default

    def n_for(self, key, base_key, c, m):
        rate = self.est.get(key) or self.est.get(base_key) or self.default
        n = int(rate * self.target)
        n = max(n, 2 * c * m, 2000)
        return int(min(n, 400000) // c * c)

    def update(self, key, base_key, r):
        if r.get("rps"):
            self.est[key] = r["rps"]
            self.est.setdefault(base_key, r["rps"])


def scenario2(cfg, servers, out):
    ours, stock, ng = servers["ours"], servers["stock"], servers.get("nghttpd")
    c = 100
    cases = [("ours", "mod_h2 h2c", ours, False),
             ("stock", "mod_http2 h2c", stock, False),
             ("h1", "HTTP/1.1 (pipelined)", ours, True)]
    if ng:
        cases.append(("nghttpd", "nghttpd h2c", ng, False))
    points = [("653b.txt", cases)] + [(f, cases[:2]) for f in cfg.wave_files]
    est = RateEstimator(cfg.target_secs)
    # warm-up: let the MPM spawn its children, fill caches
    for key, label, srv, h1 in cases:
        r = h2load(srv.url("/653b.txt"), n=20000, c=c, m=10, h1=h1, timeout=60)
        est.update((key, "653b.txt", 10), key, r)
        log("s2 warm-up %-8s %s" % (key, "%.0f req/s" % r["rps"] if "rps" in r
                                     else r.get("error")))
    runs = {}
    for rnd in range(cfg.rounds):
        for fname, pcases in points:
            for m in cfg.m_values:
                k = rnd % len(pcases)
                for key, label, srv, h1 in pcases[k:] + pcases[:k]:
                    n = est.n_for((key, fname, m), key, c, m)
                    r = h2load_measured(srv, srv.url("/" + fname), n=n, c=c, m=m, h1=h1,
                                        timeout=max(30, int(cfg.target_secs * 12)))
                    est.update((key, fname, m), key, r)
                    runs.setdefault((key, fname, m), []).append(r)
                    log("s2 round %d %-8s %-9s -m %-3d -n %-6d %s" % (
                        rnd + 1, key, fname, m, n,
                        "%.0f req/s, %d failed, %d missing" % (r["rps"], r["failed"], r["missing"])
                        if "rps" in r else r.get("error")))
    res = []
    for (key, fname, m), rr in sorted(runs.items()):
        res.append({"config": key, "file": fname, "m": m,
                    "label": dict((k, l) for k, l, *_ in cases)[key],
                    "rps": summary([r.get("rps") for r in rr]),
                    "failed": sum(r.get("failed", 0) for r in rr),
                    "errored": sum(r.get("errored", 0) for r in rr),
                    "missing": sum(r.get("missing", r.get("n", 0)) for r in rr),
                    "requests": sum(r.get("n", 0) for r in rr),
                    "server_cpu_us_per_req": summary([r.get("server_cpu_us_per_req") for r in rr]),
                    "ctxsw_per_req": summary([r.get("ctxsw_per_req") for r in rr]),
                    "runs": rr})
    out["scenario2"] = {"c": c, "t": 2, "m_values": cfg.m_values,
                        "files": [p[0] for p in points], "target_secs": cfg.target_secs,
                        "results": res}


def s2_get(s2, key, fname, m):
    for r in s2["results"]:
        if r["config"] == key and r["file"] == fname and r["m"] == m:
            return r
    return None


def scenario2_md(s2):
    ms = s2["m_values"]
    keys = [("ours", "mod_h2"), ("stock", "mod_http2"), ("h1", "HTTP/1.1 pipelined"),
            ("nghttpd", "nghttpd")]
    keys = [k for k in keys if s2_get(s2, k[0], "653b.txt", ms[0])]
    L = ["## Scenario 2: small files, `h2load -c 100 -t 2 -m M`, req/s", "",
         "653-byte file; median (min–max) over rounds. For HTTP/1.1, -m is the "
         "pipelining depth. `lost` = requests without a 2xx response (failed + errored + "
         "not done), summed over all rounds.", "",
         "| -m | " + " | ".join(l for _, l in keys) + " | mod_h2/mod_http2 | mod_h2/nghttpd |",
         "|---|" + "---|" * (len(keys) + 2)]
    for m in ms:
        cells = []
        for k, _ in keys:
            r = s2_get(s2, k, "653b.txt", m)
            cells.append("%s%s" % (fmt(r["rps"]) if r else "n/a",
                                   (" **lost %d/%d**" % (r["missing"], r["requests"]))
                                   if r and r["missing"] else ""))
        o, s, n = (s2_get(s2, k, "653b.txt", m) for k in ("ours", "stock", "nghttpd"))
        L.append("| %d | %s | %s | %s |" % (m, " | ".join(cells),
                                           ratio(o and o["rps"], s and s["rps"]),
                                           ratio(o and o["rps"], n and n["rps"])))
    L += ["", "### Server CPU and context switches per request (653 bytes)", "",
          "CPU µs = user+system time of the server processes / 2xx responses; "
          "ctx sw = voluntary+involuntary context switches of the server threads "
          "(threads alive at the end of a run) / 2xx responses.", "",
          "| -m | " + " | ".join("%s CPU µs | %s ctx sw" % (l, l) for _, l in keys) + " |",
          "|---|" + "---|---|" * len(keys)]
    for m in ms:
        cells = []
        for k, _ in keys:
            r = s2_get(s2, k, "653b.txt", m)
            cells.append("%s | %s" % (fmt(r and r["server_cpu_us_per_req"], 1),
                                      fmt(r and r["ctxsw_per_req"], 2)))
        L.append("| %d | %s |" % (m, " | ".join(cells)))
    files = [f for f in s2["files"] if f != "653b.txt"]
    if files:
        L += ["", "### The wave: req/s by file size and -m (mod_h2 / mod_http2)", "",
              "| file | " + " | ".join("-m %d" % m for m in ms) + " |",
              "|---|" + "---|" * len(ms)]
        for f in ["653b.txt"] + files:
            cells = []
            for m in ms:
                o, s = s2_get(s2, "ours", f, m), s2_get(s2, "stock", f, m)
                lost = ""
                if (o and o["missing"]) or (s and s["missing"]):
                    lost = " (lost %d/%d)" % (o["missing"] if o else -1, s["missing"] if s else -1)
                cells.append("%s / %s = %s%s" % (
                    fmt(o and o["rps"]), fmt(s and s["rps"]),
                    ratio(o and o["rps"], s and s["rps"]), lost))
            L.append("| %s | %s |" % (f, " | ".join(cells)))
    return "\n".join(L)


# ---------------------------------------------------------------- scenario 3
def _h2_connections(port, n, timeout, log_prefix):
    import h2.config
    import h2.connection
    import h2.events
    conns = []
    t0 = time.time()
    for i in range(n):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError as e:
            log("%s connect %d failed: %s" % (log_prefix, i, e))
            break
        s.setblocking(False)
        c = h2.connection.H2Connection(h2.config.H2Configuration(
            client_side=True, header_encoding="utf-8"))
        c.initiate_connection()
        s.sendall(c.data_to_send())
        conns.append({"sock": s, "h2": c, "settings": False, "done": False,
                      "closed": False})
    pump(conns, lambda x: x["settings"] or x["closed"], timeout - (time.time() - t0))
    return conns


def pump(conns, finished, timeout):
    import h2.events
    import h2.exceptions
    deadline = time.time() + max(timeout, 1)
    by_fd = {x["sock"].fileno(): x for x in conns if not x["closed"]}
    while time.time() < deadline:
        pending = [x for x in by_fd.values() if not finished(x)]
        if not pending:
            break
        rl, _, _ = select.select([x["sock"] for x in pending][:1000], [], [], 0.2)
        for s in rl:
            x = by_fd[s.fileno()]
            try:
                data = s.recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if not data:
                x["closed"] = True
                continue
            try:
                events = x["h2"].receive_data(data)
            except h2.exceptions.ProtocolError:
                x["closed"] = True
                continue
            for ev in events:
                if isinstance(ev, h2.events.RemoteSettingsChanged):
                    x["settings"] = True
                elif isinstance(ev, h2.events.StreamEnded):
                    x["done"] = True
                elif isinstance(ev, h2.events.ConnectionTerminated):
                    x["closed"] = True
                elif isinstance(ev, h2.events.DataReceived):
                    x["h2"].acknowledge_received_data(ev.flow_controlled_length,
                                                      ev.stream_id)
            d = x["h2"].data_to_send()
            if d:
                try:
                    s.sendall(d)
                except OSError:
                    x["closed"] = True


def scenario3(cfg, out):
    nconn = cfg.idle_conns
    # idle connections must outlive the measurement: raise the keep-alive
    # timeout; the MPM may need more room than the sandbox's 4x25 threads
    extra = ("KeepAliveTimeout 60\nTimeout 60\n"
             "<IfModule mpm_event_module>\n    StartServers 4\n"
             # the event MPM stops accepting at ThreadsPerChild + idle threads
             # x AsyncRequestWorkerFactor (2) connections per process, ~300
             # for 4x25: allow 500 idle connections without more threads
             "    AsyncRequestWorkerFactor 10\n</IfModule>\n")
    runs = {"ours": [], "stock": []}
    for rnd in range(cfg.rounds):
        order = ["ours", "stock"] if rnd % 2 == 0 else ["stock", "ours"]
        for key in order:
            inst = HttpdInstance(key, key, extra)
            inst.start()
            conns = []
            try:
                # a few requests so that lazily set up things exist before "before"
                h2load(inst.url("/653b.txt"), n=200, c=2, m=2, timeout=30)
                time.sleep(1.0)
                before = memory_of(inst.pids())
                conns = _h2_connections(inst.sb.http_port, nconn, 30, "s3 %s" % key)
                n_settings = sum(1 for x in conns if x["settings"] and not x["closed"])
                time.sleep(1.5)
                idle = memory_of(inst.pids())
                for x in conns:
                    if x["closed"]:
                        continue
                    x["h2"].send_headers(1, [(":method", "GET"), (":path", "/653b.txt"),
                                             (":scheme", "http"),
                                             (":authority", "127.0.0.1:%d" % inst.sb.http_port)],
                                         end_stream=True)
                    try:
                        x["sock"].sendall(x["h2"].data_to_send())
                    except OSError:
                        x["closed"] = True
                pump(conns, lambda x: x["done"] or x["closed"], 30)
                n_done = sum(1 for x in conns if x["done"])
                time.sleep(1.5)
                n_open = sum(1 for x in conns if not x["closed"])
                after = memory_of(inst.pids())
            finally:
                for x in conns:
                    try:
                        x["sock"].close()
                    except OSError:
                        pass
                inst.stop()
            r = {"before": before, "idle": idle, "after_request": after,
                 "connections": len(conns), "got_settings": n_settings,
                 "responses": n_done, "still_open": n_open}
            runs[key].append(r)
            log("s3 round %d %-5s conns %d settings %d responses %d open %d: "
                "RSS %d -> %d -> %d kB, Pss %d -> %d -> %d kB, procs %d->%d threads %d->%d" % (
                    rnd + 1, key, len(conns), n_settings, n_done, n_open,
                    before["rss_kb"], idle["rss_kb"], after["rss_kb"], before["pss_kb"],
                    idle["pss_kb"], after["pss_kb"], before["procs"], after["procs"],
                    before["threads"], after["threads"]))
    out["scenario3"] = {"connections": nconn, "extra_conf": extra,
                        "results": s3_summarize(runs)}



def s3_summarize(runs):
    """Per connection = growth / connections the server actually served
    (answered with SETTINGS for the idle phase, answered the request for
    the second phase): connections still in the listen backlog cost the
    server processes nothing."""
    res = {}
    for key, rr in runs.items():
        for r in rr:
            for ph, cnt in (("idle", r["got_settings"]), ("after_request", r["responses"])):
                for m in ("rss_kb", "pss_kb"):
                    r["%s_%s_per_conn" % (ph, m)] = (
                        (r[ph][m] - r["before"][m]) / cnt if cnt else None)
        res[key] = {k: summary([r[k] for r in rr]) for k in (
            "idle_rss_kb_per_conn", "idle_pss_kb_per_conn",
            "after_request_rss_kb_per_conn", "after_request_pss_kb_per_conn")}
        res[key]["responses"] = summary([r["responses"] for r in rr])
        res[key]["got_settings"] = summary([r["got_settings"] for r in rr])
        res[key]["still_open"] = summary([r.get("still_open") for r in rr])
        res[key]["runs"] = rr
    return res


def scenario3_md(s3):
    r = s3["results"]
    n = s3["connections"]
    L = ["## Scenario 3: memory per idle h2c connection (%d connections)" % n, "",
         "(sum over the httpd child processes after − before) / connections the "
         "server served (answered with SETTINGS, resp. answered the request), in KiB; "
         "median (min–max) over rounds. RSS double-counts pages shared between "
         "children, Pss splits them.", "",
         "| phase | mod_h2 RSS | mod_http2 RSS | mod_h2 Pss | mod_http2 Pss | Pss ratio |",
         "|---|---|---|---|---|---|"]
    for ph, label in (("idle", "preface+SETTINGS, idle"),
                      ("after_request", "after one request each, idle")):
        o, s = r["ours"], r["stock"]
        L.append("| %s | %s | %s | %s | %s | %s |" % (
            label, fmt(o[ph + "_rss_kb_per_conn"], 1), fmt(s[ph + "_rss_kb_per_conn"], 1),
            fmt(o[ph + "_pss_kb_per_conn"], 1), fmt(s[ph + "_pss_kb_per_conn"], 1),
            ratio(o[ph + "_pss_kb_per_conn"], s[ph + "_pss_kb_per_conn"])))
    L.append("")
    L.append("Connections answered with SETTINGS: mod_h2 %s, mod_http2 %s; requests "
             "answered: mod_h2 %s, mod_http2 %s; connections still open 1.5 s after "
             "the responses: mod_h2 %s, mod_http2 %s (of %d)." % (
                 fmt(r["ours"]["got_settings"]), fmt(r["stock"]["got_settings"]),
                 fmt(r["ours"]["responses"]), fmt(r["stock"]["responses"]),
                 fmt(r["ours"]["still_open"]), fmt(r["stock"]["still_open"]), n))
    if s3.get("extra_conf"):
        L.append("")
        L.append("Instance settings for this scenario: `%s`." % " ".join(
            s3["extra_conf"].split()))
    return "\n".join(L)


# ---------------------------------------------------------------- scenario 4
def callgrind_total(key, module, n, h1=False, tls=False):
    """Total Ir of `httpd -X` under callgrind for start + 200 warm-up
    requests + n requests (-c 10 -m 10, over TLS with tls) + graceful exit
    (TLS: the same 10 connections, so handshakes cost the same in both
    runs). callgrind_control
    cannot reach httpd once it has switched to www-data, so the cost per
    request is taken as the difference of two runs (n and 0)."""
    inst = HttpdInstance("cg-" + module, module)
    sb = inst.sb
    if sb.is_running():
        sb.stop()
    sb.bench_setup()
    outdir = sb.path("callgrind")
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    os.chmod(outdir, 0o777)
    cmd = ["valgrind", "--tool=callgrind", "--trace-children=no", "--vgdb=no",
           "--callgrind-out-file=%s/callgrind.out.%%p" % outdir,
           HTTPD_BIN, "-X", "-d", sb.run_dir, "-f", sb.conf_file]
    box = {}

    class P:
        name = "callgrind-" + key

        def stop(self_inner):
            # valgrind runs in a process group of its own (with the cgid
            # daemon httpd forks): signal that group, i.e. only what we started
            proc = box.get("proc")
            if proc is not None:
                for sig, wait in ((signal.SIGTERM, 60), (signal.SIGKILL, 10)):
                    if proc.poll() is not None:
                        break
                    try:
                        os.killpg(proc.pid, sig)
                    except OSError:
                        pass
                    try:
                        proc.wait(wait)
                    except subprocess.TimeoutExpired:
                        pass
                try:
                    os.killpg(proc.pid, signal.SIGTERM)   # the cgid daemon
                except OSError:
                    pass
            if self_inner in STARTED:
                STARTED.remove(self_inner)
    holder = P()
    STARTED.append(holder)
    res = {"key": key, "n": n}
    try:
        for attempt in range(4):
            try:
                os.unlink(sb.pid_file)   # a stale one makes httpd -X refuse to start
            except OSError:
                pass
            with open(os.path.join(outdir, "valgrind.log"), "w") as errf:
                box["proc"] = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=errf,
                                               stdin=subprocess.DEVNULL, start_new_session=True)
            deadline = time.time() + 120
            while time.time() < deadline and box["proc"].poll() is None \
                    and not port_open(sb.http_port):
                time.sleep(0.2)
            if port_open(sb.http_port) and box["proc"].poll() is None:
                break
            holder.stop()
            try:
                with open(os.path.join(outdir, "valgrind.log")) as f:
                    why = [l for l in f.read().splitlines() if not l.startswith("==")][-2:]
            except OSError:
                why = []
            log("callgrind %s: httpd -X did not come up (%s; %s), retrying" % (
                key, " | ".join(why), sb.log_tail(1).splitlines()[-1:]))
            time.sleep(3)
        else:
            res["error"] = "httpd -X under valgrind did not start"
            return res
        proc = box["proc"]
        # valgrind created its output file as root before httpd switched to
        # www-data; the final dump is written by the unprivileged process
        dump = os.path.join(outdir, "callgrind.out.%d" % proc.pid)
        try:
            pw = pwd.getpwnam("www-data")
            os.chown(dump, pw.pw_uid, pw.pw_gid)
        except (KeyError, OSError):
            pass
        url = inst.url("/653b.txt", tls=tls)
        w = h2load(url, n=200, c=10, m=10, h1=h1, timeout=120)
        if "error" in w or w["missing"]:
            res["error"] = "warm-up: %s" % (w.get("error") or "%d missing" % w["missing"])
            return res
        if tls and not n:
            n = 10      # one request per connection: its handshake, as in the run with n
        if n:
            r = h2load(url, n=n, c=10, m=10, h1=h1, timeout=600)
            res["h2load"] = r
            if not r.get("s2xx"):
                res["error"] = "no responses (%s)" % r.get("error")
                return res
            res["s2xx"] = r["s2xx"]
            res["missing"] = r["missing"]
        else:
            res["s2xx"] = 0
        holder.stop()
        total = None
        try:
            with open(dump) as f:
                for line in f:
                    if line.startswith("summary:") or line.startswith("totals:"):
                        total = int(line.split()[1])
        except OSError:
            pass
        if total is None:
            res["error"] = "no callgrind output %s" % dump
            return res
        res["ir"] = total
        res["dump"] = dump
    finally:
        holder.stop()
    return res


def strace_run(key, inst, n, h1, c=10, m=10, url=None):
    """System calls of inst's children (strace -c -f) during n requests of
    h2load -c c -m m on url (the 653-byte file by default)."""
    pids = inst.pids()
    args = ["strace", "-c", "-f", "-o", os.path.join(RUN_DIR, "strace-%s.txt" % key)]
    for p in pids:
        args += ["-p", str(p)]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    r = h2load(url or inst.url("/653b.txt"), n=n, c=c, m=m, h1=h1, timeout=300)
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
    res = {"key": key, "n": n, "h2load": r}
    try:
        with open(os.path.join(RUN_DIR, "strace-%s.txt" % key)) as f:
            text = f.read()
    except OSError:
        res["error"] = "no strace output"
        return res
    calls = {}
    total = 0
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 5 and re.match(r"^[\d.]+$", parts[0]) and parts[-1] != "total":
            try:
                ncalls = int(parts[3])
            except ValueError:
                continue
            calls[parts[-1]] = ncalls
        elif parts and parts[-1] == "total" and len(parts) >= 4:
            total = int(parts[3])
    ok = r.get("s2xx") or 0
    res["calls"] = calls
    res["total"] = total
    if ok:
        res["per_req"] = {k: v / ok for k, v in calls.items()}
        res["total_per_req"] = total / ok
    return res


def scenario4(cfg, servers, out):
    res = {"callgrind": {}, "strace": {}}
    if cfg.callgrind_n:
        for key, module, h1, tls in (("ours", "ours", False, False),
                                     ("stock", "stock", False, False),
                                     ("h1", "ours", True, False),
                                     ("ours-tls", "ours", False, True),
                                     ("h1-tls", "ours", True, True)):
            log("s4 callgrind %s (%d requests, -c 10 -m 10)" % (key, cfg.callgrind_n))
            r0 = callgrind_total(key, module, 0, h1, tls)
            r = callgrind_total(key, module, cfg.callgrind_n, h1, tls)
            r["baseline"] = r0
            if "ir" in r and "ir" in r0:
                r["ir_per_req"] = (r["ir"] - r0["ir"]) / (r["s2xx"] - r0["s2xx"])
            else:
                r.setdefault("error", r0.get("error"))
            res["callgrind"][key] = r
            log("s4 callgrind %s: %s" % (key, "%.0f Ir/request" % r["ir_per_req"]
                                         if "ir_per_req" in r else r.get("error")))
    if cfg.strace_n and shutil.which("strace"):
        for key, srv, h1 in (("ours", servers["ours"], False),
                             ("stock", servers["stock"], False),
                             ("h1", servers["ours"], True)):
            r = strace_run(key, srv, cfg.strace_n, h1)
            res["strace"][key] = r
            log("s4 strace %s: %s" % (key, "%.1f syscalls/request" % r["total_per_req"]
                                      if "total_per_req" in r else r.get("error")))
    out["scenario4"] = res


def scenario4_md(s4, s2):
    L = ["## Scenario 4: cost per request (653 bytes, -c 10 -m 10)", ""]
    cg = s4.get("callgrind", {})
    names = (("ours", "mod_h2 h2c"), ("stock", "mod_http2 h2c"), ("h1", "HTTP/1.1 pipelined"),
             ("ours-tls", "mod_h2 h2 (TLS)"), ("h1-tls", "HTTPS/1.1 pipelined"))
    if cg:
        L += ["Instructions (callgrind Ir, `httpd -X`; (Ir of a run with N requests − Ir of a run with 0) / N, both after 200 warm-up requests; over TLS the run \"with 0\" makes 10 requests on 10 new connections, so that handshakes cancel out):", "",
              "| config | requests | Ir/request | vs mod_http2 |", "|---|---|---|---|"]
        base = cg.get("stock", {}).get("ir_per_req")
        for k, label in names:
            r = cg.get(k, {})
            if "ir_per_req" in r:
                L.append("| %s | %d | %.0f | %s |" % (label, r["n"], r["ir_per_req"],
                                                      "%.2f" % (r["ir_per_req"] / base)
                                                      if base else "n/a"))
            else:
                L.append("| %s | %s | n/a (%s) | |" % (label, r.get("n", ""), r.get("error")))
        L.append("")
    st = s4.get("strace", {})
    if st:
        L += ["Syscalls per request (`strace -c -f` attached to the children, short run; "
              "strace slows the server down, so it changes batching):", "",
              "| config | requests | all | futex | mmap | munmap | read+readv+recvfrom "
              "| write+writev+sendmsg+sendto | epoll_wait | poll |",
              "|---|---|---|---|---|---|---|---|---|---|"]
        for k, label in names:
            r = st.get(k, {})
            pr = r.get("per_req")
            if not pr:
                L.append("| %s | | n/a | | | | | | | |" % label)
                continue
            g = lambda *ns: "%.2f" % sum(pr.get(x, 0) for x in ns)  # noqa: E731
            L.append("| %s | %d | %.2f | %s | %s | %s | %s | %s | %s | %s |" % (
                label, r["n"], r["total_per_req"], g("futex"), g("mmap"), g("munmap"),
                g("read", "readv", "recvfrom"), g("write", "writev", "sendmsg", "sendto"),
                g("epoll_wait"), g("poll")))
        L.append("")
    if s2:
        L += ["At -c 100 -m 10 without tracing (from scenario 2):", "",
              "| config | server CPU µs/request | context switches/request |", "|---|---|---|"]
        for k, label in names + (("nghttpd", "nghttpd"),):
            r = s2_get(s2, k, "653b.txt", 10)
            if r:
                L.append("| %s | %s | %s |" % (label, fmt(r["server_cpu_us_per_req"], 1),
                                               fmt(r["ctxsw_per_req"], 2)))
    return "\n".join(L)


# ---------------------------------------------------------------- plot
def plot(results, path_base):
    s2 = results.get("scenario2")
    if not s2:
        return None
    ms = s2["m_values"]
    series = []   # (label, style, color, [(m, median, min, max)])
    colors = {"ours": "#d62728", "stock": "#1f77b4", "h1": "#2ca02c", "nghttpd": "#7f7f7f"}
    for key, label in (("ours", "mod_h2 h2c"), ("stock", "mod_http2 h2c"),
                       ("h1", "HTTP/1.1 pipelined"), ("nghttpd", "nghttpd h2c")):
        pts = [(m, r["rps"]) for m in ms for r in [s2_get(s2, key, "653b.txt", m)]
               if r and r["rps"]]
        if pts:
            series.append((0, label + " 653b", "-", colors[key], pts))
    wave_files = s2["files"]
    cmap = ["#000000", "#e377c2", "#ff7f0e", "#bcbd22", "#17becf", "#9467bd", "#8c564b"]
    if len(wave_files) > 1:
        for i, f in enumerate(wave_files):
            for key, style in (("ours", "-"), ("stock", "--")):
                pts = [(m, r["rps"]) for m in ms for r in [s2_get(s2, key, f, m)]
                       if r and r["rps"]]
                if pts:
                    series.append((1, "%s %s" % ("mod_h2" if key == "ours" else "mod_http2",
                                                f.replace(".txt", "")), style,
                                   cmap[i % len(cmap)], pts))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        npan = 2 if any(s[0] == 1 for s in series) else 1
        fig, axes = plt.subplots(1, npan, figsize=(7 * npan, 5), squeeze=False)
        for pan, title in ((0, "653-byte file, -c 100"),
                           (1, "the wave: mod_h2 (solid) vs mod_http2 (dashed), -c 100")):
            if pan >= npan:
                continue
            ax = axes[0][pan]
            for p, label, style, color, pts in series:
                if p != pan:
                    continue
                xs = [x for x, _ in pts]
                ax.errorbar(xs, [s["median"] for _, s in pts],
                            yerr=[[s["median"] - s["min"] for _, s in pts],
                                  [s["max"] - s["median"] for _, s in pts]],
                            fmt=style, marker="o", ms=3, color=color, label=label, capsize=2)
            ax.set_xscale("log")
            ax.set_xticks(ms)
            ax.set_xticklabels([str(m) for m in ms])
            ax.set_xlabel("parallel streams per connection (-m)")
            ax.set_ylabel("requests/s (median, min-max bars)")
            ax.set_title(title)
            ax.set_ylim(bottom=0)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
        fig.tight_layout()
        path = path_base + ".png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        return path
    except ImportError:
        return svg_plot([s for s in series if s[0] == 0], ms, path_base + ".svg")


def svg_plot(series, ms, path):
    """Fallback without matplotlib: one panel, log x axis."""
    import math
    W, H, L, B = 700, 450, 70, 50
    ymax = max(s["max"] for *_, pts in series for _, s in pts) * 1.1 or 1
    lx = lambda m: L + (math.log(m) - math.log(ms[0])) / (  # noqa: E731
        math.log(ms[-1]) - math.log(ms[0]) or 1) * (W - L - 20)
    ly = lambda v: H - B - v / ymax * (H - B - 20)  # noqa: E731
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
         'font-family="sans-serif" font-size="11">' % (W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, H - B, W - 20, H - B),
         '<line x1="%d" y1="20" x2="%d" y2="%d" stroke="black"/>' % (L, L, H - B)]
    for m in ms:
        o.append('<text x="%.0f" y="%d" text-anchor="middle">%d</text>' % (lx(m), H - B + 15, m))
    for i in range(6):
        v = ymax * i / 5
        o.append('<text x="%d" y="%.0f" text-anchor="end">%.0f</text>' % (L - 5, ly(v) + 4, v))
    o.append('<text x="%d" y="%d" text-anchor="middle">parallel streams (-m)</text>'
             % ((W + L) // 2, H - 10))
    for i, (_, label, style, color, pts) in enumerate(series):
        d = " ".join("%.1f,%.1f" % (lx(m), ly(s["median"])) for m, s in pts)
        o.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (color, d))
        o.append('<text x="%d" y="%d" fill="%s">%s</text>' % (L + 10, 35 + 14 * i, color, label))
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o))
    return path


# ---------------------------------------------------------------- main
def run_info(stamp):
    """The header of a result file: commit, module build time, machine,
    tool versions."""
    git = subprocess.run(["git", "-C", REPO_DIR, "log", "-1", "--format=%h %s"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode().strip()
    so = os.path.join(REPO_DIR, "mod_h2", ".libs", "mod_h2.so")
    so_time = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.path.getmtime(so))) \
        if os.path.exists(so) else None
    return {"timestamp": stamp, "git": git, "mod_h2_so_mtime": so_time,
            "machine": {"nproc": os.cpu_count(), "uname": " ".join(os.uname()),
                        "loadavg_start": open("/proc/loadavg").read().split()[:3]},
            "versions": {
                "h2load": subprocess.run([H2LOAD, "--version"], stdout=subprocess.PIPE
                                         ).stdout.decode().strip(),
                "httpd": subprocess.run([HTTPD_BIN, "-v"], stdout=subprocess.PIPE
                                        ).stdout.decode().splitlines()[0]}}


def write_report(results):
    """Markdown + plot + JSON for one run (also used by --report)."""
    stamp = results["timestamp"]
    md = ["# mod_h2 benchmark %s" % stamp, "",
          "Commit: `%s` (mod_h2.so built %s). %s, %d core(s), load average %s at start, %s at end; "
          "%d round(s) per point, configurations alternated within each round; "
          "%.0f s in total." % (results["git"], results.get("mod_h2_so_mtime"), results["versions"]["httpd"], results["machine"]["nproc"],
                                " ".join(results["machine"]["loadavg_start"]),
                                " ".join(results["machine"]["loadavg_end"]),
                                results["rounds"], results["elapsed_secs"]),
          "All numbers from one run on a shared 2-core machine: compare ratios, "
          "not absolute values.", "",
          "httpd: event MPM, the sandbox's configuration (%s), no access log, "
          "LogLevel warn; h2load and the servers share the 2 cores." % (
              "ThreadsPerChild %d, MaxRequestWorkers %d" % (
                  results.get("threads_per_child"), 4 * results.get("threads_per_child"))
              if results.get("threads_per_child") else
              "StartServers 1, ServerLimit 4, ThreadsPerChild 25, MaxRequestWorkers 100"), ""]
    if "scenario1" in results:
        md += [scenario1_md(results["scenario1"]), ""]
    if "scenario2" in results:
        md += [scenario2_md(results["scenario2"]), ""]
    if "scenario3" in results:
        md += [scenario3_md(results["scenario3"]), ""]
    if "scenario4" in results:
        md += [scenario4_md(results["scenario4"], results.get("scenario2")), ""]
    base = os.path.join(RESULTS_DIR, stamp)
    img = plot(results, base)
    if img:
        md += ["![req/s against parallel streams](%s)" % os.path.basename(img), ""]
        results["plot"] = os.path.basename(img)
    text = "\n".join(md)
    print(text)
    with open(base + ".md", "w") as f:
        f.write(text)
    for p in (base + ".json", os.path.join(RESULTS_DIR, "latest.json")):
        with open(p, "w") as f:
            json.dump(results, f, indent=1, default=str)
            f.write("\n")
    log("wrote %s.md, %s.json, latest.json%s" % (base, base, ", " + img if img else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1 round, fewer points (~3 min)")
    ap.add_argument("--scenarios", default="1,2,3,4", help="comma list of 1,2,3,4")
    ap.add_argument("--rounds", type=int, help="rounds per point (default 3, quick 1)")
    ap.add_argument("--no-setup", action="store_true", help="skip the install step")
    ap.add_argument("--no-nghttpd", action="store_true")
    ap.add_argument("--tag", default="", help="suffix for the result file names")
    ap.add_argument("--threads-per-child", type=int, default=0,
                    help="event MPM ThreadsPerChild for the scenario 1/2 instances "
                         "(ServerLimit 4, MaxRequestWorkers 4x this); default: the "
                         "sandbox's 25 (100 workers)")
    ap.add_argument("--report", metavar="JSON",
                    help="only rewrite the .md/.png (and JSON) of an earlier run")
    cfg = ap.parse_args()
    if cfg.report:
        with open(cfg.report) as f:
            results = json.load(f)
        if "scenario3" in results:
            runs = {k: v["runs"] for k, v in results["scenario3"]["results"].items()}
            results["scenario3"]["results"] = s3_summarize(runs)
        write_report(results)
        return 0
    scen = set(int(x) for x in cfg.scenarios.split(",") if x.strip())
    if cfg.quick:
        cfg.rounds = cfg.rounds or 1
        cfg.m_values = [1, 10, 100]
        cfg.wave_files = ["1k.txt", "10k.txt"]
        cfg.target_secs = 1.0
        cfg.n_10m = 100
        cfg.idle_conns = 200
        cfg.callgrind_n = 2000
        cfg.strace_n = 2000
    else:
        cfg.rounds = cfg.rounds or 3
        cfg.m_values = [1, 10, 20, 40, 100]
        cfg.wave_files = ["1k.txt", "2k.txt", "4k.txt", "7.5k.txt", "10k.txt"]
        cfg.target_secs = 1.5
        cfg.n_10m = 200
        cfg.idle_conns = 500
        cfg.callgrind_n = 10000
        cfg.strace_n = 5000

    if not cfg.no_setup:
        ensure_tools(4 in scen, 4 in scen)
    os.makedirs(RUN_DIR, exist_ok=True)
    os.makedirs(RESULTS_DIR, exist_ok=True)

    def on_signal(signum, frame):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_signal)

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + (
        "-" + cfg.tag if cfg.tag else "") + ("-quick" if cfg.quick else "")
    results = dict(run_info(stamp), quick=cfg.quick, rounds=cfg.rounds)
    t0 = time.time()
    try:
        servers = {}
        if scen & {1, 2, 4}:
            mpm_conf = threads_conf(cfg.threads_per_child)
            if mpm_conf:
                results["mpm_conf"] = mpm_conf
            for key in ("ours", "stock"):
                inst = HttpdInstance(key, key, mpm_conf)
                inst.start()
                servers[key] = inst
                log("started %s: %s" % (key, inst.sb.status()))
        if 2 in scen and not cfg.no_nghttpd:
            ng = NghttpdInstance(servers["ours"].docroot)
            ng.start()
            servers["nghttpd"] = ng
        if 1 in scen:
            scenario1(cfg, servers, results)
        if 2 in scen:
            scenario2(cfg, servers, results)
        if 4 in scen and cfg.strace_n:
            # strace on the running instances; callgrind on its own -X instances
            pass
        if 4 in scen:
            if "nghttpd" in servers:
                servers.pop("nghttpd").stop()
            scenario4(cfg, servers, results)
        for key in list(servers):
            servers.pop(key).stop()
        if 3 in scen:
            scenario3(cfg, results)
    except KeyboardInterrupt:
        log("interrupted")
        results["interrupted"] = True
    finally:
        stop_all()
    results["elapsed_secs"] = round(time.time() - t0, 1)
    results["machine"]["loadavg_end"] = open("/proc/loadavg").read().split()[:3]

    results["threads_per_child"] = cfg.threads_per_child
    write_report(results)
    return 1 if results.get("interrupted") else 0


if __name__ == "__main__":
    sys.exit(main())
