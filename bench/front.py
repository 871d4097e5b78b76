#!/usr/bin/env python3
"""Do I still need nginx in front? httpd with mod_h2 serving h2 over TLS
itself, against the usual front-proxy set-ups, side by side in one run:

  ours     httpd + mod_h2, h2 over TLS straight to the clients
  stock    httpd + Debian's mod_http2, the same way (for reference)
  nginx    Debian's nginx terminates h2 over TLS and proxies over HTTP/1.1
           keep-alive (proxy_http_version 1.1, upstream keepalive) to an
           httpd without HTTP/2
  haproxy  Debian's HAProxy terminates h2 over TLS and proxies over
           HTTP/1.1 (http-reuse always, maxconn 100), deploy/topology.py's
           configuration, to an httpd without HTTP/2

    python3 bench/front.py [--rounds 3] [--secs 4] [--port-base 27000]
                           [--stacks ours,stock,nginx,haproxy] [--tag T]
                           [--fpm-children 5] [--nginx-keepalive 100]
    python3 bench/front.py --quick      # one short round
    python3 bench/front.py --report results/<file>.json

Every httpd is bench/run.py's instance (event MPM 4 x 25 threads, no
access log) with its own php-fpm (test/phpfpm.py, 5 children) behind
mod_proxy_fcgi as Debian configures it (no flushpackets). Workloads, h2load -t 2 over TLS, rounds interleaved:
  static  /653b.txt            -c 100 -m 10   req/s
  php     /fpm/hello.php       -c 20 -m 10    req/s
  10m     /10m.txt             -c 8 -m 1      MB/s
Server CPU per request: utime+stime (/proc/<pid>/stat) of every process
of the stack, children that exit meanwhile included (cutime+cstime):
httpd parent and children, php-fpm master and workers, nginx master and
workers, haproxy. Ratios are ours / front stack. Ports: --port-base + 0..999
on 127.0.0.1; everything is stopped by pid at the end. Results:
results/<date>-front.json/.md/.svg."""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "test"))

import run as bench                  # noqa: E402  bench/run.py's instances and h2load
import refs                          # noqa: E402  bench/refs.py's nginx
import deploy                        # noqa: E402  bench/deploy.py, for deploy/topology.py
from run import HttpdInstance, h2load, log, summary  # noqa: E402
from phpfpm import PhpFpm            # noqa: E402

WORKLOADS = [  # name, path, -c, -m, what the table shows
    ("static", "/653b.txt", 100, 10, "req/s"),
    ("php", "/fpm/hello.php", 20, 10, "req/s"),
    ("10m", "/10m.txt", 8, 1, "MB/s"),
]
EXPECT = {"/653b.txt": 653, "/fpm/hello.php": len("Hello from PHP\n")}
LABELS = {"ours": "mod_h2 direct", "stock": "mod_http2 direct",
          "nginx": "nginx -> httpd HTTP/1.1", "haproxy": "HAProxy -> httpd HTTP/1.1"}
BACKEND_MAXCONN = 100      # HAProxy: the backend httpd's MaxRequestWorkers


class NginxFront(refs.Nginx):
    """refs.py's nginx (2 workers, TLS 1.3, sendfile) proxying to one
    backend httpd over HTTP/1.1 keep-alive, as nginx's documentation sets
    it up; buffering and everything else at nginx's defaults."""

    def __init__(self, backend_port, port_base, cert, key, keepalive):
        # keepalive: idle upstream connections each worker keeps
        super().__init__("nginx", "/nonexistent", cert, key, port_base=port_base,
                         run_name="front-nginx")
        self.http_extra = ("\n    upstream backend { server 127.0.0.1:%d; keepalive %d; }"
                           % (backend_port, keepalive))

    def site(self):
        return ('location / { proxy_pass http://backend; proxy_http_version 1.1; '
                'proxy_set_header Connection ""; proxy_set_header Host $host; }')


class HaproxyFront(deploy.topology.Topology):
    """deploy/topology.py's HAProxy with --client-ip xff and instances
    without HTTP/2: h2 and TLS to the clients, HTTP/1.1 to the backend with
    http-reuse always and X-Forwarded-For, a health check every 500 ms;
    here with one backend, an httpd of this script's."""

    name = "haproxy"

    def __init__(self, backend_sb, run_dir, tls_port, h2c_port):
        super().__init__(front="haproxy", client_ip="xff", instances=0, module="none")
        self.dir, self.tls_port, self.h2c_port = run_dir, tls_port, h2c_port
        self.instances, self.n = [backend_sb], 1

    def backend_port(self, i):
        return self.instances[i].http_port

    def haproxy_conf(self):
        # one change: at most BACKEND_MAXCONN requests at once on the
        # backend, the rest wait in HAProxy's queue (the usual setting in
        # front of a server with a thread per request); without it 1,000
        # streams became 1,000 connections, the health check timed out
        # behind them and HAProxy answered 503 while the server was "down"
        return super().haproxy_conf().replace(
            " check inter", " maxconn %d check inter" % BACKEND_MAXCONN)

    def start(self):
        os.makedirs(self.dir, exist_ok=True)
        for port in (self.tls_port, self.h2c_port):
            if bench.port_open(port):
                raise bench.SandboxError("port %d already in use" % port)
        self.start_front()
        bench.STARTED.append(self)

    def stop(self):
        # Topology.stop stops its instances too: the backend is the
        # stack's, stopped by it
        self.instances = []
        super().stop()
        if self in bench.STARTED:
            bench.STARTED.remove(self)

    def pids(self):
        pid = self.front_pid()
        return [pid] if pid and deploy.topology.alive(pid) else []


class Stack:
    """One way of serving h2 over TLS: an httpd with its php-fpm, and the
    front proxy, if any, that the clients talk to."""

    def __init__(self, name, port_base, index, keepalive=100, fpm_children=5):
        self.name = name
        direct = name in ("ours", "stock")
        key = "front-" + name if direct else "front-%s-backend" % name
        bench.PORTS[key] = port_base + 100 * index
        self.httpd = HttpdInstance(key, name if direct else "none")
        self.fpm = PhpFpm(self.httpd.sb.run_dir, children=fpm_children)
        self.front = None
        self.port_base, self.keepalive = port_base, keepalive

    def start(self):
        self.fpm.start()
        bench.STARTED.append(self.fpm)
        # without the tests' flushpackets=on: Debian's php8.2-fpm.conf for
        # apache2 has none, and with it mod_h2's httpd spent about 80 us
        # more per PHP request (results/20261128-233900-front), the
        # HTTP/1.1 httpds the same
        self.httpd.extra_conf += "\n" + self.fpm.httpd_conf().replace(" flushpackets=on", "")
        self.httpd.start()
        sb = self.httpd.sb
        if self.name == "nginx":
            self.front = NginxFront(sb.http_port, self.port_base + 400, sb.server_cert,
                                    sb.server_key, self.keepalive)
        elif self.name == "haproxy":
            self.front = HaproxyFront(sb, os.path.join(bench.RUN_DIR, "front-haproxy"),
                                      self.port_base + 943, self.port_base + 980)
        if self.front:
            self.front.start()

    @property
    def tls_port(self):
        return self.front.tls_port if self.front else self.httpd.sb.https_port

    def url(self, path):
        return "https://127.0.0.1:%d%s" % (self.tls_port, path)

    def parts(self):
        """{part: its pids}: every process of the stack."""
        sb = self.httpd.sb
        out = {"httpd": [p for p in [sb.pid()] if p] + sb.child_pids(),
               "php-fpm": [p for p in [self.fpm.pid] if p] + self.fpm.worker_pids()}
        if self.front:
            out[self.name] = self.front.pids()
        return out


def check(stack):
    """One request of each workload through the stack: h2, 200, the
    expected body (a stack that answers wrongly measures nothing)."""
    for path, size in EXPECT.items():
        r = subprocess.run(["curl", "-sk", "--http2", "-o", "/dev/null", "-w",
                            "%{http_version} %{http_code} %{size_download}", stack.url(path)],
                           stdout=subprocess.PIPE, text=True, timeout=30)
        if r.stdout.split() != ["2", "200", str(size)]:
            raise SystemExit("front: %s %s answered %r" % (stack.name, path, r.stdout))


def measure(stack, wl, n):
    """One h2load run, with the CPU microseconds per request of each part
    of the stack and of all of them."""
    name, path, c, m, _ = wl
    before = {k: bench.proc_counters(p, reaped=True) for k, p in stack.parts().items()}
    r = h2load(stack.url(path), n=n, c=c, m=m, timeout=180)
    after = {k: bench.proc_counters(p, reaped=True) for k, p in stack.parts().items()}
    if r.get("s2xx"):
        r["cpu_us_per_req"] = {k: (after[k]["cpu"] - before[k]["cpu"]) * 1e6 / r["s2xx"]
                               for k in before}
        r["server_cpu_us_per_req"] = sum(r["cpu_us_per_req"].values())
    if r.get("secs") and name == "10m":
        r["mb_s"] = r["s2xx"] * bench.SIZED_FILES["10m.txt"] / r["secs"] / 1e6
    r["value"] = r.get("mb_s") if name == "10m" else r.get("rps")
    r["lost"] = r.get("n", 0) - r.get("s2xx", 0)
    return r


def run_rounds(args, stacks):
    est = bench.RateEstimator(args.secs, default=5000.0)
    runs = []
    for stack in stacks:            # warm-up: TLS, children, php-fpm
        for name, path, c, m, _ in WORKLOADS:
            h2load(stack.url(path), n=16 if name == "10m" else 2000, c=min(c, 8), m=m,
                   timeout=120)
    for rnd in range(args.rounds):
        order = stacks[rnd % len(stacks):] + stacks[:rnd % len(stacks)]
        for wl in WORKLOADS:
            for stack in order:
                key = (wl[0], stack.name)
                n = args.files if wl[0] == "10m" else est.n_for(key, wl[0], wl[2], wl[3])
                r = measure(stack, wl, n)
                est.update(key, wl[0], r)
                runs.append({"workload": wl[0], "stack": stack.name, "round": rnd, **r})
                log("front round %d %-7s %-7s %s" % (
                    rnd + 1, wl[0], stack.name, "%.0f %s, %.1f us CPU/req, %d lost" % (
                        r["value"], wl[4], r["server_cpu_us_per_req"], r["lost"])
                    if r.get("value") else r.get("error")))
    return runs


def medians(runs, names):
    """{workload: {stack: {"value": summary, "cpu": summary, "lost": n}}}."""
    out = {}
    for wl in WORKLOADS:
        out[wl[0]] = {}
        for s in names:
            rs = [r for r in runs if r["workload"] == wl[0] and r["stack"] == s]
            split = [r["cpu_us_per_req"] for r in rs if r.get("cpu_us_per_req")]
            out[wl[0]][s] = {"value": summary([r.get("value") for r in rs]),
                             "cpu": summary([r.get("server_cpu_us_per_req") for r in rs]),
                             "parts": {k: statistics.median(x[k] for x in split)
                                       for k in (split[0] if split else {})},
                             "lost": sum(r.get("lost", 0) for r in rs)}
    return out


def paired_ratio(runs, wl, a, b, key):
    """Median over the rounds of a's figure over b's in the same round."""
    q = []
    for rnd in sorted({r["round"] for r in runs}):
        x = [r.get(key) for r in runs if (r["workload"], r["stack"], r["round"]) == (wl, a, rnd)]
        y = [r.get(key) for r in runs if (r["workload"], r["stack"], r["round"]) == (wl, b, rnd)]
        if x and y and x[0] and y[0]:
            q.append(x[0] / y[0])
    return statistics.median(q) if q else None


TARGETS = {"static": 2.0, "php": 1.3}     # issue 38: ours / front req/s at least


def cpu_unit(wl):
    """The 10 MB rows count CPU per file in ms, the others per request in us."""
    return (1e-3, "ms/file") if wl == "10m" else (1.0, "us/req")


def table(runs, med, names):
    fronts = [s for s in names if s in ("nginx", "haproxy")]
    L = ["| workload | figure | %s |%s" % (" | ".join(LABELS[s] for s in names),
                                           "".join(" ours / %s |" % f for f in fronts)),
         "|---" * (2 + len(names) + len(fronts)) + "|"]
    for name, path, c, m, unit in WORKLOADS:
        scale, cunit = cpu_unit(name)
        for key, what, digits in (("value", unit, 0), ("cpu", "CPU " + cunit, 1)):
            cells = []
            for s in names:
                v = med[name][s][key]
                if v and key == "cpu":
                    v = {k: (x * scale if k != "n" else x) for k, x in v.items()
                         if k != "values"}
                cells.append(bench.fmt(v, digits))
            rat = []
            for f in fronts:
                a, b = med[name].get("ours", {}).get(key), med[name][f][key]
                p = paired_ratio(runs, name, "ours", f, "value" if key == "value"
                                 else "server_cpu_us_per_req")
                rat.append("%s (%s)" % (bench.ratio(a, b), "%.2f" % p if p else "n/a"))
            L.append("| %s `%s` -c %d -m %d | %s | %s |%s" % (
                name, path, c, m, what, " | ".join(cells), "".join(" %s |" % x for x in rat)))
    L.append("| all | requests lost | %s |%s" % (
        " | ".join(str(sum(med[w[0]][s]["lost"] for w in WORKLOADS)) for s in names),
        " |" * len(fronts)))
    return "\n".join(L)


def parts_table(med, names):
    """Where each stack's CPU goes: the median per part, per workload."""
    L = ["| workload | " + " | ".join(LABELS[s] for s in names) + " |",
         "|---" * (1 + len(names)) + "|"]
    for wl, *_ in WORKLOADS:
        scale, cunit = cpu_unit(wl)
        cells = [", ".join("%s %.1f" % (k, v * scale) for k, v in med[wl][s]["parts"].items())
                 or "n/a" for s in names]
        L.append("| %s, CPU %s | %s |" % (wl, cunit, " | ".join(cells)))
    return "\n".join(L)


def verdicts(runs, med, names):
    """The issue's targets, one line each: ours / front req/s against its
    threshold, and CPU per request lower."""
    out = []
    for wl, want in TARGETS.items():
        for f in (s for s in names if s in ("nginx", "haproxy")):
            o, x = med[wl].get("ours"), med[wl][f]
            if not (o and o["value"] and x["value"] and o["cpu"] and x["cpu"]):
                out.append("- %s, ours / %s: not measured" % (wl, f))
                continue
            r = o["value"]["median"] / x["value"]["median"]
            cpu = o["cpu"]["median"] / x["cpu"]["median"]
            met = r >= want and cpu < 1
            out.append("- %s, ours / %s: req/s %.2f (target >= %.1f), CPU per request %.2f "
                       "(target < 1): **%s**" % (wl, f, r, want, cpu,
                                                 "met" if met else "not met"))
    return out


COLORS = {"ours": "#d62728", "stock": "#1f77b4", "nginx": "#2ca02c", "haproxy": "#ff7f0e"}


OPACITY = {"all": 1.0, "httpd": 1.0, "php-fpm": 0.6, "front": 0.3}


def shares(cell, key):
    """[(part, share of the bar)]: the CPU bars split by part in
    proportion to the parts' medians."""
    parts = cell.get("parts") if key == "cpu" else None
    total = sum(parts.values()) if parts else 0
    if not total:
        return [("all", 1.0)]
    return [(p if p in OPACITY else "front", v / total) for p, v in parts.items()]


def svg_bars(med, names, path):
    """Two rows of panels (throughput; server CPU per request), one column
    per workload, a bar per stack (median) with its min-max range."""
    PW, PH, L, T = 260, 210, 60, 40
    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
         'font-family="sans-serif" font-size="11">' % (L + 3 * PW, T + 2 * PH + 30),
         '<rect width="100%" height="100%" fill="white"/>']
    for i, s in enumerate(names):
        o.append('<rect x="%d" y="8" width="10" height="10" fill="%s"/><text x="%d" y="17">%s'
                 '</text>' % (L + 190 * i, COLORS[s], L + 190 * i + 14, LABELS[s]))
    o.append('<text x="%d" y="%d">CPU bars, bottom to top: httpd (solid), php-fpm, '
             'the front proxy (lightest); medians</text>' % (L, T + 2 * PH + 15))
    for col, (wl, path_, c, m, unit) in enumerate(WORKLOADS):
        scale, cunit = cpu_unit(wl)
        for row, (key, title) in enumerate((("value", unit), ("cpu", "server CPU " + cunit))):
            x0, y0 = L + col * PW, T + row * PH
            cells = [med[wl][s][key] for s in names]
            top = max((v["max"] * (scale if key == "cpu" else 1) for v in cells if v),
                      default=1) * 1.1
            h = PH - 55
            base = y0 + 20 + h
            o.append('<text x="%d" y="%d" text-anchor="middle">%s %s, %s</text>' % (
                x0 + PW // 2 - 20, y0 + 12, wl, "-c %d -m %d" % (c, m), title))
            o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (
                x0, base, x0 + PW - 50, base))
            bw = (PW - 70) // max(len(names), 1)
            for i, (s, v) in enumerate(zip(names, cells)):
                if not v:
                    continue
                k = scale if key == "cpu" else 1
                bx = x0 + 5 + i * bw
                y = lambda x: base - x * k / top * h  # noqa: E731
                top_y = base
                for part, share in shares(med[wl][s], key):
                    o.append('<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="%s" '
                             'fill-opacity="%.2f"/>' % (
                                 bx, top_y - (base - y(v["median"] * share)), bw - 6,
                                 base - y(v["median"] * share), COLORS[s], OPACITY[part]))
                    top_y -= base - y(v["median"] * share)
                o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="black"/>' % (
                    bx + (bw - 6) // 2, y(v["min"]), bx + (bw - 6) // 2, y(v["max"])))
                o.append('<text x="%d" y="%.1f" text-anchor="middle" font-size="10">%s</text>'
                         % (bx + (bw - 6) // 2, base + 12, "%.0f" % (v["median"] * k)
                            if v["median"] * k >= 10 else "%.1f" % (v["median"] * k)))
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")
    return path


def report(res):
    names, runs = res["stacks"], res["runs"]
    base = os.path.join(bench.RESULTS_DIR, res["stamp"])
    with open(base + ".json", "w") as f:       # first: the measurements are the run
        json.dump(res, f, indent=1, default=str)
        f.write("\n")
    med = medians(runs, names)
    info = res["info"]
    md = ["# Do I still need nginx in front? (%s)" % res["stamp"], "",
          "Commit `%s` (mod_h2.so built %s); %s, %s; php-fpm %s children per stack "
          "(mod_proxy_fcgi flushpackets %s); h2load -t 2 over TLS (h2); "
          "median (min–max) of %d round(s), stacks interleaved; load average %s at the "
          "start, %s at the end; %.0f s in all. Ratios: of the medians, and in parentheses "
          "the median of the ratios round by round. CPU: every process of the stack "
          "(httpd, php-fpm, nginx or HAProxy), utime+stime. 2 cores shared by h2load, the "
          "servers and other work." % (
              info["git"].split()[0], info["mod_h2_so_mtime"], info["versions"]["httpd"],
              res["nginx"], res["args"].get("fpm_children", 5),
              "on" if res.get("flushpackets", True) else "off", res["rounds"],
              " ".join(info["machine"]["loadavg_start"]),
              " ".join(res["loadavg_end"]), res["elapsed_secs"]), "",
          table(runs, med, names), "", "Server CPU by part of the stack (medians):", "",
          parts_table(med, names), "", "Targets (issue 38):", ""] + verdicts(runs, med, names)
    img = svg_bars(med, names, base + ".svg")
    md += ["", "![throughput and server CPU per request](%s)" % os.path.basename(img), ""]
    text = "\n".join(md)
    with open(base + ".md", "w") as f:
        f.write(text)
    print(text)
    log("wrote %s.md, .json, .svg" % base)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--secs", type=float, default=4.0, help="seconds per small run, about")
    ap.add_argument("--files", type=int, default=200, help="10 MB files per run")
    ap.add_argument("--quick", action="store_true", help="one short round")
    ap.add_argument("--stacks", default="ours,stock,nginx,haproxy")
    ap.add_argument("--port-base", type=int, default=27000)
    ap.add_argument("--nginx-keepalive", type=int, default=100,
                    help="idle upstream connections each nginx worker keeps")
    ap.add_argument("--fpm-children", type=int, default=5, help="php-fpm processes per stack")
    ap.add_argument("--tag", default="front")
    ap.add_argument("--report", metavar="JSON", help="rewrite the .md/.svg of an earlier run")
    args = ap.parse_args()
    if args.report:
        with open(args.report) as f:
            report(json.load(f))
        return 0
    if args.quick:
        args.rounds, args.secs, args.files = 1, 1.5, 40
    t0 = datetime.datetime.now()
    stamp = t0.strftime("%Y%m%d-%H%M%S") + "-" + args.tag
    names = args.stacks.split(",")
    unknown = set(names) - set(LABELS)
    if unknown:
        raise SystemExit("front: unknown stacks %s" % sorted(unknown))
    info = bench.run_info(stamp)
    stacks = [Stack(s, args.port_base, i, args.nginx_keepalive, args.fpm_children)
              for i, s in enumerate(names)]
    try:
        for s in stacks:
            s.start()
            check(s)
        runs = run_rounds(args, stacks)
    finally:
        bench.stop_all()
    nginx_v = subprocess.run([refs.NGINX, "-v"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True).stdout.strip()
    haproxy_v = subprocess.run(["haproxy", "-v"], stdout=subprocess.PIPE,
                               text=True).stdout.splitlines()[0]
    report({"stamp": stamp, "stacks": names, "rounds": args.rounds, "args": vars(args),
            "info": info, "flushpackets": False,
            "nginx": "%s, %s" % (nginx_v, " ".join(haproxy_v.split()[:3])),
            "loadavg_end": open("/proc/loadavg").read().split()[:3],
            "elapsed_secs": (datetime.datetime.now() - t0).total_seconds(), "runs": runs})
    return 0


if __name__ == "__main__":
    sys.exit(main())
