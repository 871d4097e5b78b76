"""Cleartext negotiation: HTTP/2 with prior knowledge (H2Direct), the
HTTP/1.1 `Upgrade: h2c` path (H2Upgrade) with and without request bodies,
and ports/vhosts whose `Protocols` leave HTTP/2 out.

Besides the sandbox's http port (h2c http/1.1, H2Direct and H2Upgrade at
their defaults) the tests open two more cleartext ports:

  port_base+81  Protocols h2c http/1.1, H2Direct off
  port_base+82  Protocols http/1.1
and a name-based vhost noupgrade.<domain> on the http port with
H2Upgrade off. Prior knowledge has no Host header to pick a vhost by, so
what a port's first (default) vhost says is what a preface gets.
"""

import hashlib
import json
import os
import re
import socket
import struct

import h2.config
import h2.connection
import h2.events
import pytest

from h2env import read_head, slowdown
from h2sock import H2Response

pytestmark = pytest.mark.h2

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
EMPTY_SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
# base64url SETTINGS payload: MAX_CONCURRENT_STREAMS 100, INITIAL_WINDOW_SIZE 65535
HTTP2_SETTINGS = "AAMAAABkAAQAAP__"
UPGRADE_BODY_MAX = 1024 * 1024


@pytest.fixture(scope="module")
def ports(env):
    direct_off = env.port_base + 81
    h1_only = env.port_base + 82
    sb = env.sandbox
    env.add_conf("negotiation", """\
Listen 127.0.0.1:{direct_off}
Listen 127.0.0.1:{h1_only}
<VirtualHost 127.0.0.1:{direct_off}>
    ServerName {domain}
    Protocols h2c http/1.1
    H2Direct off
    DocumentRoot "{docroot}"
</VirtualHost>
<VirtualHost 127.0.0.1:{h1_only}>
    ServerName {domain}
    Protocols http/1.1
    DocumentRoot "{docroot}"
</VirtualHost>
<VirtualHost 127.0.0.1:{http}>
    ServerName noupgrade.{domain}
    Protocols h2c http/1.1
    H2Upgrade off
    DocumentRoot "{docroot}"
</VirtualHost>
""".format(direct_off=direct_off, h1_only=h1_only, http=env.http_port,
           domain=env.domain, docroot=sb.docroot))
    env.reload()
    yield {"default": env.http_port, "direct_off": direct_off, "h1_only": h1_only}
    env.clear_conf()
    env.reload()


def raw_exchange(port, data, timeout=None):
    """Send `data` on a fresh connection, read until the server closes or
    `timeout` passes (5 s, longer under a sanitizer); returns (bytes read,
    closed by server)."""
    timeout = timeout or 5 * slowdown()
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
        got = b""
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                return got, False
            except ConnectionResetError:
                return got, True
            if not chunk:
                return got, True
            got += chunk
            if len(got) >= 9 and got[3] == 0x4 and not got.startswith(b"HTTP/"):
                return got, False   # an HTTP/2 SETTINGS frame: enough seen
    finally:
        s.close()


def first_frame(data):
    """(length, type, flags, stream id) of the HTTP/2 frame at data[0:9]."""
    length_hi, length_lo, ftype, flags, sid = struct.unpack(">BHBBI", data[:9])
    return (length_hi << 16) | length_lo, ftype, flags, sid & 0x7fffffff


def curl_port(env, port, path, *args, host=None):
    h = host or env.domain
    return env.curl("http://%s:%d%s" % (h, port, path),
                    "--resolve", "%s:%d:127.0.0.1" % (h, port), *args)


def body_file(env, size):
    """A file of `size` deterministic, non-text bytes; returns (path, data)."""
    data = (hashlib.sha256(b"%d" % size).digest() * (size // 32 + 1))[:size]
    p = env.path("tmp", "negotiation-body-%d.bin" % size)
    if not (os.path.exists(p) and os.path.getsize(p) == size):
        with open(p, "wb") as f:
            f.write(data)
    return p, data


def statuses(r):
    return [b["status_line"] for b in r.header_blocks]


# -------------------------------------------------- prior knowledge

def test_prior_knowledge_preface_is_answered_with_settings_frame(env, ports):
    got, closed = raw_exchange(ports["default"], PREFACE + EMPTY_SETTINGS)
    assert len(got) >= 9, got
    length, ftype, flags, sid = first_frame(got)
    assert (ftype, flags, sid) == (0x4, 0x0, 0), got[:9]
    assert length % 6 == 0


def test_prior_knowledge_get_is_served_over_http2_with_curl(env, ports):
    r = curl_port(env, ports["default"], "/1k.txt", "--http2-prior-knowledge",
                  "-w", "%{http_version}")
    assert r.exit_code == 0, r
    assert r.stdout == "2"
    assert statuses(r) == ["HTTP/2 200"]
    assert r.body == env.docroot_file("1k.txt")


def test_prior_knowledge_get_is_served_over_http2_with_nghttp(env, ports):
    url = "http://127.0.0.1:%d/2k.txt" % ports["default"]
    r = env.nghttp(url)
    assert r.returncode == 0, r.stderr
    assert r.stdout == env.docroot_file("2k.txt")
    r = env.nghttp(url, "-nv")
    out = r.stdout.decode(errors="replace")
    assert "HTTP Upgrade" not in out
    assert re.search(r"recv \(stream_id=\d+\) :status: 200$", out, re.M), out


def test_h2direct_off_answers_preface_with_http11_400_and_closes(env, ports):
    got, closed = raw_exchange(ports["direct_off"], PREFACE + EMPTY_SETTINGS)
    assert closed
    assert got.startswith(b"HTTP/1.1 400 "), got[:100]


def test_h2direct_off_never_gives_curl_prior_knowledge_http2(env, ports):
    r = curl_port(env, ports["direct_off"], "/1k.txt", "--http2-prior-knowledge",
                  "-w", "%{http_version}")
    assert r.exit_code != 0, r
    assert r.protocol != "HTTP/2"
    assert r.stdout in ("0", "1.1")


def test_h2direct_off_still_upgrades_http11_requests(env, ports):
    r = curl_port(env, ports["direct_off"], "/1k.txt", "--http2")
    assert r.exit_code == 0, r
    assert statuses(r) == ["HTTP/1.1 101 Switching Protocols", "HTTP/2 200"]
    assert r.body == env.docroot_file("1k.txt")


def test_port_without_h2c_answers_preface_with_http11_400_and_closes(env, ports):
    got, closed = raw_exchange(ports["h1_only"], PREFACE + EMPTY_SETTINGS)
    assert closed
    assert got.startswith(b"HTTP/1.1 400 "), got[:100]


def test_port_without_h2c_never_gives_curl_prior_knowledge_http2(env, ports):
    r = curl_port(env, ports["h1_only"], "/1k.txt", "--http2-prior-knowledge",
                  "-w", "%{http_version}")
    assert r.exit_code != 0, r
    assert r.protocol != "HTTP/2"


def test_port_without_h2c_ignores_upgrade_and_answers_http11(env, ports):
    r = curl_port(env, ports["h1_only"], "/1k.txt", "--http2")
    assert r.exit_code == 0, r
    assert statuses(r) == ["HTTP/1.1 200 OK"]
    assert "upgrade" not in r.headers
    assert r.body == env.docroot_file("1k.txt")


# -------------------------------------------------- Upgrade: h2c

def test_upgrade_response_is_served_on_stream_1_per_nghttp(env, ports):
    url = "http://127.0.0.1:%d/4k.txt" % ports["default"]
    r = env.nghttp(url, "-u", "-v")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode(errors="replace")
    assert "HTTP/1.1 101 Switching Protocols" in out
    assert "HTTP Upgrade success" in out
    assert "recv (stream_id=1) :status: 200" in out
    r = env.nghttp(url, "-u")
    assert r.returncode == 0, r.stderr
    assert r.stdout == env.docroot_file("4k.txt")


def test_upgrade_101_names_h2c(env, ports):
    r = curl_port(env, ports["default"], "/653b.txt", "--http2")
    assert r.exit_code == 0, r
    assert statuses(r) == ["HTTP/1.1 101 Switching Protocols", "HTTP/2 200"]
    switch = dict(r.header_blocks[0]["headers"])
    assert switch["upgrade"] == "h2c"
    assert r.body == env.docroot_file("653b.txt")


def test_upgrade_response_data_waits_for_the_clients_preface(env, ports):
    """Before the client's preface, what follows the 101 is the server's
    SETTINGS, its connection WINDOW_UPDATE and the response's HEADERS, no
    DATA: a client reads that together with the 101, and Debian 12's curl
    (7.88) fails a transfer when it is over 32 KB. With the preface in,
    all 100 KB arrive. Stock sends the first 64 KB of DATA at once (a
    documented improvement)."""
    conn, settings = upgrade_conn()
    s = socket.create_connection(("127.0.0.1", ports["default"]), timeout=10 * slowdown())
    try:
        s.sendall(("GET /100k.txt HTTP/1.1\r\nHost: %s:%d\r\n"
                   "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
                   "HTTP2-Settings: %s\r\n\r\n"
                   % (env.domain, ports["default"], settings)).encode())
        head, rest = read_head(s).split(b"\r\n\r\n", 1)
        assert head.split(b"\r\n")[0] == b"HTTP/1.1 101 Switching Protocols"
        s.settimeout(0.5 * slowdown())
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                rest += chunk
        except socket.timeout:
            pass
        s.settimeout(10 * slowdown())
        frames, pos = [], 0
        while pos + 9 <= len(rest):
            length, ftype, _, sid = first_frame(rest[pos:])
            frames.append((ftype, sid))
            pos += 9 + length
        assert pos == len(rest)
        assert frames == [(0x4, 0), (0x8, 0), (0x1, 1)], frames
        resp = read_stream_1(s, conn, rest)
    finally:
        s.close()
    assert resp.status == 200 and resp.ended
    assert resp.body == env.docroot_file("100k.txt")


def test_h2upgrade_off_vhost_answers_upgrade_request_over_http11(env, ports):
    r = curl_port(env, ports["default"], "/1k.txt", "--http2",
                  host="noupgrade." + env.domain)
    assert r.exit_code == 0, r
    assert statuses(r) == ["HTTP/1.1 200 OK"]
    assert "upgrade" not in r.headers
    assert r.body == env.docroot_file("1k.txt")


def test_h2upgrade_off_vhost_still_serves_prior_knowledge(env, ports):
    # H2Upgrade governs only the Upgrade path; H2Direct is still on there
    r = curl_port(env, ports["default"], "/1k.txt", "--http2-prior-knowledge",
                  host="noupgrade." + env.domain)
    assert r.exit_code == 0, r
    assert statuses(r) == ["HTTP/2 200"]
    assert r.body == env.docroot_file("1k.txt")


def test_upgrade_without_http2_settings_header_stays_http11(env, ports):
    r = curl_port(env, ports["default"], "/1k.txt", "--http1.1",
                  "-H", "Connection: Upgrade", "-H", "Upgrade: h2c")
    assert r.exit_code == 0, r
    assert statuses(r) == ["HTTP/1.1 200 OK"]
    assert r.body == env.docroot_file("1k.txt")


def test_upgrade_h2c_over_tls_is_ignored(env, ports):
    r = env.curl(env.https_url("/1k.txt"), "--http1.1",
                 "-H", "Connection: Upgrade, HTTP2-Settings", "-H", "Upgrade: h2c",
                 "-H", "HTTP2-Settings: " + HTTP2_SETTINGS)
    assert r.exit_code == 0, r
    assert statuses(r) == ["HTTP/1.1 200 OK"]
    assert r.body == env.docroot_file("1k.txt")


def test_upgrade_post_small_body_reaches_cgi_intact_over_http2(env, ports):
    src, data = body_file(env, 10 * 1024)
    r = curl_port(env, ports["default"], "/cgi-bin/upload.py", "--http2",
                  "--data-binary", "@" + src)
    assert r.exit_code == 0, r
    assert statuses(r) == ["HTTP/1.1 101 Switching Protocols", "HTTP/2 200"]
    assert r.json() == {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def upgrade_conn():
    """A client h2 connection that will ask for the upgrade; with the
    value of its HTTP2-Settings header."""
    conn = h2.connection.H2Connection(config=h2.config.H2Configuration(
        client_side=True, header_encoding="utf-8"))
    return conn, conn.initiate_upgrade_connection().decode()


def read_stream_1(s, conn, rest):
    """After a 101 on socket s: send conn's preface, feed conn `rest` (what
    came after the 101) and what follows, until stream 1 ends or is reset;
    returns its H2Response."""
    resp = H2Response(1)
    s.sendall(conn.data_to_send())
    while True:
        for ev in conn.receive_data(rest):
            if isinstance(ev, h2.events.ResponseReceived) and ev.stream_id == 1:
                resp.headers = dict(ev.headers)
                resp.status = int(resp.headers[":status"])
            elif isinstance(ev, h2.events.DataReceived) and ev.stream_id == 1:
                resp.body += ev.data
                conn.acknowledge_received_data(ev.flow_controlled_length, 1)
            elif isinstance(ev, h2.events.StreamEnded) and ev.stream_id == 1:
                resp.ended = True
            elif isinstance(ev, h2.events.StreamReset) and ev.stream_id == 1:
                resp.reset_code = int(ev.error_code)
        s.sendall(conn.data_to_send())
        if resp.ended or resp.reset_code is not None:
            return resp
        rest = s.recv(65536)
        if not rest:
            return resp


def upgrade_post_in_pieces(env, port, data, first=1000, pause=0.5):
    """POST `data` to upload.py with Upgrade: h2c, sending the headers and
    the first `first` body bytes, then (after `pause` s) the rest, as a slow
    client may. Returns (bytes the server sent before the body was
    complete, the HTTP/1.1 status line, H2Response of stream 1 or None)."""
    conn, settings = upgrade_conn()
    head = ("POST /cgi-bin/upload.py HTTP/1.1\r\nHost: %s:%d\r\n"
            "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
            "HTTP2-Settings: %s\r\nContent-Length: %d\r\n\r\n"
            % (env.domain, port, settings, len(data))).encode()
    s = socket.create_connection(("127.0.0.1", port), timeout=10 * slowdown())
    try:
        s.sendall(head + data[:first])
        early = b""
        s.settimeout(pause)
        try:
            early = s.recv(65536)
        except socket.timeout:
            pass
        s.settimeout(10 * slowdown())
        s.sendall(data[first:])
        buf = read_head(s, early)
        if b"\r\n\r\n" not in buf:
            return early, None, None
        status_block, rest = buf.split(b"\r\n\r\n", 1)
        status_line = status_block.split(b"\r\n")[0].decode()
        if not status_line.startswith("HTTP/1.1 101"):
            return early, status_line, None
        resp = read_stream_1(s, conn, rest)
        return early, status_line, resp
    finally:
        s.close()


@pytest.mark.parametrize("size", [20 * 1024, UPGRADE_BODY_MAX])
def test_upgrade_post_body_arriving_in_pieces_reaches_cgi_intact_over_http2(
        env, ports, size):
    _, data = body_file(env, size)
    early, status_line, resp = upgrade_post_in_pieces(env, ports["default"], data)
    assert status_line == "HTTP/1.1 101 Switching Protocols"
    assert resp is not None and resp.status == 200, resp
    assert json.loads(resp.body) == {"size": size,
                                     "sha256": hashlib.sha256(data).hexdigest()}


def test_upgrade_101_is_sent_only_after_whole_request_body_arrived(env, ports):
    """The module reads an upgrading request's body before it switches
    (it keeps at most 1 MB for that): curl stops sending an HTTP/1.1 body
    once it sees the 101, so an early 101 stalls curl uploads over ~64 KB."""
    _, data = body_file(env, 20 * 1024)
    early, status_line, resp = upgrade_post_in_pieces(env, ports["default"], data)
    assert early == b""
    assert status_line == "HTTP/1.1 101 Switching Protocols"


def test_upgrade_post_body_is_echoed_byte_exact_over_http2(env, ports):
    src, data = body_file(env, 10 * 1024)
    r = curl_port(env, ports["default"], "/cgi-bin/echo.py", "--http2",
                  "--data-binary", "@" + src)
    assert r.exit_code == 0, r
    assert statuses(r) == ["HTTP/1.1 101 Switching Protocols", "HTTP/2 200"]
    assert r.headers["x-body-length"] == str(len(data))
    assert r.body == data


@pytest.mark.parametrize("size,extra,why", [
    (2 * 1024 * 1024, (), "curl's own Expect: 100-continue on a >1 MB body"),
    (UPGRADE_BODY_MAX + 1, ("-H", "Expect:"), "body over 1 MB"),
    (10 * 1024, ("-H", "Expect: 100-continue"), "Expect: 100-continue"),
], ids=["2mb-curl-expect", "1mb+1-no-expect", "10k-expect"])
def test_upgrade_post_with_large_body_or_expect_is_served_over_http11(
        env, ports, size, extra, why):
    src, data = body_file(env, size)
    r = curl_port(env, ports["default"], "/cgi-bin/upload.py", "--http2", "-v",
                  "--data-binary", "@" + src, *extra)
    assert r.exit_code == 0, r
    assert "> Upgrade: h2c" in r.stderr
    sent_expect = "> Expect: 100-continue" in r.stderr
    assert sent_expect == (why != "body over 1 MB"), why
    expected = ["HTTP/1.1 100 Continue"] if sent_expect else []
    assert statuses(r) == expected + ["HTTP/1.1 200 OK"], why
    assert r.json() == {"size": size, "sha256": hashlib.sha256(data).hexdigest()}


def test_connection_stays_http2_after_upgrade_for_further_requests(env, ports):
    url = "http://%s:%d" % (env.domain, ports["default"])
    # env.curl puts its own URL last: -o gets 653b.txt, 1k.txt goes to stdout
    r = env.curl(url + "/1k.txt", "--http2", "-v", url + "/653b.txt")
    assert r.exit_code == 0, r
    # the second request reuses the upgraded connection: no second 101
    assert statuses(r) == ["HTTP/1.1 101 Switching Protocols", "HTTP/2 200",
                           "HTTP/2 200"]
    assert r.body == env.docroot_file("653b.txt")
    assert r.stdout.encode() == env.docroot_file("1k.txt")
    assert "Re-using existing connection" in r.stderr


def test_h2load_over_h2c_prior_knowledge_reports_h2c(env, ports):
    r, stats = env.h2load("http://127.0.0.1:%d/1k.txt" % ports["default"],
                          "-n", "40", "-c", "2", "-m", "5")
    assert r.returncode == 0, r.stderr
    assert stats["protocol"] == "h2c"
    assert stats["succeeded"] == 40
    assert stats["2xx"] == 40


def test_h2load_on_port_without_h2c_gets_no_http2(env, ports):
    r, stats = env.h2load("http://127.0.0.1:%d/1k.txt" % ports["h1_only"],
                          "-n", "4", "-c", "1", timeout=30)
    assert stats.get("succeeded", 0) == 0, r.stdout
    assert stats.get("2xx", 0) == 0
