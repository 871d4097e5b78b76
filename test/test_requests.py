"""Requests over HTTP/2 go through httpd's normal machinery: ranges,
conditionals, OPTIONS, ErrorDocument, SSI, mod_deflate, basic auth,
100-continue, request trailers, the CGI environment, the access log and
hop-by-hop header removal. Each runs over h2 (TLS) and h2c."""

import base64
import gzip
import hashlib
import os
import re
import subprocess
import uuid

import pytest

from h2client import H2Client, install_cgi, install_file, remove_conf
from h2env import eventually

H2_WAYS = ["h2", "h2c"]
pytestmark = pytest.mark.h2

ERROR_PAGE = b"<html><body>custom 404 page</body></html>\n"
SECRET = b"the secret text\n"
USER, PASSWORD = "alice", "wonderland"

CGI_HOP = """\
import sys
sys.stdout.write("Content-Type: text/plain\\r\\n"
                 "Connection: close\\r\\n"
                 "Keep-Alive: timeout=5, max=100\\r\\n"
                 "Proxy-Connection: keep-alive\\r\\n"
                 "Upgrade: foo/1\\r\\n"
                 "X-Kept: yes\\r\\n"
                 "\\r\\n"
                 "hop\\n")
"""

SITE_CONF = """\
ErrorDocument 404 /errors/404.html
RewriteRule "^/moved/(.*)$" "/$1" [R=301,L]
<Location "/gz/">
    SetOutputFilter DEFLATE
</Location>
<Location "/auth/">
    AuthType Basic
    AuthName "h2 test"
    AuthBasicProvider file
    AuthUserFile "{htpasswd}"
    Require valid-user
</Location>
"""


@pytest.fixture(scope="module")
def site(env):
    """Docroot files and vhost config for this module (in the run dir)."""
    install_file(env, "htdocs/errors/404.html", ERROR_PAGE)
    install_file(env, "htdocs/gz/100k.txt", env.docroot_file("100k.txt"))
    install_file(env, "htdocs/auth/secret.txt", SECRET)
    install_cgi(env, "hop.py", CGI_HOP)
    htpasswd = env.path("conf", "test-htpasswd")
    subprocess.run(["htpasswd", "-cbB", htpasswd, USER, PASSWORD], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.chmod(htpasswd, 0o644)
    for where in ("http", "https"):
        env.add_conf("requests-site", SITE_CONF.format(htpasswd=htpasswd), where)
    env.reload()
    yield env
    for where in ("http", "https"):
        remove_conf(env, "requests-site", where)
    env.reload()


def sha(data):
    return hashlib.sha256(data).hexdigest()


# ------------------------------------------------------------- rewrite
@pytest.mark.parametrize("how", H2_WAYS)
def test_rewrite_redirect_answers_301_with_location(site, how):
    r = site.get(how, "/moved/1k.txt")
    assert r.status_line == "HTTP/2 301"
    assert r.headers["location"] == site.url(
        "https" if how == "h2" else "http", "/1k.txt")


# ------------------------------------------------------------- ranges
@pytest.mark.parametrize("how", H2_WAYS)
def test_range_request_gets_206_with_exact_bytes(env, how):
    data = env.docroot_file("10k.txt")
    r = env.get(how, "/10k.txt", "-H", "Range: bytes=100-199")
    assert r.status_line == "HTTP/2 206"
    assert r.headers["content-range"] == "bytes 100-199/%d" % len(data)
    assert r.headers["content-length"] == "100"
    assert r.body == data[100:200]


@pytest.mark.parametrize("how", H2_WAYS)
def test_suffix_range_gets_last_bytes(env, how):
    data = env.docroot_file("10k.txt")
    r = env.get(how, "/10k.txt", "-H", "Range: bytes=-50")
    assert r.status_line == "HTTP/2 206"
    assert r.headers["content-range"] == "bytes %d-%d/%d" % (
        len(data) - 50, len(data) - 1, len(data))
    assert r.body == data[-50:]


@pytest.mark.parametrize("how", H2_WAYS)
def test_multiple_ranges_get_multipart_byteranges(env, how):
    data = env.docroot_file("10k.txt")
    r = env.get(how, "/10k.txt", "-H", "Range: bytes=0-9,1000-1019")
    assert r.status_line == "HTTP/2 206"
    m = re.match(r"multipart/byteranges; boundary=(\S+)$", r.headers["content-type"])
    assert m, r.headers
    boundary = m.group(1).encode()
    assert r.headers["content-length"] == str(len(r.body))
    parts = r.body.split(b"--" + boundary)
    # preamble, 2 parts, closing "--\r\n"
    assert len(parts) == 4 and parts[-1].strip() == b"--"
    got = []
    for part in parts[1:3]:
        head, _, payload = part.partition(b"\r\n\r\n")
        assert payload.endswith(b"\r\n")
        ranges = re.search(rb"(?i)Content-Range: bytes (\d+)-(\d+)/(\d+)", head)
        assert ranges
        got.append((int(ranges.group(1)), int(ranges.group(2)), payload[:-2]))
    assert got == [(0, 9, data[0:10]), (1000, 1019, data[1000:1020])]


@pytest.mark.parametrize("how", H2_WAYS)
def test_unsatisfiable_range_gets_416(env, how):
    r = env.get(how, "/1k.txt", "-H", "Range: bytes=5000-6000")
    assert r.status_line == "HTTP/2 416"
    # httpd 2.4 sends no Content-Range with a 416, over HTTP/1.1 neither
    assert r.headers["content-type"] == "text/html; charset=iso-8859-1"
    assert b"Range Not Satisfiable" in r.body


# ------------------------------------------------------------- conditionals
@pytest.mark.parametrize("how", H2_WAYS)
def test_if_none_match_with_etag_gets_304_without_body(env, how):
    first = env.get(how, "/4k.txt")
    etag = first.headers["etag"]
    r = env.get(how, "/4k.txt", "-H", "If-None-Match: " + etag)
    assert r.status_line == "HTTP/2 304"
    assert r.headers["etag"] == etag
    assert "content-length" not in r.headers or r.headers["content-length"] == "0"
    assert r.body == b""


@pytest.mark.parametrize("how", H2_WAYS)
def test_if_none_match_other_etag_gets_200(env, how):
    r = env.get(how, "/4k.txt", "-H", 'If-None-Match: "not-the-etag"')
    assert r.status_line == "HTTP/2 200"
    assert r.body == env.docroot_file("4k.txt")


@pytest.mark.parametrize("how", H2_WAYS)
def test_if_modified_since_last_modified_gets_304(env, how):
    lm = env.get(how, "/4k.txt").headers["last-modified"]
    r = env.get(how, "/4k.txt", "-H", "If-Modified-Since: " + lm)
    assert r.status_line == "HTTP/2 304"
    assert r.body == b""
    old = env.get(how, "/4k.txt", "-H", "If-Modified-Since: Mon, 01 Jan 2001 00:00:00 GMT")
    assert old.status_line == "HTTP/2 200"
    assert old.body == env.docroot_file("4k.txt")


# ------------------------------------------------------------- HEAD / OPTIONS
@pytest.mark.parametrize("how", H2_WAYS)
def test_head_response_ends_with_headers_and_carries_length(env, how):
    with H2Client.connect(env, how) as c:
        r = c.wait_done(c.request("HEAD", "/100k.txt"))
        assert r.status == 200
        assert r.headers["content-length"] == str(100 * 1024)
        assert r.headers["content-type"] == "text/plain"
        assert r.ended and r.body_len == 0


@pytest.mark.parametrize("how", H2_WAYS)
def test_options_lists_allowed_methods(env, how):
    r = env.get(how, "/index.html", "-X", "OPTIONS")
    assert r.status_line == "HTTP/2 200"
    allowed = {m.strip() for m in r.headers["allow"].split(",")}
    assert {"GET", "HEAD", "OPTIONS", "POST"} <= allowed
    assert r.body == b""


# ------------------------------------------------------------- error documents
@pytest.mark.parametrize("how", H2_WAYS)
def test_404_serves_configured_error_document(site, how):
    r = site.get(how, "/no/such/file.html")
    assert r.status_line == "HTTP/2 404"
    assert r.headers["content-type"] == "text/html"
    assert r.body == ERROR_PAGE


# ------------------------------------------------------------- filters
@pytest.mark.parametrize("how", H2_WAYS)
def test_ssi_page_is_processed_with_http2_protocol(env, how):
    r = env.get(how, "/ssi.shtml")
    assert r.status_line == "HTTP/2 200"
    assert r.headers["content-type"] == "text/html"
    assert b"<p>protocol: HTTP/2.0</p>" in r.body
    assert b"<p>uri: /ssi.shtml</p>" in r.body
    assert b"<!--#" not in r.body


@pytest.mark.parametrize("how", H2_WAYS)
def test_deflate_compresses_for_gzip_clients(site, how):
    data = site.docroot_file("100k.txt")
    r = site.get(how, "/gz/100k.txt", "-H", "Accept-Encoding: gzip")
    assert r.status_line == "HTTP/2 200"
    assert r.headers["content-encoding"] == "gzip"
    assert "accept-encoding" in r.headers["vary"].lower()
    assert len(r.body) < len(data)
    assert gzip.decompress(r.body) == data


@pytest.mark.parametrize("how", H2_WAYS)
def test_deflate_leaves_body_alone_without_accept_encoding(site, how):
    r = site.get(how, "/gz/100k.txt")
    assert r.status_line == "HTTP/2 200"
    assert "content-encoding" not in r.headers
    assert r.body == site.docroot_file("100k.txt")


# ------------------------------------------------------------- auth
@pytest.mark.parametrize("how", H2_WAYS)
def test_basic_auth_challenges_then_admits_valid_user(site, how):
    r = site.get(how, "/auth/secret.txt")
    assert r.status_line == "HTTP/2 401"
    assert r.headers["www-authenticate"] == 'Basic realm="h2 test"'
    r = site.get(how, "/auth/secret.txt", "-u", "%s:%s" % (USER, PASSWORD))
    assert r.status_line == "HTTP/2 200"
    assert r.body == SECRET


@pytest.mark.parametrize("how", H2_WAYS)
def test_basic_auth_rejects_wrong_password(site, how):
    site.ignore_log(r"AH01617: user alice: authentication failure")
    r = site.get(how, "/auth/secret.txt", "-u", "%s:wrong" % USER)
    assert r.status_line == "HTTP/2 401"
    assert SECRET not in r.body


# ------------------------------------------------------------- 100-continue
@pytest.mark.parametrize("how", H2_WAYS)
def test_expect_100_continue_gets_interim_100_then_final(env, how):
    body = b"0123456789" * 5000
    with H2Client.connect(env, how) as c:
        c.wait_settings()
        sid = c.request("POST", "/cgi-bin/echo.py",
                        [("expect", "100-continue"),
                         ("content-length", str(len(body))),
                         ("content-type", "application/octet-stream")],
                        end_stream=False)
        c.wait(lambda: c.responses[sid].interim or c.responses[sid].done, 10,
               "100 Continue")
        r = c.responses[sid]
        assert [dict(h)[":status"] for h in r.interim] == ["100"]
        assert r.header_list is None
        c.send_body(sid, body, end_stream=True)
        r = c.wait_done(sid)
        assert r.status == 200
        assert r.headers["x-body-length"] == str(len(body))
        assert r.body == body


# ------------------------------------------------------------- trailers
@pytest.mark.parametrize("how", H2_WAYS)
def test_request_trailers_after_body_are_accepted(env, how):
    body = bytes(range(256)) * 100
    with H2Client.connect(env, how) as c:
        c.wait_settings()
        sid = c.request("POST", "/cgi-bin/echo.py",
                        [("content-type", "application/octet-stream")],
                        body=body, end_stream=False)
        c.conn.send_headers(sid, [("x-checksum", sha(body))], end_stream=True)
        c.flush()
        r = c.wait_done(sid)
        assert r.status == 200
        assert r.headers["x-body-sha256"] == sha(body)
        assert r.body == body


# ------------------------------------------------------------- request line
@pytest.mark.parametrize("how", H2_WAYS)
def test_path_with_fragment_gets_400(env, how):
    """A fragment is no part of a request target (RFC 9110 7.1); httpd
    refuses it in an HTTP/1.1 request line, and so over HTTP/2."""
    with H2Client.connect(env, how) as c:
        r = c.get("/index.html#top")
        assert r.status == 400
        r = c.get("/index.html?a=1")
        assert r.status == 200 and r.body == env.docroot_file("index.html")


@pytest.mark.parametrize("how", H2_WAYS)
def test_unknown_method_reaches_cgi_unless_registered_methods_are_required(env, how):
    with H2Client.connect(env, how) as c:
        r = c.get_with("FROB", "/cgi-bin/env.py")
        assert r.status == 200
        assert "REQUEST_METHOD=FROB" in r.body.decode().splitlines()
    env.add_conf("requests-methods", "HttpProtocolOptions RegisteredMethods\n")
    env.reload()
    try:
        with H2Client.connect(env, how) as c:
            r = c.get_with("FROB", "/cgi-bin/env.py")
            assert r.status == 501
            r = c.get_with("GET", "/cgi-bin/env.py")
            assert r.status == 200
    finally:
        remove_conf(env, "requests-methods", "server")
        env.reload()


# ------------------------------------------------------------- as httpd sees it
@pytest.mark.parametrize("how", H2_WAYS)
def test_cgi_env_has_http2_variables_and_stream_id(env, how):
    with H2Client.connect(env, how) as c:
        c.wait_settings()
        for _ in range(3):
            sid = c.request("GET", "/cgi-bin/env.py")
            r = c.wait_done(sid)
            assert r.status == 200
            lines = r.body.decode().splitlines()
            assert "SERVER_PROTOCOL=HTTP/2.0" in lines
            assert "HTTP2=on" in lines
            assert "H2_STREAM_ID=%d" % sid in lines
            # the h2 library's client takes pushes
            assert "H2PUSH=on" in lines and "H2_PUSH=on" in lines
            tags = [l for l in lines if l.startswith("H2_STREAM_TAG=")]
            # "<pid>-<connection>-<stream id>", as stock has it
            assert len(tags) == 1 and re.fullmatch(r"H2_STREAM_TAG=\d+-\d+-%d" % sid, tags[0])
            assert ("HTTPS=on" in lines) == (how == "h2")


@pytest.mark.parametrize("how", H2_WAYS)
def test_access_log_records_http2_protocol(env, how):
    marker = uuid.uuid4().hex
    r = env.get(how, "/1k.txt?m=" + marker)
    assert r.status_line == "HTTP/2 200"
    def marked():
        with open(env.sandbox.access_log, errors="replace") as f:
            return [ln for ln in f if marker in ln]
    lines = eventually(marked, 5)
    assert lines
    line = lines[-1]
    assert '"GET /1k.txt?m=%s HTTP/2.0" 200 1024 HTTP/2.0' % marker in line


HOP_BY_HOP = ("connection", "keep-alive", "proxy-connection", "transfer-encoding",
              "upgrade")


@pytest.mark.parametrize("how", H2_WAYS)
@pytest.mark.parametrize("path", ["/index.html", "/cgi-bin/hop.py"])
def test_responses_carry_no_hop_by_hop_headers(site, how, path):
    # the h2 package rejects connection-specific headers as a protocol
    # error, so simply getting the response proves they are absent
    with H2Client.connect(site, how) as c:
        r = c.get(path)
        assert r.status == 200
        assert not set(HOP_BY_HOP) & set(r.headers)
    r = site.get(how, path)
    assert r.status_line == "HTTP/2 200"
    assert not set(HOP_BY_HOP) & set(r.headers)
    if path.endswith("hop.py"):
        assert r.headers["x-kept"] == "yes"
        assert r.body == b"hop\n"
