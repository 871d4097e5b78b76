"""httpd with mod_h2 behind real front ends (deploy/topology.py, one
command): Debian's HAProxy and nghttpx terminate TLS for clients (h2 and
http/1.1 by ALPN) and balance over two sandbox instances that speak h2c to
them. The client's address reaches every stream: by PROXY protocol v2
(HAProxy) or X-Forwarded-For (nghttpx), read by mod_remoteip. A graceful
restart of an instance under load, stopping one and bringing it back lose
no request; a front end multiplexing 1000 client connections over a few
backend connections is served without errors."""

import os
import re
import socket
import ssl
import subprocess
import sys
import threading
import time

import pytest

from h2client import H2Client
from h2env import eventually

pytestmark = pytest.mark.h2

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOPOLOGY = os.path.join(REPO, "deploy", "topology.py")
sys.path.insert(0, os.path.join(REPO, "deploy"))


def topology_env(env):
    e = dict(os.environ)
    e["H2_DEPLOY_PORT_BASE"] = str(env.port_base + 4000)
    e["H2_DEPLOY_DIR"] = os.path.join(REPO, "sandbox", "run-deploy-%d" % env.port_base)
    return e


class Running:
    """A topology started by the one command, stopped by the other."""

    def __init__(self, env, *args):
        self.env = topology_env(env)
        self.module = env.module if env.module in ("ours", "stock") else "ours"
        self.args = list(args) + ["--module", self.module]
        self.base = int(self.env["H2_DEPLOY_PORT_BASE"])
        self.tls_port, self.h2c_port = self.base + 543, self.base + 580
        self.dir = self.env["H2_DEPLOY_DIR"]

    def cmd(self, *args, check=True):
        r = subprocess.run([sys.executable, TOPOLOGY] + list(args), env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=120)
        if check:
            assert r.returncode == 0, r.stdout
        return r.stdout

    def __enter__(self):
        self.cmd("stop", check=False)
        self.cmd("start", *self.args)
        import topology
        saved = dict(os.environ)
        os.environ.update(self.env)
        try:
            self.topo = topology.Topology(**{k: v for k, v in topology.saved().items()})
        finally:
            os.environ.clear()
            os.environ.update(saved)
        return self

    def __exit__(self, *a):
        self.cmd("stop", check=False)

    def curl(self, path, *opts, source="127.0.0.2"):
        r = subprocess.run(["curl", "-sS", "-k", "--interface", source, "-D", "-",
                            "--max-time", "20"] + list(opts)
                           + ["https://127.0.0.1:%d%s" % (self.tls_port, path)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return r.stdout

    def h2load(self, *args, timeout=120):
        return subprocess.run(["h2load"] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=timeout).stdout


def status_of(out):
    m = re.search(r"^HTTP/[\d.]+ (\d+)", out, re.M)
    return int(m.group(1)) if m else None


def instance_of(out):
    m = re.search(r"^x-instance: (\S+)", out, re.M | re.I)
    return m.group(1) if m else None


def h2load_ok(out, n):
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, "
                  r"(\d+) failed, (\d+) errored", out)
    assert m, out
    assert (int(m.group(4)), int(m.group(5)), int(m.group(6))) == (n, 0, 0), out
    assert re.search(r"status codes: %d 2xx" % n, out), out


@pytest.fixture(scope="module")
def haproxy(env):
    with Running(env, "--front", "haproxy", "--client-ip", "proxy") as t:
        yield t


@pytest.mark.parametrize("proto", ["--http2", "--http1.1"])
def test_haproxy_serves_clients_from_both_instances(haproxy, proto):
    seen = set()
    for _ in range(6):
        out = haproxy.curl("/index.html", proto)
        assert status_of(out) == 200, out
        seen.add(instance_of(out))
    assert seen == {"inst0", "inst1"}


def h2_client_from(source, port, domain="test.localhost"):
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    raw.bind((source, 0))
    raw.settimeout(20)
    raw.connect(("127.0.0.1", port))
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["h2"])
    sock = ctx.wrap_socket(raw, server_hostname=domain)
    assert sock.selected_alpn_protocol() == "h2"
    c = H2Client(sock)
    c.host = domain
    c.scheme = "https"
    c.authority = "%s:%d" % (domain, port)
    return c


def test_client_address_reaches_every_stream_through_proxy_protocol(haproxy):
    c = h2_client_from("127.0.0.2", haproxy.tls_port)
    with c:
        sids = [c.request("GET", "/cgi-bin/env.py") for _ in range(4)]
        for sid in sids:
            r = c.wait_done(sid)
            assert r.status == 200
            assert "REMOTE_ADDR=127.0.0.2\n" in r.body.decode()
        allowed = c.get("/only-2")
        denied = c.get("/only-3")
        assert (allowed.status, denied.status) == (404, 403)
    cgi = r'^127\.0\.0\.2 127\.0\.0\.10 "GET /cgi-bin/env.py HTTP/2.0" 200'
    denied_line = r'^127\.0\.0\.2 127\.0\.0\.10 "GET /only-3 HTTP/2.0" 403'

    def logs():
        return "".join(open(os.path.join(haproxy.dir, "inst%d" % i, "logs",
                                         "deploy_access_log")).read() for i in (0, 1))

    def complete_logs():
        text = logs()
        done = len(re.findall(cgi, text, re.M)) >= 4 and re.search(denied_line, text, re.M)
        return text if done else ""
    # the last lines may come after the answers (CI's ASan run read three of
    # the four): wait for them, bounded
    text = eventually(complete_logs, 20) or logs()
    assert len(re.findall(cgi, text, re.M)) >= 4, text
    assert re.search(denied_line, text, re.M), text


def load_during(t, action, n=3000):
    out = {}

    def run():
        out["h2load"] = t.h2load("-n", str(n), "-c", "8", "-m", "10", "-t", "1",
                                 "http://127.0.0.1:%d/1k.txt" % t.h2c_port)
    th = threading.Thread(target=run)
    th.start()
    time.sleep(0.3)
    action()
    th.join(180)
    return out["h2load"]


def test_graceful_restart_of_an_instance_under_load_loses_no_request(haproxy):
    out = load_during(haproxy, lambda: haproxy.topo.instances[0].reload())
    h2load_ok(out, 3000)


def test_stopped_instance_gives_its_load_to_the_other_and_takes_it_back(haproxy):
    out = load_during(haproxy, lambda: haproxy.topo.stop_instance(1))
    h2load_ok(out, 3000)
    assert {instance_of(haproxy.curl("/index.html")) for _ in range(4)} == {"inst0"}
    haproxy.topo.start_instance(1)
    deadline = time.time() + 10
    seen = set()
    while time.time() < deadline and "inst1" not in seen:
        seen.add(instance_of(haproxy.curl("/index.html")))
        time.sleep(0.2)
    assert "inst1" in seen


@pytest.fixture(scope="module")
def nghttpx(env):
    with Running(env, "--front", "nghttpx", "--client-ip", "xff") as t:
        yield t


@pytest.mark.parametrize("proto", ["--http2", "--http1.1"])
def test_nghttpx_serves_clients_with_their_address_from_x_forwarded_for(nghttpx, proto):
    seen = set()
    for source in ("127.0.0.2", "127.0.0.3") * 3:
        out = nghttpx.curl("/cgi-bin/env.py", proto, source=source)
        assert status_of(out) == 200, out
        assert "REMOTE_ADDR=%s\n" % source in out
        seen.add(instance_of(out))
    assert seen == {"inst0", "inst1"}


def backend_connections(t):
    ports = {t.topo.backend_port(i) for i in range(t.topo.n)}
    out = subprocess.run(["ss", "-Htn", "state", "established"], stdout=subprocess.PIPE,
                         text=True).stdout
    return sum(1 for line in out.splitlines()
               if any(line.split()[3].endswith(":%d" % p) for p in ports))


def test_thousand_client_connections_over_a_few_backend_connections_all_served(nghttpx):
    from conftest import report
    peak = [0]
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            peak[0] = max(peak[0], backend_connections(nghttpx))
            time.sleep(0.2)
    w = threading.Thread(target=watch)
    w.start()
    try:
        out = nghttpx.h2load("-n", "5000", "-c", "1000", "-m", "1", "-t", "1",
                             "https://127.0.0.1:%d/1k.txt" % nghttpx.tls_port, timeout=180)
    finally:
        stop.set()
        w.join()
    h2load_ok(out, 5000)
    assert peak[0] <= 16, peak[0]
    report("deploy: 1000 client connections through nghttpx, 5000 requests, 0 failed, "
           "at most %d backend connections to the 2 instances" % peak[0])
