"""Request smuggling over HTTP/2: requests RFC 9113 8.2/8.3 call malformed
(characters that would split a header or a request line once turned into
HTTP/1.1, connection-specific headers, broken pseudo-headers, bodies that
disagree with content-length) must be rejected with
RST_STREAM PROTOCOL_ERROR or a 400, and never reach a handler: a CGI that
logs every request it gets (before reading the body, and again once the
body is complete) shows nothing leaked, and the access log has no 2xx for
them. The headers are hand-encoded with HPACK literals (h2raw), so the
client sends them exactly as written.
"""

import os
import uuid

import pytest

from h2client import install_file
from h2raw import (PROTOCOL_ERROR, RawConn, data_frame, err_name, hp_block,
                   headers_frame)

pytestmark = pytest.mark.h2

CGI = """\
import os, sys
log = os.path.join(%r, "requests.log")
case = os.environ.get("HTTP_X_CASE", "-")
hdrs = " ".join("%%s=%%r" %% (k, v) for k, v in sorted(os.environ.items())
                if k.startswith("HTTP_") or k in ("QUERY_STRING", "REQUEST_URI"))
with open(log, "a") as f:
    f.write("start %%s %%s\\n" %% (case, hdrs))
n = int(os.environ.get("CONTENT_LENGTH") or 0)
body = sys.stdin.buffer.read(n) if n else b""
with open(log, "a") as f:
    f.write("done %%s %%d\\n" %% (case, len(body)))
sys.stdout.write("Content-Type: text/plain\\r\\n\\r\\nreached %%s %%d\\n" %% (case, len(body)))
"""


@pytest.fixture(scope="module")
def smuggle_cgi(env):
    logdir = env.path("tmp", "smuggling")
    os.makedirs(logdir, exist_ok=True)
    os.chmod(logdir, 0o777)
    log = os.path.join(logdir, "requests.log")
    if os.path.exists(log):
        os.unlink(log)
    install_file(env, "cgi-bin/smuggle.py", "#!%s\n%s" % (
        env.sandbox.cgi_python(), CGI % logdir), 0o755)
    return log


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


# name -> (method, extra headers / replacements, body, note)
# headers: list of (name, value) appended after the pseudo-headers, or a
# callable building the whole list from (path, authority, scheme)
def pseudo(path, auth, scheme, method="GET"):
    return [(":method", method), (":scheme", scheme), (":authority", auth),
            (":path", path)]


CASES = {
    "name-with-cr": [("x-a\rx-b", "1")],
    "name-with-lf": [("x-a\nx-b", "1")],
    "name-with-nul": [("x-a\0b", "1")],
    "name-with-colon": [("x-a:b", "1")],
    "value-with-cr": [("x-a", "1\rx-b: 2")],
    "value-with-lf": [("x-a", "1\nx-b: 2")],
    "value-with-crlf": [("x-a", "1\r\nx-b: 2")],
    "value-with-nul": [("x-a", "1\0002")],
    "uppercase-name": [("X-Upper", "1")],
    "connection": [("connection", "close")],
    "transfer-encoding": [("transfer-encoding", "chunked")],
    "keep-alive": [("keep-alive", "timeout=5")],
    "upgrade": [("upgrade", "h2c")],
    "proxy-connection": [("proxy-connection", "keep-alive")],
    "te-gzip": [("te", "gzip")],
    "te-trailers-gzip": [("te", "trailers, gzip")],
    "value-leading-space": [("x-a", " 1")],
    "value-trailing-space": [("x-a", "1 ")],
    "value-leading-tab": [("x-a", "\t1")],
    "value-trailing-tab": [("x-a", "1\t")],
    "duplicate-path": lambda p, a, s: pseudo(p, a, s) + [(":path", p + "-dup")],
    "duplicate-method": lambda p, a, s: pseudo(p, a, s) + [(":method", "POST")],
    "unknown-pseudo": lambda p, a, s: pseudo(p, a, s) + [(":foo", "bar")],
    "pseudo-after-regular": lambda p, a, s: (pseudo(p, a, s)[:3] + [("x-a", "1")]
                                             + pseudo(p, a, s)[3:]),
    "empty-path": lambda p, a, s: pseudo("", a, s),
    "path-with-space": lambda p, a, s: pseudo(p + " HTTP/1.1", a, s),
    "content-length-more-data": ("POST", [("content-length", "5")], b"0123456789"),
    "content-length-less-data": ("POST", [("content-length", "10")], b"01234"),
    "content-length-no-data": ("POST", [("content-length", "5")], None),
}


def build(case, path, auth, scheme):
    spec = CASES[case]
    method, body = "GET", None
    if isinstance(spec, tuple):
        method, extra, body = spec
        hdrs = pseudo(path, auth, scheme, method) + extra
    elif callable(spec):
        hdrs = spec(path, auth, scheme)
    else:
        hdrs = pseudo(path, auth, scheme) + spec
    return hdrs, body


def send_case(env, how, case, hdrs, body, tag):
    with RawConn(env, how) as c:
        hdrs = hdrs + [("x-case", tag)]
        block = hp_block(hdrs)
        out = headers_frame(1, block, end_stream=body is None)
        if body is not None:
            out += data_frame(1, body, end_stream=True)
        c.send(out)
        c.wait(lambda: c.stream_done(1) or c.goaways or c.closed, 10 * env.slow)
        c.check_codes()
        return c


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_valid_request_reaches_the_logging_cgi(env, smuggle_cgi, how):
    """The control: the detection works for a clean request."""
    tag = "ok-%s-%s" % (how, uuid.uuid4().hex[:8])
    with RawConn(env, how) as c:
        path = "/cgi-bin/smuggle.py?case=" + tag
        hdrs = pseudo(path, c.authority, c.scheme, "POST") + [
            ("content-length", "5"), ("x-a", "1"), ("te", "trailers")]
    c = send_case(env, how, "ok", hdrs, b"01234", tag)
    assert c.status(1) == 200, c.answer()
    assert c.data.get(1) == ("reached %s 5\n" % tag).encode()
    log = read(smuggle_cgi)
    assert "start %s " % tag in log and "done %s 5" % tag in log


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_malformed_request_is_rejected_and_never_reaches_cgi(env, smuggle_cgi,
                                                            how, case):
    if case.startswith("content-length") or env.slow > 1:
        # the CGI may have started on the HEADERS and sees its body cut off
        # (under a sanitizer, that of an earlier case may log it only now)
        env.ignore_log(r"AH0(1270|1225): Error reading request entity data")  # cgid / cgi (prefork)
    tag = "%s-%s-%s" % (case, how, uuid.uuid4().hex[:8])
    scheme = "https" if how == "h2" else "http"
    port = env.https_port if how == "h2" else env.http_port
    auth = "%s:%d" % (env.domain, port)
    hdrs, body = build(case, "/cgi-bin/smuggle.py?case=" + tag, auth, scheme)
    c = send_case(env, how, case, hdrs, body, tag)
    status, rst = c.status(1), c.rst.get(1)
    answer = "status %s, %s" % (status, c.answer())
    from conftest import report
    if how == "h2c":
        report("smuggling %-26s %s" % (case, answer))
    log = read(smuggle_cgi)
    access = [line for line in read(env.sandbox.access_log).splitlines() if tag in line]
    if case.startswith("content-length"):
        # the stream may be dispatched on its HEADERS; its body must not
        # complete
        assert "done %s " % tag not in log, log
    else:
        assert tag not in log, "request reached the CGI: %s" % log
    assert not any('" 2' in line.split("HTTP/2.0", 1)[-1][:6] or ' 200 ' in line
                   for line in access), access
    assert status == 400 or rst == PROTOCOL_ERROR, answer
    assert status in (None, 400), answer
    if rst is not None:
        assert rst == PROTOCOL_ERROR, "RST_STREAM %s" % err_name(rst)
