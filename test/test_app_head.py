"""HEAD over HTTP/2 answers with the headers HTTP/1.1 sends for the same
page on the same server: a PHP page (php-fpm), PHP's 302 and 404, PHP's
20 MB page, a CGI, a directory listing, a static file and httpd's own 404.
In particular no `content-length: 0` where HTTP/1.1 sends no
Content-Length (the handler did not know the length: a HEAD has no body
to count) -- a client would take it for the length of the GET's body.

Compared: the status and every field but Date and HTTP/1.1's connection
fields (Connection, Keep-Alive, Upgrade, Transfer-Encoding). A CGI's HEAD
gets a Content-Length over HTTP/1.1 only when its output and its end
reach httpd's length filter together (a matter of timing): there a
content-length, if any, must be the GET's length. h2 over TLS
is compared with HTTP/1.1 over TLS, h2c with HTTP/1.1 in cleartext. Under
H2_TEST_MODULE=none the HTTP/1.1 check runs alone: HEAD answers as GET
does, without a body."""

import pytest

from h2client import H2Client
from h2mux import h1_connection

PAGES = {
    "php": "/fpm/hello.php",
    "php-302": "/fpm/redirect.php",
    "php-404": "/fpm/missing.php",
    "php-20mb": "/fpm/big.php",
    "cgi": "/cgi-bin/hello.py",
    "listing": "/fpm/list/",
    "static": "/1k.txt",
    "httpd-404": "/no-such-file.txt",
}
STATUS = {"php": 200, "php-302": 302, "php-404": 404, "php-20mb": 200, "cgi": 200,
          "listing": 200, "static": 200, "httpd-404": 404}

# whether httpd knows the length at the time it sends the head
TIMING_DEPENDENT = {"cgi"}

# HTTP/1.1's connection-specific fields, which HTTP/2 does not have
CONNECTION_FIELDS = {"connection", "keep-alive", "upgrade", "transfer-encoding",
                     "proxy-connection"}


def fields(pairs):
    """name -> [values] without Date and connection fields, names lower-case."""
    out = {}
    for k, v in pairs:
        k = k.lower()
        if k.startswith(":") or k == "date" or k in CONNECTION_FIELDS:
            continue
        out.setdefault(k, []).append(v)
    return out


@pytest.mark.h2
@pytest.mark.parametrize("how", ["h2", "h2c"])
@pytest.mark.parametrize("page", list(PAGES))
def test_head_over_http2_has_the_headers_http11_sends(env, fpm, page, how):
    path = PAGES[page]
    h1 = env.get("https1" if how == "h2" else "http1", path, "-I")
    assert h1.exit_code == 0, h1
    assert h1.status == STATUS[page], h1.status_line
    with H2Client.connect(env, how) as c:
        r = c.get_with("HEAD", path)
        full = c.get(path)
    assert r.ended and r.reset_code is None, r
    assert r.body == b""
    want, got = fields(h1.header_list), fields(r.header_list)
    assert got.get("content-length") in (None, [str(len(full.body))]), (
        "HEAD content-length %s, the GET's body has %d bytes" % (
            got.get("content-length"), len(full.body)))
    if page in TIMING_DEPENDENT:
        want.pop("content-length", None)
        got.pop("content-length", None)
        assert (r.status, got) == (h1.status, want)
        return
    assert (r.status, got.get("content-length")) == (h1.status, want.get("content-length")), (
        "HTTP/1.1 %s content-length %s, HTTP/2 %s content-length %s" % (
            h1.status, want.get("content-length"), r.status, got.get("content-length")))
    assert got == want


@pytest.mark.parametrize("how", ["https1", "http1"])
@pytest.mark.parametrize("page", list(PAGES))
def test_head_over_http11_answers_as_get_without_a_body(env, fpm, page, how):
    """HEAD, then GET on the same keep-alive connection: a body after the
    HEAD's head would be taken for the GET's answer."""
    path = PAGES[page]
    c = h1_connection(env, how == "https1")
    try:
        c.request("HEAD", path)
        head = c.getresponse()
        head.read()
        c.request("GET", path)
        get = c.getresponse()
        body = get.read()
    finally:
        c.close()
    assert head.status == get.status == STATUS[page]
    assert get.getheader("Content-Length") in (None, str(len(body)))
    assert head.getheader("Content-Length") in (None, str(len(body)))
    for k in ("Content-Type", "Location", "Last-Modified", "ETag"):
        assert head.getheader(k) == get.getheader(k), k
