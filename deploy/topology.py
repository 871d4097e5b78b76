#!/usr/bin/env python3
"""httpd with mod_h2 behind a real front end: Debian's HAProxy or nghttpx
terminates TLS for clients (h2 and http/1.1 by ALPN) and balances over two
or more sandbox httpd instances that speak h2c (prior knowledge) to it,
each on its own loopback port, with health checks.

    python3 deploy/topology.py start [--front haproxy|nghttpx]
                                     [--client-ip proxy|xff] [--instances 2]
                                     [--module ours|stock|none]
    python3 deploy/topology.py stop
    python3 deploy/topology.py status

The client's address reaches httpd by PROXY protocol v2 (--client-ip
proxy, HAProxy only: one backend connection per client connection) or by
X-Forwarded-For (xff: backend connections shared by all clients), read by
mod_remoteip either way. Everything listens on 127.0.0.1; the front end
connects to the instances from 127.0.0.10 (HAProxy) so that a client
elsewhere in 127/8 is told apart. Ports (base, default 25000, env
H2_DEPLOY_PORT_BASE): front end TLS base+543, h2c base+580; instance i
serves the front end on base+1000*(i+1)+81 (its sandbox ports +80/+443
stay for direct access). State: deploy/run/ (or H2_DEPLOY_DIR)."""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

DEPLOY_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(DEPLOY_DIR)
sys.path.insert(0, os.path.join(REPO_DIR, "sandbox"))

from sandbox import Sandbox, SandboxError, port_open  # noqa: E402

FRONT_SOURCE = "127.0.0.10"     # HAProxy's address toward the instances
REMOTEIP = "/usr/lib/apache2/modules/mod_remoteip.so"


def run_dir():
    return os.path.abspath(os.environ.get("H2_DEPLOY_DIR") or os.path.join(DEPLOY_DIR, "run"))


def port_base():
    return int(os.environ.get("H2_DEPLOY_PORT_BASE") or 25000)


# The backend role: a front end multiplexes many clients over a few
# connections, so per-connection limits must fit its volume, not one
# client's; and a busy HTTP/2 connection holds an MPM thread while its
# streams run, so there are threads for every front-end connection that
# may be busy at once (docs/deployment.md).
BACKEND_ROLE = """\
<IfModule mpm_event_module>
    ServerLimit 16
    ThreadsPerChild 64
    MaxRequestWorkers 512
</IfModule>
H2MaxSessionStreams 256
H2MaxSessionWorkers 64
H2MaxWorkers 128
H2MinWorkers 16
H2StreamMaxMemSize 131072
"""

INSTANCE_CONF = """\
<IfModule !remoteip_module>
LoadModule remoteip_module {remoteip}
</IfModule>
{role}
Listen 127.0.0.1:{port}
LogFormat "%a %{{c}}a \\"%r\\" %>s %{{H2_STREAM_ID}}e %{{X-Forwarded-For}}i" deploy
<VirtualHost 127.0.0.1:{port}>
    ServerName {sname}
    Protocols {protocols}
    DocumentRoot "{r}/htdocs"
    ScriptAlias /cgi-bin/ "{r}/cgi-bin/"
    Header always set X-Instance "{name}"
    CustomLog "{r}/logs/deploy_access_log" deploy
{client_ip}
    <Location "/only-2">
        Require ip 127.0.0.2
    </Location>
    <Location "/only-3">
        Require ip 127.0.0.3
    </Location>
</VirtualHost>
"""

CLIENT_IP = {
    "proxy": "    RemoteIPProxyProtocol On\n",
    "xff": "    RemoteIPHeader X-Forwarded-For\n    RemoteIPInternalProxy 127.0.0.1 %s\n"
           % FRONT_SOURCE,
}


class Topology:
    def __init__(self, front="haproxy", client_ip="proxy", instances=2, module="ours"):
        if front == "nghttpx" and client_ip == "proxy":
            raise SystemExit("nghttpx sends no PROXY protocol to its backends: use --client-ip xff")
        self.front, self.client_ip, self.n, self.module = front, client_ip, instances, module
        self.dir = run_dir()
        self.base = port_base()
        self.tls_port = self.base + 543
        self.h2c_port = self.base + 580
        self.instances = [Sandbox(run_dir=os.path.join(self.dir, "inst%d" % i),
                                  port_base=self.base + 1000 * (i + 1), module=module,
                                  mpm="event")
                          for i in range(instances)]

    # -- instances
    def backend_port(self, i):
        return self.base + 1000 * (i + 1) + 81

    def write_instance(self, i):
        sb = self.instances[i]
        sb.setup()
        conf = INSTANCE_CONF.format(
            remoteip=REMOTEIP, role=BACKEND_ROLE if self.module == "ours" else
            "\n".join(l for l in BACKEND_ROLE.splitlines() if "SessionWorkers" not in l)
            if self.module == "stock" else "",
            port=self.backend_port(i), sname=sb.server_name, r=sb.run_dir,
            protocols="http/1.1" if self.module == "none" else "h2c http/1.1",
            name="inst%d" % i, client_ip=CLIENT_IP[self.client_ip])
        with open(os.path.join(sb.run_dir, "conf.d", "deploy.conf"), "w") as f:
            f.write(conf)

    def start_instance(self, i):
        self.write_instance(i)
        self.instances[i].start()
        wait_port(self.backend_port(i))

    def stop_instance(self, i):
        self.instances[i].stop()

    # -- front ends
    def pem(self):
        """Certificate and key in one file, as HAProxy takes them."""
        sb = self.instances[0]
        path = os.path.join(self.dir, "front.pem")
        with open(path, "w") as f:
            for p in (sb.server_cert, sb.server_key):
                f.write(open(p).read())
        return path

    def haproxy_conf(self):
        h2 = self.module != "none"
        server_opts = "check inter 500ms fall 3 rise 1 source %s" % FRONT_SOURCE
        if h2:
            server_opts += " proto h2"
        if self.client_ip == "proxy":
            server_opts += " send-proxy-v2 check-send-proxy"
        servers = "\n".join("    server inst%d 127.0.0.1:%d %s" % (i, self.backend_port(i),
                                                                   server_opts)
                            for i in range(self.n))
        return """\
global
    maxconn 5000
    pidfile {d}/haproxy.pid
    # HTTP/2 windows of 1 MB (default 64 KB): what the instances send a
    # stream is not held to 64 KB per round trip through HAProxy
    tune.h2.initial-window-size 1048576
    tune.ssl.default-dh-param 2048

defaults
    mode http
    timeout connect 2s
    timeout check 2s
    timeout client 60s
    timeout server 60s
    timeout http-keep-alive 60s
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response response-timeout 0rtt-rejected
    {forwardfor}

frontend clients
    bind 127.0.0.1:{tls} ssl crt {pem} alpn h2,http/1.1
    bind 127.0.0.1:{h2c} proto h2
    default_backend instances

backend instances
    balance roundrobin
    http-reuse {reuse}
    option httpchk
    http-check send meth GET uri /index.html ver HTTP/1.1 hdr Host test.localhost
{servers}
""".format(d=self.dir, tls=self.tls_port, h2c=self.h2c_port, pem=self.pem(),
           servers=servers, forwardfor="option forwardfor" if self.client_ip == "xff" else "",
           reuse="always" if self.client_ip == "xff" else "safe")

    def nghttpx_conf(self):
        sb = self.instances[0]
        backends = "\n".join("backend=127.0.0.1,%d;;proto=%s;fall=2;rise=1" % (
            self.backend_port(i), "h2" if self.module != "none" else "http/1.1")
            for i in range(self.n))
        return """\
frontend=127.0.0.1,{tls}
frontend=127.0.0.1,{h2c};no-tls
{backends}
private-key-file={key}
certificate-file={cert}
add-x-forwarded-for=yes
strip-incoming-x-forwarded-for=yes
workers=1
pid-file={d}/nghttpx.pid
errorlog-file={d}/nghttpx.log
accesslog-file=/dev/null
backend-read-timeout=60s
no-ocsp=yes
""".format(tls=self.tls_port, h2c=self.h2c_port, backends=backends, key=sb.server_key,
           cert=sb.server_cert, d=self.dir)

    def start_front(self):
        conf = os.path.join(self.dir, self.front + ".cfg")
        with open(conf, "w") as f:
            f.write(self.haproxy_conf() if self.front == "haproxy" else self.nghttpx_conf())
        if self.front == "haproxy":
            cmd = ["haproxy", "-db", "-f", conf]
        else:
            cmd = ["nghttpx", "--conf", conf]
        log = open(os.path.join(self.dir, self.front + ".out"), "w")
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        with open(os.path.join(self.dir, "front.pid"), "w") as f:
            f.write(str(p.pid))
        wait_port(self.tls_port)
        wait_port(self.h2c_port)

    def start(self):
        os.makedirs(self.dir, exist_ok=True)
        if self.running():
            raise SystemExit("already running: deploy/topology.py stop first")
        for port in (self.tls_port, self.h2c_port):
            if port_open(port):
                raise SystemExit("port %d is in use" % port)
        with open(os.path.join(self.dir, "topology.json"), "w") as f:
            json.dump({"front": self.front, "client_ip": self.client_ip,
                       "instances": self.n, "module": self.module}, f)
        for i in range(self.n):
            self.start_instance(i)
        self.start_front()
        self.wait_healthy()

    def wait_healthy(self, timeout=15):
        """Until a request through the front end reaches every instance."""
        seen = set()
        deadline = time.time() + timeout
        while time.time() < deadline and len(seen) < self.n:
            r = subprocess.run(["curl", "-sk", "--http2", "-D", "-", "-o", "/dev/null",
                                "https://127.0.0.1:%d/index.html" % self.tls_port],
                               stdout=subprocess.PIPE, text=True)
            for line in r.stdout.splitlines():
                if line.lower().startswith("x-instance:"):
                    seen.add(line.split(":", 1)[1].strip())
            time.sleep(0.1)
        if len(seen) < self.n:
            raise SystemExit("front end reached only %s of %d instances" % (sorted(seen), self.n))

    def front_pid(self):
        try:
            with open(os.path.join(self.dir, "front.pid")) as f:
                return int(f.read())
        except (OSError, ValueError):
            return None

    def running(self):
        pid = self.front_pid()
        return bool(pid and alive(pid)) or any(
            sb.is_running() for sb in self.instances)

    def stop(self):
        pid = self.front_pid()
        if pid and alive(pid):
            os.kill(pid, signal.SIGTERM)
            deadline = time.time() + 10
            while alive(pid) and time.time() < deadline:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
                time.sleep(0.05)
        for sb in self.instances:
            try:
                sb.stop()
            except SandboxError:
                pass

    def status(self):
        pid = self.front_pid()
        lines = ["front end %s pid %s %s: https://127.0.0.1:%d/ (h2, http/1.1), "
                 "http://127.0.0.1:%d/ (h2c)" % (
                     self.front, pid, "running" if pid and alive(pid) else "stopped", self.tls_port, self.h2c_port)]
        for i, sb in enumerate(self.instances):
            lines.append("instance %d (%s): %s, front end port %d, run dir %s" % (
                i, self.module, "running" if sb.is_running() else "stopped",
                self.backend_port(i), sb.run_dir))
        return "\n".join(lines)


def alive(pid):
    """pid runs (a zombie no longer counts: the front end's parent may have
    exited, and whoever inherits it reaps it late)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def wait_port(port, timeout=15):
    deadline = time.time() + timeout
    while not port_open(port):
        if time.time() > deadline:
            raise SystemExit("nothing listens on port %d" % port)
        time.sleep(0.05)


def saved():
    try:
        with open(os.path.join(run_dir(), "topology.json")) as f:
            return json.load(f)
    except OSError:
        return {}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["start", "stop", "status"])
    ap.add_argument("--front", choices=["haproxy", "nghttpx"])
    ap.add_argument("--client-ip", choices=["proxy", "xff"])
    ap.add_argument("--instances", type=int)
    ap.add_argument("--module", choices=["ours", "stock", "none"])
    args = ap.parse_args(argv)
    old = saved()
    front = args.front or old.get("front", "haproxy")
    kw = dict(front=front,
              client_ip=args.client_ip or old.get("client_ip",
                                                  "proxy" if front == "haproxy" else "xff"),
              instances=args.instances or old.get("instances", 2),
              module=args.module or old.get("module", "ours"))
    t = Topology(**kw)
    if args.command == "start":
        t.start()
        print(t.status())
    elif args.command == "stop":
        t.stop()
    else:
        print(t.status())


if __name__ == "__main__":
    main()
