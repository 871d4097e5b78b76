"""httpd's limits on request heads, counted for HTTP/2 requests as stock
counts them: LimitRequestLine for each pseudo-header (the :path, the
:method), LimitRequestFieldSize for every field as httpd will hold it
(repeated names merged with ", ", cookie crumbs joined with "; "). Over a
limit the answer is httpd's error response, with a log line naming the
limit; a head far beyond the limits (a :method over LimitRequestLine,
more than 100 fields refused, more than 100 fields past
LimitRequestFields) gets its stream reset, and a malformed field is
malformed whatever limit was broken before it. The frames asserted here
are stock's too. (Memory budgets and the cookie bombs:
test_abuse_memory.py.)
"""

import re

import pytest

from h2client import H2Client, with_vhost_conf
from h2raw import (ENHANCE_YOUR_CALM, INTERNAL_ERROR, PROTOCOL_ERROR, RawConn,
                   header_frames, headers_frame, hp_block, request_block,
                   request_headers)

pytestmark = pytest.mark.h2

LIMIT_LINE = 8190        # httpd's default LimitRequestLine
LIMIT_FIELD = 8190       # and LimitRequestFieldSize


def target_of(length):
    """A /1k.txt target of `length` characters."""
    return "/1k.txt?" + "q" * (length - len("/1k.txt?"))


def cgi_env(r):
    return dict(line.split("=", 1) for line in r.body.decode().splitlines() if "=" in line)


@pytest.mark.parametrize("length,status", [(LIMIT_LINE, 200), (LIMIT_LINE + 1, 414)])
def test_request_line_limit_bounds_the_path_as_stock_does(env, length, status):
    """LimitRequestLine bounds the :path, as stock applies it: a target of
    LimitRequestLine characters is served, one more gets 414 (HTTP/1.1
    counts "GET <target> HTTP/1.1" and refuses a dozen characters
    earlier). test_counting.py has the small limits."""
    with H2Client.connect(env, "h2c") as c:
        r = c.get(target_of(length))
    assert r.status == status, r


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_repeated_field_over_field_size_once_merged_gets_431(env, how):
    """100 fields of one name, 100 bytes each, merge to more than
    LimitRequestFieldSize: 431 with httpd's error page, and the log says
    the merged field is over the limit (CVE-2025-53020: repeats must not
    add up past what one field may hold)."""
    offset = env.log_offset()
    with H2Client.connect(env, how) as c:
        r = c.get("/1k.txt?merged", headers=[("x-rep", "r" * 100)] * 90)
    assert r.status == 431, r
    assert b"<title>431 Request Header Fields Too Large</title>" in r.body
    log = env.sandbox.log_since(offset)
    assert re.search(r":info\].*AH\d+: .*request header exceeds "
                     r"LimitRequestFieldSize.*x-rep", log, re.I), log[-2000:]


def test_repeated_field_within_field_size_is_merged_for_httpd(env):
    """Repeats that merge to less than the limit reach the handler as one
    field, joined with ", "."""
    with H2Client.connect(env, "h2c") as c:
        r = c.get("/cgi-bin/env.py?merged-ok",
                  headers=[("x-rep", "r%d" % i) for i in range(50)])
    assert r.status == 200, r
    assert cgi_env(r)["HTTP_X_REP"] == ", ".join("r%d" % i for i in range(50))


def test_field_over_field_size_gets_431_with_error_document(env):
    """ErrorDocument 431 is honoured for a head over the limits."""
    from h2client import install_file, remove_conf
    install_file(env, "htdocs/errors/431.html", "<p>too big, says the admin</p>\n")
    env.add_conf("limits-errordoc", "ErrorDocument 431 /errors/431.html\n", "http")
    env.reload()
    try:
        with H2Client.connect(env, "h2c") as c:
            r = c.get("/1k.txt?errordoc", headers=[("x-big", "b" * LIMIT_FIELD)])
        assert r.status == 431, r
        assert r.body == b"<p>too big, says the admin</p>\n"
    finally:
        remove_conf(env, "limits-errordoc", "http")
        env.reload()


# ------------------------------------------------ small limits, raw heads

@pytest.fixture
def small_limits(env):
    """LimitRequestLine 48, LimitRequestFieldSize 20 in both vhosts
    (LimitRequestFields stays 100)."""
    yield from with_vhost_conf(env, "small-limits",
                               "LimitRequestLine 48\nLimitRequestFieldSize 20\n")


def over_size(n, prefix="x-f"):
    """n fields of 30 bytes, each over LimitRequestFieldSize 20."""
    return [("%s%d" % (prefix, i), "v" * 30) for i in range(n)]


def send_head(env, fields, how="h2c"):
    """Stream 1 with the header block fields(c), then a GET of /1k.txt on
    stream 3 of the same connection; the connection, once both are done."""
    with RawConn(env, how) as c:
        c.send(header_frames(1, hp_block(fields(c))))
        c.wait(lambda: c.stream_done(1) or c.closed, 5)
        c.send(headers_frame(3, request_block(c, "/1k.txt")))
        c.wait(lambda: c.stream_done(3) or c.closed, 5)
    return c


def assert_reset(c, code):
    """Stream 1 reset with code and no response; the connection serves
    stream 3."""
    assert c.rst.get(1) == code and 1 not in c.headers, c.answer()
    assert c.status(3) == 200 and not c.goaways and not c.closed, c.answer()


def assert_answered(c, status):
    """Stream 1 answered with status (and not reset but with NO_ERROR);
    the connection serves stream 3."""
    assert c.status(1) == status and c.rst.get(1, 0) == 0, c.answer()
    assert c.status(3) == 200 and not c.goaways, c.answer()


@pytest.mark.parametrize("how", ["h2c", "h2"])
@pytest.mark.parametrize("length", [49, 100])
def test_method_over_request_line_limit_resets_the_stream(env, small_limits, how, length):
    """A :method longer than LimitRequestLine (48) is no request: RST_STREAM
    INTERNAL_ERROR, no response, as stock (which holds each pseudo-header to
    LimitRequestLine); the connection goes on."""
    c = send_head(env, lambda c: request_headers(c, "/1k.txt", method="M" * length), how)
    assert_reset(c, INTERNAL_ERROR)


def test_method_of_request_line_limit_is_a_request(env, small_limits):
    """A :method of 48 characters is within it: httpd answers 501 (no such
    method), with its error page."""
    env.ignore_log(r"AH00135")      # stock: core's "Invalid method in request"
    c = send_head(env, lambda c: request_headers(c, "/1k.txt", method="M" * 48))
    assert_answered(c, 501)


@pytest.mark.parametrize("field,value", [(":path", "/" + "p" * 48),
                                         (":scheme", "s" * 49)])
def test_pseudo_header_over_request_line_limit_gets_414(env, small_limits, field, value):
    """Any other pseudo-header longer than LimitRequestLine: 414, as a
    :path of 49 characters (48 are served: test_counting.py)."""
    def fields(c):
        return [(k, value if k == field else v)
                for k, v in request_headers(c, "/1k.txt")]
    c = send_head(env, fields)
    assert_answered(c, 414)


def test_field_over_field_size_after_a_long_path_gets_431(env, small_limits):
    """A :path over LimitRequestLine, then a field over
    LimitRequestFieldSize: the field's 431, as stock answers."""
    c = send_head(env, lambda c: request_headers(c, "/" + "p" * 60, extra=over_size(1)))
    assert_answered(c, 431)


@pytest.mark.parametrize("order", ["method-last", "authority"])
def test_pseudo_header_over_request_line_limit_in_other_places(env, small_limits, order):
    """A :method over the limit sent last, or an :authority over it: ours
    resets the stream (INTERNAL_ERROR) as for a :method sent first, and
    answers 414 for the :authority. Stock closes the connection on both
    without a GOAWAY (its child crashes with SIGSEGV on the first):
    docs/migration.md."""
    if env.module == "stock":
        pytest.skip("stock closes the connection (SIGSEGV on a late :method)")
    if order == "method-last":
        def fields(c):
            h = request_headers(c, "/1k.txt", method="M" * 60)
            return h[1:] + h[:1]
        assert_reset(send_head(env, fields), INTERNAL_ERROR)
    else:
        c = send_head(env, lambda c: request_headers(c, "/1k.txt", authority="a" * 60))
        assert_answered(c, 414)


@pytest.mark.parametrize("how", ["h2c", "h2"])
@pytest.mark.parametrize("n", [1, 2, 10, 100])
def test_up_to_a_hundred_fields_over_field_size_get_431(env, small_limits, how, n):
    c = send_head(env, lambda c: request_headers(c, "/1k.txt", extra=over_size(n)), how)
    assert_answered(c, 431)


@pytest.mark.parametrize("how", ["h2c", "h2"])
@pytest.mark.parametrize("n", [101, 150])
def test_more_than_a_hundred_fields_over_field_size_reset_the_stream(env, small_limits,
                                                                     how, n):
    """More than 100 fields refused in one head: no answer, RST_STREAM
    INTERNAL_ERROR as stock, and the connection goes on (HTTP/1.1 would
    answer 400; RFC 9113 leaves it to the server)."""
    c = send_head(env, lambda c: request_headers(c, "/1k.txt", extra=over_size(n)), how)
    assert_reset(c, INTERNAL_ERROR)


@pytest.mark.parametrize("over,valid,status", [(100, 1, 431), (100, 101, None),
                                               (1, 200, None), (60, 150, None)])
def test_fields_past_field_count_are_refused_fields_too(env, small_limits, over, valid,
                                                        status):
    """Fields past LimitRequestFields (100) count as refused, with those
    over LimitRequestFieldSize (which do not count toward the 100): 100
    over the size and 1 valid field get 431; 100 and 101 (the 101st is
    past the count), 1 and 200, 60 and 150 reset the stream."""
    c = send_head(env, lambda c: request_headers(
        c, "/1k.txt", extra=over_size(over) + [("y%d" % i, "v") for i in range(valid)]))
    if status:
        assert_answered(c, status)
    else:
        assert_reset(c, INTERNAL_ERROR)


@pytest.mark.parametrize("n,status", [(101, 431), (200, 431), (201, None)])
def test_more_than_a_hundred_fields_past_field_count_reset_the_stream(env, small_limits,
                                                                      n, status):
    """Past LimitRequestFields (100): 431 for up to 100 more fields, a
    reset (ENHANCE_YOUR_CALM, as stock) beyond."""
    c = send_head(env, lambda c: request_headers(
        c, "/1k.txt", extra=[("y%d" % i, "v") for i in range(n)]))
    if status:
        assert_answered(c, status)
    else:
        assert_reset(c, ENHANCE_YOUR_CALM)


@pytest.mark.parametrize("extra,code", [
    pytest.param(over_size(3) + [("x-d", "a\x7fb")], PROTOCOL_ERROR, id="over-then-del"),
    pytest.param([("x-d", "v" * 30 + "\x7f")], PROTOCOL_ERROR, id="del-in-oversized"),
    pytest.param(over_size(3) + [("X-Up", "1")], PROTOCOL_ERROR, id="over-then-uppercase"),
    pytest.param(over_size(3) + [("connection", "close")], PROTOCOL_ERROR,
                 id="over-then-connection"),
    pytest.param(over_size(3) + [(":foo", "1")], PROTOCOL_ERROR, id="over-then-pseudo"),
    pytest.param(over_size(101) + [("x-d", "a\x7fb")], INTERNAL_ERROR,
                 id="reset-then-del"),
])
def test_malformed_field_after_a_limit_resets_the_stream(env, small_limits, extra, code):
    """Invalid characters, names or fields are malformed (RFC 9113 8.1.1)
    whatever limit a field before them broke: RST_STREAM PROTOCOL_ERROR,
    not 431, as stock (nghttp2 checks every field before the limits are
    counted). A stream reset for its refused fields stays so."""
    c = send_head(env, lambda c: request_headers(c, "/1k.txt", extra=extra))
    assert_reset(c, code)


def test_missing_path_after_a_limit_resets_the_stream(env, small_limits):
    def fields(c):
        return [f for f in request_headers(c, "/1k.txt", extra=over_size(3))
                if f[0] != ":path"]
    assert_reset(send_head(env, fields), PROTOCOL_ERROR)


BIG_HEAD_CGI = r"""
import os, sys
n = int(os.environ.get("QUERY_STRING") or "1")
sys.stdout.write("Content-Type: text/plain\r\n")
for i in range(n):
    sys.stdout.write("X-Big-%d: %s\r\n" % (i, "v" * 1000))
sys.stdout.write("\r\nbody\n")
"""


@pytest.fixture
def big_heads(env):
    from h2client import install_cgi, with_conf
    install_cgi(env, "big-head.py", BIG_HEAD_CGI)
    yield from with_conf(env, "limits-blocklen", "H2MaxHeaderBlockLen 98304\n")


def fetch_raw(c, sid, path):
    from h2raw import headers_frame, request_block
    c.send(headers_frame(sid, request_block(c, path)))
    c.wait(lambda: c.stream_done(sid) or c.rst.get(sid) is not None or c.closed, 10)


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_response_head_up_to_max_header_block_len_is_sent(env, big_heads, how):
    """H2MaxHeaderBlockLen 96k: a response with 64 fields of 1000 bytes
    (64 KB, over nghttp2's own default of 64 KB for what it sends) goes
    out whole."""
    from h2raw import RawConn
    with RawConn(env, how) as c:
        fetch_raw(c, 1, "/cgi-bin/big-head.py?64")
    assert c.status(1) == 200, c.answer()
    fields = dict(c.headers[1][-1])
    assert all(fields["x-big-%d" % i] == "v" * 1000 for i in range(64))
    assert c.data[1] == b"body\n"


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_response_head_over_max_header_block_len_resets_only_its_stream(env, big_heads,
                                                                         how):
    """120 fields of 1000 bytes with H2MaxHeaderBlockLen 96k: RST_STREAM
    INTERNAL_ERROR for that stream, an error line naming the limit, and
    the next request on the connection is served."""
    from h2raw import INTERNAL_ERROR, RawConn
    env.ignore_log(r"AH21099")
    offset = env.log_offset()
    with RawConn(env, how) as c:
        fetch_raw(c, 1, "/cgi-bin/big-head.py?120")
        fetch_raw(c, 3, "/1k.txt?after-big-head")
    assert c.rst.get(1) == INTERNAL_ERROR, c.answer()
    assert 1 not in c.headers, c.answer()
    assert c.status(3) == 200 and len(c.data[3]) == 1024, c.answer()
    assert not c.goaways, c.answer()
    log = env.sandbox.log_since(offset)
    assert re.search(r"AH21099: h2_session\(\d+-1\): response header block over 98304 "
                     r"bytes \(H2MaxHeaderBlockLen\)", log), log[-2000:]


@pytest.mark.parametrize("n,sent", [(64, True), (65, False)])
def test_response_head_over_nghttp2s_limit_is_reset_by_default(env, n, sent):
    """Without H2MaxHeaderBlockLen (0), nghttp2's own limit holds, as in
    stock: 64 fields of 1000 bytes go out, 65 (over 64 KB) reset the
    stream (stock: PROTOCOL_ERROR; ours INTERNAL_ERROR, the server's
    fault) and the connection goes on."""
    from h2client import install_cgi
    from h2raw import RawConn
    install_cgi(env, "big-head.py", BIG_HEAD_CGI)
    env.ignore_log(r"AH21099")
    with RawConn(env, "h2c") as c:
        fetch_raw(c, 1, "/cgi-bin/big-head.py?%d" % n)
        fetch_raw(c, 3, "/1k.txt?after-big-head")
    if sent:
        assert c.status(1) == 200, c.answer()
        assert len(dict(c.headers[1][-1])) >= n
    else:
        assert 1 not in c.headers and c.rst.get(1) is not None, c.answer()
    assert c.status(3) == 200 and not c.goaways, c.answer()
