"""What a client can make the server hold: request heads are bounded per
stream by httpd's own limits (LimitRequestFieldSize, LimitRequestFields,
LimitRequestLine, or H2MaxHeaderBlockLen) and per connection by a budget;
cookie crumbs are joined in time and memory linear in their length and the
joined cookie is one field for those limits, as the Cookie line of
HTTP/1.1 is. Over a limit the client gets what HTTP/1.1 clients of the
stock module get: 431 with httpd's error page and an error-log line naming
the limit.

The attacks ("fat cookie", the follow-up of the HTTP/2 bomb): a cookie
near 4 KB goes into the HPACK dynamic table once, then every request
names it 95 times (one byte each); or a 1-byte cookie named 16000 times.
With SETTINGS_INITIAL_WINDOW_SIZE 0 no response can finish, so whatever a
request makes the server hold stays held.
"""

import re
import time

import pytest

from h2client import H2Client, install_file, remove_conf
from h2env import eventually
from h2raw import (CANCEL, REFUSED_STREAM, SETTINGS_INITIAL_WINDOW_SIZE, RawConn, Watch,
                   anon_bytes, data_frame, httpd_children, header_frames, headers_frame, hp_indexed, hp_literal, hp_literal_indexed,
                   request_block, request_headers, rst_frame, window_update_frame)

pytestmark = pytest.mark.h2

STATIC_TABLE_LEN = 61      # RFC 7541 Appendix A: the first dynamic index is 62
BOMB_CONNS = 4
BOMB_STREAMS = 99          # under H2MaxSessionStreams 100


def cgi_env(r):
    """The environment env.py printed, as a dict."""
    return dict(line.split("=", 1) for line in r.body.decode().splitlines() if "=" in line)


def pseudo_block(c, path):
    return b"".join(hp_literal(n, v) for n, v in request_headers(c, path))


def bomb_conn(env, path, entry_value, refs):
    """A connection with window 0 whose stream 1 puts `cookie: entry_value`
    into the dynamic table, and whose streams 3, 5, ... each name that
    entry `refs` times; returns (conn, bomb stream ids)."""
    c = RawConn(env, "h2c", settings=[(SETTINGS_INITIAL_WINDOW_SIZE, 0)],
                auto_window=False)
    first = pseudo_block(c, path) + hp_literal_indexed("cookie", entry_value)
    out = [headers_frame(1, first)]
    sids = [3 + 2 * i for i in range(BOMB_STREAMS - 1)]
    for sid in sids:
        out.append(headers_frame(sid, pseudo_block(c, path)
                                 + hp_indexed(STATIC_TABLE_LEN + 1) * refs))
    c.send(b"".join(out))
    return c, sids


def tally(conns):
    """How many streams of conns ([(conn, stream ids)]) got each status
    (or reset)."""
    statuses = {}
    for c, sids in conns:
        for s in sids:
            st = c.status(s) or "RST %s" % c.rst.get(s)
            statuses[st] = statuses.get(st, 0) + 1
    return statuses


def play_bomb(env, name, path, entry_value, refs):
    with Watch(env, name) as w:
        conns = [bomb_conn(env, path, entry_value, refs) for _ in range(BOMB_CONNS)]
        deadline = time.monotonic() + 20
        for c, sids in conns:
            c.wait(lambda: all(c.status(s) or c.rst.get(s) is not None for s in sids)
                   or c.closed, max(0.1, deadline - time.monotonic()))
        # the answers stay stuck behind window 0: hold them a while so the
        # watch sees what the server keeps
        for c, _ in conns:
            c.pump(1.0)
        statuses = tally(conns)
        w.answer = "%s; %s" % (statuses, conns[0][0].answer())
        for c, _ in conns:
            c.close()
    return conns, statuses, w


def test_fat_cookie_bomb_gets_431_and_memory_stays_bounded(env):
    """4 connections x 98 requests naming a 4000-byte cookie 95 times:
    every one gets 431 (the joined cookie is over LimitRequestFieldSize
    after two crumbs), httpd's RSS grows by less than 64 MiB, and a normal
    client on another connection is served within 2 s throughout."""
    cookie = "c=" + "x" * 3998           # 6 + 4000 + 32 <= 4096: fits the table
    conns, statuses, w = play_bomb(env, "fat cookie 4 conns x 99 streams",
                                   "/1k.txt?fat-cookie", cookie, 95)
    for c, sids in conns:
        assert c.status(1) == 200, c.answer()
        assert [c.status(s) for s in sids] == [431] * len(sids), statuses
        assert not c.goaways, c.answer()
    w.check(max_growth=64 << 20, max_latency=2.0)


def test_cookie_crumb_bomb_gets_431_and_memory_stays_bounded(env):
    """The same with a 1-byte cookie named 16000 times per request."""
    conns, statuses, w = play_bomb(env, "cookie crumbs 4 conns x 99 x 16000",
                                   "/1k.txt?crumbs", "a", 16000)
    for c, sids in conns:
        assert [c.status(s) for s in sids] == [431] * len(sids), statuses
        assert not c.goaways, c.answer()
    w.check(max_growth=64 << 20, max_latency=2.0)


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_joined_cookie_over_field_size_gets_httpd_error_page_and_log_line(env, how):
    """Crumbs that join to more than LimitRequestFieldSize (8190): 431 with
    httpd's own error page, and an info line in the error log naming the
    limit and the field."""
    offset = env.log_offset()
    with H2Client.connect(env, how) as c:
        crumbs = [("cookie", "k%d=%s" % (i, "v" * 1000)) for i in range(9)]
        r = c.get("/1k.txt?joined-cookie", headers=crumbs)
    assert r.status == 431
    assert r.headers["content-type"].startswith("text/html")
    assert b"<title>431 Request Header Fields Too Large</title>" in r.body
    log = env.sandbox.log_since(offset)
    # mod_h2: "AH21081: h2_session(<conn>-1): a request header exceeds
    # LimitRequestFieldSize (8190): cookie, answering 431"; stock: AH10180
    assert re.search(r":info\].*AH\d+: .*request header exceeds "
                     r"LimitRequestFieldSize ?\(8190\): cookie", log, re.I), log[-2000:]


def test_joined_cookie_within_field_size_is_one_cookie_header(env):
    """Crumbs that join to just under the limit arrive as one Cookie header,
    joined with "; " (RFC 9113 8.2.3), and count as one field."""
    with H2Client.connect(env, "h2c") as c:
        # "cookie: " + 7 x 1000 + 6 x 2 + 167 = 8187 <= 8190
        crumbs = [("cookie", "k%d=%s" % (i, "v" * 997)) for i in range(7)]
        crumbs.append(("cookie", "z=" + "w" * 165))
        r = c.get("/cgi-bin/env.py?joined-cookie-ok", headers=crumbs)
    assert r.status == 200, r
    joined = "; ".join(v for _, v in crumbs)
    assert cgi_env(r)["HTTP_COOKIE"] == joined


def test_many_crumbs_count_as_one_field(env):
    """99 other fields plus 50 crumbs: within LimitRequestFields 100, since
    the cookie is one field for httpd as in HTTP/1.1."""
    with H2Client.connect(env, "h2c") as c:
        hdrs = [("x-f%d" % i, "1") for i in range(95)]
        hdrs += [("cookie", "c%d=1" % i) for i in range(50)]
        r = c.get("/cgi-bin/env.py?crumbs-one-field", headers=hdrs)
    assert r.status == 200, r
    assert cgi_env(r)["HTTP_COOKIE"].count("; ") == 49


@pytest.fixture
def small_budget(env):
    """H2MaxSessionStreams 10, H2MaxHeaderBlockLen 100000: the connection's
    request heads may hold max(2 x 100000, 10 x 32 KiB) = 327680 bytes."""
    conf = "H2MaxSessionStreams 10\nH2MaxHeaderBlockLen 100000\n"
    env.add_conf("abuse-memory-budget", conf, "server")
    env.reload()
    yield
    remove_conf(env, "abuse-memory-budget", "server")
    env.reload()


def test_connection_header_budget_refuses_new_streams(env, small_budget):
    """Streams whose heads each hold ~72 KB, kept open by window 0: the
    first four fit the connection's 320 KiB budget, the fifth is refused
    with REFUSED_STREAM while they live, and once they end a new stream is
    served on the same connection."""
    c = RawConn(env, "h2c", settings=[(SETTINGS_INITIAL_WINDOW_SIZE, 0)],
                auto_window=False)
    extra = [("x-big%d" % i, "b" * 8000) for i in range(9)]
    sids = [1, 3, 5, 7, 9]
    for sid in sids:
        c.send(header_frames(sid, request_block(c, "/1k.txt?budget", extra=extra)))
        c.wait(lambda: c.status(sid) or c.rst.get(sid) is not None, 10)
    assert [c.status(s) for s in sids[:4]] == [200] * 4, c.answer()
    assert c.rst.get(9) == REFUSED_STREAM, c.answer()
    assert not c.goaways
    # the client gives up on the stuck downloads; the budget is free again
    c.send(b"".join(rst_frame(s, CANCEL) for s in sids[:4]))
    c.pump(0.5)
    c.send(header_frames(11, request_block(c, "/1k.txt?budget-after", extra=extra)))
    c.wait(lambda: c.status(11) or c.rst.get(11) is not None, 10)
    assert c.status(11) == 200, c.answer()
    c.close()


@pytest.fixture
def one_worker_small_buffers(env):
    """One worker per connection (H2MaxWorkers 2) and H2MaxSessionStreams 4
    x H2StreamMaxMemSize 8192: bodies and responses of a connection may
    hold 32 KB before new streams are refused."""
    install_file(env, "cgi-bin/nap.sh", "#!/bin/sh\nsleep 3\n"
                 "printf 'Content-Type: text/plain\\r\\n\\r\\nnap\\n'\n", 0o755)
    # under prefork a connection has its child's one worker by default
    conf = ("" if env.mpm == "prefork" else "H2MinWorkers 1\nH2MaxWorkers 2\n") + \
        "H2MaxSessionStreams 4\nH2StreamMaxMemSize 8192\n"
    env.add_conf("abuse-memory-bodies", conf, "server")
    env.restart()
    yield
    remove_conf(env, "abuse-memory-bodies", "server")
    env.restart()


def test_buffered_bodies_over_connection_budget_refuse_new_streams(
        env, one_worker_small_buffers):
    """While the connection's one worker naps, a second stream's 60 KB
    upload waits in the server's buffers (its window allows that much):
    more than the connection's 32 KB, so a third stream is refused with
    REFUSED_STREAM although only two of four streams are open; the
    connection is not closed for it, and once the upload is served a new
    stream is taken again."""
    c = RawConn(env, "h2c")
    c.send(headers_frame(1, request_block(c, "/cgi-bin/nap.sh?budget")))
    c.pump(0.3)
    c.send(headers_frame(3, request_block(c, "/cgi-bin/echo.py?budget", "POST",
                                          [("content-length", "61440")]),
                         end_stream=False)
           + b"".join(data_frame(3, b"u" * 15360, end_stream=(i == 3)) for i in range(4)))
    c.pump(0.3)
    c.send(headers_frame(5, request_block(c, "/1k.txt?over-budget")))
    c.wait(lambda: c.rst.get(5) is not None or c.status(5), 5)
    assert c.rst.get(5) == REFUSED_STREAM, c.answer()
    c.wait(lambda: c.stream_done(1) and c.stream_done(3), 20)
    assert c.status(1) == 200 and c.status(3) == 200, c.answer()
    assert len(c.data[3]) == 61440
    c.send(headers_frame(7, request_block(c, "/1k.txt?after-budget")))
    c.wait(lambda: c.stream_done(7), 10)
    assert c.status(7) == 200, c.answer()
    assert not c.goaways
    c.close()


ZERO_WINDOW_CONNS = 32
ZERO_WINDOW_STREAMS = 100      # H2MaxSessionStreams' default
ZERO_WINDOW_BUDGET = 64 << 20  # all 32 connections together
ZERO_WINDOW_KEPT = 16 << 20    # what may stay once they are closed


def zero_window_conn(env, path):
    """A connection that opens no window (SETTINGS_INITIAL_WINDOW_SIZE 0,
    no WINDOW_UPDATE) and asks for path on 100 streams."""
    c = RawConn(env, "h2c", settings=[(SETTINGS_INITIAL_WINDOW_SIZE, 0)],
                auto_window=False)
    sids = [1 + 2 * i for i in range(ZERO_WINDOW_STREAMS)]
    c.send(b"".join(headers_frame(sid, request_block(c, path)) for sid in sids))
    return c, sids


def test_clients_that_open_no_window_get_every_head_and_hold_little_memory(env):
    """32 connections x 100 streams asking for a 10 MB static file with
    window 0, then holding: every stream gets its 200 head (no DATA), the
    children's anonymous memory grows by less than 64 MiB in all (a stalled
    stream holds a file range, not the request that made it), and 6 s after
    the connections close less than 16 MiB of it is still kept."""
    if getattr(env, "sanitize", ""):
        pytest.skip("RSS of a sanitizer's process says nothing of the server's")
    time.sleep(1)
    before = anon_bytes(httpd_children(env))
    peak = before
    conns = [zero_window_conn(env, "/10m.txt") for _ in range(ZERO_WINDOW_CONNS)]
    deadline = time.monotonic() + 30 * getattr(env, "slow", 1)
    for c, sids in conns:
        while (time.monotonic() < deadline and not c.closed
               and not all(c.status(s) for s in sids)):
            c.pump(0.1)
            peak = max(peak, anon_bytes(httpd_children(env)))
    for _ in range(10):       # hold them a second: what stays held
        for c, _ in conns:
            c.pump(0.01)
        peak = max(peak, anon_bytes(httpd_children(env)))
        time.sleep(0.1)
    statuses = tally(conns)
    for c, sids in conns:
        assert not c.goaways and not c.closed, c.answer()
        assert not any(c.data.values()), "DATA through a zero window"
    for c, _ in conns:
        c.close()
    time.sleep(6)
    after = anon_bytes(httpd_children(env))
    from conftest import report
    report("zero windows %d conns x %d streams: %s | anon memory %+.1f MiB at the peak,"
           " %+.1f MiB 6 s after the close" % (ZERO_WINDOW_CONNS, ZERO_WINDOW_STREAMS, statuses,
                                              (peak - before) / 2 ** 20, (after - before) / 2 ** 20))
    assert statuses == {200: ZERO_WINDOW_CONNS * ZERO_WINDOW_STREAMS}
    assert peak - before < ZERO_WINDOW_BUDGET
    assert after - before < ZERO_WINDOW_KEPT


def starved_lines(env):
    with open(env.sandbox.path("logs", "access_log")) as f:
        return [ln for ln in f if "/100k.txt?starved" in ln]


def test_streams_logged_while_starved_send_their_whole_body_once_the_window_opens(env):
    """One connection with window 0 asks for a 100 KB file on 100 streams:
    past the connection's share of workers their logs are written before
    their bodies went out (what a starved stream holds is its file range).
    When the client then opens its windows, every stream gets its whole
    body, and the access log has a line for each."""
    expected = env.docroot_file("100k.txt")
    c, sids = zero_window_conn(env, "/100k.txt?starved")
    assert c.wait(lambda: all(c.status(s) for s in sids) or c.closed, 20), c.answer()
    c.pump(0.5)
    assert not any(c.data.values()), "DATA through a zero window"
    # most are logged already (all but the share of workers, 18 here); a
    # line is written just after its HEADERS left, so wait for it, bounded
    assert eventually(lambda: len(starved_lines(env)) >= len(sids) // 2, 10)
    c.send(window_update_frame(0, len(sids) * len(expected))
           + b"".join(window_update_frame(s, len(expected)) for s in sids))
    assert c.wait(lambda: all(c.stream_done(s) for s in sids) or c.closed, 20), c.answer()
    assert [c.status(s) for s in sids] == [200] * len(sids)
    assert all(bytes(c.data[s]) == expected for s in sids)
    c.close()
    deadline = time.monotonic() + 5
    while True:
        lines = starved_lines(env)
        if len(lines) == len(sids) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert len(lines) == len(sids)
