#!/usr/bin/env python3
"""mod_h2 against reference servers, side by side on this machine: stock
mod_http2 (same httpd), nginx (Debian's, worker_processes 2) and h2o
(Debian's, num-threads 2), each serving the sandbox's document root on
loopback ports of its own.

    python3 bench/refs.py [--rounds 3] [--ms 1,10,40,100] [--secs 3]
                          [--servers ours,stock,nginx,h2o] [--tag T]

--servers may add "ours-nowarm" (ours with H2TLSWarmUpSize 0, TLS rows:
nginx and h2o send full records from the start) and "h1" (HTTP/1.1 on
the same httpd, pipelined for -m > 1: what its MPM alone costs).

Cases, every round interleaved:
  small  h2load -c 100 -t 2 -m M on /653b.txt, over TLS (h2, TLS 1.3
         AES-128-GCM: h2load's choice) and h2c: req/s and the server's CPU
         microseconds per request (its processes' utime+stime, /proc)
  10m    h2load -c 8 -t 2 -m 1 on /10m.txt over TLS: MB/s
  idle   200 connections (TLS and h2c) with one request each, left open:
         the growth of the server's resident memory, per connection (the
         h1 column: HTTP/1.1 keep-alive connections, TLS and cleartext)
Ratios are to nginx in the same round. nginx and h2o are optional: a
server whose binary is missing is left out (`apt-get install nginx h2o`;
Debian starts them on port 80 unless told otherwise, which this
benchmark does not need). Everything listens on 127.0.0.1, ports 48xxx,
and is stopped by pid at the end. Results: results/<date>-refs.json/.md."""

import argparse
import datetime
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import time

import run as bench                                # bench/run.py's helpers
from run import HttpdInstance, h2load_measured, log, memory_of, summary, wait_port

PORTS = {"ours": 48000, "stock": 48200, "nginx": 48400, "h2o": 48600}
bench.PORTS.update({"refs-ours": PORTS["ours"], "refs-stock": PORTS["stock"]})
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
H2O = shutil.which("h2o") or "/usr/bin/h2o"
IDLE_CONNS = 200
SETTLE = 21.0          # seconds: past two of mod_h2's memory trims (10 s apart)


class RefServer:
    """A reference server on base+80 (h2c) and base+443 (h2 over TLS)."""

    def __init__(self, name, docroot, cert, key, port_base=None, run_name=None):
        # port_base / run_name: for another script's instances (pageload.py),
        # which must not share refs.py's ports and run dirs
        self.name = name
        self.docroot, self.cert, self.key = docroot, cert, key
        self.run_dir = os.path.join(bench.RUN_DIR, run_name or "refs-" + name)
        base = PORTS[name] if port_base is None else port_base
        self.h2c_port = base + 80
        self.tls_port = base + 443
        self.proc = None

    def url(self, path, tls=False):
        if tls:
            return "https://127.0.0.1:%d%s" % (self.tls_port, path)
        return "http://127.0.0.1:%d%s" % (self.h2c_port, path)

    def start(self):
        os.makedirs(os.path.join(self.run_dir, "tmp"), exist_ok=True)
        for p in (self.h2c_port, self.tls_port):
            if bench.port_open(p):
                raise bench.SandboxError("port %d already in use" % p)
        cmd = self.command()
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(
            os.path.join(self.run_dir, "stderr.log"), "w"), stdin=subprocess.DEVNULL)
        bench.STARTED.append(self)
        wait_port(self.h2c_port, 10)
        wait_port(self.tls_port, 10)

    def stop(self):
        bench.stop_process(self)

    def pids(self):
        if not self.proc or self.proc.poll() is not None:
            return []
        kids = subprocess.run(["pgrep", "-P", str(self.proc.pid)], stdout=subprocess.PIPE,
                              text=True).stdout.split()
        return [self.proc.pid] + [int(k) for k in kids]


class Nginx(RefServer):
    http_extra = ""     # more directives for the http block (pageload.py: MIME types)
    processes = "worker_processes 2;"   # instr.py: one process, for callgrind

    def site(self):
        """What a server block serves: the document root here, a
        proxy_pass in front.py's nginx."""
        return "root %s;" % self.docroot

    def command(self):
        conf = os.path.join(self.run_dir, "nginx.conf")
        t = os.path.join(self.run_dir, "tmp")
        with open(conf, "w") as f:
            f.write("""\
user root;
{processes}
daemon off;
pid {r}/nginx.pid;
error_log {r}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    sendfile on;
    default_type application/octet-stream;{extra}
    client_body_temp_path {t}/body; proxy_temp_path {t}/proxy;
    fastcgi_temp_path {t}/fcgi; uwsgi_temp_path {t}/uwsgi; scgi_temp_path {t}/scgi;
    server {{ listen 127.0.0.1:{h2c} http2; {site} }}
    server {{
        listen 127.0.0.1:{tls} ssl http2;
        ssl_certificate {cert}; ssl_certificate_key {key};
        {site}
    }}
}}
""".format(r=self.run_dir, t=t, h2c=self.h2c_port, tls=self.tls_port, d=self.docroot,
           cert=self.cert, key=self.key, extra=self.http_extra,
           processes=self.processes, site=self.site()))
        return [NGINX, "-p", self.run_dir, "-c", conf]


class H2o(RefServer):
    def command(self):
        conf = os.path.join(self.run_dir, "h2o.conf")
        with open(conf, "w") as f:
            f.write("""\
user: root
num-threads: 2
pid-file: {r}/h2o.pid
error-log: {r}/error.log
hosts:
  "h2c":
    listen:
      host: 127.0.0.1
      port: {h2c}
    paths:
      /:
        file.dir: {d}
  "tls":
    listen:
      host: 127.0.0.1
      port: {tls}
      ssl:
        certificate-file: {cert}
        key-file: {key}
    paths:
      /:
        file.dir: {d}
""".format(r=self.run_dir, h2c=self.h2c_port, tls=self.tls_port, d=self.docroot,
           cert=self.cert, key=self.key))
        return [H2O, "-c", conf]


class Httpd:
    """ours / stock: bench/run.py's instance, seen through RefServer's face."""

    def __init__(self, name, instance=None, extra_conf=""):
        # instance: bench.PORTS key and run dir name, "refs-<name>" by default
        self.name = name
        self.inst = HttpdInstance(instance or "refs-" + name, name, extra_conf)

    def start(self):
        self.inst.start()

    def stop(self):
        self.inst.stop()

    def pids(self):
        return self.inst.pids()

    def url(self, path, tls=False):
        return self.inst.url(path, tls=tls)

    @property
    def tls_port(self):
        return self.inst.sb.https_port

    @property
    def h2c_port(self):
        return self.inst.sb.http_port


class Variant:
    """Another face of the "ours" httpd: "ours-nowarm", its TLS port with
    H2TLSWarmUpSize 0 (nginx and h2o have no warm-up; TLS rows only), or
    "h1", HTTP/1.1 (pipelined for -m > 1) on the same httpd, the reference
    for what its MPM costs per request."""

    def __init__(self, name, base):
        self.name, self.base = name, base
        self.h1 = (name == "h1")
        self.tls_only = (name == "ours-nowarm")

    def start(self):
        pass

    def stop(self):
        pass

    def pids(self):
        return self.base.pids()

    def url(self, path, tls=False):
        return self.base.inst.url(path, tls=tls,
                                  variant="nowarm" if self.tls_only and tls else "")

    @property
    def tls_port(self):
        return self.base.tls_port + (1 if self.tls_only else 0)

    @property
    def h2c_port(self):
        return self.base.h2c_port


def connect(port, tls, host, alpn):
    """A loopback connection to port, over TLS (certificate unchecked,
    ALPN alpn) with tls."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    if tls:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.set_alpn_protocols([alpn])
        s = ctx.wrap_socket(s, server_hostname=host)
    return s


def h2_request(port, tls, host):
    """One connection with one GET /653b.txt answered; the socket, left open."""
    s = connect(port, tls, host, "h2")
    import h2.config
    import h2.connection
    import h2.events
    c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True,
                                                             header_encoding="utf-8"))
    c.initiate_connection()
    c.send_headers(1, [(":method", "GET"), (":path", "/653b.txt"), (":scheme",
                   "https" if tls else "http"), (":authority", host)], end_stream=True)
    s.sendall(c.data_to_send())
    done = False
    deadline = time.time() + 5
    while not done and time.time() < deadline:
        data = s.recv(65536)
        if not data:
            break
        for ev in c.receive_data(data):
            if isinstance(ev, h2.events.StreamEnded):
                done = True
        out = c.data_to_send()
        if out:
            s.sendall(out)
    return s if done else None


def h1_request(port, tls, host):
    """One keep-alive connection with one HTTP/1.1 GET /653b.txt answered;
    the socket, left open (httpd's KeepAliveTimeout, 5 s, outlasts the
    sampling)."""
    s = connect(port, tls, host, "http/1.1")
    s.sendall(b"GET /653b.txt HTTP/1.1\r\nHost: %s\r\n\r\n" % host.encode())
    data = b""
    deadline = time.time() + 5
    while time.time() < deadline:
        chunk = s.recv(65536)
        if not chunk:
            return None
        data += chunk
        head, sep, body = data.partition(b"\r\n\r\n")
        if sep and len(body) >= 653:
            return s
    return None


def idle_memory(srv, tls, host):
    """RSS growth per connection kept open after one request (kB). The
    first sample is taken SETTLE seconds after the last requests before:
    httpd with mod_h2 gives freed malloc memory back to the system every
    10 s after work (h2_workers.c), and a give-back of what the load
    before freed, between the samples, showed as negative growth."""
    request = h1_request if getattr(srv, "h1", False) else h2_request
    warm = [request(srv.tls_port if tls else srv.h2c_port, tls, host) for _ in range(5)]
    for w in warm:
        if w:
            w.close()
    warm = []
    time.sleep(SETTLE)
    m0 = memory_of(srv.pids())
    socks = []
    for _ in range(IDLE_CONNS):
        s = request(srv.tls_port if tls else srv.h2c_port, tls, host)
        if s:
            socks.append(s)
    time.sleep(1.0)
    m1 = memory_of(srv.pids())
    for s in socks + [w for w in warm if w]:
        s.close()
    if not socks:
        return None
    return {"conns": len(socks), "rss_kb_per_conn": (m1["rss_kb"] - m0["rss_kb"]) / len(socks),
            "pss_kb_per_conn": (m1["pss_kb"] - m0["pss_kb"]) / len(socks)}


def run_rounds(args, servers, host):
    runs = []
    names = list(servers)
    for rnd in range(args.rounds):
        order = names[rnd % len(names):] + names[:rnd % len(names)]
        for tls in (True, False):
            for m in args.ms:
                for name in order:
                    srv = servers[name]
                    if getattr(srv, "tls_only", False) and not tls:
                        continue
                    n = max(int(args.rate_guess * args.secs) // 100 * 100, 20000)
                    r = h2load_measured(srv, srv.url("/653b.txt", tls), n=n, c=100, m=m,
                                        h1=getattr(srv, "h1", False), timeout=120)
                    runs.append({"case": "small", "server": name, "tls": tls, "m": m,
                                 "round": rnd, **r})
                    log("refs round %d %-5s %-4s -m %-3d %s" % (
                        rnd + 1, name, "tls" if tls else "h2c", m,
                        "%.0f req/s, %.1f us CPU/req" % (r["rps"], r.get(
                            "server_cpu_us_per_req", 0)) if "rps" in r else r.get("error")))
        for name in order:
            srv = servers[name]
            r = h2load_measured(srv, srv.url("/10m.txt", True), n=200, c=8, m=1,
                                h1=getattr(srv, "h1", False), timeout=120)
            if r.get("secs"):
                r["mb_s"] = r["s2xx"] * bench.SIZED_FILES["10m.txt"] / r["secs"] / 1e6
            runs.append({"case": "10m", "server": name, "tls": True, "round": rnd, **r})
            log("refs round %d %-5s 10m tls %s" % (rnd + 1, name, "%.0f MB/s" % r["mb_s"]
                                                  if r.get("mb_s") else r.get("error")))
    for name in names:
        for tls in (True, False):
            if getattr(servers[name], "tls_only", False) and not tls:
                continue
            r = idle_memory(servers[name], tls, host)
            runs.append({"case": "idle", "server": name, "tls": tls, **(r or {})})
            log("refs idle %-5s %-4s %s" % (name, "tls" if tls else "h2c", r))
    return runs


def table(runs, names):
    L = ["| case | " + " | ".join(names) + " | ours / nginx |", "|---" * (len(names) + 2) + "|"]

    def cell(case, name, tls, m, key):
        s = summary([r.get(key) for r in runs if r["case"] == case and r["server"] == name
                     and r["tls"] == tls and r.get("m") == m])
        return s["median"] if s else None

    ms = sorted({r["m"] for r in runs if r["case"] == "small"})
    for tls in (True, False):
        for key, what, digits in (("rps", "req/s", 0), ("server_cpu_us_per_req", "CPU us/req", 1)):
            for m in ms:
                vals = [cell("small", n, tls, m, key) for n in names]
                o = vals[names.index("ours")] if "ours" in names else None
                g = vals[names.index("nginx")] if "nginx" in names else None
                L.append("| %s -m %d %s | %s | %s |" % (
                    "TLS" if tls else "h2c", m, what,
                    " | ".join("%.*f" % (digits, v) if v is not None else "n/a" for v in vals),
                    "%.2f" % (o / g) if o and g else "n/a"))
    vals = [cell("10m", n, True, None, "mb_s") for n in names]
    L.append("| 10 MB over TLS, MB/s | %s | |" % " | ".join(
        "%.0f" % v if v else "n/a" for v in vals))
    for tls in (True, False):
        vals = [cell("idle", n, tls, None, "rss_kb_per_conn") for n in names]
        L.append("| idle %s connection after one request, KiB RSS | %s | |" % (
            "TLS" if tls else "h2c", " | ".join("%.0f" % v if v is not None else "n/a"
                                                 for v in vals)))
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ms", default="1,10,40,100")
    ap.add_argument("--secs", type=float, default=3.0, help="seconds per small-file run, about")
    ap.add_argument("--rate-guess", type=float, default=60000.0, help="req/s, to size -n")
    ap.add_argument("--servers", default="ours,stock,nginx,h2o")
    ap.add_argument("--tag", default="refs")
    args = ap.parse_args()
    args.ms = [int(x) for x in args.ms.split(",")]
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + "-" + args.tag
    servers = {}
    try:
        for name in args.servers.split(","):
            if name in ("ours", "stock"):
                servers[name] = Httpd(name)
            elif name in ("ours-nowarm", "h1"):
                servers[name] = "variant"
            elif name == "nginx" and os.path.exists(NGINX):
                servers[name] = None
            elif name == "h2o" and os.path.exists(H2O):
                servers[name] = None
            else:
                log("refs: %s left out (not installed)" % name)
        first = next(s for s in servers.values() if isinstance(s, Httpd))
        first.start()
        sb = first.inst.sb
        for name, srv in list(servers.items()):
            if srv == "variant":
                if not isinstance(servers.get("ours"), Httpd):
                    raise SystemExit("refs: %s needs ours in --servers" % name)
                servers[name] = Variant(name, servers["ours"])
            elif srv is None:
                cls = Nginx if name == "nginx" else H2o
                servers[name] = cls(name, sb.docroot, os.path.join(sb.run_dir, "ca", "server.pem"),
                                    os.path.join(sb.run_dir, "ca", "server.key"))
            if servers[name] is not first:
                servers[name].start()
        runs = run_rounds(args, servers, sb.server_name)
    finally:
        bench.stop_all()
    names = list(servers)
    md = ["# mod_h2 against reference servers (%s)" % stamp, "",
          "h2load -c 100 -t 2 on /653b.txt; medians of %d rounds; loopback, 2 cores "
          "shared by client and servers." % args.rounds, "", table(runs, names), ""]
    os.makedirs(bench.RESULTS_DIR, exist_ok=True)
    base = os.path.join(bench.RESULTS_DIR, stamp)
    with open(base + ".json", "w") as f:
        json.dump({"stamp": stamp, "args": vars(args), "runs": runs}, f, indent=1)
    with open(base + ".md", "w") as f:
        f.write("\n".join(md))
    print("\n".join(md))
    print("results: %s.json/.md" % base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
