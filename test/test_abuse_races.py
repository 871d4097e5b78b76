"""Races and exhaustion of the kind seen in mod_http2's 2026 CVEs, played
against mod_h2 (also under ASan in `.ci/run`): a request reset in the same
packet that opens it, thousands of times on many connections at once
(CVE-2026-23918 was a double free there); a reset while the response is
being sent; a connection dropped right after its request; running out of
file descriptors while serving many file streams (CVE-2026-48913 was a use
after free there); and the descriptors one long download holds (mod_http2
issue 325: 65k of them for one 907 MB file). What is asserted: clean
answers, no crash or sanitizer report, bounded memory and descriptors, and
a server that serves normally afterwards.
"""

import os
import socket
import threading
import time

import pytest

from h2client import H2Client, install_file, remove_conf
from h2raw import (CANCEL, ENHANCE_YOUR_CALM, PREFACE, SETTINGS_INITIAL_WINDOW_SIZE,
                   RawConn, Watch, headers_frame, hp_block, httpd_children,
                   request_block, rst_frame, settings_frame, window_update_frame)

pytestmark = pytest.mark.h2

PATHS = ["/1k.txt", "/10k.txt", "/100k.txt", "/cgi-bin/hello.py"]


def reset_storm(env, how, pairs_per_conn, seconds, stats, lock):
    """Open connections one after the other; on each, send HEADERS and
    RST_STREAM(CANCEL) for the same stream in one write, in batches, until
    the server answers GOAWAY (the rapid-reset budget) or pairs_per_conn
    pairs went out."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        c = RawConn(env, how)
        sid, sent = 1, 0
        try:
            while sent < pairs_per_conn and not c.goaways and not c.closed:
                batch = []
                for _ in range(20):
                    path = PATHS[(sid // 2) % len(PATHS)]
                    batch.append(headers_frame(sid, request_block(c, path))
                                 + rst_frame(sid, CANCEL))
                    sid += 2
                if not c.send(b"".join(batch)):
                    break
                sent += len(batch)
                c.pump(0)
            c.wait(lambda: c.goaways or c.closed, 0.2)
        finally:
            c.close()
        with lock:
            stats["pairs"] += sent
            stats["conns"] += 1
            for _, code, _ in c.goaways:
                stats["goaway"][code] = stats["goaway"].get(code, 0) + 1


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_headers_then_reset_storm_from_many_connections(env, how):
    """8 clients at once, each opening connection after connection and
    resetting every request in the packet that opens it (files and a CGI):
    thousands of such pairs; the answers are resets and, past the budget,
    GOAWAY ENHANCE_YOUR_CALM; the server neither crashes nor grows, and
    serves a normal client throughout and after."""
    stats = {"pairs": 0, "conns": 0, "goaway": {}}
    lock = threading.Lock()
    seconds = 6
    # eight clients opening connection after connection keep the MPM's
    # threads busy, and a slow server (ASan, a busy machine) has the MPM
    # note that it is near its limit: about the settings, not a failure
    env.ignore_log(r"AH10159: server is within MinSpareThreads of MaxRequestWorkers")
    env.ignore_log(r"AH00484: server reached MaxRequestWorkers setting")
    with Watch(env, "HEADERS+RST storm %s" % how) as w:
        threads = [threading.Thread(target=reset_storm,
                                    args=(env, how, 600, seconds, stats, lock))
                   for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(seconds + 30)
        w.answer = "%d pairs on %d connections; GOAWAY codes %s" % (
            stats["pairs"], stats["conns"], stats["goaway"])
    assert stats["pairs"] >= 2000, w.answer
    assert set(stats["goaway"]) <= {ENHANCE_YOUR_CALM}, w.answer
    # plain: 46-51 MiB over a fresh instance, flat over 5 storms in a row
    # (caches filling up); under ASan 700k freed streams pass through the
    # quarantine of every child
    w.check(max_latency=3.0, rss_under_sanitizer=False)


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_reset_while_response_is_being_sent(env, how):
    """Streams of a large file reset once their response started coming,
    50 times on one connection, and then a normal request on it."""
    with RawConn(env, how, settings=[(SETTINGS_INITIAL_WINDOW_SIZE, 16384)],
                 auto_window=False) as c:
        sid = 1
        c.send(window_update_frame(0, 1 << 30))
        for _ in range(50):
            c.send(headers_frame(sid, request_block(c, "/10m.txt?reset-mid")))
            c.wait(lambda: sid in c.data or c.rst.get(sid) is not None or c.closed, 10)
            c.send(rst_frame(sid, CANCEL))
            sid += 2
        c.send(headers_frame(sid, request_block(c, "/1k.txt?after-resets")))
        c.wait(lambda: c.stream_done(sid) or c.closed, 10)
        assert c.status(sid) == 200, c.answer()
        assert c.data[sid] == env.docroot_file("1k.txt")
        assert not c.goaways, c.answer()


def test_connections_dropped_right_after_their_request(env):
    """200 connections that send a request (a file, or a CGI) and close at
    once; the workers finish or drop their work without harm."""
    authority = "%s:%d" % (env.domain, env.http_port)
    for i in range(200):
        s = socket.create_connection(("127.0.0.1", env.http_port))
        block = hp_block([(":method", "GET"), (":scheme", "http"),
                          (":authority", authority),
                          (":path", PATHS[i % len(PATHS)] + "?dropped")])
        s.sendall(PREFACE + settings_frame() + headers_frame(1, block))
        s.close()
    with H2Client.connect(env, "h2c") as c:
        assert c.get("/1k.txt?after-drops").status == 200
    # what they started runs to its end with nobody to read it (a CGI
    # waits for mod_cgid's daemon to start it): it ends here, not in
    # the next test (whose restart would cut a CGI start short)
    if env.module == "ours":
        quiet = lambda v: v["H2StreamsOpen"] == 0 and v["H2WorkersBusy"] == 0
        v = env.status_h2_when(quiet, 30 * env.slow)
        assert quiet(v), v


def open_fds(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return 0


def held_fds(pid):
    """open_fds() less the eventfds: each MPM thread that runs a connection
    thread makes one at its first turn and keeps it for its life
    (h2_c1_wait.c), and a busy connection changes MPM threads every
    100 ms (H2_C1_TURN), so a download meets new ones, the more the busier
    the machine (13 to 26 over 4 s here): bounded by the threads, held by
    no stream."""
    n = 0
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                n += os.readlink("/proc/%d/fd/%s" % (pid, fd)) != "anon_inode:[eventfd]"
            except OSError:
                pass
    except OSError:
        pass
    return n


@pytest.fixture
def many_files(env):
    """200 files of 300 KB (above the size that is read rather than handed
    over as a descriptor), each with its own content."""
    paths = []
    for i in range(200):
        rel = "fds/f%03d.bin" % i
        p = env.path("htdocs", "fds", "f%03d.bin" % i)
        if not os.path.exists(p):
            install_file(env, "htdocs/" + rel, bytes([i % 251]) * (300 * 1024))
        paths.append("/" + rel)
    return paths


def test_descriptor_exhaustion_fails_cleanly_and_recovers(env, many_files):
    """httpd restarted with a descriptor limit a few above what its children
    use idle: 200 streams of different files at once on 4 connections.
    Each stream gets its file whole, or an error status with httpd's error
    page, or a reset; never a wrong or short body that claims success. With
    the limit lifted, every file is served again."""
    env.ignore_log(r"AH00132|AH00035|AH01276|Too many open files|AH00037|AH02429"
                   r"|AH01630|AH0013[0-9]|AH21[0-9]+|AH00529|AH00082|AH00052")
    idle = max(open_fds(p) for p in httpd_children(env))
    env.sandbox.nofile = idle + 24
    if env.mpm == "prefork":
        # one request at a time holds one file at a time: opt into more
        env.add_conf("races-workers", "H2MaxWorkers 16\n")
    try:
        env.restart()
        conns = [RawConn(env, "h2c") for _ in range(4)]
        for k, c in enumerate(conns):
            c.send(b"".join(headers_frame(1 + 2 * i, request_block(c, p))
                            for i, p in enumerate(many_files[k * 50:(k + 1) * 50])))
        for c in conns:
            c.wait(lambda: all(c.stream_done(1 + 2 * i) for i in range(50)) or c.closed, 30)
        outcome = {}
        for k, c in enumerate(conns):
            for i in range(50):
                key = stream_outcome(c, 1 + 2 * i, bytes([(k * 50 + i) % 251]) * (300 * 1024))
                outcome[key] = outcome.get(key, 0) + 1
            c.close()
    finally:
        env.sandbox.nofile = None
        remove_conf(env, "races-workers", "server")
        env.restart()
    from conftest import report
    report("descriptor exhaustion (limit %d): %s" % (idle + 24, outcome))
    assert outcome.get("200", 0) < 200, "the limit did not bite: %s" % outcome
    with H2Client.connect(env, "h2c") as c:
        for p in many_files[:20]:
            r = c.get(p)
            assert r.status == 200 and len(r.body) == 300 * 1024, r


def stream_outcome(c, sid, expected):
    """What stream sid got: "200" (then its whole, right body), an error
    status (a complete error response), "reset" or "closed"."""
    st = c.status(sid)
    if st == 200:
        assert sid in c.ended and c.data[sid] == expected, \
            "stream %d: 200 with %d bytes" % (sid, len(c.data.get(sid, b"")))
        return "200"
    if st is not None:
        assert st >= 400 and (sid in c.ended or c.rst.get(sid) is not None), (sid, st)
        return str(st)
    assert c.rst.get(sid) is not None or c.closed, (sid, c.answer())
    return "reset" if c.rst.get(sid) is not None else "closed"


@pytest.fixture(params=["copy-off", "copy-on"])
def big_download(env, request):
    path = env.path("htdocs", "big300m.bin")
    if not os.path.exists(path) or os.path.getsize(path) != 300 << 20:
        with open(path, "wb") as f:
            f.truncate(300 << 20)     # sparse: reads as zeros
        os.chmod(path, 0o644)
    conf = "H2CopyFiles %s\n" % ("on" if request.param == "copy-on" else "off")
    env.add_conf("races-copyfiles", conf, "http")
    env.reload()
    yield request.param
    remove_conf(env, "races-copyfiles", "http")
    env.reload()


def test_long_download_holds_few_descriptors(env, big_download):
    """One 300 MB download read at a limited pace for 4 s, with H2CopyFiles
    off and on: the children hold at most a few descriptors more than
    before it, the whole time."""
    pids = httpd_children(env)
    base = sum(held_fds(p) for p in pids)
    peak = base
    c = RawConn(env, "h2c", settings=[(SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20)],
                auto_window=False)
    c.send(window_update_frame(0, 1 << 30)
           + headers_frame(1, request_block(c, "/big300m.bin?" + big_download)))
    t0 = time.monotonic()
    got = 0
    while time.monotonic() - t0 < 4 and not c.stream_done(1) and not c.closed:
        c.pump(0.05)
        now = len(c.data.get(1, b""))
        if now > got:
            c.send(window_update_frame(1, now - got))
            got = now
            c.data[1] = b""      # keep the client's memory flat
            got = 0
        peak = max(peak, sum(held_fds(p) for p in pids))
    c.close()
    assert c.status(1) == 200, c.answer()
    from conftest import report
    report("long download (%s): %d descriptors before, at most %d during"
           % (big_download, base, peak))
    assert peak - base <= 20, (base, peak)
