"""Connection lifecycle: graceful restarts under load, idle connections
closed with a GOAWAY after the configured timeout, and streams whose
handler or request body never finishes cut off without harming the other
streams on the same connection.

Timeouts (seen on a 2-core Debian 12, httpd 2.4): an idle connection (no streams) is closed with GOAWAY NO_ERROR
after `KeepAliveTimeout` of the vhost that serves it, under every MPM (the
event MPM keeps it in its I/O queue meanwhile, without a thread). A
graceful restart sends idle connections a GOAWAY right away. A request
body that stops arriving is answered 408
after `H2StreamTimeout`; a CGI that produces nothing is ended by mod_cgid
after `Timeout` (504 before its headers, RST_STREAM after them).
"""

import os
import subprocess
import time

import pytest

from conftest import report
from h2client import (H2Client, file_sha, install_cgi, make_big_file, remove_conf,
                      with_prefork_workers)
from h2raw import (DATA, GOAWAY, HEADERS, MAX_STREAM_ID, NO_ERROR, RawConn, headers_frame,
                   request_block)

H2_WAYS = ["h2", "h2c"]
pytestmark = pytest.mark.h2

BIG_SIZE = 100 * 1024 * 1024
BIG_NAME = "100m.bin"

KEEPALIVE_TIMEOUT = 2
TIMEOUT = 4
STREAM_TIMEOUT = 1

CGI_SLEEP = """\
import os, sys, time
q = os.environ.get("QUERY_STRING", "")
secs = float(q.split("=")[-1]) if "=" in q else 20.0
sys.stdout.write("Content-Type: text/plain\\r\\n\\r\\n")
if q.startswith("headers"):
    sys.stdout.flush()
time.sleep(min(secs, 12.0))
sys.stdout.write("woke up\\n")
"""


@pytest.fixture(scope="module")
def big_file(env):
    path = os.path.join(env.sandbox.docroot, BIG_NAME)
    return "/" + BIG_NAME, make_big_file(path, BIG_SIZE)


@pytest.fixture(scope="module")
def short_timeouts(env):
    """Both default vhosts with small Timeout/KeepAliveTimeout/H2StreamTimeout."""
    install_cgi(env, "sleep.py", CGI_SLEEP)
    conf = "KeepAliveTimeout %d\nTimeout %d\nH2StreamTimeout %d\n" % (
        KEEPALIVE_TIMEOUT, TIMEOUT, STREAM_TIMEOUT)
    for where in ("http", "https"):
        env.add_conf("lifecycle-timeouts", conf, where)
    env.reload()
    yield
    for where in ("http", "https"):
        remove_conf(env, "lifecycle-timeouts", where)
    env.reload()


# ------------------------------------------------------------- graceful
def test_graceful_restart_lets_running_h2c_download_finish(env, big_file):
    url_path, digest = big_file
    out = env.path("tmp", "graceful-download.bin")
    if os.path.exists(out):
        os.unlink(out)
    cmd = [env.curl_bin, "-sS", "--http2-prior-knowledge", "--max-time", "60",
           "--limit-rate", "25M", "-o", out, "-w", "%{http_code} %{http_version}",
           env.http_url(url_path).replace(env.domain, "127.0.0.1")]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL)
    try:
        deadline = time.time() + 10
        while time.time() < deadline and (not os.path.exists(out)
                                          or os.path.getsize(out) < 10 * 1024 * 1024):
            time.sleep(0.05)
        assert p.poll() is None, "download finished before the restart"
        env.reload(fresh=False)   # the held connection's timing matters
        assert p.poll() is None, "download finished during the restart"
        stdout, stderr = p.communicate(timeout=70)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, stderr
    assert stdout.decode() == "200 2"
    assert os.path.getsize(out) == BIG_SIZE
    assert file_sha(out) == digest
    os.unlink(out)


@pytest.mark.parametrize("how", H2_WAYS)
def test_new_requests_work_after_graceful_restart(env, how):
    env.reload()
    r = env.get(how, "/10k.txt")
    assert r.status_line == "HTTP/2 200"
    assert r.body == env.docroot_file("10k.txt")
    with H2Client.connect(env, how) as c:
        r = c.get("/cgi-bin/hello.py")
        assert r.status == 200
        assert r.body == b"Hello from HTTP/2.0\n"


@pytest.mark.parametrize("how", H2_WAYS)
def test_graceful_restart_sends_goaway_to_idle_connection(env, how, request):
    with H2Client.connect(env, how) as c:
        c.wait_settings()
        assert c.get("/1k.txt").status == 200
        env.reload(fresh=False)   # the held connection's timing matters
        c.wait(lambda: c.closed, 8, "the old generation to close the connection")
        assert c.goaway is not None
        assert c.goaway.error_code == 0
        assert c.goaway.last_stream_id == 1


CGI_SLOW = """\
import sys, time
time.sleep(3)
sys.stdout.write("Content-Type: text/plain\\r\\n\\r\\nslow and done\\n")
"""


def busy_conn_at_graceful_restart(env, how):
    """A connection whose stream 1 is in a CGI for 3 s when a graceful
    restart comes; returns it once the shutdown notice arrived."""
    install_cgi(env, "slow3.py", CGI_SLOW)
    c = RawConn(env, how, timeout=10)
    c.send(headers_frame(1, request_block(c, "/cgi-bin/slow3.py")))
    c.wait(lambda: c.server_settings, 5)
    time.sleep(0.5)             # the CGI runs
    env.reload(fresh=False)   # the held connection's timing matters
    c.wait(lambda: c.goaways, 10)
    assert c.goaways[0][:2] == (MAX_STREAM_ID, NO_ERROR)
    return c


@pytest.mark.parametrize("how", H2_WAYS)
def test_graceful_restart_serves_requests_sent_during_the_shutdown_notice(env, how):
    """First a GOAWAY naming the highest stream; a request sent after it
    (as by a client that has not read it yet) is served, and the final
    GOAWAY, a second later, names that request's stream. From the notice
    on, the server sends nothing but the streams' frames and the final
    GOAWAY: no PING, which python-h2 (under httpx) would not take after a
    GOAWAY (docs/design.md, "Stopping")."""
    with busy_conn_at_graceful_restart(env, how) as c:
        c.send(headers_frame(3, request_block(c, "/1k.txt")))
        c.wait(lambda: c.stream_done(3), 10)
        assert c.status(3) == 200
        assert c.data[3] == env.docroot_file("1k.txt")
        c.wait(lambda: len(c.goaways) == 2, 10)
        assert c.goaways[1][:2] == (3, NO_ERROR)
        c.wait(lambda: c.stream_done(1), 10)
        assert c.status(1) == 200
        assert c.data[1] == b"slow and done\n"
        c.wait_closed(10)
        assert len(c.goaways) == 2
        after = c.frame_order[c.frame_order.index((GOAWAY, 0)):]
        assert [f for f in after if f[0] == GOAWAY] == [(GOAWAY, 0)] * 2, after
        assert all(t == GOAWAY or (t in (HEADERS, DATA) and sid in (1, 3))
                   for t, sid in after), after


@pytest.mark.parametrize("how", H2_WAYS)
def test_graceful_restart_refuses_requests_sent_after_the_final_goaway(env, how):
    """The notice stands for a second, then the final GOAWAY names the last
    stream taken; a request sent after it is refused (not processed, so a
    client may send it again elsewhere), the running one finishes."""
    with busy_conn_at_graceful_restart(env, how) as c:
        c.wait(lambda: len(c.goaways) == 2, 5)
        assert c.goaways[1][:2] == (1, NO_ERROR)
        c.send(headers_frame(3, request_block(c, "/1k.txt")))
        c.wait(lambda: c.stream_done(1), 10)
        assert c.status(1) == 200
        assert c.status(3) is None
        c.wait_closed(10)


# ------------------------------------------------------------- idle timeout
@pytest.mark.parametrize("how", H2_WAYS)
def test_idle_connection_closed_with_goaway_after_keepalive_timeout(env, short_timeouts,
                                                                 how, request):
    with H2Client.connect(env, how) as c:
        c.wait_settings()
        assert c.get("/1k.txt").status == 200
        start = time.monotonic()
        try:
            c.wait(lambda: c.closed, TIMEOUT + 6, "the server to close the idle connection")
        finally:
            report("idle %s connection (mpm %s, KeepAliveTimeout %d, Timeout %d): %s"
                   % (how, env.mpm, KEEPALIVE_TIMEOUT, TIMEOUT,
                      "closed after %.1fs" % (c.closed_at - start) if c.closed
                      else "still open after %ds" % (TIMEOUT + 6)))
        elapsed = c.closed_at - start
        assert c.goaway is not None, "closed without GOAWAY"
        assert c.goaway.error_code == 0
        assert c.goaway.last_stream_id == 1
        # idle means keep-alive: KeepAliveTimeout applies, not Timeout
        assert KEEPALIVE_TIMEOUT - 0.5 <= elapsed <= KEEPALIVE_TIMEOUT + 1.5


# ------------------------------------------------------------- stream timeouts
@pytest.mark.parametrize("how", H2_WAYS)
def test_request_body_that_never_ends_gets_408_after_stream_timeout(env, short_timeouts,
                                                                      how):
    env.ignore_log(r"AH0(1270|1225): Error reading request entity data")  # cgid | cgi
    with H2Client.connect(env, how) as c:
        c.wait_settings()
        start = time.monotonic()
        stuck = c.request("POST", "/cgi-bin/upload.py", body=b"abc", end_stream=False)
        # the connection keeps serving other streams meanwhile
        for name in ("1k.txt", "10k.txt", "100k.txt"):
            r = c.get("/" + name)
            assert r.status == 200 and r.body == env.docroot_file(name)
        r = c.wait_headers(stuck, TIMEOUT + 6)
        elapsed = time.monotonic() - start
        assert r.status == 408
        assert STREAM_TIMEOUT - 0.5 <= elapsed < TIMEOUT, elapsed
        # only the stream is gone: the connection still works
        r = c.get("/4k.txt")
        assert r.status == 200 and r.body == env.docroot_file("4k.txt")
        assert c.goaway is None


@pytest.fixture
def concurrent_streams(env):
    """Streams served while others hang: more than one at a time."""
    yield from with_prefork_workers(env, "lifecycle-workers")


@pytest.mark.parametrize("how", H2_WAYS)
def test_cgi_that_never_answers_costs_only_its_stream(env, concurrent_streams,
                                                      short_timeouts, how):
    env.ignore_log(r"Script timed out before returning headers: sleep.py")
    env.ignore_log(r"AH00574: ap_content_length_filter: apr_bucket_read\(\) failed")
    env.ignore_log(r"AH01220: Timeout waiting for output from CGI script")
    with H2Client.connect(env, how) as c:
        c.wait_settings()
        start = time.monotonic()
        silent = c.request("GET", "/cgi-bin/sleep.py?secs=12")
        late = c.request("GET", "/cgi-bin/sleep.py?headers,secs=12")
        # other streams are served while the CGIs sleep
        while time.monotonic() - start < STREAM_TIMEOUT * 0.7:
            r = c.get("/2k.txt")
            assert r.status == 200 and r.body == env.docroot_file("2k.txt")
        cut = {}

        def both_cut():
            for sid in (silent, late):
                if sid not in cut and c.responses[sid].done:
                    cut[sid] = time.monotonic() - start
            return len(cut) == 2
        c.wait(both_cut, 2 * TIMEOUT + 4, "the sleeping CGIs to be cut off")
        report("silent CGI (mpm %s, H2StreamTimeout %d, Timeout %d): cut off after "
               "%.1fs before its headers, %.1fs after them"
               % (env.mpm, STREAM_TIMEOUT, TIMEOUT, cut[silent], cut[late]))
        # both after Timeout, by mod_cgid (event, worker) or mod_cgi (prefork)
        for sid in (silent, late):
            assert STREAM_TIMEOUT - 0.5 <= cut[sid] <= TIMEOUT + 2, cut
        # nothing before the headers: a gateway timeout
        assert c.responses[silent].status == 504
        assert c.responses[silent].ended
        # headers already sent: the stream can only be reset
        assert c.responses[late].status == 200
        assert c.responses[late].reset_code is not None
        assert c.responses[late].body == b""
        r = c.get("/4k.txt")
        assert r.status == 200 and r.body == env.docroot_file("4k.txt")
        assert c.goaway is None and not c.closed


def test_prefork_stop_after_cut_off_cgi_needs_no_sigkill(env):
    if env.mpm != "prefork":
        pytest.skip("prefork only")
    install_cgi(env, "sleep.py", CGI_SLEEP)
    env.add_conf("lifecycle-stop", "Timeout %d\n" % TIMEOUT, "http")
    env.reload()
    env.ignore_log(r"AH0004[56]: child process \d+ still did not exit")
    env.ignore_log(r"AH01220: Timeout waiting for output from CGI script")
    env.ignore_log(r"Script timed out before returning headers: sleep.py")
    offset = env.log_offset()
    try:
        with H2Client.connect(env, "h2c") as c:
            r = c.wait_done(c.request("GET", "/cgi-bin/sleep.py?secs=12"), TIMEOUT + 6)
            assert r.status == 504
        env.stop()
        stuck = [l for l in env.sandbox.log_since(offset).splitlines()
                 if "still did not exit" in l]
    finally:
        remove_conf(env, "lifecycle-stop", "http")
        env.start()
    assert stuck == []
