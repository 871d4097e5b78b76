"""Uploads: every byte a client may send is credit the server granted.
A stream's window grows with the measured round trip where its handler
keeps up, goes back to H2WindowSize where it does not, and what a stream
holds is bounded by its window: the server never stops reading from the
client, so a stalled or slow upload never delays the connection's other
streams.

The client here answers the server's round-trip PING 50 ms late, as a
client 50 ms away would, and sends DATA as fast as the windows the server
grants allow. Stock mod_http2 does not grow its windows and fails the
growth tests (a documented improvement, docs/configuration.md)."""

import json
import time

import pytest

from h2client import H2Client, module_conf, remove_conf
from h2raw import (FLOW_CONTROL_ERROR, RawConn, SETTINGS_INITIAL_WINDOW_SIZE, data_frame,
                   headers_frame, ping_frame, request_block, window_update_frame)

pytestmark = pytest.mark.h2

PING_DELAY = 0.05
DEFAULT_BUDGET = 100 * 65536          # H2MaxSessionStreams x H2StreamMaxMemSize
PIECE = b"u" * 16384
RATE = 48 << 20                       # bytes a second the client sends at most


class Uploader:
    """Sends one stream's body as the server's windows allow, answering
    the server's PINGs PING_DELAY late; remembers the largest stream window
    it was granted and every send that blocked (the server not reading)
    while it still had window."""

    def __init__(self, c, sid):
        self.c, self.sid = c, sid
        self.sent = 0
        self.conn_sent = 0
        self.peak_window = 0
        self.blocked = []          # (seconds, stream window left) of slow sends
        self._pings_seen = 0
        self._acks = []            # (due, payload)
        initial = 65535
        for settings in c.server_settings:
            for ident, value in settings:
                if ident == SETTINGS_INITIAL_WINDOW_SIZE:
                    initial = value
        self.initial = initial

    def state(self):
        c = self.c
        return {"sent": self.sent, "peak_window": self.peak_window, "window": self.window(),
                "rst": c.rst, "goaways": c.goaways, "closed": c.closed,
                "answered": len(c.data.get(self.sid, b"")), "pings": len(c.pings)}

    def window(self):
        c = self.c
        stream = self.initial + c.window_updates.get(self.sid, 0) - self.sent
        conn = 65535 + c.window_updates.get(0, 0) - self.conn_sent
        return stream, conn

    def _answer_pings(self):
        c, now = self.c, time.monotonic()
        for p in c.pings[self._pings_seen:]:
            self._acks.append((now + PING_DELAY, p))
        self._pings_seen = len(c.pings)
        due = [a for a in self._acks if a[0] <= now]
        for a in due:
            self._acks.remove(a)
            c.send(ping_frame(a[1], ack=True))

    def send(self, total, end=True, stop=lambda: False, timeout=60, rate=RATE):
        """Send total more bytes (END_STREAM with the last if end), at most
        rate bytes a second: a loopback client would otherwise be done
        before the windows had a few round trips to grow."""
        c = self.c
        target = self.sent + total
        t_start, start = time.monotonic(), self.sent
        deadline = t_start + timeout
        while self.sent < target and not stop() and time.monotonic() < deadline:
            ahead = (self.sent - start) / rate - (time.monotonic() - t_start)
            if ahead > 0:
                c.pump(min(ahead, 0.005))
                self._answer_pings()
                continue
            c.pump(0)
            self._answer_pings()
            stream, conn = self.window()
            self.peak_window = max(self.peak_window, stream)
            n = min(stream, conn, len(PIECE), target - self.sent)
            if n <= 0:
                c.pump(0.005)
                continue
            t0 = time.monotonic()
            if not c.send(data_frame(self.sid, PIECE[:n], end_stream=end and
                                     self.sent + n == target)):
                break
            took = time.monotonic() - t0
            if took > 0.5:
                self.blocked.append((took, stream - n))
            self.sent += n
            self.conn_sent += n
        return self.sent >= target


@pytest.fixture
def discard(env, optfn_module):
    yield from module_conf(env, optfn_module, "/discard", "h2-discard")


@pytest.fixture
def echo(env, optfn_module):
    yield from module_conf(env, optfn_module, "/echo-stream", "h2-echo-stream")


def post(c, sid, path, length=None):
    extra = [("content-length", str(length))] if length is not None else []
    c.send(headers_frame(sid, request_block(c, path, "POST", extra), end_stream=False))


def answer(c, sid, timeout=30):
    assert c.wait(lambda: c.stream_done(sid), timeout), c.answer()
    return c.status(sid), bytes(c.data.get(sid, b""))


def test_upload_window_grows_with_the_round_trip_where_the_handler_keeps_up(env, discard):
    """48 MB at 48 MB/s to a handler that reads as fast as it comes, 50 ms
    away: the stream's window grows from H2WindowSize (64 KB) past the
    6.4 MB that bodies within H2WindowSize and responses may hold (grown
    windows have their own budget), to some four times the 2.4 MB a round
    trip carries, not to 256 MB (a window is what the stream holds should
    its handler stop), and the handler gets every byte."""
    total = 48 << 20
    with RawConn(env, "h2c", timeout=10) as c:
        post(c, 1, "/discard", total)
        up = Uploader(c, 1)
        assert up.send(total)
        status, body = answer(c, 1)
    assert status == 200
    assert json.loads(body)["bytes"] == total
    assert up.peak_window > DEFAULT_BUDGET, up.peak_window
    # four times what 48 MB/s carries in a round trip measured up to
    # 600 ms (a busy machine's late answers), and no 64-fold step past 4 MB
    assert up.peak_window <= 4 * RATE * 0.6, up.peak_window


def test_a_first_window_filled_at_once_grows_before_any_round_trip_is_known(env, discard):
    """The client sends its whole first window (64 KB) at once and neither
    acknowledges the server's SETTINGS nor answers its PING, so the server
    knows no round trip: the connection is still within its first, and the
    stream's window grows 64-fold at once (to 4,194,240 bytes) instead of
    waiting for one. Then the rest of the 1 MB body goes through. Stock
    only reopens what was read."""
    total = 1 << 20
    with RawConn(env, "h2c", timeout=10, ack_settings=False) as c:
        post(c, 1, "/discard", total)
        for i in range(4):
            c.send(data_frame(1, PIECE if i < 3 else PIECE[:-1]))
        grown = 64 * 65535
        assert c.wait(lambda: c.window_updates.get(1, 0) >= grown - 65535, 10), \
            (c.window_updates, c.answer())
        # with the 64 KB sent reopened as the handler read them, or not yet
        assert grown - 65535 <= c.window_updates[1] <= grown
        up = Uploader(c, 1)
        up.sent = up.conn_sent = 65535
        assert up.send(total - 65535)
        status, body = answer(c, 1)
    assert status == 200
    assert json.loads(body)["bytes"] == total


def test_a_stalled_handler_holds_at_most_its_window_and_the_connection_goes_on(
        env, discard):
    """A handler that stops reading for 4 s after 8 MB, its window grown
    (ours: to 4 MB, 64 times H2WindowSize, for 8 MB/s 50 ms away): the client
    sends what credit it has and then waits, as flow control says; no
    WINDOW_UPDATE reopens the stalled stream's window meanwhile; a GET and
    a second upload on the same connection, and a GET on another, are
    answered during the stall; when the handler reads again the upload
    completes whole."""
    total, rate = 16 << 20, 8 << 20
    with RawConn(env, "h2c", timeout=10) as c:
        post(c, 1, "/discard?stall_after=%d&stall_ms=4000" % (8 << 20), total)
        up = Uploader(c, 1)
        t0 = time.monotonic()
        assert up.send(8 << 20, end=False, rate=rate), up.state()
        # the credit runs out while the handler sleeps
        assert not up.send(total - up.sent, end=False, timeout=1.5, rate=rate), up.state()
        assert up.sent < total
        granted = c.window_updates.get(1, 0)
        # what it holds is at most the largest window it was granted (ours:
        # 4 MB, or 256 MB where a loaded machine answers the PING later than
        # 250 ms; stock: its fixed windows)
        assert up.sent - (8 << 20) <= up.peak_window, (up.state(), c.window_updates)
        post(c, 3, "/discard", 60000)
        c.send(b"".join(data_frame(3, b"x" * 10000, end_stream=(i == 5)) for i in range(6)))
        c.send(headers_frame(5, request_block(c, "/1k.txt")))
        with H2Client.connect(env, "h2c") as other:
            r = other.get("/1k.txt")
            assert r.status == 200 and len(r.body) == 1024
        status3, body3 = answer(c, 3, timeout=2.5)
        assert status3 == 200 and json.loads(body3)["bytes"] == 60000
        assert answer(c, 5, timeout=1)[0] == 200
        # no credit while stalled (it ends 4 s after the handler had 8 MB,
        # which took the client 1 s at 8 MB/s)
        assert c.window_updates.get(1, 0) == granted or time.monotonic() - t0 >= 5.0
        assert up.send(total - up.sent, rate=rate)
        status, body = answer(c, 1)
        assert status == 200
        assert json.loads(body)["bytes"] == total
        assert not c.goaways and not c.rst


def test_a_slow_handler_gets_no_window_beyond_the_configured_one(env, discard):
    """A handler that reads 1 MB at 256 KB/s (13 KB per 50 ms round trip,
    less than half of H2WindowSize) while its client could send at 48 MB/s:
    the bytes do not drain, so the stream's window stays at H2WindowSize
    (64 KB) and the client is held by flow control; a GET on the same
    connection is answered while the upload goes on."""
    total = 1 << 20
    with RawConn(env, "h2c", timeout=10) as c:
        post(c, 1, "/discard?rate=%d" % (256 << 10), total)
        up = Uploader(c, 1)
        assert up.send(total // 2, end=False), up.state()
        c.send(headers_frame(3, request_block(c, "/1k.txt")))
        assert c.wait(lambda: c.stream_done(3), 5), c.answer()
        assert c.status(3) == 200 and len(c.data[3]) == 1024
        assert not c.stream_done(1)
        assert up.send(total - up.sent), up.state()
        status, body = answer(c, 1)
    assert status == 200 and json.loads(body)["bytes"] == total
    assert up.peak_window <= 65535, up.state()


def test_a_stream_whose_answer_waits_for_the_client_is_held_by_flow_control(env, echo):
    """Bidirectional streaming (every piece echoed at once) at 16 MB/s,
    50 ms away: a client that stops reading the echo is held by flow
    control, not reset: its sends stop once its credit is used; meanwhile
    a GET on the same connection is answered; reading again, it gets
    every byte."""
    first, more, rate = 8 << 20, 8 << 20, 16 << 20
    with RawConn(env, "h2c", timeout=10) as c:
        post(c, 1, "/echo-stream")
        up = Uploader(c, 1)
        assert up.send(first, end=False, rate=rate), up.state()
        assert up.peak_window > 65535, up.state()
        c.auto_window = False               # the echo now fills its window
        up.send(more, end=False, timeout=3, rate=rate)
        assert up.sent < first + more, up.state()     # held by flow control
        c.send(headers_frame(3, request_block(c, "/1k.txt")))
        c.send(window_update_frame(0, 1 << 20) + window_update_frame(3, 1 << 20))
        assert c.wait(lambda: c.stream_done(3), 5), c.answer()
        assert c.status(3) == 200 and len(c.data[3]) == 1024
        assert not c.rst and not c.goaways, up.state()
        c.auto_window = True
        c.send(window_update_frame(0, 256 << 20) + window_update_frame(1, 256 << 20))
        assert up.send(first + more - up.sent, rate=rate), up.state()
        status, body = answer(c, 1)
    assert status == 200
    assert len(body) == first + more and body == b"u" * len(body)


def test_a_quiet_stream_whose_answer_then_waits_is_not_reset(env, echo):
    """The echo starts only after 8 MB (?quiet=), so the window grows
    while nothing is answered; then the client stops reading the echo and
    sends on: the stream is held by flow control (what it holds is bounded
    by its window), not reset; a GET on the connection is answered."""
    rate = 16 << 20
    with RawConn(env, "h2c", timeout=10) as c:
        post(c, 1, "/echo-stream?quiet=%d" % (8 << 20))
        up = Uploader(c, 1)
        assert up.send(8 << 20, end=False, rate=rate), up.state()
        assert up.peak_window > 65535, up.state()
        c.auto_window = False               # the echo now fills its window
        up.send(16 << 20, end=False, timeout=3, rate=rate)
        assert up.sent < (24 << 20), up.state()
        c.send(headers_frame(3, request_block(c, "/1k.txt")))
        c.send(window_update_frame(0, 1 << 20) + window_update_frame(3, 1 << 20))
        assert c.wait(lambda: c.stream_done(3), 5), c.answer()
        assert c.status(3) == 200
        assert not c.rst and not c.goaways, up.state()


def test_a_response_complete_before_its_body_resets_the_upload_with_no_error(env):
    """A POST of 2 MB to a location that answers 401 without reading the
    body: the complete 401 is followed by RST_STREAM NO_ERROR (RFC 9113
    8.1) instead of windows for a body nobody reads; a retry on the same
    connection is answered."""
    env.add_conf("uploads-auth", "<Location /auth-upload>\n  AuthType Basic\n"
                 "  AuthName up\n  AuthUserFile /dev/null\n  Require valid-user\n"
                 "</Location>\n", "http")
    env.reload()
    try:
        with RawConn(env, "h2c", timeout=10) as c:
            post(c, 1, "/auth-upload/x", 2 << 20)
            c.send(data_frame(1, PIECE))
            assert c.wait(lambda: 1 in c.rst, 5), c.answer()
            assert 1 in c.ended and c.status(1) == 401      # the whole answer first
            assert c.rst[1] == 0, c.answer()
            assert c.window_updates.get(1, 0) == 0
            c.send(headers_frame(3, request_block(c, "/1k.txt")))
            assert answer(c, 3)[0] == 200
            assert not c.goaways
    finally:
        remove_conf(env, "uploads-auth", "http")
        env.reload()


def test_other_streams_are_served_while_an_upload_streams_in(env, echo):
    """While one stream's upload comes in as fast as its grown window
    allows (the server batches its reads and its handler's wakeups), a
    second stream's few body bytes reach their handler and come back, and
    a GET is answered, before the upload is over."""
    if env.mpm == "prefork" and env.module == "ours":
        pytest.skip("a prefork child runs one request at a time: the others "
                    "wait for the upload (test_php_prefork.py)")
    with RawConn(env, "h2c", timeout=10) as c:
        post(c, 1, "/echo-stream?quiet=%d" % (1 << 30))
        up = Uploader(c, 1)
        assert up.send(16 << 20, end=False), up.state()
        assert up.peak_window > 65535, up.state()
        post(c, 3, "/echo-stream")
        c.send(data_frame(3, b"ping-3"))
        c.send(headers_frame(5, request_block(c, "/1k.txt")))
        served = lambda: bytes(c.data.get(3, b"")) == b"ping-3" and c.stream_done(5)
        up.send(32 << 20, end=False, stop=served)
        assert served(), up.state()
        assert up.sent < (48 << 20), up.state()     # the upload was not over
        assert bytes(c.data[3]) == b"ping-3"
        assert c.status(5) == 200 and len(c.data[5]) == 1024
        assert not c.rst and not c.goaways


def test_data_past_the_granted_window_gets_flow_control_error(env, discard):
    """Every byte a client may send is credit granted: a client that sends
    16 KB more than its stream's window (ours: grown to 4 MB here) gets
    RST_STREAM FLOW_CONTROL_ERROR on that stream (RFC 9113 6.9.1); the
    connection goes on."""
    rate = 16 << 20
    with RawConn(env, "h2c", timeout=10) as c:
        post(c, 1, "/discard?stall_after=%d&stall_ms=2000" % (2 << 20), 64 << 20)
        up = Uploader(c, 1)
        assert up.send(2 << 20, end=False, rate=rate), up.state()
        c.pump(0.2)
        left, _ = up.window()
        while left > 0:
            n = min(left, len(PIECE))
            c.send(data_frame(1, PIECE[:n]))
            left -= n
        c.send(data_frame(1, PIECE))
        assert c.wait(lambda: 1 in c.rst, 5), c.answer()
        assert c.rst[1] == FLOW_CONTROL_ERROR
        c.send(headers_frame(3, request_block(c, "/1k.txt")))
        assert answer(c, 3)[0] == 200
        assert not c.goaways
