"""Long-lived streams starve nobody. Server-sent events, long polls and
bidirectional streams each hold a worker while open; H2MaxSessionWorkers
caps how many one connection holds, the rest of its streams wait (most
urgent first, test_priorities.py). A stream the client resets gives its
worker back at once when its handler waits on us (for room to write, for
request body), and at its next write when it waits on something else (a
CGI's next event). A stream that waits for its client (zero window, a
stalled upload) holds its worker no longer than H2StreamTimeout (here, and
for whole connections in test_attacks.py: test_zero_window_slow_reader,
test_stream_exhaustion_with_unfinished_uploads). Each message of a gRPC-style
bidirectional stream goes back when the handler flushes it."""

import contextlib
import statistics
import time

import pytest

from h2client import install_file, module_conf, with_conf
from h2raw import (CANCEL, RawConn, SETTINGS_INITIAL_WINDOW_SIZE, data_frame, headers_frame,
                   request_block, rst_frame)

pytestmark = pytest.mark.h2


@contextlib.contextmanager
def conf(env, name, text):
    """text as a server config snippet; for stock mod_http2, which has no
    H2MaxSessionWorkers, without it."""
    if env.module != "ours":
        text = "".join(l + "\n" for l in text.splitlines()
                       if not l.startswith("H2MaxSessionWorkers"))
    yield from with_conf(env, name, text)

# one event a second, for at most a minute
SSE_CGI = """#!/bin/sh
printf 'Content-Type: text/event-stream\\r\\nCache-Control: no-cache\\r\\n\\r\\n'
i=0
while [ $i -lt 60 ]; do
    printf 'data: %d\\n\\n' $i
    i=$((i+1))
    sleep 1
done
"""


@pytest.fixture
def sse(env):
    install_file(env, "cgi-bin/sse.sh", SSE_CGI, 0o755)
    return "/cgi-bin/sse.sh"


def status(c, sid):
    return dict(c.headers[sid][0]).get(":status") if sid in c.headers else None


def open_sse(c, path, sids, timeout):
    for sid in sids:
        c.send(headers_frame(sid, request_block(c, path)))
    # each has its first event: all of them hold a worker
    assert c.wait(lambda: all(c.data.get(s) for s in sids), timeout), \
        "%d of %d event streams started" % (sum(1 for s in sids if c.data.get(s)), len(sids))


def short_gets(c, first_sid, n, batch=10, timeout=20):
    """n GETs of a small file, batch at a time; the latency of each."""
    lat = []
    sid = first_sid
    for _ in range(n // batch):
        sids = list(range(sid, sid + 2 * batch, 2))
        sid += 2 * batch
        t0 = time.monotonic()
        done = {}
        for s in sids:
            c.send(headers_frame(s, request_block(c, "/1k.txt")))

        def check():
            for s in sids:
                if s not in done and s in c.ended:
                    done[s] = time.monotonic() - t0
            return len(done) == len(sids)
        assert c.wait(check, timeout), "short GETs waited: %d of %d done" % (len(done), batch)
        assert all(status(c, s) == "200" and len(c.data[s]) == 1024 for s in sids)
        lat += list(done.values())
    return lat


def p99(lat):
    return sorted(lat)[max(0, int(len(lat) * 0.99) - 1)]


MANY_CONF = "H2MaxWorkers 240\nH2MaxSessionWorkers 120\nH2MaxSessionStreams 250\n"


def test_hundred_event_streams_leave_short_requests_unharmed(env, sse):
    from conftest import report
    with conf(env, "long-many", MANY_CONF):
        with RawConn(env, "h2c", timeout=30) as base:
            quiet = short_gets(base, 1, 100)
        with RawConn(env, "h2c", timeout=30) as c, RawConn(env, "h2c", timeout=30) as other:
            open_sse(c, sse, list(range(1, 201, 2)), 60 * env.slow)
            same = short_gets(c, 201, 100)
            second = short_gets(other, 1, 100)
            # the event streams are all still going
            assert not any(s in c.ended or s in c.rst for s in range(1, 201, 2))
            assert c.wait(lambda: all(c.data[s].count(b"data: ") >= 3
                                      for s in range(1, 201, 2)), 10 * env.slow)
    report("long streams: 100 GETs p99 %.1f ms quiet, %.1f ms beside 100 event streams "
           "on their connection, %.1f ms on a second one (median %.1f / %.1f / %.1f ms)"
           % (p99(quiet) * 1000, p99(same) * 1000, p99(second) * 1000,
              statistics.median(quiet) * 1000, statistics.median(same) * 1000,
              statistics.median(second) * 1000))


def test_cancelled_event_streams_release_their_workers_for_waiting_requests(env, sse):
    from conftest import report
    with conf(env, "long-cancel", "H2MaxWorkers 120\nH2MaxSessionWorkers 50\n"):
        with RawConn(env, "h2c", timeout=30) as c:
            sse_sids = list(range(1, 101, 2))
            open_sse(c, sse, sse_sids, 30 * env.slow)
            waiting = list(range(101, 201, 2))
            for s in waiting:
                c.send(headers_frame(s, request_block(c, "/1k.txt")))
            # at the connection's cap: they wait
            assert not c.wait(lambda: any(s in c.headers for s in waiting), 2)
            t0 = time.monotonic()
            c.send(b"".join(rst_frame(s, CANCEL) for s in sse_sids))
            assert c.wait(lambda: all(s in c.ended for s in waiting), 10 * env.slow), \
                "%d of 50 served" % sum(1 for s in waiting if s in c.ended)
            took = time.monotonic() - t0
            assert all(status(c, s) == "200" for s in waiting)
    report("long streams: 50 event streams reset, the 50 requests waiting for "
           "their workers all served %.2f s later" % took)


@pytest.fixture
def echo(env, optfn_module):
    with contextlib.contextmanager(module_conf)(env, optfn_module, "/echo-stream",
                                                "h2-echo-stream"):
        yield "/echo-stream"


# 10 MB of generated output: unlike a file, it is held in memory, so the
# handler waits for room (H2StreamMaxMemSize) while the client's window is shut
BIG_CGI = """#!/bin/sh
printf 'Content-Type: application/octet-stream\\r\\n\\r\\n'
head -c 10000000 /dev/zero
"""


def test_reset_frees_a_worker_blocked_writing_to_a_closed_window(env):
    install_file(env, "cgi-bin/big.sh", BIG_CGI, 0o755)
    with conf(env, "long-write", "H2MaxSessionWorkers 1\n"):
        with RawConn(env, "h2c", settings=[(SETTINGS_INITIAL_WINDOW_SIZE, 0)]) as c:
            c.send(headers_frame(1, request_block(c, "/cgi-bin/big.sh")))
            assert c.wait(lambda: 1 in c.headers, 5)
            c.send(headers_frame(3, request_block(c, "/1k.txt")))
            assert not c.wait(lambda: 3 in c.headers, 1)    # the one worker writes
            c.send(rst_frame(1, CANCEL))
            assert c.wait(lambda: 3 in c.headers, 3 * env.slow)
            assert status(c, 3) == "200"


def test_reset_frees_a_worker_blocked_reading_the_request_body(env, echo):
    with conf(env, "long-read", "H2MaxSessionWorkers 1\n"):
        with RawConn(env, "h2c") as c:
            c.send(headers_frame(1, request_block(c, echo, "POST"), end_stream=False))
            c.send(headers_frame(3, request_block(c, "/1k.txt")))
            assert not c.wait(lambda: 3 in c.headers, 1)    # the one worker reads
            c.send(rst_frame(1, CANCEL))
            assert c.wait(lambda: 3 in c.ended, 3 * env.slow)
            assert status(c, 3) == "200"


def test_stream_waiting_for_its_client_window_gives_its_worker_up_after_stream_timeout(env):
    install_file(env, "cgi-bin/big.sh", BIG_CGI, 0o755)
    with conf(env, "long-wait-window", "H2MaxSessionWorkers 1\nH2StreamTimeout 1\n"):
        with RawConn(env, "h2c", settings=[(SETTINGS_INITIAL_WINDOW_SIZE, 0)],
                     timeout=20) as c:
            c.send(headers_frame(1, request_block(c, "/cgi-bin/big.sh")))
            assert c.wait(lambda: 1 in c.headers, 5)
            c.send(headers_frame(3, request_block(c, "/1k.txt")))
            # the client never opens stream 1's window: after H2StreamTimeout
            # its handler stops waiting and the worker is free
            assert c.wait(lambda: 3 in c.headers, 8 * env.slow)
            assert status(c, 3) == "200"


def test_stalled_upload_gives_its_worker_up_after_stream_timeout(env, echo):
    with conf(env, "long-wait-upload", "H2MaxSessionWorkers 1\nH2StreamTimeout 1\n"):
        with RawConn(env, "h2c", timeout=20) as c:
            c.send(headers_frame(1, request_block(c, echo, "POST"), end_stream=False))
            c.send(headers_frame(3, request_block(c, "/1k.txt")))
            assert c.wait(lambda: 3 in c.ended, 8 * env.slow)
            assert status(c, 3) == "200"


@pytest.mark.parametrize("buffering", ["on", "off"])
def test_bidirectional_stream_gets_each_message_back_as_it_is_flushed(env, echo, buffering):
    with conf(env, "long-bidi", "H2OutputBuffering %s\n" % buffering):
        with RawConn(env, "h2c") as c:
            c.send(headers_frame(1, request_block(c, echo, "POST",
                                                  [("content-type", "application/grpc")]),
                                 end_stream=False))
            expect = b""
            for i in range(5):
                msg = b"message %d;" % i
                expect += msg
                c.send(data_frame(1, msg))
                assert c.wait(lambda: c.data.get(1, b"") == expect, 5), (i, c.data.get(1))
                assert 1 not in c.ended
            c.send(data_frame(1, b"", end_stream=True))
            assert c.wait(lambda: 1 in c.ended, 5)
            assert status(c, 1) == "200" and c.data[1] == expect
