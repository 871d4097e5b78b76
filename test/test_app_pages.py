"""PHP pages behind php-fpm arrive over HTTP/2 as over HTTP/1.1: a page
that flushes its parts with pauses between them reaches the client part
by part (the first while the script still sleeps); several Set-Cookie
fields arrive as separate set-cookie fields, all of them, unjoined; a
302 and a 404 made by PHP keep their status, Location and body; a 20 MB
page arrives whole; a page that runs seconds answers when it is done
while other streams on the connection go on.

h2 and h2c run under any module; the HTTP/1.1 cases (cleartext and TLS)
also under H2_TEST_MODULE=none."""

import hashlib
import time

import pytest

from conftest import report
from h2mux import Loop, MuxConn, h1_connection
from phpfpm import COOKIES, big_sha256, flush_parts

H2 = [pytest.param("h2", marks=pytest.mark.h2), pytest.param("h2c", marks=pytest.mark.h2)]
H1 = ["https1", "http1"]
PAUSE = 1.5


def h2_get(env, how, path, timeout=30):
    loop = Loop()
    c = loop.add(MuxConn(env, how))
    try:
        s = c.request("GET", path)
        assert loop.run(lambda: s.done, timeout * env.slow), s
        assert c.goaway is None, c.goaway
    finally:
        loop.close()
    return s


def h1_get(env, how, path, timeout=30):
    """(status, [(name, value)] as sent, body, [(time, cumulative bytes)])."""
    c = h1_connection(env, how == "https1", timeout)
    try:
        c.request("GET", path)
        r = c.getresponse()
        got, marks = [], []
        while True:
            chunk = r.read1(65536)
            if not chunk:
                break
            got.append(chunk)
            marks.append((time.monotonic(), sum(len(x) for x in got)))
        return r.status, r.getheaders(), b"".join(got), marks
    finally:
        c.close()


def get_any(env, how, path):
    """status, header pairs (lower-case names), body, arrival marks
    (time, cumulative bytes) and the end time."""
    if how in ("h2", "h2c"):
        s = h2_get(env, how, path)
        assert s.ended and s.reset_code is None, s
        marks, n = [], 0
        for t, size in s.data_times:
            n += size
            marks.append((t, n))
        return (s.status, [(k, v) for k, v in s.header_list if not k.startswith(":")],
                s.data, marks, s.t_end)
    status, hdrs, body, marks = h1_get(env, how, path)
    return status, [(k.lower(), v) for k, v in hdrs], body, marks, time.monotonic()


@pytest.mark.parametrize("how", H2 + H1)
def test_flushed_parts_arrive_while_the_script_still_sleeps(env, fpm, how):
    parts = flush_parts(3)
    t0 = time.monotonic()
    status, _, body, marks, t_end = get_any(env, how, "/fpm/flush.php?parts=3&pause=%s" % PAUSE)
    assert status == 200
    assert body == "".join(parts).encode()
    # the moment the first part was complete at the client, nothing of the
    # second had come: the script was still sleeping
    first = len(parts[0])
    t_first, have = next((t, n) for t, n in marks if n >= first)
    report("flushed page %-6s: first part after %.2f s, whole after %.2f s (pauses %.1f s)"
           % (how, t_first - t0, t_end - t0, PAUSE))
    assert have == first, "the first piece that completed part 1 held %d bytes" % have
    second = next(t for t, n in marks if n > first)
    assert second > t_first


@pytest.mark.parametrize("how", H2 + H1)
def test_cookies_arrive_as_separate_set_cookie_fields_all_of_them(env, fpm, how):
    status, hdrs, body, _, _ = get_any(env, how, "/fpm/cookies.php")
    assert (status, body) == (200, b"cookies set\n")
    assert [v for k, v in hdrs if k == "set-cookie"] == COOKIES


PAGES = {
    "php-302": ("/fpm/redirect.php", 302, b"moved to /fpm/hello.php\n", "/fpm/hello.php"),
    "php-404": ("/fpm/missing.php", 404, b"no such thing here\n", None),
}


@pytest.mark.parametrize("how", H2 + H1)
@pytest.mark.parametrize("page", list(PAGES))
def test_php_redirect_and_404_keep_status_location_and_body(env, fpm, page, how):
    path, status, body, location = PAGES[page]
    got = get_any(env, how, path)
    ref = get_any(env, "https1" if how == "h2" else "http1", path)
    assert (got[0], got[2]) == (status, body)
    assert dict(got[1]).get("location") == location
    # as HTTP/1.1 on the same server answers
    assert (got[0], got[2], dict(got[1]).get("location"), dict(got[1]).get("content-type")) \
        == (ref[0], ref[2], dict(ref[1]).get("location"), dict(ref[1]).get("content-type"))


@pytest.mark.parametrize("how", H2 + H1)
def test_a_20mb_php_page_arrives_whole(env, fpm, how):
    status, hdrs, body, _, _ = get_any(env, how, "/fpm/big.php")
    assert status == 200
    assert dict(hdrs)["content-type"] == "application/octet-stream"
    assert len(body) == 20 << 20
    assert hashlib.sha256(body).hexdigest() == big_sha256()


@pytest.mark.parametrize("how", H2)
def test_a_long_running_page_answers_when_done_while_other_streams_go_on(env, fpm, how):
    loop = Loop()
    c = loop.add(MuxConn(env, how))
    try:
        t0 = time.monotonic()
        long = c.request("GET", "/fpm/long.php?secs=3")
        gets = []

        def tick():
            if not long.done and len(gets) < 10 and time.monotonic() >= t0 + 0.2 * (
                    len(gets) + 1):
                gets.append(c.request("GET", "/fpm/hello.php"))
        assert loop.run(lambda: long.done and all(g.done for g in gets), 30 * env.slow, tick)
        assert c.goaway is None
    finally:
        loop.close()
    assert (long.status, long.data) == (200, b"done after 3 s\n")
    assert long.t_end - t0 >= 3.0
    assert len(gets) == 10
    for g in gets:
        assert (g.status, g.data) == (200, b"Hello from PHP\n")
        assert g.t_end < long.t_end
