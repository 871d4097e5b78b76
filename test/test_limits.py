"""httpd's limits on request heads, counted for HTTP/2 requests as stock
counts them: LimitRequestLine for the request target (:path),
LimitRequestFieldSize for every field as httpd will hold it (repeated
names merged with ", ", cookie crumbs joined with "; "). Over a
limit the answer is httpd's error response, with a log line naming the
limit. (Memory budgets and the cookie bombs: test_abuse_memory.py.)
"""

import re

import pytest

from h2client import H2Client

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
