#!/usr/bin/env python3
"""Upload benchmark: a 1 GiB request body to a handler that discards it
(test/modules/mod_h2_optfn_test.c, "h2-discard"), over HTTP/1.1, h2c,
HTTP/1.1 over TLS and h2, to mod_h2 and to Debian's mod_http2, on loopback
and through a link with 20 ms added round trip (10 ms each way). Per
upload: MB/s, the ratio to HTTP/1.1 on the same server, link and transport
(h2c to HTTP/1.1, h2 to HTTP/1.1 over TLS), and the throughput of each
100 MB slice as the handler saw it (a window that collapses shows as
slices slowing down).

    python3 bench/upload.py [--size-mb 1024] [--max-time 90] [--tag T]
                            [--clients curl,h2load] [--servers ours,stock]
                            [--link-proxy delay|toxiproxy]
    python3 bench/upload.py --pool results/A.json results/B.json ...

Two clients: curl (what users upload with; its HTTP/2 uploads cost it
about 1.6 times the CPU of its HTTP/1.1 ones, 16 KB frames against 64 KB
writes) and h2load (16 KB writes for every protocol). On this 2-core
machine client and server share the CPUs, so on loopback the client's
cost shows in the server's throughput; "CPU s/GB server" is the figure
the server controls.

The kernel here has no netem, so a proxy on loopback adds the delay:
bench/delay_proxy.c (the default, built with cc; single-threaded epoll,
some 0.4 s of CPU per GB) or toxiproxy's latency toxic (`go install
github.com/Shopify/toxiproxy/v2/cmd/server@latest`, found on PATH as
toxiproxy-server or as ~/go/bin/server), which spends about 1 s per GB,
as much as client and server together, so that every case through it is a
contest for the 2 cores. Both take a client's bytes as fast as the client
sends them and pass them on 10 ms later: an HTTP/1.1 upload through them
is bounded by no end-to-end window, an HTTP/2 one by its stream and
connection windows.
Everything listens on 127.0.0.1 (ports 23xxx) and is stopped by pid at the
end; every upload is bounded by --max-time, the delay proxy's life by the
run's length."""

import argparse
import datetime
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCH_DIR)
RESULTS_DIR = os.path.join(BENCH_DIR, "results")
sys.path.insert(0, os.path.join(REPO_DIR, "sandbox"))

from sandbox import Sandbox  # noqa: E402

SERVERS = {"ours": 23000, "stock": 23200}       # port bases
TOXI_API = 23474
TOXI_PORTS = {("ours", "http"): 23100, ("ours", "https"): 23101,
              ("stock", "http"): 23300, ("stock", "https"): 23301}
TOXIPROXY = (shutil.which("toxiproxy-server") or shutil.which("server", path="/root/go/bin")
             or os.path.expanduser("~/go/bin/server"))
TLS_PROTOS = ("h2", "https/1.1")
# each protocol is compared with HTTP/1.1 over the same transport
BASELINE = {"h2c": "http/1.1", "http/1.1": "http/1.1", "h2": "https/1.1",
            "https/1.1": "https/1.1"}
MODULE_SRC = os.path.join(REPO_DIR, "test", "modules", "mod_h2_optfn_test.c")
DELAY_SRC = os.path.join(BENCH_DIR, "delay_proxy.c")
ONE_WAY_US = 10000


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def build_module(tmp):
    src = os.path.join(tmp, os.path.basename(MODULE_SRC))
    shutil.copy(MODULE_SRC, src)
    subprocess.run(["apxs", "-c", "-o", os.path.join(tmp, "mod_h2_optfn_test.la"), src],
                   cwd=tmp, check=True, stdout=subprocess.DEVNULL)
    return os.path.join(tmp, ".libs", "mod_h2_optfn_test.so")


def start_server(name, so):
    sb = Sandbox(run_dir=os.path.join(BENCH_DIR, "run", "upload-" + name),
                 port_base=SERVERS[name], module=name, mpm="event")
    if sb.is_running():
        sb.stop()
    sb.setup()
    with open(os.path.join(sb.run_dir, "conf.d", "upload.conf"), "w") as f:
        f.write("LoadModule h2_optfn_test_module %s\nLimitRequestBody 0\nLogLevel warn %s\n"
                "<Location \"/discard\">\n    SetHandler h2-discard\n</Location>\n"
                "LogFormat \"%%{h2-discard}n\" discard\nCustomLog \"%s\" discard\n%s"
                % (so, os.environ.get("H2_UPLOAD_LOGLEVEL", ""), discard_log(sb),
                   os.environ.get("H2_UPLOAD_CONF", "").replace("\\n", "\n")))
    sb.start()
    return sb


def discard_log(sb):
    """Where the handler's answers go, a line each (h2load shows no bodies)."""
    return os.path.join(sb.run_dir, "logs", "discard_log")


def discard_answer(sb, offset, wait=3.0):
    """The handler's answer logged after byte offset of its log, as the
    dict its response has ({} if none came within `wait` seconds: the log
    line follows the response)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            with open(discard_log(sb)) as f:
                f.seek(offset)
                lines = [l.split(" ", 2) for l in f.read().split("\n")]
            lines = [l for l in lines if len(l) == 3 and l[0].isdigit()]
            if lines:
                nbytes, us, slices = lines[-1]
                return {"bytes": int(nbytes), "us": int(us),
                        "slices_us": [int(x) for x in slices.split(", ") if x.isdigit()]}
        except (OSError, ValueError):
            pass
        if time.monotonic() > deadline:
            return {}
        time.sleep(0.05)


def slices_of(answer):
    """MB/s of each 100 MB slice of the handler's answer."""
    slices, prev = [], 0
    for us in answer.get("slices_us", []):
        slices.append(round(100.0 / max(us - prev, 1) * 1e6, 1))
        prev = us
    return slices


def toxi(method, path, body=None):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (TOXI_API, path), method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.read()


def start_toxiproxy(servers):
    p = subprocess.Popen([TOXIPROXY, "-host", "127.0.0.1", "-port", str(TOXI_API)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while True:
        try:
            toxi("GET", "/version")
            break
        except OSError:
            if time.time() > deadline:
                p.kill()
                raise
            time.sleep(0.1)
    try:
        add_proxies(servers)
    except Exception:
        p.terminate()
        p.wait(10)
        raise
    return p


def add_proxies(servers):
    for (name, kind), port in TOXI_PORTS.items():
        if name not in servers:
            continue
        sb = servers[name]
        up = sb.http_port if kind == "http" else sb.https_port
        pname = "%s-%s" % (name, kind)
        toxi("POST", "/proxies", {"name": pname, "listen": "127.0.0.1:%d" % port,
                                  "upstream": "127.0.0.1:%d" % up, "enabled": True})
        for stream in ("upstream", "downstream"):
            toxi("POST", "/proxies/%s/toxics" % pname,
                 {"name": "lat-" + stream, "type": "latency", "stream": stream,
                  "attributes": {"latency": 10, "jitter": 0}})


def start_delay_proxy(servers, tmp, lifetime, pairs=None):
    """bench/delay_proxy.c, built into tmp, on the same ports toxiproxy uses;
    or, given pairs (a list of (listen port, upstream port)), on those."""
    exe = os.path.join(tmp, "delay_proxy")
    subprocess.run(["cc", "-O2", "-o", exe, DELAY_SRC], check=True)
    if pairs is not None:
        pairs = ["%d:%d" % p for p in pairs]
    else:
        pairs = ["%d:%d" % (port, servers[name].http_port if kind == "http"
                            else servers[name].https_port)
                 for (name, kind), port in TOXI_PORTS.items() if name in servers]
    p = subprocess.Popen([exe, str(ONE_WAY_US), str(lifetime)] + pairs,
                         stdout=subprocess.PIPE, text=True)
    if p.stdout.readline().strip() != "ready":
        p.kill()
        raise RuntimeError("delay_proxy did not start")
    return p


PROXY_PIDS = []      # the link proxy's, once started: its CPU is the link's cost


def pid_cpu_seconds(pids):
    """User + system CPU seconds of these processes so far."""
    total = 0
    tck = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            with open("/proc/%s/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tck
        except (OSError, IndexError, ValueError):
            pass
    return total


def cpu_seconds(sb):
    """User + system CPU seconds of the server's processes so far."""
    return pid_cpu_seconds(subprocess.run(["pgrep", "-f", sb.run_dir], stdout=subprocess.PIPE,
                                          text=True).stdout.split())


def cpu_mark(sb):
    """Where the server's, our children's and the proxy's CPU seconds stand now."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return cpu_seconds(sb), kids.ru_utime + kids.ru_stime, pid_cpu_seconds(PROXY_PIDS)


def cpu_since(sb, mark, size):
    """Server, client (our children's) and proxy CPU seconds per GB since mark."""
    now = cpu_mark(sb)
    return tuple(round((b - a) / max(size, 1) * 1e9, 2) for a, b in zip(mark, now))


def upload(sb, proto, port, path, max_time):
    """One upload with curl; returns a result dict."""
    domain = sb.server_name
    if proto in TLS_PROTOS:
        url = "https://%s:%d/discard" % (domain, port)
        opts = ["--http2" if proto == "h2" else "--http1.1", "--cacert", sb.ca_cert,
                "--resolve", "%s:%d:127.0.0.1" % (domain, port)]
    else:
        url = "http://127.0.0.1:%d/discard" % port
        opts = ["--http2-prior-knowledge"] if proto == "h2c" else ["--http1.1"]
    out = tempfile.NamedTemporaryFile(delete=False)
    out.close()
    t0 = time.monotonic()
    mark = cpu_mark(sb)
    r = subprocess.run(["curl", "-sS", "-X", "POST", "-T", path, "--max-time", str(max_time),
                        "-H", "Expect:", "-o", out.name,
                        "-w", "%{http_code} %{size_upload} %{speed_upload}"] + opts + [url],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    took = time.monotonic() - t0
    code, sent, speed = (r.stdout.split() + ["0", "0", "0"])[:3]
    server_cpu, client_cpu, proxy_cpu = cpu_since(sb, mark, int(float(sent)))
    try:
        with open(out.name) as f:
            body = json.load(f)
    except (OSError, ValueError):
        body = {}
    os.unlink(out.name)
    # the handler's view: from its first byte to the end of the body (a
    # proxy in between may take the client's bytes faster than it passes
    # them on, so curl's own figure would flatter HTTP/1.1)
    server_mb_s = (body.get("bytes", 0) / body["us"]) if body.get("us") else 0.0
    slices = slices_of(body)
    return {"status": code, "complete": r.returncode == 0 and code == "200",
            "bytes": int(float(sent)), "seconds": round(took, 2),
            "mb_s": round(server_mb_s, 1), "client_mb_s": round(float(speed) / 1e6, 1),
            "slices_mb_s": slices,
            "server_cpu_s_per_gb": server_cpu, "client_cpu_s_per_gb": client_cpu,
            "proxy_cpu_s_per_gb": proxy_cpu,
            "curl_exit": r.returncode}


def upload_h2load(sb, proto, port, path, max_time):
    """One upload with h2load (nghttp2's client: the same 16 KB writes for
    every protocol, where curl writes 64 KB for HTTP/1.1 and a 16 KB frame
    at a time for HTTP/2); timed by the client, which shows no response
    body: the handler's slices come from its log."""
    scheme = "https" if proto in TLS_PROTOS else "http"
    cmd = ["h2load", "-n", "1", "-c", "1", "-d", path]
    if proto in ("http/1.1", "https/1.1"):
        cmd.append("--h1")
    cmd.append("%s://127.0.0.1:%d/discard" % (scheme, port))
    size = os.path.getsize(path)
    try:
        logged = os.path.getsize(discard_log(sb))
    except OSError:
        logged = 0
    mark = cpu_mark(sb)
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=max_time)
        out, ok = r.stdout, r.returncode == 0
    except subprocess.TimeoutExpired:
        out, ok = "", False
    server_cpu, client_cpu, proxy_cpu = cpu_since(sb, mark, size)
    answer = discard_answer(sb, logged) if ok else {}
    m = re.search(r"finished in ([\d.]+)(m?s)", out)
    secs = (float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)) if m else 0
    ok = ok and "1 succeeded" in out and secs > 0
    return {"status": "200" if ok else "?", "complete": ok, "bytes": size if ok else 0,
            "seconds": round(secs, 2), "mb_s": round(size / secs / 1e6, 1) if ok else 0.0,
            "client_mb_s": round(size / secs / 1e6, 1) if ok else 0.0,
            "slices_mb_s": slices_of(answer),
            "server_cpu_s_per_gb": server_cpu, "client_cpu_s_per_gb": client_cpu,
            "proxy_cpu_s_per_gb": proxy_cpu,
            "curl_exit": None}


def median_of_rounds(runs):
    """One result per case: the round with the median MB/s (its slices and
    CPU figures with it), every round's MB/s in "rounds_mb_s"."""
    cases = {}
    for r in runs:
        cases.setdefault((r["link"], r["server"], r["client"], r["proto"]), []).append(r)
    out = []
    for rs in cases.values():
        rs = sorted(rs, key=lambda r: r["mb_s"])
        med = dict(rs[len(rs) // 2])
        med["rounds_mb_s"] = [r["mb_s"] for r in rs]
        med["complete"] = all(r["complete"] for r in rs)
        out.append(med)
    return out


def pooled(paths):
    """Ratios to HTTP/1.1 over every round of the result files given: the
    median MB/s of all rounds of a case over that of its baseline's (one
    3-round run moves a +20 ms ratio by 0.1 on this machine)."""
    pool = {}
    for path in paths:
        with open(path) as f:
            for r in json.load(f)["results"]:
                key = (r["server"], r["client"], r["link"], r["proto"])
                pool.setdefault(key, []).extend(r["rounds_mb_s"])
    print("| server | client | link | protocol | rounds | median MB/s | vs HTTP/1.1 |")
    print("|---|---|---|---|---|---|---|")
    for (server, client, link, proto), v in sorted(pool.items()):
        base = pool.get((server, client, link, BASELINE[proto]))
        ratio = statistics.median(v) / statistics.median(base) if base else None
        print("| %s | %s | %s | %s | %d | %.1f | %s |" % (
            server, client, link, proto, len(v), statistics.median(v),
            "%.3f" % ratio if ratio else "-"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=int, default=1024, help="upload size in MiB")
    ap.add_argument("--max-time", type=int, default=90, help="seconds per upload at most")
    ap.add_argument("--tag", default="upload")
    ap.add_argument("--servers", default="ours,stock")
    ap.add_argument("--links", default="loopback,20ms")
    ap.add_argument("--protos", default="http/1.1,h2c,https/1.1,h2")
    ap.add_argument("--clients", default="curl,h2load")
    ap.add_argument("--link-proxy", choices=("delay", "toxiproxy"), default="delay",
                    help="what adds the 20 ms (see above)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="uploads per case, interleaved; the median is reported")
    ap.add_argument("--pool", nargs="+", metavar="RESULTS_JSON",
                    help="print the ratios over all rounds of these result files, run nothing")
    args = ap.parse_args()
    if args.pool:
        pooled(args.pool)
        return

    tmp = tempfile.mkdtemp(prefix="h2-upload-")
    started = []
    results = []
    try:
        data = os.path.join(tmp, "body.bin")
        with open(data, "wb") as f:
            f.truncate(args.size_mb * 1024 * 1024)
        # into the page cache first: the first read of it would otherwise
        # cost the first upload measured
        with open(data, "rb") as f:
            while f.read(1 << 24):
                pass
        so = build_module(tmp)
        servers = {}
        for name in args.servers.split(","):
            servers[name] = start_server(name, so)
            started.append(servers[name])
        if args.link_proxy == "toxiproxy":
            proxy = start_toxiproxy(servers)
        else:
            # long enough for every upload of the run at --max-time each
            proxy = start_delay_proxy(servers, tmp, 60 + args.max_time * args.rounds * len(
                servers) * len(args.clients.split(",")) * len(args.protos.split(","))
                * len(args.links.split(",")))
        started.append(proxy)
        PROXY_PIDS.append(proxy.pid)
        for rnd, link in [(r, l) for r in range(args.rounds) for l in args.links.split(",")]:
            for name, sb in servers.items():
                for client, proto in [(c, p) for c in args.clients.split(",")
                                      for p in args.protos.split(",")]:
                    kind = "https" if proto in TLS_PROTOS else "http"
                    if link == "loopback":
                        port = sb.https_port if kind == "https" else sb.http_port
                    else:
                        port = TOXI_PORTS[(name, kind)]
                    run = upload if client == "curl" else upload_h2load
                    res = run(sb, proto, port, data, args.max_time)
                    res.update({"link": link, "server": name, "proto": proto,
                                "client": client, "round": rnd})
                    results.append(res)
                    log("%-8s %-5s %-6s %-9s %7.1f MB/s %s%s" % (
                        link, name, client, proto, res["mb_s"],
                        "" if res["complete"] else "(stopped after %ds, %d MB) " % (
                            args.max_time, res["bytes"] // 1000000),
                        "slices " + " ".join("%.0f" % x for x in res["slices_mb_s"])))
    finally:
        for x in reversed(started):
            if isinstance(x, subprocess.Popen):
                x.terminate()
                x.wait(10)
            else:
                x.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    results = median_of_rounds(results)
    for res in results:
        h1 = [r for r in results if r["link"] == res["link"] and r["server"] == res["server"]
              and r["client"] == res["client"] and r["proto"] == BASELINE[res["proto"]]]
        res["ratio_to_http11"] = (round(res["mb_s"] / h1[0]["mb_s"], 2)
                                  if h1 and h1[0]["mb_s"] else None)
        s = res["slices_mb_s"]
        res["slowest_slice_to_median"] = round(min(s) / statistics.median(s), 2) if s else None
    print("\n| link | server | client | protocol | MB/s | vs HTTP/1.1 (same transport) "
          "| slowest 100 MB slice / median | CPU s/GB server | CPU s/GB client "
          "| CPU s/GB proxy |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print("| %s | %s | %s | %s | %.1f%s | %s | %s | %.2f | %.2f | %s |" % (
            r["link"], r["server"], r["client"], r["proto"], r["mb_s"],
            "" if r["complete"] else " (timed out)",
            r["ratio_to_http11"], r["slowest_slice_to_median"], r["server_cpu_s_per_gb"],
            r["client_cpu_s_per_gb"],
            "%.2f" % r["proxy_cpu_s_per_gb"] if r["link"] != "loopback" else "-"))
    os.makedirs(RESULTS_DIR, exist_ok=True)
    out = os.path.join(RESULTS_DIR, "%s-%s.json" % (
        datetime.datetime.now().strftime("%Y%m%d-%H%M%S"), args.tag))
    with open(out, "w") as f:
        json.dump({"size_mb": args.size_mb, "max_time": args.max_time,
                   "link_proxy": args.link_proxy, "results": results},
                  f, indent=1)
    print("\nresults: %s" % out)


if __name__ == "__main__":
    main()
