"""Load: many multiplexed requests and many connections, bounded in count
and time, with zero failed or errored requests and a clean error log.

Two server instances: the suite's own (sandbox MPM settings) and a second
one with Debian's default event MPM settings (ThreadsPerChild 25,
MaxRequestWorkers 150) on port base H2_TEST_PORT_BASE + 500 (override
with H2_TEST_PORT_BASE2). Load tools use at most 2 threads: the test
machine has 2 cores.
"""

import contextlib
import os
import selectors
import socket
import threading
import time

import pytest

from conftest import report
from h2client import H2Client, install_cgi
from h2env import H2TestEnv, SecondEnv, Sandbox, SandboxError, run_dir_for, second_port_base

pytestmark = [pytest.mark.h2, pytest.mark.load]

# Debian 12's /etc/apache2/mods-available/mpm_*.conf
DEBIAN_MPM_CONF = """\
<IfModule mpm_event_module>
    ServerLimit 16
    StartServers 2
    MinSpareThreads 25
    MaxSpareThreads 75
    ThreadLimit 64
    ThreadsPerChild 25
    MaxRequestWorkers 150
    MaxConnectionsPerChild 0
</IfModule>
<IfModule mpm_worker_module>
    ServerLimit 16
    StartServers 2
    MinSpareThreads 25
    MaxSpareThreads 75
    ThreadLimit 64
    ThreadsPerChild 25
    MaxRequestWorkers 150
    MaxConnectionsPerChild 0
</IfModule>
<IfModule mpm_prefork_module>
    StartServers 5
    MinSpareServers 5
    MaxSpareServers 10
    MaxRequestWorkers 150
    MaxConnectionsPerChild 0
</IfModule>
# Not an MPM setting: the burst test's connections must stay idle but open
# while the client opens all of them, which takes seconds here (3.3 s for
# 400 over TLS on a quiet machine, close to Debian's 5 s); after
# KeepAliveTimeout they are rightly closed with a GOAWAY (test_lifecycle.py
# tests that).
KeepAliveTimeout 30
"""


@pytest.fixture(scope="module")
def debian_env(env):
    e = SecondEnv(env, DEBIAN_MPM_CONF)
    e.start()
    e.mark_log_checked()
    # capacity notices the event MPM logs at level error when 500 clients
    # meet Debian's 150 workers: they are about the settings, not a failure
    e.ignore_log(r"AH00484: server reached MaxRequestWorkers setting")
    e.ignore_log(r"AH10159: server is within MinSpareThreads of MaxRequestWorkers")
    yield e
    if e.sandbox.is_running():
        e.stop()
    # httpd's race at an ungraceful stop (see burst_then_stop below)
    e.ignore_log(r"child pid \d+ exit signal")
    # At the instance's stop the event MPM closes the sockets of the
    # connections its workers hold (strace: the child's main thread closes
    # them, then workers hand them back with fd -1 and the MPM logs
    # AH10503). mod_h2 now ends a session whose socket was closed instead
    # of handing it back; a close between that check and the MPM's poll
    # still logs it (2 runs of 20, was 4 of 18).
    e.ignore_log(r"AH10503: process_socket: apr_pollset_add failure in "
                 r"CONN_STATE_ASYNC_WAITIO")
    problems = e.log_problems()
    assert not problems, "second instance's error log:\n" + "\n".join(problems)


def assert_clean(stats, n, r=None):
    """Every one of n requests answered 2xx; on failure the message has all
    counts and, given h2load's result r, the end of what it printed."""
    why = "%s\n%s" % (", ".join("%s=%s" % kv for kv in sorted(stats.items())),
                      r.stdout[-1500:] + r.stderr[-500:] if r is not None else "")
    assert stats["total"] == n, why
    assert stats["succeeded"] == n, why
    assert stats["failed"] == 0, why
    assert stats["errored"] == 0, why
    assert stats["timeout"] == 0, why
    assert stats["2xx"] == n, why


def test_h2load_100_connections_100_streams_200k_requests(env):
    n = 200000
    # on a busy machine the workers are slower, more MPM threads are busy
    # at once and the MPM notes (at level error) that it is near its
    # limit: about the settings, as for debian_env, not a failure
    env.ignore_log(r"AH10159: server is within MinSpareThreads of MaxRequestWorkers")
    env.ignore_log(r"AH00484: server reached MaxRequestWorkers setting")
    start = time.monotonic()
    r, stats = env.h2load(env.sandbox.http_url("/1k.txt"), "-n", str(n), "-c", "100",
                          "-m", "100", "-t", "2", "-T", "60", timeout=240)
    assert r.returncode == 0, r.stderr
    assert stats["protocol"] == "h2c"
    assert_clean(stats, n, r)
    assert time.monotonic() - start < 240
    assert env.log_problems() == []


class ChildrenSeen(threading.Thread):
    """The pids of an instance's children, sampled every 0.1 s until
    stop(); retired() those gone by then."""

    def __init__(self, e):
        super().__init__(daemon=True)
        self.e = e
        self.seen = set(e.sandbox.child_pids())
        self.halt = threading.Event()

    def run(self):
        while not self.halt.wait(0.1):
            self.seen.update(self.e.sandbox.child_pids())

    def retired(self):
        self.halt.set()
        self.join(5)
        return self.seen - set(self.e.sandbox.child_pids())


def test_debian_mpm_h2load_500_connections(debian_env):
    """Every request h2load starts succeeds. It starts them all unless a
    spare child retires meanwhile (its idle threads are many: h2
    connections hold none while they wait): the child's connections get
    GOAWAY, and h2load opens no stream after one nor sends again on
    another connection; seen on a busy machine, where the run is long
    enough (120 of 50,000 not started)."""
    e = debian_env
    n = 50000
    children = ChildrenSeen(e)
    children.start()
    r, stats = e.h2load(e.sandbox.http_url("/1k.txt"), "-n", str(n), "-c", "500",
                        "-m", "10", "-t", "2", "-T", "60", timeout=240)
    retired = children.retired()
    assert r.returncode == 0, r.stderr
    assert stats["protocol"] == "h2c"
    if stats["started"] < n and retired:
        report("h2load 500 connections: %d of %d requests not started after %d "
               "children retired" % (n - stats["started"], n, len(retired)))
        n = stats["started"]
        stats = dict(stats, total=n, failed=stats["failed"] - (stats["total"] - n))
    assert_clean(stats, n, r)
    problems = e.log_problems()
    e.mark_log_checked()
    assert problems == []


# Why 400 and not 500: at Debian's defaults the event MPM itself accepts
# at most about ServerLimit-by-MaxRequestWorkers processes (150/25 = 6) x
# (ThreadsPerChild + AsyncRequestWorkerFactor (2) x idle threads) =
# 6 x 75 = 450 connections at once, whatever the protocol; connections
# beyond that wait in the listen backlog until others close (HTTP/1.1 ones
# after KeepAliveTimeout). 400 idle connections still far exceed the 150
# worker threads, which is what this test is about: idle HTTP/2
# connections must not each hold a worker.
BURST = int(os.environ.get("H2_TEST_BURST") or 400)

# The MPM retires spare children once a second; a retiring child's
# connections answer with GOAWAY. A client opens no stream on a connection
# after its GOAWAY and sends a request above its last stream id again
# (RFC 9113 6.8): so do these, up to this many times in a row.
TRIES = 3


def settled(e, how, c, gone):
    """c once the SETTINGS are exchanged, or a new connection in its place
    if c got a GOAWAY meanwhile (counted in gone[0])."""
    for _ in range(TRIES):
        try:
            c.wait_settings(timeout=20)
        except AssertionError:
            if c.goaway is None:
                raise
        if c.goaway is None:
            return c
        c.close()
        gone[0] += 1
        c = H2Client.connect(e, how, timeout=20)
    raise AssertionError("%d connections in a row got a GOAWAY before any request" % TRIES)


def get_1k(e, how, gone):
    """A new connection and its stream of /1k.txt, done; sent again on
    another connection as often as a GOAWAY leaves it unprocessed."""
    for _ in range(TRIES):
        c = settled(e, how, H2Client.connect(e, how, timeout=20), gone)
        sid = c.request("GET", "/1k.txt")
        try:
            c.wait_done(sid, 30)
            return c, sid
        except AssertionError:
            if c.goaway is None or c.goaway.last_stream_id >= sid:
                raise
        c.close()
    raise AssertionError("refused %d times in a row" % TRIES)


@pytest.mark.parametrize("how", ["h2", "h2c"])
def test_debian_mpm_burst_over_400_idle_connections_gets_all_answers(debian_env, how):
    e = debian_env
    if e.mpm != "event":
        pytest.skip("worker and prefork hold a thread/process per open connection: "
                    "400 idle connections exceed MaxRequestWorkers 150 by design")
    conns = []
    gone = [0]
    setup_start = time.monotonic()
    try:
        for _ in range(BURST):
            c = H2Client.connect(e, how, timeout=20)
            conns.append(c)
        for i, c in enumerate(conns):
            conns[i] = settled(e, how, c, gone)
        report("burst %s: %d connections opened and set up in %.1fs (%d replaced after "
               "a GOAWAY)" % (how, BURST, time.monotonic() - setup_start, gone[0]))
        time.sleep(1.0)
        sids = [c.request("GET", "/1k.txt") for c in conns]
        sel = selectors.DefaultSelector()
        for i, c in enumerate(conns):
            sel.register(c.sock, selectors.EVENT_READ, i)
        pending = set(range(len(conns)))
        deadline = time.monotonic() + 60
        while pending and time.monotonic() < deadline:
            ready = [k.data for k, _ in sel.select(0.5)]
            # TLS sockets may hold decrypted bytes without being readable
            ready += [i for i in pending if how == "h2" and conns[i].sock.pending()]
            for i in set(ready):
                c = conns[i]
                alive = c.pump(0)
                if c.responses[sids[i]].done or not alive:
                    pending.discard(i)
                    sel.unregister(c.sock)
        sel.close()
        waited = time.monotonic() - (deadline - 60)
        # requests above a GOAWAY's last stream id were not processed
        refused = [i for i, c in enumerate(conns)
                   if not c.responses[sids[i]].done and c.goaway is not None
                   and c.goaway.last_stream_id < sids[i]]
        for i in refused:
            conns[i].close()
            conns[i], sids[i] = get_1k(e, how, gone)
        if refused:
            report("burst %s: %d requests refused unprocessed by a retiring child, "
                   "retried" % (how, len(refused)))
        ok = [i for i, c in enumerate(conns)
              if c.responses[sids[i]].status == 200 and c.responses[sids[i]].ended
              and c.responses[sids[i]].body == e.docroot_file("1k.txt")]
        bad = ["%r closed=%s goaway=%s" % (conns[i].responses[sids[i]], conns[i].closed,
                                           conns[i].goaway)
               for i in range(len(conns)) if i not in ok]
        assert len(ok) == BURST, "%d not answered after %.1fs, e.g. %s" % (
            len(bad), waited, bad[:3])
    finally:
        for c in conns:
            c.close()
    problems = e.log_problems()
    e.mark_log_checked()
    assert problems == []


# httpd's own: at an ungraceful stop, the child's main thread closes the
# sockets its workers hold (event.c, close_worker_sockets() ->
# close_socket_at() -> apr_os_sock_get(), seen in the disassembly of
# Debian's mod_mpm_event.so 2.4.71) while a worker that has just finished
# a connection (here: the lingering closes of the connections the clients
# closed a moment before) has already released the pool that held the
# socket. Core dumps show the same stack with this module, with Debian's
# mod_http2 and with no HTTP/2 module at all. How often depends on the
# timing: on an idle machine nearly every round of 400 connections, with
# two CPU-bound processes beside it one round in three without HTTP/2
# and none of four with mod_h2; so no strict xfail can state it. A
# graceful stop does not close the workers' sockets and never crashed.
# On an idle machine the first round shows it; beside stress-ng a run saw
# none in 60 s of rounds, so the budget is three minutes.
STOP_RACE_BUDGET = 180      # seconds of rounds to see it without HTTP/2


def burst_then_stop(e, how, graceful):
    """BURST connections with a request of /1k.txt each (HTTP/1.1
    keep-alive for how="http1"), closed by the client, then the instance
    stopped at once: the children that died by a signal."""
    conns = []
    try:
        for _ in range(BURST):
            if how == "http1":
                conns.append(socket.create_connection(("127.0.0.1", e.http_port), 20))
                conns[-1].sendall(b"GET /1k.txt HTTP/1.1\r\nHost: localhost\r\n\r\n")
            else:
                conns.append(get_1k(e, how, [0])[0])
        for c in conns:
            if how == "http1":
                assert c.recv(64).startswith(b"HTTP/1.1 200")
    finally:
        for c in conns:
            c.close()
    e.stop(graceful=graceful)
    crashes = [line for line in e.log_problems() if "exit signal" in line]
    e.mark_log_checked()
    return crashes


def test_debian_mpm_instance_stops_gracefully_without_crashed_children(debian_env):
    """After the load above and another burst, a graceful stop: every
    child exits by itself."""
    e = debian_env
    assert burst_then_stop(e, "h2c", graceful=True) == []


def test_httpd_children_crash_at_an_ungraceful_stop_without_http2(env, debian_env):
    """The race above without any HTTP/2 module: HTTP/1.1 bursts on an
    instance without one, each followed by an ungraceful stop, until a
    child dies by SIGSEGV (within STOP_RACE_BUDGET). The suite therefore
    ignores crashed children at the ungraceful stop of test_load's second
    instance (debian_env). Once httpd is fixed, this fails: then that
    exception goes too."""
    if debian_env.sandbox.is_running():
        debian_env.stop()       # same ports
    e = SecondEnv(env, DEBIAN_MPM_CONF, module="none")
    crashes = []
    deadline = time.monotonic() + STOP_RACE_BUDGET
    try:
        while not crashes and time.monotonic() < deadline:
            e.start()
            crashes = burst_then_stop(e, "http1", graceful=False)
    finally:
        if e.sandbox.is_running():
            e.stop()
    assert crashes and all("Segmentation fault" in c for c in crashes), crashes


# Two MPM threads only: two connections waiting for slow streams hold both.
BUSY_MPM_CONF = """\
KeepAliveTimeout 1
<IfModule mpm_event_module>
    ServerLimit 1
    StartServers 1
    ThreadLimit 2
    ThreadsPerChild 2
    MaxRequestWorkers 2
    MinSpareThreads 1
    MaxSpareThreads 2
</IfModule>
"""

CGI_SLEEP = """\
import os, sys, time
secs = float(os.environ.get("QUERY_STRING", "s=3").split("=")[-1])
sys.stdout.write("Content-Type: text/plain\\r\\n\\r\\n")
time.sleep(secs)
sys.stdout.write("woke up\\n")
"""


@contextlib.contextmanager
def mpm_threads_held_by_slow_streams(env, keepalive, secs):
    """A second instance with two MPM threads and three h2c clients: one
    idle, the other two each waiting for a CGI that sleeps secs, which
    holds both threads. Yields (instance, idle client, [(client, stream)]);
    afterwards, the slow streams must end complete and the log be clean."""
    e = SecondEnv(env, BUSY_MPM_CONF.replace("KeepAliveTimeout 1",
                                             "KeepAliveTimeout %d" % keepalive))
    e.start()
    try:
        e.ignore_log(r"AH00484: server reached MaxRequestWorkers setting")
        e.ignore_log(r"AH10159: server is within MinSpareThreads of MaxRequestWorkers")
        install_cgi(e, "slow.py", CGI_SLEEP)
        with H2Client.connect(e, "h2c") as idle, \
                H2Client.connect(e, "h2c") as a, H2Client.connect(e, "h2c") as b:
            idle.wait_settings()
            busy = [(c, c.request("GET", "/cgi-bin/slow.py?s=%d" % (secs * e.slow)))
                    for c in (a, b)]
            time.sleep(0.5)
            yield e, idle, busy
            for c, sid in busy:
                r = c.wait_done(sid, 30 * e.slow)
                assert r.status == 200 and r.body == b"woke up\n"
        assert e.log_problems() == []
    finally:
        e.stop()


def test_idle_connection_whose_requests_wait_for_an_mpm_thread_is_not_timed_out(env):
    """A parked connection whose client sends requests while every MPM
    thread is busy waits for a thread; KeepAliveTimeout must not close it
    meanwhile, since it is not idle."""
    if env.mpm != "event":
        pytest.skip("only the event MPM parks idle connections")
    with mpm_threads_held_by_slow_streams(env, keepalive=1, secs=3) as (e, idle, busy):
        r = idle.get("/1k.txt", timeout=20 * e.slow)
        assert r.status == 200 and r.body == env.docroot_file("1k.txt")
        assert idle.goaway is None


def test_connection_waiting_for_its_streams_lets_a_waiting_connection_have_its_turn(env):
    """A connection whose streams take long gives its MPM thread back
    between turns: with both MPM threads held by such connections, a third
    connection's request is served before their slow streams end, not
    after."""
    if env.mpm != "event":
        pytest.skip("only the event MPM takes connections back between turns")
    with mpm_threads_held_by_slow_streams(env, keepalive=60, secs=8) as (e, third, busy):
        r = third.get("/1k.txt", timeout=30 * e.slow)
        assert r.status == 200 and r.body == env.docroot_file("1k.txt")
        for c, sid in busy:
            c.pump(timeout=0)
            assert not c.responses[sid].done
