"""Counting and limits as stock mod_http2 counts them (issue 29): what the
access log says of a stream (%O the frame bytes written to the client, %I
the head's frames and the body once, %X and %D for a stream that did not
end), LimitRequestLine on the :path, clients that send bad fields. Every
test here passes with H2_TEST_MODULE=stock too; where the two differ in a
detail, the assertion says which is whose. (H2MaxHeaderBlockLen 0:
test_limits.py; renegotiation with an ErrorDocument: test_tls.py.)

Stock's figures, measured with these tests (loopback, 16 MB stream window):
a 1 KB range of 10k.txt logs %O 1180 (ours 1180); a 200 MB download reset
after 20 MB logs 29-38 MB and X (ours 28-35 MB); one whose connection
closes after 0.1 s logs 2-4 MB more than the client got (ours 4-6 MB); a
20 MB POST logs %I 20,971,563 (ours the same)."""

import os
import time

import pytest

from h2client import (H2Client, make_big_file, module_conf, with_conf,
                      with_vhost_conf)
from h2raw import (CANCEL, PROTOCOL_ERROR, SETTINGS_INITIAL_WINDOW_SIZE, RawConn,
                   header_frames, headers_frame, request_block, rst_frame,
                   window_update_frame)

pytestmark = pytest.mark.h2

MB = 1 << 20
BIG = 200 * MB
WINDOW = 16 * MB            # the client's stream window in the download tests


@pytest.fixture
def wire_log(env):
    """An access log with mod_logio's fields: its path."""
    path = env.sandbox.path("logs", "wire_log")
    if os.path.exists(path):
        os.unlink(path)
    yield from with_conf(env, "wire", 'LogFormat "%%{H2_STREAM_ID}e %%>s %%O %%I %%X '
                         '%%D %%U" wire\nCustomLog "%s" wire\n' % path, value=path)


def logged(path, sid, uri, timeout=10):
    """The log entry of stream sid for uri: dict of status, O, I, X, D."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            for line in open(path).read().splitlines():
                f = line.split()
                if len(f) == 7 and f[0] == str(sid) and f[6] == uri:
                    return dict(status=int(f[1]), O=int(f[2]), I=int(f[3]), X=f[4],
                                D=int(f[5]))
        time.sleep(0.1)
    raise AssertionError("no log entry for %d %s: %s" % (
        sid, uri, open(path).read() if os.path.exists(path) else "no log"))


@pytest.fixture(scope="module")
def big(env):
    make_big_file(os.path.join(env.sandbox.docroot, "big200.bin"), BIG)
    return "/big200.bin"


def download(env, how, path):
    """A connection whose client takes up to WINDOW of stream 1 unread."""
    c = RawConn(env, how, settings=[(SETTINGS_INITIAL_WINDOW_SIZE, WINDOW)])
    c.send(window_update_frame(0, 1 << 30))
    c.send(headers_frame(1, request_block(c, path)))
    return c


def read_head(c):
    """Read stream 1 piecewise until its response head is in: the time then.
    The server took the request before it sent the head and logs after it
    saw what the client does next, so %D is at least the client's time
    from here to then, however slow either side runs (on a busy machine
    the request may reach the server well after it was sent)."""
    deadline = time.monotonic() + 10
    while c.status(1) is None and not c.closed and time.monotonic() < deadline:
        c.read_some(1 << 16, 0.01)
    assert c.status(1) == 200, c.answer()
    return time.monotonic()


# %D counts whole microseconds of the wall clock, the client its monotonic one
CLOCKS = 1000


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_range_request_logs_its_frames(env, wire_log, how):
    """A 1 KB range: %O is its HEADERS (HPACK) and DATA frames, under
    1280 (the HTTP/1.1 text of its head made it 1306); %I its HEADERS."""
    with RawConn(env, how) as c:
        c.send(headers_frame(1, request_block(c, "/10k.txt", extra=[
            ("range", "bytes=0-1023")])))
        assert c.wait(lambda: c.stream_done(1), 5), c.answer()
    assert c.status(1) == 206 and len(c.data[1]) == 1024
    e = logged(wire_log, 1, "/10k.txt")
    assert e["status"] == 206
    assert 1024 + 2 * 9 + 50 <= e["O"] < 1280, e      # stock and ours: 1180
    assert 50 <= e["I"] <= 200, e                       # both: 111 (h2c)


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_download_reset_logs_what_went_out(env, wire_log, big, how):
    """A client resets a 200 MB download after 20 MB: the log has the
    bytes written until the reset (20 MB, what its window let out ahead
    and what sat in socket buffers), X, and the time until then."""
    c = download(env, how, big)
    with c:
        t0 = read_head(c)
        while len(c.data.get(1, b"")) < 20 * MB and not c.closed:
            c.read_some(1 << 16)
        got = len(c.data[1])
        took = time.monotonic() - t0
        c.send(rst_frame(1, CANCEL))
        c.pump(0.5)
    e = logged(wire_log, 1, big)
    assert e["status"] == 200 and e["X"] == "X", e
    assert got <= e["O"] <= got + WINDOW + 16 * MB, (got, e)
    assert e["D"] >= took * 1e6 - CLOCKS, (took, e)


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_download_of_a_closed_connection_logs_what_went_out(env, wire_log, big, how):
    """The client reads for 0.1 s after the response's head and closes:
    %O is what was written (not the file), X, and %D at least the time the
    client held the stream after seeing the head."""
    c = download(env, how, big)
    with c:
        head_seen = read_head(c)
        while time.monotonic() - head_seen < 0.1:
            c.read_some(1 << 16, 0.01)
        got = len(c.data.get(1, b""))
        held = time.monotonic() - head_seen
    e = logged(wire_log, 1, big)
    assert e["status"] == 200 and e["X"] == "X", e
    assert got <= e["O"] <= got + WINDOW + 16 * MB, (got, e)
    assert e["O"] < BIG // 2, e
    assert e["D"] >= held * 1e6 - CLOCKS, (held, e)


@pytest.fixture
def discard(env, optfn_module):
    yield from module_conf(env, optfn_module, "/discard", "h2-discard")


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_post_body_counts_once(env, wire_log, discard, how):
    """A 20 MB POST logs %I of its head's frames and the body once (both:
    20,971,563; it was 41,943,187, the body twice)."""
    body = b"x" * (20 * MB)
    with H2Client.connect(env, how) as c:
        sid = c.request("POST", "/discard", headers=[("content-length", str(len(body)))],
                        end_stream=False)
        c.send_body(sid, body[:-1])
        # END_STREAM with the last byte: stock may answer (and close the
        # stream) as soon as the content-length is in
        c.conn.send_data(sid, body[-1:], end_stream=True)
        c.flush()
        assert c.wait_done(sid, 60).status == 200
    e = logged(wire_log, sid, "/discard")
    assert len(body) + 20 <= e["I"] <= len(body) + 200, e


# ------------------------------------------------ LimitRequestLine

def path_of(n):
    return "/1k.txt?" + "q" * (n - len("/1k.txt?"))


@pytest.fixture
def limited_line(env, request):
    n = request.param
    yield from with_vhost_conf(env, "line", "LimitRequestLine %d\n" % n)


@pytest.mark.parametrize("limited_line", [1024, 48], indirect=True)
@pytest.mark.parametrize("extra,status", [(0, 200), (1, 414)])
def test_request_line_limit_is_the_path_length(env, limited_line, extra, status, request):
    """LimitRequestLine n: a :path of n characters is served, n + 1 get
    414, as in stock (HTTP/1.1's line count refused 13 characters
    earlier)."""
    n = request.node.callspec.params["limited_line"]
    with RawConn(env, "h2c") as c:
        c.send(headers_frame(1, request_block(c, path_of(n + extra))))
        assert c.wait(lambda: c.stream_done(1), 5), c.answer()
    assert c.status(1) == status, c.answer()


# ------------------------------------------------ bad fields

def fields_over(n):
    """n fields of 8200 bytes, over LimitRequestFieldSize (8190)."""
    return [("x-f%d" % i, "v" * 8200) for i in range(n)]


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_ten_fields_over_the_limit_get_431(env, how):
    with RawConn(env, how) as c:
        c.send(header_frames(1, request_block(c, "/1k.txt", extra=fields_over(10))))
        assert c.wait(lambda: c.stream_done(1), 5), c.answer()
    assert c.status(1) == 431 and not c.goaways, c.answer()


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_hundred_fields_over_the_limit_end_the_connection(env, how):
    """100 such fields take more than 8 CONTINUATION frames, nghttp2's
    limit in both (17 fields, 8 CONTINUATIONs, still get 431): no
    response, the connection ends. Ours says why with GOAWAY
    PROTOCOL_ERROR; stock closes without one."""
    with RawConn(env, how) as c:
        c.send(header_frames(1, request_block(c, "/1k.txt", extra=fields_over(100))))
        assert c.wait_answer(5), c.answer()
        c.wait_closed(2)
    assert c.status(1) is None and c.closed, c.answer()
    if c.goaways:
        assert c.goaway_code == PROTOCOL_ERROR, c.answer()


@pytest.mark.parametrize("value,ok", [("a\x7fb", False), ("\x7f", False),
                                      ("a\x01b", False), ("a\x1fb", False),
                                      ("a\x80\xffb", True), ("a\tb", True)])
def test_field_value_outside_rfc9110_resets_the_stream(env, value, ok):
    """DEL or a control other than HTAB in a value: RST_STREAM
    PROTOCOL_ERROR (malformed), as stock; obs-text and HTAB are served."""
    with RawConn(env, "h2c") as c:
        c.send(headers_frame(1, request_block(c, "/1k.txt", extra=[("x-d", value)])))
        assert c.wait(lambda: c.stream_done(1), 5), c.answer()
        c.send(headers_frame(3, request_block(c, "/1k.txt")))
        assert c.wait(lambda: c.stream_done(3), 5), c.answer()
    if ok:
        assert c.status(1) == 200, c.answer()
    else:
        assert c.status(1) is None and c.rst.get(1) == PROTOCOL_ERROR, c.answer()
    assert c.status(3) == 200 and not c.goaways, c.answer()
