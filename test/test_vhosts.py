"""Per-virtual-host protocol selection: `Protocols` in a vhost decides what
a client gets there, on the same ports as the default vhosts."""

import pytest


@pytest.fixture(scope="module")
def h1only(env):
    """A vhost h1only.test.localhost on both ports with HTTP/1.1 only."""
    docroot = env.sandbox.docroot
    conf = ""
    for port, tls in ((env.http_port, False), (env.https_port, True)):
        conf += """\
<VirtualHost 127.0.0.1:{port}>
    ServerName h1only.{domain}
    Protocols http/1.1
    DocumentRoot "{docroot}"
{ssl}</VirtualHost>
""".format(port=port, domain=env.domain, docroot=docroot,
           ssl="""    SSLEngine on
    SSLCertificateFile "{c}"
    SSLCertificateKeyFile "{k}"
""".format(c=env.sandbox.server_cert, k=env.sandbox.server_key) if tls else "")
    env.add_conf("h1only", conf)
    # Under a sanitizer the old generation's children go on accepting for
    # a while after a graceful restart, with the old vhosts: restart fully.
    renew = env.restart if env.slow > 1 else env.reload
    renew()
    yield "h1only." + env.domain
    env.clear_conf()
    renew()


def _url(env, host, scheme, path):
    port = env.https_port if scheme == "https" else env.http_port
    return "%s://%s:%d%s" % (scheme, host, port, path)


@pytest.mark.h2
def test_http11_only_vhost_answers_h2_client_with_http11_over_tls(env, h1only):
    r = env.curl(_url(env, h1only, "https", "/index.html"), "--http2",
                 "--resolve", "%s:%d:127.0.0.1" % (h1only, env.https_port))
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/1.1 200 OK"
    assert r.body == env.docroot_file("index.html")


@pytest.mark.h2
def test_http11_only_vhost_ignores_h2c_upgrade(env, h1only):
    r = env.curl(_url(env, h1only, "http", "/index.html"), "--http2",
                 "--resolve", "%s:%d:127.0.0.1" % (h1only, env.http_port))
    assert r.exit_code == 0, r
    assert [b["status_line"] for b in r.header_blocks] == ["HTTP/1.1 200 OK"]
    assert r.body == env.docroot_file("index.html")


@pytest.mark.h2
def test_default_vhost_still_speaks_h2_next_to_http11_only_vhost(env, h1only):
    r = env.get("h2", "/index.html")
    assert r.status_line == "HTTP/2 200"
