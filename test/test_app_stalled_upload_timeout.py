"""A stalled upload ends at the timeout as over HTTP/1.1, and nothing else
on its connection is touched (issue 28): with `Timeout 3` (and
`H2StreamTimeout 3`), a 20 MB upload to a handler that reads nothing for
far longer (stall.php behind php-fpm, a python CGI) ends with the status
HTTP/1.1 gives in the same situation, measured in the same test right
before; meanwhile and afterwards, other streams on the same HTTP/2
connection are answered, and the connection gets no GOAWAY.

Each case runs against any module; the HTTP/1.1 reference also under
H2_TEST_MODULE=none."""

import json
import os
import re
import socket
import threading
import time

import pytest

from conftest import report
from h2client import CGI_STALL, content, install_cgi, remove_conf
from h2mux import Loop, MuxConn, latency_line
from sandbox import read_head

TIMEOUT = 3
STALL_MAX = 20             # s the handler waits for its release, at most
SIZE = 20 << 20
OTHER_UPLOAD = 256 * 1024
MAX_GET_LATENCY = 1.0      # s; the last GET starts TIMEOUT - 1 s into the stall
DURING_GETS = 7

# kind: (stalled handler, fast handler on the same connection)
KINDS = {
    "php": ("/fpm/stall.php?max=%d&flag=" % STALL_MAX, "/fpm/upload.php"),
    "cgi": ("/cgi-bin/stall.py?max=%d&flag=" % STALL_MAX, "/cgi-bin/upload.py"),
}
# what the handlers log when their backend or client times out: the same
# over HTTP/1.1 and HTTP/2, part of the situation and not a failure
EXPECTED_LOG = [r"\[proxy_fcgi:error\] .*AH01075: Error dispatching request to .*\(polling\)",
                r"\[cgid:error\] .*AH02651: Error writing request body to script .*stall\.py",
                r"\[cgid:error\] .*Script timed out before returning headers: stall\.py"]


@pytest.fixture(scope="module")
def short_timeout(env, fpm):
    flag_dir = env.path("cgi-flags")
    os.makedirs(flag_dir, exist_ok=True)
    os.chmod(flag_dir, 0o755)
    install_cgi(env, "stall.py", CGI_STALL % flag_dir)
    env.add_conf("stall-timeout", "Timeout %d\n<IfModule http2_module>\n"
                 "    H2StreamTimeout %d\n</IfModule>\n" % (TIMEOUT, TIMEOUT))
    env.reload()
    yield flag_dir
    remove_conf(env, "stall-timeout", "server")
    env.reload()


@pytest.fixture(scope="module")
def stall_body():
    return content("stalled-upload", SIZE)


def release(kind, fpm, flag_dir, flag):
    if kind == "php":
        fpm.release(flag)
    else:
        with open(os.path.join(flag_dir, flag), "w") as f:
            f.write("go\n")


def h1_stalled_upload(env, path, body, timeout):
    """POST body over HTTP/1.1 (cleartext) while the answer is read on the
    side: the status httpd answers with (None: closed without one) and
    after how many seconds."""
    sock = socket.create_connection(("127.0.0.1", env.http_port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    head = ("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/octet-stream\r\n"
            "Content-Length: %d\r\n\r\n" % (path, env.domain, len(body))).encode()
    t0 = time.monotonic()

    def send():
        try:
            sock.sendall(head)
            sock.sendall(body)
        except OSError:
            pass       # the server answered and closed before all was sent
    t = threading.Thread(target=send, daemon=True)
    t.start()
    try:
        data = read_head(sock)
    except OSError:
        data = b""
    took = time.monotonic() - t0
    sock.close()
    t.join(5)
    m = re.match(rb"HTTP/1\.1 (\d{3})", data)
    return (int(m.group(1)) if m else None), took


@pytest.mark.parametrize("how", [pytest.param("h2", marks=pytest.mark.h2),
                                 pytest.param("h2c", marks=pytest.mark.h2), "http1"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_a_stalled_upload_ends_at_the_timeout_as_over_http11_and_touches_nothing_else(
        env, fpm, short_timeout, stall_body, kind, how):
    for pat in EXPECTED_LOG:
        env.ignore_log(pat)
    stall_path, fast_path = KINDS[kind]
    flag = "to-%s-%s-%d" % (kind, how, int(time.time() * 1000))
    try:
        h1_status, h1_took = h1_stalled_upload(env, stall_path + flag + "-h1", stall_body,
                                               STALL_MAX + 10)
    finally:
        release(kind, fpm, short_timeout, flag + "-h1")
    # the timeout ended it, not the handler's own end
    assert h1_took < STALL_MAX - 5, (h1_status, h1_took)
    if how == "http1":
        report("stalled upload %s http1: status %s after %.1f s (Timeout %d)" % (
            kind, h1_status, h1_took, TIMEOUT))
        assert h1_status is not None and h1_status >= 400, (h1_status, h1_took)
        return
    loop = Loop()
    c = loop.add(MuxConn(env, how))
    try:
        stalled = c.request("POST", stall_path + flag, body=stall_body,
                            headers=[("content-type", "application/octet-stream")])
        t0 = time.monotonic()
        # other streams while the upload stalls: a GET every 0.25 s from
        # 0.5 s to 2 s in, TIMEOUT - 1 s before the timeout at the latest
        during = []

        def tick():
            if len(during) < DURING_GETS and time.monotonic() >= t0 + 0.5 + 0.25 * len(during):
                during.append(c.request("GET", "/1k.txt"))
        loop.run(lambda: len(during) == DURING_GETS and all(g.done for g in during)
                 or stalled.done, 10 * env.slow, tick)
        during_first = [g.done and (not stalled.done or g.t_end < stalled.t_end)
                        for g in during]
        loop.run(lambda: stalled.done, (STALL_MAX + 10) * env.slow)
        took = (stalled.t_end or time.monotonic()) - t0
        # and streams after it
        after_get = c.request("GET", "/1k.txt")
        small = content("after-stall", OTHER_UPLOAD)
        after_up = c.request("POST", fast_path, body=small,
                             headers=[("content-type", "application/octet-stream")])
        loop.run(lambda: after_get.done and after_up.done, 20 * env.slow)
        closed = c.closed
    finally:
        release(kind, fpm, short_timeout, flag)
        loop.close()
    report("stalled upload %s %s: status %s (reset %s) after %.1f s; HTTP/1.1: %s after "
           "%.1f s (Timeout %d); GETs during the stall: %s" % (
               kind, how, stalled.status, stalled.reset_code, took, h1_status, h1_took,
               TIMEOUT, latency_line([g.latency for g in during if g.latency is not None])))
    assert stalled.status == h1_status, (stalled, h1_status)
    assert took < STALL_MAX - 5, took
    assert c.goaway is None, c.goaway
    assert not closed
    expect = env.docroot_file("1k.txt")
    assert len(during) == DURING_GETS and all(during_first), list(zip(during, during_first))
    # and without waiting for the timeout to free something
    assert max(g.latency for g in during) < MAX_GET_LATENCY * env.slow, during
    for s in during + [after_get]:
        assert (s.status, s.ended, s.data == expect) == (200, True, True), s
    assert (after_up.status, after_up.ended) == (200, True), after_up
    assert json.loads(after_up.data.decode())["size"] == OTHER_UPLOAD
