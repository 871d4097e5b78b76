"""Slow clients at the frame level: a client that trickles a frame, or a
header block, a byte at a time is held to the header read timeout that
mod_reqtimeout gives HTTP/1.1 request heads on the same server
(RequestReadTimeout header=..., MinRate extending it), however often a
byte arrives, and is closed with GOAWAY ENHANCE_YOUR_CALM. A connection
that sits between frames is not: only KeepAliveTimeout / Timeout apply to
it. Request bodies are held to the body stage: a body slower than its
MinRate is ended, a decent one is not.
"""

import time

import pytest

from h2client import H2Client, install_file, remove_conf
from h2raw import (ENHANCE_YOUR_CALM, RawConn, Watch, continuation_frame,
                   data_frame, headers_frame, request_block)

pytestmark = pytest.mark.h2

HEADER_TIMEOUT = 3       # RequestReadTimeout header=3-5,MinRate=500
BODY_TIMEOUT = 3         # body=3,MinRate=500
MARGIN = 3               # for a loaded machine


@pytest.fixture(scope="module")
def reqtimeout(env):
    conf = ("<IfModule !reqtimeout_module>\nLoadModule reqtimeout_module "
            "/usr/lib/apache2/modules/mod_reqtimeout.so\n</IfModule>\n"
            "RequestReadTimeout header=%d-5,MinRate=500 body=%d,MinRate=500\n"
            "KeepAliveTimeout 20\n" % (HEADER_TIMEOUT, BODY_TIMEOUT))
    env.add_conf("abuse-slow", conf, "server")
    env.restart()
    yield
    remove_conf(env, "abuse-slow", "server")
    env.restart()


def trickle(env, conns, pieces, seconds):
    """Send each connection's pieces one per round, a round every 0.25 s,
    until every connection is closed or has a GOAWAY, or `seconds` pass;
    returns the seconds each took to be answered (None: not answered)."""
    t0 = time.monotonic()
    answered = [None] * len(conns)
    i = 0
    while time.monotonic() - t0 < seconds and None in answered:
        for k, c in enumerate(conns):
            if answered[k] is not None:
                continue
            if i < len(pieces[k]):
                c.send(pieces[k][i])
            c.pump(0)
            if c.goaways or c.closed:
                answered[k] = time.monotonic() - t0
        i += 1
        time.sleep(0.25)
    return answered


def ready_conns(env, n):
    """n connections past the SETTINGS exchange: the client's ACK must not
    land inside a frame it trickles."""
    conns = []
    for _ in range(n):
        c = RawConn(env, "h2c")
        conns.append(c)
    for c in conns:
        assert c.wait(lambda: c.server_settings, 10), c.answer()
    return conns


@pytest.mark.parametrize("what", ["headers-frame", "continuation-block"])
def test_trickled_frame_or_header_block_is_closed_after_header_timeout(env, reqtimeout, what):
    """100 connections each trickle a request a byte every 0.25 s: all are
    closed with GOAWAY ENHANCE_YOUR_CALM within the header timeout (3 s,
    MinRate adds next to nothing) plus a margin, while a normal client on
    another connection is served."""
    n = 100
    # a connection owing the rest of a frame keeps its MPM thread, as an
    # HTTP/1.1 request line read does: 100 of them are as many as the
    # sandbox's MaxRequestWorkers, and a slow server (ASan beside other
    # load) has the MPM note that it is near its limit: about the
    # settings, not a failure (the normal client's latency is asserted)
    env.ignore_log(r"AH10159: server is within MinSpareThreads of MaxRequestWorkers")
    env.ignore_log(r"AH00484: server reached MaxRequestWorkers setting")
    with Watch(env, "slow %s x %d" % (what, n)) as w:
        conns = ready_conns(env, n)
        pieces = []
        for c in conns:
            block = request_block(c, "/1k.txt?slow-" + what)
            if what == "headers-frame":
                wire = headers_frame(1, block)
            else:
                # the HEADERS frame and the CONTINUATION's frame header
                # whole, the rest of the block trickled (nghttp2 1.52 counts
                # a CONTINUATION frame header read in pieces as several
                # frames, and answers PROTOCOL_ERROR before any timeout)
                wire = (headers_frame(1, block[:10], end_headers=False)
                        + continuation_frame(1, block[10:], end_headers=True))
                c.send(wire[:9 + 10 + 9])
                wire = wire[9 + 10 + 9:]
            pieces.append([wire[i:i + 1] for i in range(len(wire))])
        answered = trickle(env, conns, pieces, HEADER_TIMEOUT + MARGIN + 10)
        codes = [c.goaway_code for c in conns]
        w.answer = "%d of %d got GOAWAY %s; slowest after %s s" % (
            codes.count(ENHANCE_YOUR_CALM), n, conns[0].answer(),
            max(a for a in answered if a is not None) if any(answered) else None)
        for c in conns:
            c.close()
    assert None not in answered, w.answer
    assert max(answered) <= HEADER_TIMEOUT + MARGIN, answered
    assert codes == [ENHANCE_YOUR_CALM] * n, [c.answer() for c in conns
                                              if c.goaway_code != ENHANCE_YOUR_CALM][:3]
    assert b"header read timeout" in conns[0].goaway[2]
    assert all(c.status(1) is None for c in conns)
    w.check(max_latency=2.0)


def test_connection_between_frames_is_not_cut_by_header_timeout(env, reqtimeout):
    """A connection that got its response and then sends nothing for twice
    the header timeout is still open (KeepAliveTimeout 20 s applies) and
    serves its next request."""
    with H2Client.connect(env, "h2c") as c:
        assert c.get("/1k.txt?idle-1").status == 200
        time.sleep(2 * HEADER_TIMEOUT)
        r = c.get("/1k.txt?idle-2")
        assert r.status == 200
        assert c.goaway is None


def test_request_trickled_faster_than_the_timeout_is_served(env, reqtimeout):
    """A request whose HEADERS frame arrives in pieces over 1.5 s (under
    the 3 s header timeout) is served."""
    c = ready_conns(env, 1)[0]
    wire = headers_frame(1, request_block(c, "/1k.txt?trickle-ok"))
    step = max(1, len(wire) // 6)
    for i in range(0, len(wire), step):
        c.send(wire[i:i + step])
        time.sleep(0.25)
    c.wait(lambda: c.stream_done(1), 5)
    c.close()
    assert c.status(1) == 200, c.answer()
    assert not c.goaways


def upload(env, rate_bytes, seconds, tag):
    """POST to echo.py, `rate_bytes` every 0.25 s for `seconds`, then the
    end of the body; returns the connection."""
    c = ready_conns(env, 1)[0]
    c.send(headers_frame(1, request_block(c, "/cgi-bin/echo.py?" + tag, "POST"),
                         end_stream=False))
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds and not c.stream_done(1) and not c.closed:
        c.send(data_frame(1, b"u" * rate_bytes))
        c.pump(0.25)
    c.send(data_frame(1, b"", end_stream=True))
    c.wait(lambda: c.stream_done(1) or c.closed, 10)
    c.close()
    return c


def test_body_slower_than_min_rate_is_ended(env, reqtimeout):
    """40 bytes a second against body=3,MinRate=500: after about 3 s the
    handler's read times out, and the stream ends with 408 (what HTTP/1.1
    answers on mod_reqtimeout's body timeout) or a reset, long before the
    client would finish."""
    env.ignore_log(r"AH0(1270|1225|1215)")   # cgid: reading the body failed
    t0 = time.monotonic()
    c = upload(env, 10, BODY_TIMEOUT + MARGIN + 6, "slow-body")
    took = time.monotonic() - t0
    assert c.status(1) == 408 or c.rst.get(1) is not None, c.answer()
    assert took < BODY_TIMEOUT + MARGIN + 4, took


def test_body_at_a_decent_rate_is_served(env, reqtimeout):
    """8000 bytes a second for 5 s (past the 3 s body timeout, which its
    MinRate extends) is read whole."""
    c = upload(env, 2000, 5, "decent-body")
    assert c.status(1) == 200, c.answer()
    headers = dict(c.headers[1][0])
    assert int(headers["x-body-length"]) >= 2000 * 15
