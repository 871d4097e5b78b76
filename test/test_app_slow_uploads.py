"""A slow or stalled upload holds up nothing else on its connection
(issue 28): while a handler reads its body far under link speed
(slow_read.php at 512 KB/s, a python CGI at 256 KB/s) or reads nothing at
all until released (stall.php, a stalled CGI), GETs of a small file (one
every 0.2 s) and a second upload to a fast handler on the same HTTP/2
connection are answered without waiting for it.

Each GET and the fast upload must complete while the slow upload is
still in progress (ordering), and no GET may take 1 s or more while the
stall lasts 5 s (per-GET latencies go to the report: p50/p99/max). The
slow upload itself ends 200 with its exact bytes. The HTTP/1.1 cases run
the same on three connections (under any module, H2_TEST_MODULE=none
too): the figures HTTP/2 is compared with."""

import hashlib
import json
import os
import threading
import time

import pytest

from conftest import report
from h2client import CGI_SLOW_READ, CGI_STALL, content, install_cgi
from h2mux import Loop, MuxConn, h1_connection, latency_line

GET_PATH = "/1k.txt"
GET_EVERY = 0.2
GETS_FROM = 0.3            # s after the slow upload starts: its body is flowing
FAST_AT = 0.5
MAX_GET_LATENCY = 1.0
FAST_SIZE = 2 * 1000 * 1000

# kind: (slow handler, body size, fast handler, seconds of GETs, stall)
KINDS = {
    # 6 MB read at 512 KB/s: about 12 s
    "php-slow": ("/fpm/slow_read.php?rate=524288", 6 << 20, "/fpm/upload.php", 4.0, False),
    # reads nothing for 5 s (until released), then 20 MB at once
    "php-stall": ("/fpm/stall.php?max=30&flag=", 20 << 20, "/fpm/upload.php", 5.0, True),
    # 4 MB read at 256 KB/s: about 16 s
    "cgi-slow": ("/cgi-bin/slow_read.py?rate=262144", 4 << 20, "/cgi-bin/upload.py", 4.0,
                 False),
    "cgi-stall": ("/cgi-bin/stall.py?max=30&flag=", 20 << 20, "/cgi-bin/upload.py", 5.0,
                  True),
}

HOWS = [pytest.param("h2", marks=pytest.mark.h2), pytest.param("h2c", marks=pytest.mark.h2),
        "http1"]

class Flags:
    """Release files for the stalled handlers (PHP's and the CGI's)."""

    def __init__(self, env, fpm):
        self.fpm = fpm
        self.cgi_dir = env.path("cgi-flags")
        self.n = 0

    def new(self, kind):
        self.n += 1
        return "%s-%d-%d" % (kind, int(time.time() * 1000), self.n)

    def release(self, kind, flag):
        if kind.startswith("php"):
            self.fpm.release(flag)
        else:
            with open(os.path.join(self.cgi_dir, flag), "w") as f:
                f.write("go\n")


@pytest.fixture(scope="module")
def flags(env, fpm):
    f = Flags(env, fpm)
    os.makedirs(f.cgi_dir, exist_ok=True)
    os.chmod(f.cgi_dir, 0o755)
    install_cgi(env, "slow_read.py", CGI_SLOW_READ)
    install_cgi(env, "stall.py", CGI_STALL % f.cgi_dir)
    return f


@pytest.fixture(scope="module")
def payloads():
    slow = {size: content("slow-%d" % size, size) for size in {k[1] for k in KINDS.values()}}
    fast = content("fast-upload", FAST_SIZE)
    return slow, fast


class Outcome:
    """What one run saw: the slow upload, the fast one, each GET, as
    (status, body bytes, start, end) with monotonic times."""

    def __init__(self):
        self.slow = None
        self.fast = None
        self.gets = []
        self.goaways = []
        self.resets = []
        self.released_at = None


def run_h2(env, how, slow_path, slow_body, fast_path, fast_body, window, release):
    loop = Loop()
    c = loop.add(MuxConn(env, how))
    out = Outcome()
    t0 = time.monotonic()
    slow = c.request("POST", slow_path, body=slow_body, keep_body=True,
                     headers=[("content-type", "application/octet-stream")])
    gets, fast = [], []
    state = {"next": t0 + GETS_FROM}

    def tick():
        now = time.monotonic()
        if now < t0 + window and now >= state["next"]:
            gets.append(c.request("GET", GET_PATH))
            state["next"] += GET_EVERY
        if not fast and now >= t0 + FAST_AT:
            fast.append(c.request("POST", fast_path, body=fast_body,
                                  headers=[("content-type", "application/octet-stream")]))
    try:
        # the GETs and the fast upload, while the slow one goes on; a
        # stalled handler is held at least `window` s, 3 s more at most
        # when they have not come through by then
        loop.run(lambda: time.monotonic() >= t0 + window and fast and fast[0].done
                 and all(g.done for g in gets), window + 3, tick)
        if release:
            out.released_at = time.monotonic()
            release()
        loop.run(lambda: slow.done and (fast and fast[0].done) and all(g.done for g in gets),
                 60 * env.slow)
    finally:
        loop.close()
    out.slow = (slow.status if slow.ended else slow.reset_code, slow.data, slow.t_start,
                slow.t_end)
    if fast:
        f = fast[0]
        out.fast = (f.status if f.ended else None, f.data, f.t_start, f.t_end)
    out.gets = [(g.status if g.ended else None, g.data, g.t_start, g.t_end) for g in gets]
    out.goaways = [c.goaway] if c.goaway else []
    out.resets = [(s.sid, s.reset_code) for s in [slow] + fast + gets if s.reset_code is not None]
    return out


def run_h1(env, slow_path, slow_body, fast_path, fast_body, window, release):
    """The same over HTTP/1.1: the slow upload, the GETs and the fast
    upload each on a connection of their own."""
    out = Outcome()

    def post(path, body, key, timeout):
        c = h1_connection(env, False, timeout)
        t = time.monotonic()
        try:
            c.request("POST", path, body=body,
                      headers={"Content-Type": "application/octet-stream"})
            r = c.getresponse()
            setattr(out, key, (r.status, r.read(), t, time.monotonic()))
        except OSError as e:
            setattr(out, key, (None, repr(e).encode(), t, time.monotonic()))
        finally:
            c.close()
    t0 = time.monotonic()
    ts = threading.Thread(target=post, args=(slow_path, slow_body, "slow", 60))
    ts.start()
    tf = None
    getc = h1_connection(env, False, 10)
    nxt = t0 + GETS_FROM
    try:
        while time.monotonic() < t0 + window:
            now = time.monotonic()
            if tf is None and now >= t0 + FAST_AT:
                tf = threading.Thread(target=post, args=(fast_path, fast_body, "fast", 30))
                tf.start()
            if now >= nxt:
                t = time.monotonic()
                getc.request("GET", GET_PATH)
                r = getc.getresponse()
                out.gets.append((r.status, r.read(), t, time.monotonic()))
                nxt += GET_EVERY
            time.sleep(0.005)
    finally:
        getc.close()
    if tf is not None:
        tf.join(window + 3)
    if release:
        out.released_at = time.monotonic()
        release()
    ts.join(60 * env.slow)
    if tf is not None:
        tf.join(10)
    return out


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("kind", list(KINDS))
def test_a_slow_or_stalled_upload_holds_up_no_get_and_no_other_upload(env, fpm, flags,
                                                                      payloads, kind, how):
    slow_path, size, fast_path, window, stalls = KINDS[kind]
    slow_body = payloads[0][size]
    fast_body = payloads[1]
    release = None
    if stalls:
        flag = flags.new(kind)
        slow_path += flag
        release = lambda: flags.release(kind, flag)  # noqa: E731
    if how == "http1":
        out = run_h1(env, slow_path, slow_body, fast_path, fast_body, window, release)
    else:
        out = run_h2(env, how, slow_path, slow_body, fast_path, fast_body, window, release)
    lat = [g[3] - g[2] for g in out.gets if g[3] is not None]
    slow_end = out.slow[3] if out.slow else None
    before = sum(1 for g in out.gets if g[3] is not None and slow_end is not None
                 and g[3] < slow_end)
    report("slow upload %-9s %-5s: GETs %s; %d/%d done before the slow upload; fast upload "
           "%s in %s; slow upload %s in %.1f s" % (
               kind, how, latency_line(lat), before, len(out.gets),
               out.fast[0] if out.fast else "-",
               "%.2f s" % (out.fast[3] - out.fast[2]) if out.fast and out.fast[3] else "-",
               out.slow[0] if out.slow else "-",
               (out.slow[3] - out.slow[2]) if out.slow and out.slow[3] else -1))
    # the slow upload: all of it arrived
    assert out.slow and out.slow[0] == 200, out.slow and out.slow[:2]
    got = json.loads(out.slow[1].decode())
    assert (got["size"], got["sha256"]) == (size, hashlib.sha256(slow_body).hexdigest())
    if stalls:
        # the handler really stalled while the GETs ran
        assert got["waited"] >= window - GETS_FROM, got
    assert not out.goaways and not out.resets, (out.goaways, out.resets)
    # every GET, and the fast upload, answered while the slow upload was in progress
    assert len(out.gets) >= int((window - GETS_FROM) / GET_EVERY) - 1, len(out.gets)
    expect = env.docroot_file(GET_PATH.lstrip("/"))
    for i, (status, body, start, end) in enumerate(out.gets):
        assert (status, body == expect) == (200, True), (i, status, body[:200])
        assert end < slow_end, "GET %d ended %.2f s after the slow upload" % (i, end - slow_end)
        if out.released_at is not None:
            assert end < out.released_at, "GET %d waited for the stall's release (%.2f s)" % (
                i, end - start)
    assert out.fast and out.fast[0] == 200, out.fast and out.fast[:2]
    fg = json.loads(out.fast[1].decode())
    assert (fg["size"], fg["sha256"]) == (FAST_SIZE, hashlib.sha256(fast_body).hexdigest())
    assert out.fast[3] < slow_end
    if out.released_at is not None:
        assert out.fast[3] < out.released_at
    assert max(lat) < MAX_GET_LATENCY * env.slow, lat
