"""The optional functions other modules look up by name (see
/usr/include/apache2/mod_http2.h): http2_is_h2, http2_var_lookup and
http2_get_num_workers answer as stock's do; http2_get_pollfd_from_conn
(and core's ap_get_pollfd_from_conn) give a descriptor to poll a stream's
request body. A small module
(test/modules/mod_h2_optfn_test.c, built here with apxs) retrieves them
and reports their answers for the request it handles."""

import time

import pytest

from h2client import H2Client, module_conf
from h2raw import RawConn, data_frame, headers_frame, request_block

pytestmark = pytest.mark.h2


@pytest.fixture
def optfn_conf(env, optfn_module):
    yield from module_conf(env, optfn_module, "/optfn", "h2-optfn-test")


def answers(body):
    return dict(l.split("=", 1) for l in body.decode().splitlines() if "=" in l)


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_optional_functions_answer_for_an_http2_request(env, optfn_conf, how):
    with H2Client.connect(env, how) as c:
        r = c.get("/optfn")
    assert r.status == 200, r
    a = answers(r.body)
    assert a["registered"] == "1,1,1"
    assert a["is_h2"] == "1"
    assert a["HTTP2"] == "on"
    assert a["H2_STREAM_ID"] == str(r.stream_id)
    minw, maxw = (int(x) for x in a["workers"].split(","))
    assert 1 <= minw <= maxw


@pytest.mark.parametrize("how", ["http1", "https1"])
def test_optional_functions_answer_for_an_http11_request(env, optfn_conf, how):
    r = env.get(how, "/optfn")
    assert r.status == 200, r
    a = answers(r.body)
    assert a["registered"] == "1,1,1"
    assert a["is_h2"] == "0"
    assert a["HTTP2"] == "off"


@pytest.fixture
def pollfd_conf(env, optfn_module):
    yield from module_conf(env, optfn_module, "/pollfd", "h2-pollfd-test")


def transcript(body):
    """The handler's poll/read lines, runs of timeouts made one."""
    out = []
    for line in body.decode().splitlines():
        if line.startswith(("poll=", "read=")) and not (out and line == out[-1] == "poll=timeout"):
            out.append(line)
    return out


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_pollfd_is_readable_exactly_while_request_body_waits(env, pollfd_conf, how):
    """http2_get_pollfd_from_conn (stock's optional function) and core's
    ap_get_pollfd_from_conn give one descriptor for a stream's input: it
    stays quiet until the client sends body, is readable then, quiet again
    once the handler read it, and readable at the body's end."""
    with RawConn(env, how) as c:
        c.send(headers_frame(1, request_block(c, "/pollfd", "POST",
                                              [("content-length", "6")]),
                             end_stream=False))
        time.sleep(0.7)
        c.send(data_frame(1, b"abc"))
        time.sleep(0.7)
        c.send(data_frame(1, b"def", end_stream=True))
        assert c.wait(lambda: c.stream_done(1), 15), c.answer()
        body = c.data.get(1, b"")
    assert c.status(1) == 200, c.answer()
    a = answers(body)
    assert (a["registered"], a["optfn"], a["core"]) == ("1", "ok", "same"), body
    assert a["timeout"] == "30"                   # H2StreamTimeout: Timeout
    assert transcript(body) == ["poll=timeout", "read=abc", "poll=timeout",
                                "read=def eos"], body


def test_pollfd_of_an_http1_request_is_the_socket(env, pollfd_conf):
    """For an HTTP/1.1 connection the optional function declines
    (APR_ENOTIMPL, as stock's does) and core gives the socket."""
    r = env.get("http1", "/pollfd")
    assert r.status == 200, r
    a = answers(r.body)
    assert (a["registered"], a["optfn"], a["core"]) == ("1", "notimpl", "socket"), r.body
