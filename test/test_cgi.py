"""Request bodies and CGI: requests reach CGI scripts intact over HTTP/2,
and what the scripts produce reaches the client intact."""

import hashlib

import pytest

from h2client import install_cgi
from h2env import SIZED_FILES

H2_WAYS = ["h2", "h2c"]


@pytest.mark.h2
@pytest.mark.parametrize("how", H2_WAYS)
def test_cgi_sees_http2_server_protocol(env, how):
    r = env.get(how, "/cgi-bin/env.py")
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/2 200"
    assert r.headers["content-type"] == "text/plain; charset=utf-8"
    lines = r.body.decode().splitlines()
    assert "SERVER_PROTOCOL=HTTP/2.0" in lines
    assert "REQUEST_URI=/cgi-bin/env.py" in lines


@pytest.mark.h2
@pytest.mark.parametrize("how", H2_WAYS)
def test_cgi_env_has_request_headers(env, how):
    r = env.get(how, "/cgi-bin/env.py?a=1&b=2", "-H", "X-Test-Header: hello h2")
    assert r.status == 200
    lines = r.body.decode().splitlines()
    assert "HTTP_X_TEST_HEADER=hello h2" in lines
    assert "QUERY_STRING=a=1&b=2" in lines
    assert "REQUEST_METHOD=GET" in lines


@pytest.mark.h2
@pytest.mark.parametrize("how", H2_WAYS)
def test_post_body_is_echoed_byte_exact(env, how):
    data = bytes(range(256)) * 40
    src = env.path("tmp", "post-10k.bin")
    with open(src, "wb") as f:
        f.write(data)
    r = env.get(how, "/cgi-bin/echo.py", "--data-binary", "@" + src,
                "-H", "Content-Type: application/octet-stream")
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/2 200"
    assert r.headers["x-body-length"] == str(len(data))
    assert r.headers["x-body-sha256"] == hashlib.sha256(data).hexdigest()
    assert r.body == data


@pytest.mark.h2
@pytest.mark.parametrize("how", H2_WAYS)
@pytest.mark.parametrize("name", ["1k.txt", "100k.txt", "10m.txt"])
def test_upload_arrives_complete(env, how, name):
    r = env.get(how, "/cgi-bin/upload.py",
                "--data-binary", "@" + env.sandbox.path("htdocs", name))
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/2 200"
    assert r.json() == {"size": SIZED_FILES[name],
                        "sha256": hashlib.sha256(env.docroot_file(name)).hexdigest()}


def test_post_body_is_echoed_over_http11(env):
    r = env.get("http1", "/cgi-bin/echo.py", "--data-binary", "hello")
    assert r.status_line == "HTTP/1.1 200 OK"
    assert r.body == b"hello"


CGI_SIGNALS = """\
import sys
fields = dict(line.split(":", 1) for line in open("/proc/self/status")
              if line.startswith(("SigBlk", "SigIgn")))
sys.stdout.write("Content-Type: text/plain\\r\\n\\r\\n")
sys.stdout.write("blocked=%s ignored=%s\\n" % (fields["SigBlk"].strip(),
                                             fields["SigIgn"].strip()))
"""


@pytest.mark.h2
@pytest.mark.parametrize("how", H2_WAYS)
def test_cgi_blocks_and_ignores_the_same_signals_as_over_http11(env, how):
    # A script that does not get the signals it would get over HTTP/1.1
    # misses its alarms, and ignores the SIGTERM with which httpd ends it
    # after a request (until the SIGKILL that follows 3 s later).
    install_cgi(env, "signals.py", CGI_SIGNALS)
    r1 = env.get("http1", "/cgi-bin/signals.py")
    assert r1.status == 200, r1
    r2 = env.get(how, "/cgi-bin/signals.py")
    assert r2.status_line == "HTTP/2 200", r2
    assert r2.body == r1.body
