"""mod_status and mod_logio see HTTP/2 streams: every stream counts as an
access of its client connection with the bytes its response carried, as an
HTTP/1.1 request does, so that monitoring built on `server-status?auto`
and access logs with `%O`, `%I`, `%S` read HTTP/2 traffic. The same tests
pass with the stock module. Both count HTTP/2 frame bytes (heads as HPACK
made them); test_counting.py compares the figures."""

import os
import re
import time

import pytest

from h2client import H2Client, install_cgi, with_conf
from h2raw import RawConn, headers_frame, request_block

pytestmark = pytest.mark.h2


def totals(env):
    r = env.get("http1", "/server-status?auto")
    assert r.status == 200, r
    text = r.body.decode()
    acc = int(re.search(r"^Total Accesses: (\d+)", text, re.M).group(1))
    kb = int(re.search(r"^Total kBytes: (\d+)", text, re.M).group(1))
    return acc, kb


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_server_status_counts_every_http2_stream_and_its_bytes(env, how):
    n = 40
    before_acc, before_kb = totals(env)
    with H2Client.connect(env, how) as c:
        for i in range(n):
            r = c.get("/10k.txt?status-%d" % i)
            assert r.status == 200
    # the n streams and the first status request, once each has ended
    deadline = time.monotonic() + 5
    while True:
        after_acc, after_kb = totals(env)
        if after_acc - before_acc >= n + 1 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    # +2: the status requests made while polling count too
    assert n + 1 <= after_acc - before_acc <= n + 1 + 25, (before_acc, after_acc)
    # 40 x 10 KiB = 400 KiB of bodies, plus heads and status pages
    assert 400 <= after_kb - before_kb <= 420, (before_kb, after_kb)


def log_with(env, name, fmt):
    """For fixtures: an access log of its own in format fmt; its path."""
    path = env.sandbox.path("logs", name + "_log")
    if os.path.exists(path):
        os.unlink(path)
    return with_conf(env, name, 'LogFormat "%s" %s\nCustomLog "%s" %s\n'
                     % (fmt, name, path, name), value=path)


@pytest.fixture
def logio_log(env):
    yield from log_with(env, "logio", "%{H2_STREAM_ID}e %B %O %I %S %>s")


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_access_log_counts_bytes_out_and_in_per_stream(env, logio_log, how):
    sizes = {"/1k.txt": 1024, "/10k.txt": 10240}
    with H2Client.connect(env, how) as c:
        rs = [(c.get(p + "?logio"), n) for p, n in sizes.items()]
    for r, n in rs:
        assert r.status == 200
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        lines = open(logio_log).read().split("\n") if os.path.exists(logio_log) else []
        if len([l for l in lines if l[:1].isdigit()]) >= len(rs):
            break
        time.sleep(0.1)
    by_sid = {}
    for line in lines:
        f = line.split()
        if len(f) == 6 and f[0].isdigit():      # HTTP/2 requests only
            by_sid[int(f[0])] = [int(x) for x in f[1:5]] + [f[5]]
    for r, n in rs:
        b, o, i, s, status = by_sid[r.stream_id]
        assert status == "200" and b == n
        assert n + 20 <= o <= n + 1000, (n, o)       # body and its head
        assert 20 <= i <= 2000, i                     # a GET's head
        assert s == i + o


SLOW_CGI = r"""
import sys, time
sys.stdout.write("Content-Type: text/plain\r\n\r\n")
for i in range(3):
    sys.stdout.write("x" * 2000)
    sys.stdout.flush()
    time.sleep(0.3)
"""


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_access_log_counts_all_bytes_of_a_response_made_in_pieces(env, logio_log, how):
    """A handler that writes, waits and writes again: the pieces go to the
    connection as they come, and %O still counts all of them."""
    install_cgi(env, "slow-pieces.py", SLOW_CGI)
    with H2Client.connect(env, how) as c:
        r = c.get("/cgi-bin/slow-pieces.py")
    assert r.status == 200 and len(r.body) == 6000
    deadline = time.monotonic() + 5
    fields = None
    while time.monotonic() < deadline and fields is None:
        for line in open(logio_log).read().split("\n"):
            f = line.split()
            if len(f) == 6 and f[0] == str(r.stream_id):
                fields = f
        time.sleep(0.1)
    assert fields, open(logio_log).read()
    b, o = int(fields[1]), int(fields[2])
    assert b == 6000
    assert 6000 + 20 <= o <= 6000 + 1000, o


WAIT_CGI = r"""
import sys, time
time.sleep(2)
sys.stdout.write("Content-Type: text/plain\r\n\r\nwaited\n")
"""


def status_page(env):
    r = env.get("http1", "/server-status")
    assert r.status == 200, r
    return r.body.decode()


def row_with(page, *words):
    """The table rows (<tr>...</tr>) of page that contain all words."""
    rows = re.findall(r"<tr>.*?</tr>", page, re.S)
    return [row for row in rows if all(w in row for w in words)]


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_server_status_shows_a_connection_and_its_stream_while_it_runs(env, how):
    """While a stream is with its handler, server-status has a line for its
    connection: the protocol, the streams started and done, the request.
    (Stock shows it on the scoreboard line of the thread the connection
    holds; mod_h2's connection holds no thread while it waits, and lists
    its connections in a table of its own.)"""
    install_cgi(env, "status-wait.py", WAIT_CGI)
    path = "/cgi-bin/status-wait.py?%s" % how
    with RawConn(env, how) as c:
        c.send(headers_frame(1, request_block(c, path)))
        rows, deadline = [], time.monotonic() + 1.5
        while not rows and time.monotonic() < deadline:
            rows = row_with(status_page(env), ">%s<" % how, "GET " + path)
            time.sleep(0.1)
        assert rows, status_page(env)
        assert re.search(r"\[?1/0\]?", rows[0]), rows[0]
        assert c.wait(lambda: c.stream_done(1), 5), c.answer()
        assert c.status(1) == 200


def test_server_status_auto_counts_http2_connections_streams_and_workers(env):
    """`?auto` has H2Connections, H2StreamsOpen and the workers (busy, idle,
    the maximum) summed over the children: a stream in its handler counts
    as open and keeps a worker busy; once it ended, both go back."""
    if env.module != "ours":
        pytest.skip("stock adds no HTTP/2 lines to ?auto")
    install_cgi(env, "status-wait.py", WAIT_CGI)
    quiet = lambda v: v["H2StreamsOpen"] == 0 and v["H2WorkersBusy"] == 0
    before = env.status_h2_when(quiet)
    assert set(before) == {"H2Connections", "H2StreamsOpen", "H2WorkersBusy",
                           "H2WorkersIdle", "H2WorkersMax"}, before
    assert quiet(before) and before["H2WorkersMax"] >= 1, before
    with RawConn(env, "h2c") as c:
        c.send(headers_frame(1, request_block(c, "/cgi-bin/status-wait.py?auto")))
        during = env.status_h2_when(lambda v: v["H2StreamsOpen"] == 1, 1.5)
        assert c.wait(lambda: c.stream_done(1), 5), c.answer()
        assert c.status(1) == 200
        ended = env.status_h2_when(quiet)
        conns_open = ended["H2Connections"]
    gone = env.status_h2_when(lambda v: v["H2Connections"] == conns_open - 1)
    assert during["H2StreamsOpen"] == 1 and during["H2WorkersBusy"] >= 1, during
    assert during["H2Connections"] >= 1, during
    assert quiet(ended), ended
    assert gone["H2Connections"] == conns_open - 1, (ended, gone)


@pytest.fixture
def duration_log(env):
    yield from log_with(env, "duration", "%{H2_STREAM_ID}e %D %H %U")


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_access_log_duration_and_protocol_are_the_streams(env, duration_log, how):
    """%D is the stream's own time (the CGI sleeps 0.6 s in all; a fast
    file on the same connection takes far less), %H is HTTP/2.0."""
    install_cgi(env, "slow-pieces.py", SLOW_CGI)
    with H2Client.connect(env, how) as c:
        slow = c.get("/cgi-bin/slow-pieces.py?duration")
        fast = c.get("/1k.txt?duration")
    assert slow.status == 200 and fast.status == 200
    deadline, by_sid = time.monotonic() + 5, {}
    while time.monotonic() < deadline and len(by_sid) < 2:
        by_sid = {int(f[0]): f[1:] for f in (l.split() for l in open(duration_log))
                  if len(f) == 4 and f[3] in ("/cgi-bin/slow-pieces.py", "/1k.txt")}
        time.sleep(0.1)
    d_slow, proto_slow, _ = by_sid[slow.stream_id]
    d_fast, proto_fast, _ = by_sid[fast.stream_id]
    assert proto_slow == proto_fast == "HTTP/2.0"
    assert int(d_slow) >= 600000, d_slow
    assert int(d_fast) < int(d_slow) - 400000, (d_fast, d_slow)
