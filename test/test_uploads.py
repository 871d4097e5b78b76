"""Uploads: request body windows grow with the measured round trip past the
connection's memory budget, and what the connection holds stays within it
because reading from the client pauses instead.

The client here answers the server's round-trip PING 50 ms late, as a
client 50 ms away would, and sends DATA as fast as the windows the server
grants allow. The budget is H2MaxSessionStreams x H2StreamMaxMemSize
(6.4 MB by default); reading pauses while the request bodies a connection
holds exceed half of it. A stream that answers while it reads keeps its
window within half the budget instead (reading cannot pause for it: its
answer may wait for a WINDOW_UPDATE). Stock mod_http2 does not grow its
windows and fails these (a documented improvement,
docs/configuration.md)."""

import json
import re
import time

import pytest

from h2client import H2Client, module_conf, remove_conf
from h2raw import (ENHANCE_YOUR_CALM, RawConn, SETTINGS_INITIAL_WINDOW_SIZE, data_frame,
                   headers_frame, ping_frame, request_block, window_update_frame)

pytestmark = pytest.mark.h2

PING_DELAY = 0.05
DEFAULT_BUDGET = 100 * 65536          # H2MaxSessionStreams x H2StreamMaxMemSize
SMALL_BUDGET = 100 * 16384            # with H2StreamMaxMemSize 16384
READ_TURN = 65536                     # what one turn of the session reads at most
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


@pytest.fixture
def small_budget(env):
    env.add_conf("uploads-small-budget", "H2StreamMaxMemSize 16384\nLogLevel http2:debug\n")
    env.reload()
    yield SMALL_BUDGET
    remove_conf(env, "uploads-small-budget", "server")
    env.reload()


def post(c, sid, path, length=None):
    extra = [("content-length", str(length))] if length is not None else []
    c.send(headers_frame(sid, request_block(c, path, "POST", extra), end_stream=False))


def answer(c, sid, timeout=30):
    assert c.wait(lambda: c.stream_done(sid), timeout), c.answer()
    return c.status(sid), bytes(c.data.get(sid, b""))


def test_upload_window_grows_past_the_budget_with_the_round_trip(env, discard):
    """48 MB at 48 MB/s to a handler that reads as fast as it comes, 50 ms
    away: the stream's window grows from H2WindowSize (64 KB) past the
    connection's 6.4 MB budget, and the handler gets every byte."""
    total = 48 << 20
    with RawConn(env, "h2c", timeout=10) as c:
        post(c, 1, "/discard", total)
        up = Uploader(c, 1)
        assert up.send(total)
        status, body = answer(c, 1)
    assert status == 200
    assert json.loads(body)["bytes"] == total
    assert up.peak_window > DEFAULT_BUDGET, up.peak_window


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


def test_reading_pauses_while_a_stalled_handler_holds_half_the_budget(env, discard,
                                                                    small_budget):
    """A handler that stops reading for 2 s after 24 MB, with the stream's
    window grown past the 1.6 MB budget: the server stops reading from the
    client once the body it holds passes half the budget (AH21103, at most
    one read turn over it), so the client's sends block although it has
    window; other connections are served meanwhile, and when the handler
    reads again the upload completes whole and the connection goes on."""
    total = 48 << 20
    offset = env.log_offset()
    with RawConn(env, "h2c", timeout=10) as c:
        post(c, 1, "/discard?stall_after=%d&stall_ms=2000" % (24 << 20), total)
        up = Uploader(c, 1)
        with H2Client.connect(env, "h2c") as other:
            t0 = time.monotonic()
            assert up.send(28 << 20, end=False)
            r = other.get("/1k.txt")         # while the handler stalls
            assert r.status == 200 and len(r.body) == 1024
            assert up.send(total - (28 << 20))
            took = time.monotonic() - t0
        status, body = answer(c, 1)
        assert status == 200
        assert json.loads(body)["bytes"] == total
        c.send(headers_frame(3, request_block(c, "/1k.txt")))
        assert answer(c, 3)[0] == 200
        assert not c.goaways
    assert took >= 1.5, took                # the stall was waited out
    assert up.peak_window > small_budget, up.peak_window
    assert any(left > small_budget // 2 for _, left in up.blocked), up.blocked
    log = env.sandbox.log_since(offset)
    held = [int(n) for n in re.findall(
        r"AH21103: h2_session\(\d+\): reading paused: request bodies hold (\d+) bytes, "
        r"over half the connection's budget of %d" % small_budget, log)]
    assert held, log[-2000:]
    assert max(held) <= small_budget // 2 + READ_TURN, held


def test_a_stream_that_answers_while_it_reads_keeps_its_window_within_half_the_budget(
        env, echo, small_budget):
    """Bidirectional streaming (every piece echoed at once), 50 ms away:
    its answer may wait for the client's window, and reading cannot pause
    for it then, so its window grows to half the 1.6 MB budget and no
    further. A client that stops reading the echo is then held by flow
    control, not reset; reading again, it gets the rest, every byte."""
    first, more = 16 << 20, 4 << 20
    with RawConn(env, "h2c", timeout=10) as c:
        post(c, 1, "/echo-stream")
        up = Uploader(c, 1)
        assert up.send(first, end=False), up.state()
        assert 65535 < up.peak_window <= small_budget // 2, up.state()
        c.auto_window = False               # the echo now fills its window
        up.send(more, end=False, timeout=3)
        assert up.sent < first + more, up.state()     # held by flow control
        assert not c.rst and not c.goaways, up.state()
        c.auto_window = True
        c.send(window_update_frame(0, 64 << 20) + window_update_frame(1, 64 << 20))
        assert up.send(first + more - up.sent), up.state()
        status, body = answer(c, 1)
    assert status == 200
    assert len(body) == first + more and body == b"u" * len(body)


def test_a_stream_that_grew_its_window_before_answering_is_reset_when_its_answer_waits(
        env, echo, small_budget):
    """The echo starts only after 16 MB (?quiet=), so the window grows past
    the budget while nothing is answered; then the client stops reading the
    echo and sends on: reading cannot pause for that stream (the
    WINDOW_UPDATE its worker waits for would wait behind the paused input),
    so once the body it holds passes half the 1.6 MB budget it gets
    RST_STREAM ENHANCE_YOUR_CALM; the connection goes on."""
    with RawConn(env, "h2c", timeout=10) as c:
        post(c, 1, "/echo-stream?quiet=%d" % (16 << 20))
        up = Uploader(c, 1)
        assert up.send(16 << 20, end=False), up.state()
        assert up.peak_window > small_budget, up.state()
        c.auto_window = False               # the echo now fills its window
        up.send(16 << 20, end=False, stop=lambda: 1 in c.rst, timeout=20)
        assert c.wait(lambda: 1 in c.rst, 10), up.state()
        assert c.rst[1] == ENHANCE_YOUR_CALM
        assert up.sent < (16 << 20) + (16 << 20)
        c.auto_window = True
        c.send(window_update_frame(0, 32 << 20))
        c.send(headers_frame(3, request_block(c, "/1k.txt")))
        assert answer(c, 3)[0] == 200
        assert not c.goaways


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
