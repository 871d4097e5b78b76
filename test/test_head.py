"""HEAD and GET over HTTP/2 carry the response fields HTTP/1.1 gives on the
same server, no more: in particular no Content-Length unless the response
really has one (a file's size, a length a handler or backend gave, or
httpd's content length filter having seen the whole body, as over
HTTP/1.1). A HEAD whose handler sent no body (a directory listing, an
error page, a CGI, PHP behind mod_proxy_fcgi) is no empty response: a
`content-length: 0` there makes link checkers take the page for empty.

Each case asks over HTTP/2 (h2, h2c) and over HTTP/1.1 on the same port
and compares the fields, less the ones only one protocol has (Date,
Connection, Transfer-Encoding, Upgrade, Keep-Alive). The CGI scripts send
their head, then their body 0.3 s later, so that httpd's content length
filter never sees a whole body at once (it would then add a length, over
both protocols alike, but only when the script was quick enough)."""

import os
import time

import http.server
import threading

import pytest

from h2client import PROXY_MODULES_CONF, install_cgi, install_file, with_conf

pytestmark = pytest.mark.h2

# (HTTP/2 way, the HTTP/1.1 way to the same port)
WAYS = [("h2", "https1"), ("h2c", "http1")]
WAY_IDS = ["h2", "h2c"]

ORIGIN_PORT_OFFSET = 66     # base + 66: the proxied backend of these tests
ORIGIN_BODY = b"backend page\n" * 100
LISTING_FILES = ("a.txt", "b.txt")
ONLY_ONE_PROTOCOL = {"date", "connection", "transfer-encoding", "upgrade",
                     "keep-alive"}

# head first, body later: (status line or "", extra fields, body)
CGI_SLOW = """\
import sys, time
w = sys.stdout
w.write({head!r} + "Content-Type: text/html\\r\\n\\r\\n")
w.flush()
time.sleep(0.3)
w.write({body!r})
"""

CGI_NO_CONTENT = """\
import sys
sys.stdout.write("Status: 204 No Content\\r\\nContent-Type: text/plain\\r\\n\\r\\n")
"""

CGI_VARY = CGI_SLOW.format(head="Vary: accept-encoding\r\n"
                                "Vary: Accept-Encoding,  User-Agent\r\n",
                           body="varies")

SITE_CONF = """\
<IfModule !autoindex_module>
LoadModule autoindex_module /usr/lib/apache2/modules/mod_autoindex.so
</IfModule>
<Directory "{docroot}/listing">
    Options +Indexes
</Directory>
AddLanguage de .de
<Location "/lang/">
    Header set Content-Language "EN, De"
</Location>
""" + PROXY_MODULES_CONF + """\
ProxyPass "/backend/" "http://127.0.0.1:{port}/"
"""


class _LengthOrigin(http.server.BaseHTTPRequestHandler):
    """A backend that gives its length, for GET and for HEAD, as PHP does
    when a script sets Content-Length."""
    protocol_version = "HTTP/1.1"

    def _head(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(ORIGIN_BODY)))
        self.end_headers()

    def do_HEAD(self):
        self._head()

    def do_GET(self):
        self._head()
        self.wfile.write(ORIGIN_BODY)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site(env):
    """The scripts, files and configuration of this module, and the backend."""
    past = time.time() - 3600      # strong ETags: no file is "just changed"
    for name in LISTING_FILES:
        os.utime(install_file(env, "htdocs/listing/" + name, name * 10), (past, past))
    os.utime(install_file(env, "htdocs/empty.txt", b""), (past, past))
    os.utime(install_file(env, "htdocs/lang/page.txt.de", b"hallo\n"), (past, past))
    install_cgi(env, "nolength.py", CGI_SLOW.format(head="", body="x" * 5000))
    install_cgi(env, "found.py", CGI_SLOW.format(
        head="Status: 302 Found\r\nLocation: http://elsewhere.example/\r\n",
        body="<p>moved</p>"))
    install_cgi(env, "location.py", CGI_SLOW.format(
        head="Location: http://elsewhere.example/\r\n", body=""))
    install_cgi(env, "missing.py", CGI_SLOW.format(
        head="Status: 404 Not Found\r\n", body="<p>no such thing</p>"))
    install_cgi(env, "nocontent.py", CGI_NO_CONTENT)
    install_cgi(env, "vary.py", CGI_VARY)
    port = env.port_base + ORIGIN_PORT_OFFSET
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), _LengthOrigin)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield from with_conf(env, "head-site", SITE_CONF.format(
            docroot=env.sandbox.docroot, port=port), value=env)
    finally:
        srv.shutdown()
        srv.server_close()


def fields(r):
    return {k: v for k, v in r.headers.items() if k not in ONLY_ONE_PROTOCOL}


def ask(env, ways, method, path):
    """The response over HTTP/2 and over HTTP/1.1; their fields must be the
    same. Returns the HTTP/2 one (for HEAD, curl -I writes the head where
    a body would go)."""
    how, how1 = ways
    opt = ["-I"] if method == "HEAD" else []
    r = env.get(how, path, *opt)
    r1 = env.get(how1, path, *opt)
    assert r.exit_code == 0 and r1.exit_code == 0, (r, r1)
    assert r.protocol == "HTTP/2" and r1.protocol == "HTTP/1.1"
    assert r.status == r1.status
    assert fields(r) == fields(r1)
    if method == "GET":
        assert r.body == r1.body
    return r


@pytest.mark.parametrize("ways", WAYS, ids=WAY_IDS)
@pytest.mark.parametrize("method", ["HEAD", "GET"])
def test_static_file_carries_its_size(site, ways, method):
    r = ask(site, ways, method, "/10k.txt")
    assert r.status == 200
    assert r.headers["content-length"] == str(10 * 1024)
    assert r.headers["content-type"] == "text/plain"


@pytest.mark.parametrize("ways", WAYS, ids=WAY_IDS)
def test_empty_file_has_length_0_on_get_and_none_on_head(site, ways):
    assert ask(site, ways, "GET", "/empty.txt").headers["content-length"] == "0"
    assert "content-length" not in ask(site, ways, "HEAD", "/empty.txt").headers


@pytest.mark.parametrize("ways", WAYS, ids=WAY_IDS)
@pytest.mark.parametrize("method", ["HEAD", "GET"])
def test_cgi_without_a_length_gets_none(site, ways, method):
    r = ask(site, ways, method, "/cgi-bin/nolength.py")
    assert r.status == 200
    assert "content-length" not in r.headers
    assert r.headers["content-type"] == "text/html"
    if method == "GET":
        assert r.body == b"x" * 5000


@pytest.mark.parametrize("ways", WAYS, ids=WAY_IDS)
@pytest.mark.parametrize("method", ["HEAD", "GET"])
def test_cgi_302_with_its_own_body_gets_no_length(site, ways, method):
    r = ask(site, ways, method, "/cgi-bin/found.py")
    assert r.status == 302
    assert r.headers["location"] == "http://elsewhere.example/"
    assert "content-length" not in r.headers


@pytest.mark.parametrize("ways", WAYS, ids=WAY_IDS)
def test_cgi_location_redirect_has_httpds_page_length_on_get_only(site, ways):
    """A script that only names a Location gets httpd's 302 page: its length
    over GET, none over HEAD (the page is not sent)."""
    r = ask(site, ways, "GET", "/cgi-bin/location.py")
    assert r.status == 302
    assert r.headers["content-length"] == str(len(r.body))
    r = ask(site, ways, "HEAD", "/cgi-bin/location.py")
    assert r.status == 302
    assert r.headers["location"] == "http://elsewhere.example/"
    assert "content-length" not in r.headers


@pytest.mark.parametrize("ways", WAYS, ids=WAY_IDS)
@pytest.mark.parametrize("method", ["HEAD", "GET"])
def test_cgi_404_gets_no_length(site, ways, method):
    r = ask(site, ways, method, "/cgi-bin/missing.py")
    assert r.status == 404
    assert "content-length" not in r.headers
    if method == "GET":
        assert r.body == b"<p>no such thing</p>"


@pytest.mark.parametrize("ways", WAYS, ids=WAY_IDS)
def test_missing_file_404_page_has_length_on_get_only(site, ways):
    r = ask(site, ways, "GET", "/no/such/file.txt")
    assert r.status == 404
    assert r.headers["content-length"] == str(len(r.body))
    r = ask(site, ways, "HEAD", "/no/such/file.txt")
    assert r.status == 404
    assert "content-length" not in r.headers


@pytest.mark.parametrize("ways", WAYS, ids=WAY_IDS)
def test_directory_listing_has_length_on_get_only(site, ways):
    r = ask(site, ways, "GET", "/listing/")
    assert r.status == 200
    assert b"a.txt" in r.body and b"b.txt" in r.body
    assert r.headers["content-length"] == str(len(r.body))
    assert r.headers["content-type"] == "text/html;charset=ISO-8859-1"
    r = ask(site, ways, "HEAD", "/listing/")
    assert r.status == 200
    assert "content-length" not in r.headers
    assert r.headers["content-type"] == "text/html;charset=ISO-8859-1"


@pytest.mark.parametrize("ways", WAYS, ids=WAY_IDS)
@pytest.mark.parametrize("method", ["HEAD", "GET"])
def test_length_a_backend_gives_is_kept(site, ways, method):
    r = ask(site, ways, method, "/backend/page")
    assert r.status == 200
    assert r.headers["content-length"] == str(len(ORIGIN_BODY))
    if method == "GET":
        assert r.body == ORIGIN_BODY


@pytest.mark.parametrize("ways", WAYS, ids=WAY_IDS)
def test_204_describes_no_content(site, ways):
    r = ask(site, ways, "GET", "/cgi-bin/nocontent.py")
    assert r.status == 204
    assert "content-type" not in r.headers
    assert "content-length" not in r.headers


@pytest.mark.parametrize("ways", WAYS, ids=WAY_IDS)
def test_vary_items_go_out_once(site, ways):
    r = ask(site, ways, "GET", "/cgi-bin/vary.py")
    assert r.headers["vary"] == "accept-encoding,User-Agent"


@pytest.mark.parametrize("ways", WAYS, ids=WAY_IDS)
def test_content_language_joins_the_field_a_module_set(site, ways):
    r = ask(site, ways, "GET", "/lang/page.txt.de")
    assert r.headers["content-language"] == "de,en"
