"""Forward proxying over HTTP/2 (H2ProxyRequests). A client that uses the
server as its forward proxy names the origin in :scheme and :authority.
With `H2ProxyRequests on` and mod_proxy's `ProxyRequests On`, a request
for another origin is forwarded to it by mod_proxy, as the same request
over HTTP/1.1 (`GET http://origin/x`) is; one for the server's own name is
served locally; without H2ProxyRequests nothing is proxied. The origin is
a small HTTP/1.1 server on loopback started here."""

import subprocess
import time
import uuid

import pytest

from h2client import FORWARD_PROXY_CONF as PROXY_MODULES
from h2client import (H2Client, origin_server, remove_conf, tcp_echo_server, with_conf,
                      with_vhost_conf)
from h2env import eventually

pytestmark = pytest.mark.h2

ORIGIN_PORT_OFFSET = 62      # base + 62: the origin server of these tests
ECHO_PORT_OFFSET = 67        # base + 67: the TCP echo server CONNECT reaches


@pytest.fixture(scope="module")
def origin(env):
    with origin_server(env.port_base + ORIGIN_PORT_OFFSET) as authority:
        yield authority


@pytest.fixture
def proxy_on(env, origin):
    yield from with_conf(env, "fwd-proxy", PROXY_MODULES + "H2ProxyRequests on\n",
                         value=origin)


@pytest.fixture
def proxy_h1_only(env, origin):
    yield from with_conf(env, "fwd-proxy", PROXY_MODULES + "H2ProxyRequests off\n",
                         value=origin)


def get_via(env, how, authority, path, scheme="http"):
    """GET path from authority, the server being the client's proxy."""
    with H2Client.connect(env, how) as c:
        c.authority, c.scheme = authority, scheme
        return c.get(path)


def access_line(env, marker):
    def lines():
        with open(env.sandbox.access_log, errors="replace") as f:
            return [l for l in f if marker in l]
    found = eventually(lines, 5)
    return found[-1] if found else None


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_request_for_another_origin_is_forwarded(env, proxy_on, how):
    marker = uuid.uuid4().hex
    r = get_via(env, how, proxy_on, "/fwd/x?m=" + marker)
    assert r.status == 200, r
    assert r.headers.get("x-origin") == "yes"
    assert r.body == ("origin saw GET /fwd/x?m=%s host=%s" % (marker, proxy_on)).encode()
    # %r names the absolute target, as for HTTP/1.1 proxy requests
    assert '"GET http://%s/fwd/x?m=%s HTTP/2.0" 200' % (proxy_on, marker) \
        in access_line(env, marker)


@pytest.fixture
def proxy_on_named(env, origin):
    """H2ProxyRequests on, and the virtual hosts named with their ports:
    httpd takes an absolute target for itself only when its host and port
    match a ServerName (ap_matches_request_vhost), for HTTP/1.1 alike."""
    env.add_conf("fwd-proxy", PROXY_MODULES + "H2ProxyRequests on\n")
    try:
        yield from with_vhost_conf(env, "fwd-name", lambda where: "ServerName %s:%d\n" % (
            env.domain, env.http_port if where == "http" else env.https_port))
    finally:
        remove_conf(env, "fwd-proxy", "server")
        env.reload()


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_request_for_the_servers_own_name_is_served_locally(env, proxy_on_named, how):
    with H2Client.connect(env, how) as c:
        r = c.get("/1k.txt")
    assert r.status == 200, r
    assert "x-origin" not in r.headers
    assert r.body == env.docroot_file("1k.txt")


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_without_h2proxyrequests_another_origin_is_not_forwarded(env, proxy_h1_only, how):
    r = get_via(env, how, proxy_h1_only, "/fwd/x")
    assert "x-origin" not in r.headers, r
    assert r.status == 404, r


def test_http11_reference_forwards_through_proxyrequests(env, proxy_h1_only):
    """The same server as an HTTP/1.1 forward proxy (curl --proxy)."""
    r = env.curl("http://%s/fwd/y" % proxy_h1_only, "--proxy",
                 "http://127.0.0.1:%d" % env.http_port)
    assert r.exit_code == 0, r
    assert r.body == ("origin saw GET /fwd/y host=%s" % proxy_h1_only).encode()


def test_nghttp_with_a_foreign_authority_is_forwarded(env, proxy_on):
    """nghttp (a real HTTP/2 client) sending the origin's :authority."""
    p = env.nghttp("http://127.0.0.1:%d/fwd/n" % env.http_port, "-H",
                   ":authority: %s" % proxy_on)
    out = p.stdout.decode()
    assert p.returncode == 0, p.stderr
    assert out == "origin saw GET /fwd/n host=%s" % proxy_on, out


UPGRADE_PROXY_PORT_OFFSET = 64   # base + 64: an h2c-only virtual host


@pytest.fixture
def upgrade_proxy(env):
    port = env.port_base + UPGRADE_PROXY_PORT_OFFSET
    conf = PROXY_MODULES + """\
<IfModule !proxy_http2_module>
LoadModule proxy_http2_module /usr/lib/apache2/modules/mod_proxy_http2.so
</IfModule>
Listen 127.0.0.1:{port}
<VirtualHost 127.0.0.1:{port}>
    ServerName upgrade-proxy.localhost
    Protocols h2c
    RewriteEngine on
    RewriteRule ^/(.*)$ h2c://%{{HTTP_HOST}}/$1 [P]
</VirtualHost>
""".format(port=port)
    yield from with_conf(env, "upgrade-proxy", conf, value=port)


def test_an_h2c_upgrade_in_absolute_form_is_sent_on_by_rewrite_to_h2c(env, upgrade_proxy):
    """curl --http2 --proxy to a virtual host that speaks only h2c: the
    request `GET http://origin/path` with Upgrade: h2c becomes stream 1
    with the URI's scheme, authority and path (RFC 9112 3.2.2), and
    mod_rewrite's [P] sends it on to h2c://%{HTTP_HOST}/ through
    mod_proxy_http2: the origin's (the h2c port's) 1k.txt comes back."""
    r = subprocess.run(["curl", "-sS", "--http2", "--max-time", "20", "--proxy",
                        "127.0.0.1:%d" % upgrade_proxy, "-o", "-", "-w", "\n%{http_code} %{http_version}",
                        "http://127.0.0.1:%d/1k.txt?via=upgrade" % env.http_port],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    body, _, tail = r.stdout.rpartition(b"\n")
    assert r.returncode == 0, r.stderr
    assert tail == b"200 2"
    assert len(body) == 1024


CONNECT_CONF = """\
<IfModule !proxy_connect_module>
LoadModule proxy_connect_module /usr/lib/apache2/modules/mod_proxy_connect.so
</IfModule>
AllowCONNECT %d
H2ProxyRequests on
"""


@pytest.fixture(scope="module")
def echo(env):
    with tcp_echo_server(env.port_base + ECHO_PORT_OFFSET) as authority:
        yield authority


@pytest.fixture
def connect_on(env, echo):
    yield from with_conf(env, "fwd-proxy", PROXY_MODULES
                         + CONNECT_CONF % (env.port_base + ECHO_PORT_OFFSET), value=echo)


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_connect_tunnels_both_ways_and_half_closes(env, connect_on, how):
    """CONNECT (RFC 9113 8.5) through mod_proxy_connect: its "200
    Connection Established" is the stream's 200 (no Content-Length, RFC
    9110 9.3.6), each write of the origin comes back at once, and the
    client's END_STREAM ends only its way: the origin's last bytes, sent
    after it saw EOF, arrive, then the stream's end (as stock)."""
    with H2Client.connect(env, how) as c:
        c.wait_settings()
        sid = c.conn.get_next_available_stream_id()
        c.conn.send_headers(sid, [(":method", "CONNECT"), (":authority", connect_on)])
        c.flush()
        r = c._resp(sid)
        c.wait(lambda: r.header_list is not None or r.reset_code is not None, 10, "200")
        assert r.status == 200 and "content-length" not in r.headers, r
        for msg in (b"a", b"hello", b"x" * 20000):
            want = r.body_len + len(msg)
            start = time.monotonic()
            c.send_body(sid, msg)
            c.wait(lambda: r.body_len >= want, 5, "the echo")
            assert time.monotonic() - start < 1.0 * env.slow
        c.send_body(sid, b"", end_stream=True)
        c.wait(lambda: r.ended or r.reset_code is not None, 10, "stream end")
        assert r.ended and r.reset_code is None, r
        assert r.body == b"a" + b"hello" + b"x" * 20000 + b"bye"
