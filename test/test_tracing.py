"""Trace logging that follows one stream: with `LogLevel http2:trace2`, every
transition of a stream's lifecycle (RFC 9113 state names) and of its
hand-off to a worker is logged with "(<connection>-<stream>)", so that one
grep for it (in the lines of one child, whose pid every line carries)
tells the stream's story in order. mod_h2's own log format: not run
against the stock module."""

import re
import time

import pytest

from h2client import H2Client, with_conf

pytestmark = pytest.mark.h2


@pytest.fixture
def trace2(env):
    if env.module != "ours":
        pytest.skip("mod_h2's own trace messages")
    yield from with_conf(env, "tracing", "LogLevel warn %s:trace2\n"
                         % env.sandbox.module_name)


def story(env, start, stream_id, until="-[PURGE]-> PURGED"):
    """The trace lines of the last connection that had stream_id, once one
    of them says `until` (the connection thread may still be tearing the
    stream down when the client has its answer), or after 5 s."""
    deadline = time.monotonic() + 5 * getattr(env, "slow", 1)
    while True:
        text = env.sandbox.log_since(start)
        conns = re.findall(r"h2_x\((\d+)-%d\): new -> pending" % stream_id, text)
        tag = "(%s-%d)" % (conns[-1], stream_id) if conns else None
        lines = [line.split("] ", 4)[-1] for line in text.splitlines()
                 if tag and tag in line]
        if not until or any(until in l for l in lines) or time.monotonic() > deadline:
            assert conns, text[-3000:]
            return lines
        time.sleep(0.05)


def index(lines, text):
    for i, line in enumerate(lines):
        if text in line:
            return i
    raise AssertionError("%r not in:\n%s" % (text, "\n".join(lines)))


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_one_grep_follows_a_stream_from_headers_to_purge(env, trace2, how):
    start = env.sandbox.log_size()
    with H2Client.connect(env, how) as c:
        r = c.get("/1k.txt")
        assert r.status == 200
        # the connection stays while the stream's story ends: a connection
        # torn down frees its streams without the PURGE of a round
        lines = story(env, start, r.stream_id)
    opened = index(lines, "IDLE -[HEADERS_IN]-> OPEN")
    half = index(lines, "OPEN -[EOS_IN]-> HALF_CLOSED_REMOTE")
    pend = index(lines, "new -> pending")
    queued = index(lines, "pending -> queued")
    running = index(lines, "queued -> running")
    done = index(lines, "running -> done")
    closed = index(lines, "HALF_CLOSED_REMOTE -[EOS_OUT]-> CLOSED")
    purged = index(lines, "CLOSED -[PURGE]-> PURGED")
    assert opened < half < pend < queued < running < done
    assert running < closed < purged
    assert not [l for l in lines if "invalid transition" in l]


def test_one_connection_keeps_one_id_in_the_logs(env, trace2):
    """A connection that goes back to the MPM between its requests (it
    idles, and the event MPM may resume it on another thread, which gives
    the connection another id) is named in every log line of mod_h2 by the
    id it started with, the one H2_STREAM_TAG carries: an admin follows
    one connection from the access log to the error log with one grep."""
    start = env.sandbox.log_size()
    with H2Client.connect(env, "h2c") as c:
        port = c.sock.getsockname()[1]
        tags = []
        for _ in range(6):
            r = c.get("/cgi-bin/env.py")
            assert r.status == 200
            tags += re.findall(r"^H2_STREAM_TAG=\d+-(\d+)-\d+$", r.body.decode(), re.M)
            time.sleep(0.3)           # idle: the connection waits in the MPM
    assert len(set(tags)) == 1, tags
    time.sleep(0.3)
    mine = [l for l in env.sandbox.log_since(start).splitlines()
            if "[client 127.0.0.1:%d]" % port in l]
    ids = set(re.findall(r"h2_(?:session|stream|x)\((\d+)", "\n".join(mine)))
    assert ids == set(tags), (tags, sorted(ids))
