"""Server push (RFC 9113 8.4; H2Push, H2PushResource, H2PushDiarySize).
A 2xx response whose Link fields ask for preload (rel=preload, without
nopush) of a resource of its own origin gets a PUSH_PROMISE for each, on
its stream and ahead of its head, when H2Push is on where the request went
and the client takes pushes (SETTINGS_ENABLE_PUSH, default 1). The pushed
request is a GET with the client's :scheme and :authority, processed like
any request (its CGI sees H2_PUSHED=PUSHED and H2_PUSHED_ON). A connection
pushes a resource once (its diary). H2PushResource pushes a path of the
location's own ("critical": ahead of the location's response).
H2PushPriority places a pushed stream against the client's stream by its
content type: After (default), Before, Interleaved, in RFC 9218 urgencies
for a client that announced SETTINGS_NO_RFC7540_PRIORITIES (test_priorities
.py; nghttp2 takes no RFC 7540 reprioritisation from a server that
announced it, so RFC 7540 clients see their pushes After the page)."""

import time

import h2.settings
import pytest

from h2client import H2Client, install_cgi, install_file, remove_conf, with_conf

pytestmark = pytest.mark.h2

NO_RFC7540_PRIORITIES = 0x9
CSS = "body { color: black }\n" * 20
PAGE_CONF = """\
<Location "/push/index.html">
    Header add Link "</push/a.css>; rel=preload; as=style"
</Location>
<Location "/push/nopush.html">
    Header add Link "</push/a.css>; rel=preload; nopush"
</Location>
<Location "/push/foreign.html">
    Header add Link "<https://other.example:443/push/a.css>; rel=preload"
</Location>
<Location "/push/cgi.html">
    Header add Link "</cgi-bin/push-env.py>; rel=preload"
</Location>
<Location "/push/slow.html">
    Header add Link "</cgi-bin/push-slow.py>; rel=preload"
</Location>
<Location "/push/off/">
    H2Push off
    Header add Link "</push/a.css>; rel=preload"
</Location>
<Location "/push/resource.html">
    H2PushResource /push/b.js
</Location>
<Location "/push/big.html">
    Header add Link "</push/big.css>; rel=preload"
</Location>
<Location "/push/critical.html">
    H2PushResource /push/big.css critical
</Location>
<Location "/cgi-bin/push-page.py">
    Header add Link "</push/a.css>; rel=preload"
</Location>
"""

PAGE_CGI = r"""
import sys
sys.stdin.buffer.read()
sys.stdout.write("Content-Type: text/html\r\n\r\n<html>page</html>\n")
"""

ENV_CGI = r"""
import os, sys
sys.stdout.write("Content-Type: text/plain\r\n\r\n")
for k in ("H2PUSH", "H2_PUSH", "H2_PUSHED", "H2_PUSHED_ON", "H2_STREAM_ID"):
    sys.stdout.write("%s=%s\n" % (k, os.environ.get(k, "-")))
"""

SLOW_CGI = r"""
import sys, time
sys.stdout.write("Content-Type: text/plain\r\n\r\n")
sys.stdout.flush()
for i in range(300):
    sys.stdout.write("x" * 1000 + "\n")
    sys.stdout.flush()
    time.sleep(0.1)
"""


@pytest.fixture(scope="module")
def pages(env):
    for name in ("index", "nopush", "foreign", "cgi", "slow", "resource"):
        install_file(env, "htdocs/push/%s.html" % name, "<html>%s</html>\n" % name)
    install_file(env, "htdocs/push/off/index.html", "<html>off</html>\n")
    install_file(env, "htdocs/push/a.css", CSS)
    install_file(env, "htdocs/push/b.js", "var b = 1;\n")
    install_file(env, "htdocs/push/big.html", "<html>" + "p" * 60000 + "</html>\n")
    install_file(env, "htdocs/push/critical.html", "<html>" + "c" * 60000 + "</html>\n")
    install_file(env, "htdocs/push/big.css", "s" * 60000)
    install_cgi(env, "push-env.py", ENV_CGI)
    install_cgi(env, "push-slow.py", SLOW_CGI)
    install_cgi(env, "push-page.py", PAGE_CGI)


@pytest.fixture
def push_conf(env, pages):
    yield from with_conf(env, "push", PAGE_CONF)


def fetch(c, path, wait_pushes=True):
    """GET path; then wait for the pushed responses to complete."""
    r = c.get(path)
    if wait_pushes:
        for _, pid, _ in c.pushes:
            c.wait(lambda: c.responses[pid].ended or c.responses[pid].reset_code is not None,
                   10, "pushed stream %d" % pid)
    return r


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_preload_link_is_pushed_on_the_requests_stream(env, push_conf, how):
    with H2Client.connect(env, how) as c:
        r = fetch(c, "/push/index.html")
        assert r.status == 200, r
        assert len(c.pushes) == 1, c.pushes
        parent, pid, req = c.pushes[0]
        assert parent == r.stream_id and pid % 2 == 0
        assert (req[":method"], req[":scheme"], req[":authority"], req[":path"]) == \
            ("GET", c.scheme, c.authority, "/push/a.css")
        p = c.responses[pid]
        assert p.status == 200 and p.body == CSS.encode()
        assert p.headers["content-type"].startswith("text/css")


def test_a_resource_is_pushed_once_per_connection(env, push_conf):
    with H2Client.connect(env, "h2c") as c:
        fetch(c, "/push/index.html")
        r = fetch(c, "/push/index.html")
        assert r.status == 200
        assert len(c.pushes) == 1, c.pushes
    with H2Client.connect(env, "h2c") as c:       # a new connection: again
        fetch(c, "/push/index.html")
        assert len(c.pushes) == 1, c.pushes


@pytest.fixture
def no_diary(env, pages):
    yield from with_conf(env, "push", PAGE_CONF + "H2PushDiarySize 0\n")


def test_without_a_diary_a_resource_is_pushed_every_time(env, no_diary):
    with H2Client.connect(env, "h2c") as c:
        fetch(c, "/push/index.html")
        fetch(c, "/push/index.html")
        assert [req[":path"] for _, _, req in c.pushes] == ["/push/a.css"] * 2


@pytest.mark.parametrize("path", ["/push/nopush.html", "/push/foreign.html",
                                  "/push/off/index.html"])
def test_no_push_for_nopush_another_origin_or_h2push_off(env, push_conf, path):
    with H2Client.connect(env, "h2c") as c:
        r = fetch(c, path)
        c.ping()
        assert r.status == 200, r
        assert c.pushes == []
        assert "link" in r.headers


def test_no_push_to_a_client_that_refuses_them(env, push_conf):
    with H2Client.connect(env, "h2c") as c:
        c.conn.update_settings({h2.settings.SettingCodes.ENABLE_PUSH: 0})
        c.flush()
        c.ping()
        r = fetch(c, "/push/index.html")
        c.ping()
        assert r.status == 200 and c.pushes == []


def test_h2pushresource_pushes_its_path(env, push_conf):
    with H2Client.connect(env, "h2c") as c:
        r = fetch(c, "/push/resource.html")
        assert r.status == 200
        assert [req[":path"] for _, _, req in c.pushes] == ["/push/b.js"]
        assert c.responses[c.pushes[0][1]].body == b"var b = 1;\n"


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_pushed_request_sees_the_push_variables(env, push_conf, how):
    with H2Client.connect(env, how) as c:
        r = fetch(c, "/push/cgi.html")
        assert r.status == 200 and len(c.pushes) == 1, c.pushes
        p = c.responses[c.pushes[0][1]]
        assert p.status == 200, p
        e = dict(l.split("=", 1) for l in p.body.decode().splitlines())
        assert e == {"H2PUSH": "on", "H2_PUSH": "on", "H2_PUSHED": "PUSHED",
                     "H2_PUSHED_ON": str(r.stream_id), "H2_STREAM_ID": str(p.stream_id)}


def test_client_reset_of_a_pushed_stream_stops_its_request(env, push_conf):
    """The pushed CGI would stream for 30 s: the client's RST_STREAM ends
    it, and its request is logged as done within a few seconds."""
    env.ignore_log(r"AH01215|AH10157|AH00574|AH01225")
    with H2Client.connect(env, "h2c") as c:
        r = c.get("/push/slow.html")
        assert r.status == 200 and len(c.pushes) == 1, c.pushes
        pid = c.pushes[0][1]
        c.wait(lambda: c.responses[pid].body_len > 0, 10, "pushed data")
        c.conn.reset_stream(pid)
        c.flush()
        deadline = time.monotonic() + 5 * env.slow
        logged = False
        while not logged and time.monotonic() < deadline:
            c.pump(0.1)
            with open(env.sandbox.access_log, errors="replace") as f:
                logged = any("GET /cgi-bin/push-slow.py HTTP/2.0" in l for l in f)
        assert logged, "the pushed request did not end"
        assert c.get("/push/b.js").status == 200


def test_nghttp_receives_the_push(env, push_conf):
    p = env.nghttp("https://127.0.0.1:%d/push/index.html" % env.https_port, "-nv")
    out = p.stdout.decode()
    assert p.returncode == 0, p.stderr
    assert "recv PUSH_PROMISE frame" in out, out[-3000:]
    assert ":path: /push/a.css" in out


def first_data(env, path, conf_extra=""):
    """GET path with the stream windows shut until the page's and the
    pushed response's heads are there; then open them at once: which
    stream's DATA comes first is the priority's choice. Returns the
    stream ids in the order their first DATA came."""
    # RFC 9218 priorities: with them announced, nghttp2 takes no RFC 7540
    # reprioritisation from us (see docs/configuration.md)
    with H2Client.connect(env, "h2c", settings={NO_RFC7540_PRIORITIES: 1}) as c:
        c.conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
        c.flush()
        c.ping()
        sid = c.request("GET", path)
        c.wait(lambda: c.pushes and c.responses[sid].header_list is not None
               and c.responses[c.pushes[0][1]].header_list is not None, 10, "heads")
        pid = c.pushes[0][1]
        time.sleep(0.3)
        for s in (sid, pid):
            c.conn.increment_flow_control_window(1 << 20, s)
        c.conn.increment_flow_control_window(1 << 21)
        c.flush()
        c.wait(lambda: c.responses[sid].ended and c.responses[pid].ended, 10, "bodies")
        order = []
        for s in c.data_order:
            if s not in order:
                order.append(s)
        return order, sid, pid


@pytest.fixture
def priorities(env, pages):
    def configure(rule):
        env.add_conf("push", PAGE_CONF + rule)
        env.reload()
    yield configure
    remove_conf(env, "push", "server")
    env.reload()


@pytest.mark.parametrize("rule,first", [
    ("", "page"),                                        # * After 16
    ("H2PushPriority text/css Before\n", "pushed"),
    ("H2PushPriority * Before\nH2PushPriority text/css After 32\n", "page"),
])
def test_push_priority_decides_whose_data_goes_first(env, priorities, rule, first):
    priorities(rule)
    order, sid, pid = first_data(env, "/push/big.html")
    assert order[0] == (sid if first == "page" else pid), (order, sid, pid)


def test_critical_push_resource_goes_before_the_page(env, priorities):
    priorities("")
    order, sid, pid = first_data(env, "/push/critical.html")
    assert order[0] == pid, (order, sid, pid)


@pytest.fixture
def few_streams(env, pages):
    links = "".join('    Header add Link "</push/n%d.css>; rel=preload"\n' % i for i in range(4))
    for i in range(4):
        install_file(env, "htdocs/push/n%d.css" % i, CSS)
    yield from with_conf(env, "push", PAGE_CONF + "H2MaxSessionStreams 2\n"
                         '<Location "/push/many.html">\n%s</Location>\n' % links)


def test_pushed_streams_open_at_once_stay_within_h2maxsessionstreams(env, few_streams):
    """A response linking 4 resources on a connection whose server allows
    2 streams: 2 are pushed (the client asks for the rest itself), and the
    pushed streams do not count against the client's own 2."""
    install_file(env, "htdocs/push/many.html", "<html>many</html>\n")
    with H2Client.connect(env, "h2c") as c:
        c.wait_settings()
        r = c.get("/push/many.html")
        assert r.status == 200
        assert [req[":path"] for _, _, req in c.pushes] == ["/push/n0.css", "/push/n1.css"]
        sids = [c.request("GET", "/push/b.js") for _ in range(2)]
        for sid in sids:
            assert c.wait_done(sid).status == 200


@pytest.mark.parametrize("method,pushed", [("GET", ["/push/a.css"]), ("HEAD", [])])
def test_a_get_of_a_page_gets_its_pushes_a_head_does_not(env, push_conf, method, pushed):
    """Only a GET loads a page whose resources its client will want (a HEAD
    asks about the page; stock pushes for GETs only too)."""
    with H2Client.connect(env, "h2c") as c:
        r = c.get_with(method, "/cgi-bin/push-page.py")
        c.ping()
        assert r.status == 200, r
        assert [req[":path"] for _, _, req in c.pushes] == pushed


def test_a_post_to_a_page_promises_nothing(env, push_conf):
    """The same page, answered 200 with the same preload link, to a POST
    with a body: no PUSH_PROMISE (the client posted a form, it is not
    loading the page's resources), as with stock."""
    with H2Client.connect(env, "h2c") as c:
        sid = c.request("POST", "/cgi-bin/push-page.py", body=b"a=1" * 100)
        r = c.wait_done(sid)
        c.ping()
        assert r.status == 200 and r.body == b"<html>page</html>\n", r
        assert "link" in r.headers
        assert c.pushes == []


@pytest.mark.parametrize("policy,method,announced", [
    ("default", "GET", "default"), ("fast-load", "GET", "fast-load"),
    ("head", "HEAD", "head"), ("something-else", "GET", "default")])
def test_accept_push_policy_decides_what_is_promised(env, push_conf, policy, method,
                                                     announced):
    """accept-push-policy (the draft stock implements): "head" promises HEAD
    requests, whose responses have no body; the others promise GETs. The
    response that carries the promises says push-policy."""
    with H2Client.connect(env, "h2c") as c:
        r = c.get("/push/index.html", headers=[("accept-push-policy", policy)])
        assert r.status == 200
        assert [req[":method"] for _, _, req in c.pushes] == [method], c.pushes
        pid = c.pushes[0][1]
        c.wait(lambda: c.responses[pid].ended, 10, "pushed stream")
        p = c.responses[pid]
        assert p.status == 200 and p.headers["content-length"] == str(len(CSS))
        assert p.body == (b"" if method == "HEAD" else CSS.encode())
        assert r.headers.get("push-policy") == announced


def test_accept_push_policy_none_promises_nothing(env, push_conf):
    with H2Client.connect(env, "h2c") as c:
        r = c.get("/push/index.html", headers=[("accept-push-policy", "none")])
        c.ping()
        assert r.status == 200 and c.pushes == []
        assert "push-policy" not in r.headers
