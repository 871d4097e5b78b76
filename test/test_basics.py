"""Basics: the server answers over every way of reaching it.

h2   = HTTP/2 over TLS, negotiated with ALPN, on the https port
h2c  = HTTP/2 over cleartext with prior knowledge, on the http port
upgrade = HTTP/1.1 request with "Upgrade: h2c" on the http port
and plain HTTP/1.1 on both ports, which must keep working unchanged.
"""

import hashlib

import pytest

from h2env import SIZED_FILES

H2_WAYS = ["h2", "h2c"]
ALL_WAYS = ["h2", "h2c", "upgrade", "http1", "https1"]
PROTOCOL = {"h2": "HTTP/2", "h2c": "HTTP/2", "upgrade": "HTTP/2",
            "http1": "HTTP/1.1", "https1": "HTTP/1.1"}


@pytest.mark.h2
def test_h2c_prior_knowledge_get_serves_file_bytes(env):
    r = env.get("h2c", "/1k.txt")
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/2 200"
    assert r.body == env.docroot_file("1k.txt")


@pytest.mark.h2
def test_h2c_upgrade_switches_to_http2_and_serves_file_bytes(env):
    r = env.get("upgrade", "/index.html")
    assert r.exit_code == 0, r
    assert [b["status_line"] for b in r.header_blocks] == [
        "HTTP/1.1 101 Switching Protocols", "HTTP/2 200"]
    switch = dict(r.header_blocks[0]["headers"])
    assert switch["upgrade"] == "h2c"
    assert switch["connection"].lower() == "upgrade"
    assert r.body == env.docroot_file("index.html")


@pytest.mark.h2
def test_h2_over_tls_negotiates_http2_with_alpn(env):
    r = env.get("h2", "/index.html", "-v")
    assert r.exit_code == 0, r
    assert "ALPN: server accepted h2" in r.stderr
    assert r.status_line == "HTTP/2 200"
    assert r.body == env.docroot_file("index.html")


def test_http11_still_served_on_http_port(env):
    r = env.get("http1", "/index.html")
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/1.1 200 OK"
    assert r.body == env.docroot_file("index.html")


def test_http11_still_served_over_tls(env):
    r = env.get("https1", "/index.html", "-v")
    assert r.exit_code == 0, r
    assert "ALPN: server accepted http/1.1" in r.stderr
    assert r.status_line == "HTTP/1.1 200 OK"
    assert r.body == env.docroot_file("index.html")


@pytest.mark.parametrize("how", ALL_WAYS)
@pytest.mark.parametrize("name,ctype", [
    ("index.html", "text/html"),
    ("1k.txt", "text/plain"),
    ("7.5k.txt", "text/plain"),
])
def test_static_file_has_content_type_and_length(env, how, name, ctype):
    if PROTOCOL[how] == "HTTP/2" and not env.has_h2:
        pytest.skip("no HTTP/2 module loaded")
    r = env.get(how, "/" + name)
    assert r.exit_code == 0, r
    assert r.protocol == PROTOCOL[how]
    assert r.status == 200
    data = env.docroot_file(name)
    assert r.headers["content-type"] == ctype
    assert r.headers["content-length"] == str(len(data))
    assert r.body == data


@pytest.mark.h2
@pytest.mark.parametrize("how", H2_WAYS)
@pytest.mark.parametrize("name", sorted(SIZED_FILES, key=SIZED_FILES.get))
def test_sized_files_arrive_intact_over_http2(env, how, name):
    r = env.get(how, "/" + name)
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/2 200"
    assert len(r.body) == SIZED_FILES[name]
    assert hashlib.sha256(r.body).hexdigest() == hashlib.sha256(
        env.docroot_file(name)).hexdigest()


@pytest.mark.parametrize("how", ALL_WAYS)
def test_missing_file_returns_404(env, how):
    if PROTOCOL[how] == "HTTP/2" and not env.has_h2:
        pytest.skip("no HTTP/2 module loaded")
    r = env.get(how, "/does-not-exist.html")
    assert r.exit_code == 0, r
    assert r.protocol == PROTOCOL[how]
    assert r.status == 404


@pytest.mark.h2
@pytest.mark.parametrize("how", H2_WAYS)
def test_head_request_has_length_but_no_body(env, how):
    r = env.get(how, "/10k.txt", "-I")
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/2 200"
    assert r.headers["content-length"] == str(SIZED_FILES["10k.txt"])
    # with -I curl writes the header block itself to the output: nothing else
    assert r.body.startswith(b"HTTP/2 200") and r.body.endswith(b"\r\n\r\n")


@pytest.mark.h2
@pytest.mark.parametrize("how", H2_WAYS)
def test_rewrite_rule_maps_path_to_index_page(env, how):
    r = env.get(how, "/rewrite/anything")
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/2 200"
    assert r.body == env.docroot_file("index.html")


@pytest.mark.h2
@pytest.mark.parametrize("scheme", ["http", "https"])
def test_nghttp_receives_file_bytes(env, scheme):
    port = env.https_port if scheme == "https" else env.http_port
    r = env.nghttp("%s://127.0.0.1:%d/4k.txt" % (scheme, port))
    assert r.returncode == 0, r.stderr
    assert r.stdout == env.docroot_file("4k.txt")


@pytest.mark.h2
@pytest.mark.parametrize("scheme,proto", [("http", "h2c"), ("https", "h2")])
def test_h2load_completes_all_requests_multiplexed(env, scheme, proto):
    port = env.https_port if scheme == "https" else env.http_port
    r, stats = env.h2load("%s://127.0.0.1:%d/1k.txt" % (scheme, port),
                          "-n", "400", "-c", "4", "-m", "10")
    assert r.returncode == 0, r.stderr
    assert stats["protocol"] == proto
    assert stats["succeeded"] == 400
    assert stats["2xx"] == 400
