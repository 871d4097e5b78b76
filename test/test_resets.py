"""Client resets that are no attack keep the connection. Rapid reset
(CVE-2023-44487) is a client opening streams and cancelling them before
their responses are complete; that has its budget (test_attacks.py). A
client that cancels a download it gave a large window still receives the
DATA frames that were in flight, and some (python-h2) answer each of them
with another RST_STREAM: hundreds of resets of a stream that is closed on
our side. Those cost nothing and are not counted as rapid reset; only an
endless flood of them ends the connection (GOAWAY ENHANCE_YOUR_CALM, "flood
of RST_STREAMs for closed streams"), after thousands a second.

Stock mod_http2 keeps such a connection too; its flood of closed-stream
resets ends with nghttp2's own reset limit (GOAWAY INTERNAL_ERROR)."""

import time

import pytest

from h2client import install_cgi
from h2raw import (CANCEL, ENHANCE_YOUR_CALM, INTERNAL_ERROR,
                   SETTINGS_INITIAL_WINDOW_SIZE, STREAM_CLOSED, RawConn, Watch,
                   headers_frame, request_block, rst_frame, window_update_frame)

pytestmark = pytest.mark.h2

H2_WAYS = ["h2c", "h2"]
BIG_WINDOW = 2 ** 31 - 1
LATE_RESETS_MAX = 841       # what python-h2 sent in the report

CGI_SLOW = """\
import sys, time
time.sleep(2)
sys.stdout.write("Content-Type: text/plain\\r\\n\\r\\nslept\\n")
"""


@pytest.fixture(scope="module")
def slow_cgi(env):
    install_cgi(env, "sleep2.py", CGI_SLOW)
    return "/cgi-bin/sleep2.py"


def big_window_conn(env, how):
    """A connection whose streams and connection windows are as large as
    HTTP/2 allows, as a client that wants its downloads fast sets them."""
    c = RawConn(env, how, settings=[(SETTINGS_INITIAL_WINDOW_SIZE, BIG_WINDOW)],
                auto_window=False)
    c.send(window_update_frame(0, BIG_WINDOW - 65535))
    return c


def get_frame(c, sid, path):
    return headers_frame(sid, request_block(c, path))


def data_frames(c, sid):
    return sum(1 for s in c.data_order if s == sid)


@pytest.mark.parametrize("how", H2_WAYS)
def test_resets_of_a_cancelled_download_keep_the_connection(env, how, slow_cgi):
    with big_window_conn(env, how) as c:
        slow = 1
        c.send(get_frame(c, slow, slow_cgi))
        big = 3
        c.send(get_frame(c, big, "/10m.txt"))
        # the client reads the first frames, and cancels; what the server
        # sent meanwhile is on its way
        deadline = time.monotonic() + 10 * env.slow
        while data_frames(c, big) == 0 and time.monotonic() < deadline:
            assert c.read_some(1 << 15), c.answer()
        time.sleep(0.2 * env.slow)
        c.send(rst_frame(big, CANCEL))
        seen = data_frames(c, big)
        late = 0
        deadline = time.monotonic() + 10 * env.slow
        while time.monotonic() < deadline and slow not in c.ended and not c.closed:
            c.pump(0.05)
            now = data_frames(c, big)
            more = min(now - seen, LATE_RESETS_MAX - late)
            if more > 0:
                c.send(b"".join(rst_frame(big, STREAM_CLOSED) for _ in range(more)))
                late += more
            seen = now
        # more than the rapid reset budget (500) allows: ~640 (10 MB)
        assert late > 500, "only %d DATA frames came after the reset" % late
        assert c.goaways == [] and not c.closed, c.answer()
        assert c.status(slow) == 200, c.answer()
        assert bytes(c.data[slow]) == b"slept\n"
        # and the connection goes on
        nxt = 5
        c.send(get_frame(c, nxt, "/1k.txt"))
        assert c.wait(lambda: nxt in c.ended, 10 * env.slow), c.answer()
        assert c.status(nxt) == 200 and len(c.data[nxt]) == 1024
        assert c.goaways == [], c.answer()


@pytest.mark.parametrize("how", H2_WAYS)
def test_endless_resets_of_a_closed_stream_end_with_goaway(env, how):
    """A client that resets a finished stream over and over is answered
    with GOAWAY after thousands, while another client is served."""
    with Watch(env, "RST_STREAM flood on a closed stream %s" % how) as w:
        with RawConn(env, how) as c:
            c.send(get_frame(c, 1, "/1k.txt"))
            assert c.wait(lambda: 1 in c.ended, 10 * env.slow), c.answer()
            batch = rst_frame(1, CANCEL) * 500
            sent = 0
            start = time.monotonic()
            while (sent < 200000 and time.monotonic() - start < 10
                   and not c.closed and not c.goaways):
                if not c.send(batch):
                    break
                sent += 500
                c.pump(0)
            c.wait_answer(5)
            w.answer = c.answer()
            w.extra = "%d resets sent" % sent
            c.check_codes()
            assert c.goaways, c.answer()
            assert sent >= 1000
            if env.module == "stock":
                # nghttp2's reset rate limit (a GOAWAY NO_ERROR follows)
                assert c.goaways[0][1] == INTERNAL_ERROR, c.answer()
            else:
                assert c.goaway_code == ENHANCE_YOUR_CALM, c.answer()
                assert b"flood of RST_STREAMs for closed streams" in c.goaway[2]
                # no rapid reset: the stream was complete
                assert sent >= 5000, c.answer()
            assert c.goaways[0][0] == 1
    w.check()
