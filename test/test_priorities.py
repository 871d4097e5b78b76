"""RFC 9218 extensible priorities. The server announces
SETTINGS_NO_RFC7540_PRIORITIES = 1. A client that announces the same gets
its DATA ordered by urgency (u=0 first, u=7 last): non-incremental streams
of one urgency one after the other in request order, incremental ones
round-robin. The urgency comes from the request's Priority field, then
from PRIORITY_UPDATE frames (before or after the request's HEADERS; the
frame wins over the field), then from a Priority field in the response. A
client that does not announce it keeps its RFC 7540 tree. With all of a
connection's workers busy (H2MaxSessionWorkers), its waiting streams start
most urgent first, for every client. Malformed PRIORITY_UPDATEs are
connection errors as RFC 9218 7.1 says; malformed values are ignored."""

import contextlib
import os
import time

import pytest

from h2client import install_cgi, make_big_file, with_conf
from h2raw import (FRAME_SIZE_ERROR, PROTOCOL_ERROR, RawConn, SETTINGS_INITIAL_WINDOW_SIZE,
                   SETTINGS_NO_RFC7540_PRIORITIES, headers_frame, priority_update_frame,
                   request_block, window_update_frame)

pytestmark = pytest.mark.h2
conf = contextlib.contextmanager(with_conf)

EXTENSIBLE = (SETTINGS_NO_RFC7540_PRIORITIES, 1)
SHUT = (SETTINGS_INITIAL_WINDOW_SIZE, 0)
BIG = "/100k.txt"
BIG_LEN = 100 * 1024


def get(c, sid, path, priority=None, end=True):
    extra = [("priority", priority)] if priority is not None else []
    c.send(headers_frame(sid, request_block(c, path, extra=extra), end_stream=end))


def open_windows(c, sids):
    """Stream windows were 0: open them all in one write, so that the
    server's scheduler alone decides whose DATA goes first."""
    c.send(b"".join(window_update_frame(s, 1 << 24) for s in sids)
           + window_update_frame(0, 1 << 26))


def order_after_opening(c, sids, timeout=10):
    """Wait for all heads (data held by shut windows), open the windows,
    wait for the ends; the stream ids in the order of their DATA frames."""
    assert c.wait(lambda: all(s in c.headers for s in sids), timeout), c.headers
    time.sleep(0.3)             # the workers have handed over their data
    open_windows(c, sids)
    assert c.wait(lambda: all(s in c.ended for s in sids), timeout), c.ended
    for s in sids:
        assert ("status", "200") in [(k.lstrip(":"), v) for k, v in c.headers[s][0]]
        assert len(c.data[s]) == BIG_LEN
    return list(c.data_order)


def runs(order):
    """[1, 1, 3, 3, 1] -> [1, 3, 1]: which stream had the line, in turn."""
    out = []
    for s in order:
        if not out or out[-1] != s:
            out.append(s)
    return out


@pytest.fixture
def ours_only(env):
    """Tests of what RFC 9218 adds: nothing to test in stock, which has no
    RFC 9218 priorities (it failed all 30 of them; the two that pass on
    both go without this)."""
    if env.module != "ours":
        pytest.skip("stock mod_http2 has no RFC 9218 priorities")


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_server_announces_no_rfc7540_priorities(env, how, ours_only):
    with RawConn(env, how) as c:
        assert c.wait(lambda: c.server_settings, 5)
        assert (SETTINGS_NO_RFC7540_PRIORITIES, 1) in c.server_settings[0]


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_urgent_request_goes_before_a_less_urgent_one_sent_first(env, how, ours_only):
    with RawConn(env, how, settings=[EXTENSIBLE, SHUT]) as c:
        get(c, 1, BIG, "u=7")
        get(c, 3, BIG, "u=0")
        assert runs(order_after_opening(c, [1, 3])) == [3, 1]


def test_urgent_request_overtakes_a_running_download(env):
    """A 50 MB u=7 download runs when a small u=0 request comes: the
    small one completes while the download goes on; what of the download
    still came before it was already on its way."""
    from conftest import report
    make_big_file(os.path.join(env.sandbox.docroot, "prio-50m.bin"), 50 << 20)
    with RawConn(env, "h2c", settings=[EXTENSIBLE], timeout=30) as c:
        get(c, 1, "/prio-50m.bin", "u=7")
        assert c.wait(lambda: len(c.data.get(1, b"")) >= 1 << 20, 10)
        mark = len(c.data_order)
        get(c, 3, "/1k.txt", "u=0")
        assert c.wait(lambda: 3 in c.ended, 10)
        assert 1 not in c.ended
        ahead = c.data_order[mark:c.data_order.index(3)].count(1)
        assert c.wait(lambda: 1 in c.ended, 30)
        assert len(c.data[1]) == 50 << 20 and len(c.data[3]) == 1024
    report("priorities: a u=0 request during a 50 MB u=7 download: %d DATA frames "
           "(%d KB) of the download came between its request and its response"
           % (ahead, ahead * 16))


def test_non_incremental_streams_of_one_urgency_go_in_request_order(env, ours_only):
    with RawConn(env, "h2c", settings=[EXTENSIBLE, SHUT]) as c:
        get(c, 1, BIG)
        get(c, 3, BIG)
        get(c, 5, BIG, "u=3, i=?0")
        assert runs(order_after_opening(c, [1, 3, 5])) == [1, 3, 5]


def test_incremental_streams_of_one_urgency_share_round_robin(env):
    with RawConn(env, "h2c", settings=[EXTENSIBLE, SHUT]) as c:
        get(c, 1, BIG, "i")
        get(c, 3, BIG, "u=3, i")
        r = runs(order_after_opening(c, [1, 3]))
        assert len(r) >= 4, r         # they take turns


def test_without_the_setting_the_priority_field_does_not_order_data(env):
    """RFC 9218 2.1: a client that did not announce it is on RFC 7540
    priorities: two streams of the default weight share the connection."""
    with RawConn(env, "h2c", settings=[SHUT]) as c:
        get(c, 1, BIG, "u=7")
        get(c, 3, BIG, "u=0")
        r = runs(order_after_opening(c, [1, 3]))
        assert len(r) >= 4, r


def test_priority_signals_of_an_rfc7540_client_leave_its_data_order_alone(env):
    """PRIORITY_UPDATE and a response's priority field for streams whose
    data waits in nghttp2's RFC 7540 tree: they order the workers only.
    (nghttp2 1.52 aborts when asked to move such a stream in its urgency
    queues; the session fuzzer found it, its input is in the corpus as
    regress-extpri-on-rfc7540-client.)"""
    os.makedirs(os.path.join(env.sandbox.docroot, "prio", "urgent"), exist_ok=True)
    with open(os.path.join(env.sandbox.docroot, "prio", "urgent", "big.txt"), "wb") as f:
        f.write(b"u" * BIG_LEN)
    with conf(env, "prio-urgent", URGENT_CONF):
        with RawConn(env, "h2c", settings=[SHUT]) as c:
            get(c, 1, BIG)
            get(c, 3, "/prio/urgent/big.txt")
            assert c.wait(lambda: all(s in c.headers for s in (1, 3)), 10)
            c.send(priority_update_frame(1, "u=0, i"))
            assert len(runs(order_after_opening(c, [1, 3]))) >= 2
            assert not c.goaways


def test_priority_update_after_headers_reorders(env, ours_only):
    with RawConn(env, "h2c", settings=[EXTENSIBLE, SHUT]) as c:
        get(c, 1, BIG)
        get(c, 3, BIG)
        c.send(priority_update_frame(3, "u=1"))
        assert runs(order_after_opening(c, [1, 3])) == [3, 1]


def test_priority_update_before_headers_wins_over_the_field(env, ours_only):
    with RawConn(env, "h2c", settings=[EXTENSIBLE, SHUT]) as c:
        c.send(priority_update_frame(3, "u=0"))
        get(c, 1, BIG, "u=2")
        get(c, 3, BIG, "u=6")
        assert runs(order_after_opening(c, [1, 3])) == [3, 1]


@pytest.mark.parametrize("value", ["u=", "u=0,", "U=0", "u=0;", "u=(0", "u=0 i", "u=0,,i"])
def test_malformed_priority_field_is_ignored(env, value, ours_only):
    """RFC 9218 4: a value that does not parse counts as absent: the
    stream keeps the default (u=3) and goes after the u=2 one."""
    with RawConn(env, "h2c", settings=[EXTENSIBLE, SHUT]) as c:
        get(c, 1, BIG, value)
        get(c, 3, BIG, "u=2")
        assert runs(order_after_opening(c, [1, 3])) == [3, 1]


@pytest.mark.parametrize("value", ["u=8", "u=-1", "u=1.0", "u=\"0\"", "i=1"])
def test_priority_parameter_out_of_range_or_of_another_type_is_ignored(env, value, ours_only):
    with RawConn(env, "h2c", settings=[EXTENSIBLE, SHUT]) as c:
        get(c, 1, BIG, value)
        get(c, 3, BIG, "u=2")
        assert runs(order_after_opening(c, [1, 3])) == [3, 1]


def test_malformed_priority_update_value_is_ignored(env, ours_only):
    with RawConn(env, "h2c", settings=[EXTENSIBLE, SHUT]) as c:
        get(c, 1, BIG)
        get(c, 3, BIG, "u=2")
        c.send(priority_update_frame(1, "u=0,"))
        c.send(priority_update_frame(1, "u=0, " + "x" * 300))   # over 256 bytes
        assert runs(order_after_opening(c, [1, 3])) == [3, 1]
        assert not c.goaways


def goaway_for(env, data, settings=(EXTENSIBLE,)):
    with RawConn(env, "h2c", settings=list(settings)) as c:
        c.send(data)
        assert c.wait_goaway_or_close(5)
        assert c.goaways, "closed without GOAWAY"
        return c.goaways[0]


CONNECTION_ERRORS = {
    "on-a-stream": (priority_update_frame(1, "u=0", sid=1), PROTOCOL_ERROR,
                    b"PRIORITY_UPDATE on a stream"),
    "for-stream-0": (priority_update_frame(0, "u=0"), PROTOCOL_ERROR,
                     b"PRIORITY_UPDATE for stream 0"),
    "for-a-push-not-promised": (priority_update_frame(2, "u=0"), PROTOCOL_ERROR,
                                b"PRIORITY_UPDATE for a push stream not promised"),
    "shorter-than-4-bytes": (b"\x00\x00\x02\x10\x00\x00\x00\x00\x00\x00\x01",
                             FRAME_SIZE_ERROR, b"PRIORITY_UPDATE shorter than 4 bytes"),
}


@pytest.mark.parametrize("case", list(CONNECTION_ERRORS))
def test_malformed_priority_update_is_a_connection_error(env, case, ours_only):
    data, code, why = CONNECTION_ERRORS[case]
    last, got, debug = goaway_for(env, data)
    assert (got, debug) == (code, why)


def test_priority_updates_for_more_idle_streams_than_allowed_are_a_connection_error(
        env, ours_only):
    """At most H2MaxSessionStreams (100) streams not yet opened may have a
    priority waiting for them; the memory is bounded before it is spent."""
    frames = b"".join(priority_update_frame(2 * i + 1, "u=1") for i in range(101))
    last, code, debug = goaway_for(env, frames)
    assert (code, debug) == (PROTOCOL_ERROR, b"PRIORITY_UPDATE for more idle streams "
                                             b"than H2MaxSessionStreams")


def test_priority_updates_for_idle_streams_up_to_the_limit_are_fine(env):
    with RawConn(env, "h2c", settings=[EXTENSIBLE]) as c:
        c.send(b"".join(priority_update_frame(2 * i + 1, "u=1") for i in range(100)))
        get(c, 1, "/1k.txt")
        assert c.wait(lambda: 1 in c.ended, 5)
        assert not c.goaways


def test_priority_updates_for_streams_skipped_over_do_not_count_toward_the_limit(env):
    """Updates for ids below the last opened stream can never apply: 3 x 90
    of them, each batch followed by a stream with a higher id, stay within
    the 100 kept."""
    with RawConn(env, "h2c", settings=[EXTENSIBLE]) as c:
        sid = 1
        for _ in range(3):
            c.send(b"".join(priority_update_frame(sid + 2 * i, "u=1") for i in range(90)))
            sid += 2 * 90
            get(c, sid, "/1k.txt")
            assert c.wait(lambda: sid in c.ended, 5), c.goaways
            sid += 2
        assert not c.goaways


def test_priority_update_for_a_closed_stream_is_ignored(env):
    with RawConn(env, "h2c", settings=[EXTENSIBLE]) as c:
        get(c, 1, "/1k.txt")
        assert c.wait(lambda: 1 in c.ended, 5)
        c.send(priority_update_frame(1, "u=0"))
        get(c, 3, "/1k.txt")
        assert c.wait(lambda: 3 in c.ended, 5)
        assert not c.goaways


def test_priority_updates_count_toward_the_flood_limit(env, ours_only):
    frames = b"".join(priority_update_frame(1, "u=%d" % (i % 8)) for i in range(2000))
    last, code, debug = goaway_for(env, frames)
    assert code == 11, debug      # ENHANCE_YOUR_CALM


URGENT_CONF = """\
<Location "/prio/urgent/">
    Header set priority "u=0"
</Location>
"""


def test_priority_field_in_the_response_changes_the_order(env, ours_only):
    os.makedirs(os.path.join(env.sandbox.docroot, "prio", "urgent"), exist_ok=True)
    with open(os.path.join(env.sandbox.docroot, "prio", "urgent", "big.txt"), "wb") as f:
        f.write(b"u" * BIG_LEN)
    with conf(env, "prio-urgent", URGENT_CONF):
        with RawConn(env, "h2c", settings=[EXTENSIBLE, SHUT]) as c:
            get(c, 1, BIG)
            get(c, 3, "/prio/urgent/big.txt")
            assert runs(order_after_opening(c, [1, 3])) == [3, 1]
            assert ("priority", "u=0") in c.headers[3][0]


# --- which waiting stream gets a worker first

STAMP_CGI = r"""
import os, sys, time
with open(%r, "a") as f:
    f.write(os.environ.get("QUERY_STRING", "") + "\n")
time.sleep(float(os.environ.get("QUERY_STRING", "0").split("-")[0]))
sys.stdout.write("Content-Type: text/plain\r\n\r\nok\n")
"""


def stamp_log(env):
    d = env.path("tmp", "prio-stamps")
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o777)
    return os.path.join(d, "order.log")


def stamps(env):
    try:
        with open(stamp_log(env)) as f:
            return f.read().split()
    except FileNotFoundError:
        return []


def start_order(env, extensible, directives):
    """One CGI (1 s) holds the connection's only worker; then 3 requests of
    u=5 and one of u=0 wait. Returns the order their CGIs started in."""
    path = stamp_log(env)
    install_cgi(env, "stamp.py", STAMP_CGI % path)
    if os.path.exists(path):
        os.unlink(path)
    settings = [EXTENSIBLE] if extensible else []
    with conf(env, "prio-workers", directives):
        with RawConn(env, "h2c", settings=settings, timeout=20) as c:
            get(c, 1, "/cgi-bin/stamp.py?1-hold")
            assert c.wait(lambda: stamps(env), 10 * env.slow)
            for sid, q in ((3, "0-a"), (5, "0-b"), (7, "0-c")):
                get(c, sid, "/cgi-bin/stamp.py?" + q, "u=5")
            get(c, 9, "/cgi-bin/stamp.py?0-urgent", "u=0")
            assert c.wait(lambda: all(s in c.ended for s in (1, 3, 5, 7, 9)),
                          20 * env.slow), c.ended
    return stamps(env)


@pytest.mark.parametrize("extensible", [True, False], ids=["rfc9218", "rfc7540-client"])
def test_waiting_urgent_stream_gets_the_next_worker_of_its_connection(env, extensible,
                                                                      ours_only):
    order = start_order(env, extensible, "H2MaxSessionWorkers 1\n")
    assert order == ["1-hold", "0-urgent", "0-a", "0-b", "0-c"]


def test_urgent_stream_queued_for_busy_workers_is_taken_first(env, ours_only):
    """The child's only worker is busy: the admitted streams wait in the
    workers' queue, where the connection's most urgent goes first."""
    order = start_order(env, True, "H2MinWorkers 1\nH2MaxWorkers 1\n"
                                   "H2MaxSessionWorkers 8\n")
    assert order == ["1-hold", "0-urgent", "0-a", "0-b", "0-c"]
