"""A real browser negotiates HTTP/2: headless Chromium (Debian's `chromium`,
installed by sandbox/deps.sh) loads pages from the https port, and the
DevTools protocol reports the protocol each response came over.

Chromium runs with a private profile in the run dir's tmp/, maps the
sandbox domain to 127.0.0.1, ignores the sandbox CA being unknown to it and
is stopped by its pid (process group as a fallback) at the end.
"""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request

import pytest

from h2client import PROXY_MODULES_CONF, remove_conf, ws_echo_server
from h2env import eventually

pytestmark = pytest.mark.h2

CHROMIUM_NAMES = ("chromium", "chromium-browser")
START_TIMEOUT = 30
EVENT_TIMEOUT = 20


def chromium_bin():
    for name in CHROMIUM_NAMES:
        p = shutil.which(name)
        if p:
            return p
    return None


class DevTools:
    """Just enough of the Chrome DevTools protocol over one websocket."""

    def __init__(self, ws_url):
        import websocket
        self.ws = websocket.create_connection(ws_url, timeout=EVENT_TIMEOUT,
                                              suppress_origin=True)
        self.next_id = 0
        self.events = []

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass

    def _recv(self, deadline):
        self.ws.settimeout(max(0.1, deadline - time.time()))
        return json.loads(self.ws.recv())

    def call(self, method, **params):
        self.next_id += 1
        mid = self.next_id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        deadline = time.time() + EVENT_TIMEOUT
        while time.time() < deadline:
            msg = self._recv(deadline)
            if msg.get("id") == mid:
                if "error" in msg:
                    raise AssertionError("%s failed: %s" % (method, msg["error"]))
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)
        raise AssertionError("no answer to %s within %ds" % (method, EVENT_TIMEOUT))

    def wait_event(self, method, pred=lambda p: True):
        deadline = time.time() + EVENT_TIMEOUT
        while True:
            for i, ev in enumerate(self.events):
                if ev["method"] == method and pred(ev["params"]):
                    del self.events[i]
                    return ev["params"]
            if time.time() >= deadline:
                raise AssertionError("no %s event within %ds; got %s" % (
                    method, EVENT_TIMEOUT, [e["method"] for e in self.events][-20:]))
            msg = self._recv(deadline)
            if "method" in msg:
                self.events.append(msg)


@pytest.fixture(scope="module")
def browser(env):
    exe = chromium_bin()
    if not exe:
        pytest.skip("chromium not installed (sandbox/deps.sh installs Debian's "
                    "`chromium`; it was not available here)")
    try:
        import websocket  # noqa: F401
    except ImportError:
        pytest.skip("Python module websocket (PyPI websocket-client) missing: "
                    "run sandbox/deps.sh")
    profile = tempfile.mkdtemp(prefix="chromium-", dir=env.path("tmp"))
    log = open(os.path.join(profile, "chromium.log"), "wb")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync",
           "--disable-dev-shm-usage", "--user-data-dir=" + profile,
           "--ignore-certificate-errors", "--remote-debugging-port=0",
           "--remote-allow-origins=*",
           "--host-resolver-rules=MAP %s 127.0.0.1, MAP *.%s 127.0.0.1"
           % (env.domain, env.domain),
           "about:blank"]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        # with port 0 Chromium writes its port to DevToolsActivePort
        port_file = os.path.join(profile, "DevToolsActivePort")
        deadline = time.time() + START_TIMEOUT
        port = None
        while time.time() < deadline and proc.poll() is None:
            if os.path.exists(port_file):
                with open(port_file) as f:
                    first = f.readline().strip()
                if first.isdigit():
                    port = int(first)
                    break
            time.sleep(0.2)
        if port is None:
            log.flush()
            with open(log.name, "rb") as f:
                tail = f.read()[-2000:].decode(errors="replace")
            pytest.fail("chromium did not open its DevTools port within %ds "
                        "(exit %s):\n%s" % (START_TIMEOUT, proc.poll(), tail))
        with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port,
                                    timeout=10) as resp:
            targets = json.load(resp)
        page = [t for t in targets if t.get("type") == "page"][0]
        dt = DevTools(page["webSocketDebuggerUrl"])
        try:
            dt.call("Network.enable")
            dt.call("Page.enable")
            yield dt
        finally:
            dt.close()
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        # helper processes left in chromium's own process group
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        log.close()
        shutil.rmtree(profile, ignore_errors=True)


def navigate(dt, url):
    dt.call("Page.navigate", url=url)
    resp = dt.wait_event("Network.responseReceived",
                         lambda p: p["response"]["url"] == url)
    dt.wait_event("Page.loadEventFired")
    return resp["response"]


def navigate_new_generation(env, dt, url, timeout=15):
    """Navigate until the page comes from the sandbox's current generation:
    after a graceful restart Chromium may still hold an h2 connection to a
    child of the old one (until that child's GOAWAY reaches it), and whatever
    the old configuration did not offer (e.g. extended CONNECT) is not used
    on it."""
    deadline = time.time() + timeout
    n = 0
    while True:
        n += 1     # a fresh URL each time: not a response from the cache
        resp = navigate(dt, "%s%sgen-probe=%d" % (url, "&" if "?" in url else "?", n))
        headers = {k.lower(): v for k, v in resp["headers"].items()}
        if headers.get("x-sandbox-gen") == env.sandbox.generation:
            return resp
        assert time.time() < deadline, \
            "Chromium kept a connection to the old generation: %s" % headers
        time.sleep(0.2)


def access_lines(env, keep):
    """The sandbox's access log lines for which keep(line) is true."""
    with open(env.sandbox.access_log, errors="replace") as f:
        return [l for l in f if keep(l)]


def test_chromium_loads_page_over_h2_from_https_port(env, browser):
    url = env.https_url("/index.html")
    resp = navigate(browser, url)
    assert resp["protocol"] == "h2"
    assert resp["status"] == 200
    title = browser.call("Runtime.evaluate", expression="document.title")
    assert title["result"]["value"] == "mod_h2 sandbox"
    lines = eventually(lambda: access_lines(
        env, lambda l: '"GET /index.html HTTP/2.0" 200' in l and "HeadlessChrome" in l), 5)
    assert lines, "no HTTP/2 access log entry from HeadlessChrome"


def test_chromium_fetch_from_page_reuses_h2_and_gets_exact_bytes(env, browser):
    navigate(browser, env.https_url("/index.html"))
    url = env.https_url("/7.5k.txt")
    r = browser.call("Runtime.evaluate", awaitPromise=True, returnByValue=True,
                     expression="fetch(%s, {cache: 'no-store'}).then(r => r.text())"
                     % json.dumps(url))
    resp = browser.wait_event("Network.responseReceived",
                              lambda p: p["response"]["url"] == url)["response"]
    assert resp["protocol"] == "h2"
    assert resp["status"] == 200
    assert r["result"]["value"].encode() == env.docroot_file("7.5k.txt")


def test_chromium_gets_http11_from_http11_first_vhost(env, browser):
    """Its TLS setup differs from the default vhost's, so should Chromium
    send the request on its h2 connection to test.localhost (the
    certificate covers both names) it gets 421 and must use a connection
    of its own, where ALPN picks http/1.1."""
    name = "h1pref." + env.domain
    env.add_conf("browser-h1pref", """\
<VirtualHost 127.0.0.1:{port}>
    ServerName {name}
    Protocols http/1.1 h2
    ProtocolsHonorOrder on
    SSLCipherSuite HIGH:!aNULL:!MD5
    DocumentRoot "{docroot}"
    SSLEngine on
    SSLCertificateFile "{cert}"
    SSLCertificateKeyFile "{key}"
</VirtualHost>
""".format(port=env.https_port, name=name, docroot=env.sandbox.docroot,
           cert=env.sandbox.server_cert, key=env.sandbox.server_key))
    env.reload()
    try:
        url = "https://%s:%d/index.html" % (name, env.https_port)
        resp = navigate(browser, url)
        assert resp["protocol"] == "http/1.1"
        assert resp["status"] == 200
    finally:
        os.unlink(env.path("conf.d", "browser-h1pref.conf"))
        env.reload()


WS_PORT_OFFSET = 65          # base + 65: the WebSocket backend of this file

WS_CONF = PROXY_MODULES_CONF.replace("%", "%%") + \
    "ProxyPass /ws/ ws://127.0.0.1:%d/ upgrade=websocket\nH2WebSockets on\n"


@pytest.fixture
def ws_url(env, browser):
    """The echo backend behind /ws/ with H2WebSockets on, the page loaded
    from the generation that has them: yields wss://.../ws/."""
    with ws_echo_server(env.port_base + WS_PORT_OFFSET) as stats:
        env.add_conf("browser-ws", WS_CONF % stats["port"])
        env.reload()
        try:
            navigate_new_generation(env, browser, env.https_url("/index.html"))
            yield "wss://%s:%d/ws/" % (env.domain, env.https_port)
        finally:
            remove_conf(env, "browser-ws", "server")
            env.reload()


def run_websocket(browser, url, first, on_message):
    """Open a WebSocket in the page, send `first` once it is open, run the
    JavaScript on_message (with `ws` and `e`) for each message; resolves
    with the messages and the close event's code, reason and wasClean."""
    r = browser.call("Runtime.evaluate", awaitPromise=True, returnByValue=True,
                     expression="""new Promise((ok) => {
        const ws = new WebSocket(%s), got = [];
        const t = setTimeout(() => ok({got: got, timeout: true}), 15000);
        ws.onopen = () => ws.send(%s);
        ws.onmessage = (e) => { got.push(e.data); %s };
        ws.onclose = (e) => { clearTimeout(t);
            ok({got: got, code: e.code, reason: e.reason, clean: e.wasClean}); };
    })""" % (json.dumps(url), json.dumps(first), on_message))
    return r["result"].get("value", r)


def test_chromium_opens_websocket_over_its_h2_connection(env, browser, ws_url):
    """With H2WebSockets on, Chromium opens a wss:// WebSocket as an
    extended CONNECT on the h2 connection it has (RFC 8441): the access log
    has the WebSocket's request as HTTP/2.0, and messages echo."""
    res = run_websocket(browser, ws_url + "chromium", "whoami", "ws.close();")
    assert res["got"] == ["path=/chromium upgrade=websocket version=13 key=24"], res
    lines = eventually(lambda: access_lines(env, lambda l: "/ws/chromium" in l), 5)
    # logged as HTTP/1.1 logs a WebSocket: 101 (the client saw 200)
    assert lines and '"GET /ws/chromium HTTP/2.0" 101' in lines[-1], lines


def test_chromium_closing_a_websocket_closes_cleanly(env, browser, ws_url):
    """The page closes (1000, 'bye'): the backend's answering CLOSE
    reaches it before the stream's end, so the close is clean (it was
    1006, unclean, while that CLOSE came with END_STREAM)."""
    res = run_websocket(browser, ws_url + "close", "hello",
                        "ws.close(1000, 'bye');")
    assert res.get("got") == ["hello"], res
    assert res.get("code") == 1000 and res.get("clean") is True, res
    assert res.get("reason") == "bye", res


def test_chromium_sees_the_backends_close_cleanly(env, browser, ws_url):
    """The backend closes ("bye" asks it to): Chromium answers its CLOSE,
    ends its side, and sees a clean close with the backend's code."""
    res = run_websocket(browser, ws_url + "bye", "bye", "")
    assert res.get("got") == [], res
    assert res.get("code") == 1000 and res.get("clean") is True, res
