"""HTTP/2 over TLS: ALPN selection, H2ModernTLSOnly, connection reuse
across virtual hosts (421), and mod_ssl's view of requests on h2 streams.

All vhosts live on the https port next to the default one and are told
apart by SNI (curl --resolve, openssl -servername, H2Socket's sni):

  h1first     Protocols http/1.1 h2, ProtocolsHonorOrder on
  clientfirst Protocols http/1.1 h2, ProtocolsHonorOrder off
  weak        RSA certificate, TLS 1.1 and 1.2 allowed, AES128-SHA among
              the suites (blocklisted for HTTP/2 by RFC 9113 9.2.2),
              H2ModernTLSOnly on (the default)
  weakok      the same TLS setup with H2ModernTLSOnly off
  same        TLS setup identical to the default vhost
  clientauth  SSLVerifyClient optional, SSLOptions +StdEnvVars and
              /tls13/ requiring %{SSL_PROTOCOL} == 'TLSv1.3'
  renego      SSLVerifyClient require only for <Location /1k.txt>
"""

import hashlib
import os
import re
import ssl
import subprocess
import uuid

import pytest

from h2sock import H2Socket, HTTP_1_1_REQUIRED, INADEQUATE_SECURITY

pytestmark = pytest.mark.h2

# @SECLEVEL=0: OpenSSL 3 refuses TLS 1.1 at its default security level
WEAK_SUITES = ("ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:"
               "ECDHE-RSA-AES128-SHA:AES128-SHA:@SECLEVEL=0")
CLIENT_DN = "CN=h2 test client,O=mod_h2 sandbox"


def vhost(env, name, body, cert=None, key=None):
    sb = env.sandbox
    return """\
<VirtualHost 127.0.0.1:{port}>
    ServerName {name}.{domain}
    DocumentRoot "{docroot}"
    ScriptAlias /cgi-bin/ "{cgi}/"
    SSLEngine on
    SSLCertificateFile "{cert}"
    SSLCertificateKeyFile "{key}"
    Header always set X-Vhost {name}
{body}
</VirtualHost>
""".format(port=env.https_port, name=name, domain=env.domain, docroot=sb.docroot,
           cgi=sb.path("cgi-bin"), cert=cert or sb.server_cert,
           key=key or sb.server_key, body=body)


@pytest.fixture(scope="module")
def tls_hosts(env):
    sb = env.sandbox
    weak = """\
    Protocols h2 http/1.1
    SSLProtocol -all +TLSv1.1 +TLSv1.2 +TLSv1.3
    SSLCipherSuite {suites}
""".format(suites=WEAK_SUITES)
    conf = "".join([
        vhost(env, "h1first", "    Protocols http/1.1 h2\n    ProtocolsHonorOrder on"),
        vhost(env, "clientfirst", "    Protocols http/1.1 h2\n    ProtocolsHonorOrder off"),
        vhost(env, "weak", weak + "    H2ModernTLSOnly on",
              sb.rsa_server_cert, sb.rsa_server_key),
        vhost(env, "weakok", weak + "    H2ModernTLSOnly off",
              sb.rsa_server_cert, sb.rsa_server_key),
        vhost(env, "same", "    Protocols h2 http/1.1"),
        vhost(env, "clientauth", """\
    Protocols h2 http/1.1
    SSLCACertificateFile "{ca}"
    SSLVerifyClient optional
    SSLOptions +StdEnvVars
    Alias /tls13/ "{docroot}/"
    <Location /tls13/>
        Require expr "%{{SSL_PROTOCOL}} == 'TLSv1.3'"
    </Location>""".format(ca=sb.ca_cert, docroot=sb.docroot)),
        vhost(env, "renego", """\
    Protocols h2 http/1.1
    SSLCACertificateFile "{ca}"
    <Location /1k.txt>
        SSLVerifyClient require
    </Location>""".format(ca=sb.ca_cert)),
    ])
    env.add_conf("tls-hosts", conf)
    env.reload()
    yield
    env.clear_conf()
    env.reload()


def host(env, name):
    return "%s.%s" % (name, env.domain) if name else env.domain


def curl_host(env, name, path, *args):
    h = host(env, name)
    return env.curl("https://%s:%d%s" % (h, env.https_port, path),
                    "--resolve", "%s:%d:127.0.0.1" % (h, env.https_port), *args)


def s_client_alpn(env, name, alpn):
    """The server's ALPN choice as openssl s_client reports it: the
    protocol name, or None for "No ALPN negotiated"."""
    r = subprocess.run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % env.https_port,
                        "-servername", host(env, name), "-alpn", alpn,
                        "-CAfile", env.sandbox.ca_cert],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=20)
    out = r.stdout.decode(errors="replace")
    assert "Verify return code: 0 (ok)" in out, out
    m = re.search(r"^ALPN protocol: (\S+)$", out, re.M)
    if m:
        return m.group(1)
    assert "No ALPN negotiated" in out, out
    return None


def curl_tls(r):
    """(protocol, cipher) from curl -v's "SSL connection using" line."""
    m = re.search(r"SSL connection using (\S+) / (\S+)", r.stderr)
    assert m, r.stderr
    return m.group(1), m.group(2)


def cgi_env(r):
    return dict(l.split("=", 1) for l in r.body.decode().splitlines() if "=" in l)


def access_log_lines(env, marker):
    with open(env.sandbox.access_log, errors="replace") as f:
        return [l for l in f if marker in l]


# ------------------------------------------------------------------ ALPN

def test_alpn_selects_h2_for_default_vhost_with_h2_in_protocols(env, tls_hosts):
    assert s_client_alpn(env, None, "h2,http/1.1") == "h2"
    r = curl_host(env, None, "/653b.txt", "--http2", "-w", "%{http_version}")
    assert r.exit_code == 0, r
    assert r.stdout == "2"
    assert r.status_line == "HTTP/2 200"


def test_alpn_selects_http11_when_client_offers_only_http11(env, tls_hosts):
    assert s_client_alpn(env, None, "http/1.1") == "http/1.1"


def test_honor_order_on_prefers_servers_http11_over_clients_h2(env, tls_hosts):
    assert s_client_alpn(env, "h1first", "h2,http/1.1") == "http/1.1"
    r = curl_host(env, "h1first", "/653b.txt", "--http2", "-w", "%{http_version}")
    assert r.exit_code == 0, r
    assert r.stdout == "1.1"
    assert r.status_line == "HTTP/1.1 200 OK"
    assert r.headers["x-vhost"] == "h1first"
    assert r.body == env.docroot_file("653b.txt")


def test_honor_order_on_still_selects_h2_for_h2_only_client(env, tls_hosts):
    assert s_client_alpn(env, "h1first", "h2") == "h2"


def test_honor_order_off_lets_clients_order_win(env, tls_hosts):
    assert s_client_alpn(env, "clientfirst", "h2,http/1.1") == "h2"
    assert s_client_alpn(env, "clientfirst", "http/1.1,h2") == "http/1.1"
    r = curl_host(env, "clientfirst", "/653b.txt", "--http2", "-w", "%{http_version}")
    assert r.exit_code == 0, r
    assert r.stdout == "2"
    assert r.status_line == "HTTP/2 200"
    assert r.headers["x-vhost"] == "clientfirst"
    assert r.body == env.docroot_file("653b.txt")


def test_h2load_reports_protocol_selected_by_honor_order(env, tls_hosts):
    for name, proto in (("h1first", "http/1.1"), ("clientfirst", "h2")):
        r, stats = env.h2load("https://%s:%d/1k.txt" % (host(env, name), env.https_port),
                              "--connect-to=127.0.0.1:%d" % env.https_port,
                              "-n", "20", "-c", "1")
        assert r.returncode == 0, r.stderr
        assert stats["protocol"] == proto, r.stdout
        assert stats["succeeded"] == 20
        assert stats["2xx"] == 20


# ------------------------------------------------------- H2ModernTLSOnly

def test_modern_tls_only_never_serves_h2_over_blocklisted_cipher(env, tls_hosts):
    """TLS 1.2 with AES128-SHA (static RSA, CBC): ALPN must not pick h2, or
    the session must end with GOAWAY INADEQUATE_SECURITY; either way no
    request is answered over HTTP/2."""
    marker = "modern-" + uuid.uuid4().hex
    env.ignore_log(r"AH\d+: .*INADEQUATE_SECURITY")
    r = curl_host(env, "weak", "/1k.txt?" + marker, "--http2", "--tls-max", "1.2",
                  "--ciphers", "AES128-SHA", "-v")
    assert curl_tls(r) == ("TLSv1.2", "AES128-SHA")
    assert r.protocol != "HTTP/2", r
    if r.exit_code == 0:
        assert r.status_line == "HTTP/1.1 200 OK"
        assert r.body == env.docroot_file("1k.txt")
    else:
        assert r.status is None, r
    assert not [l for l in access_log_lines(env, marker) if "HTTP/2" in l]


def test_modern_tls_only_never_serves_h2_below_tls12(env, tls_hosts):
    marker = "tls11-" + uuid.uuid4().hex
    r = curl_host(env, "weak", "/1k.txt?" + marker, "--http2", "--tlsv1.1",
                  "--tls-max", "1.1", "--ciphers", "ECDHE-RSA-AES128-SHA:@SECLEVEL=0", "-v")
    assert curl_tls(r) == ("TLSv1.1", "ECDHE-RSA-AES128-SHA")
    assert r.protocol != "HTTP/2", r
    if r.exit_code == 0:
        assert r.status_line == "HTTP/1.1 200 OK"
        assert r.body == env.docroot_file("1k.txt")
    else:
        assert r.status is None, r
    assert not [l for l in access_log_lines(env, marker) if "HTTP/2" in l]


def test_modern_tls_only_alpn_or_goaway_inadequate_security(env, tls_hosts):
    env.ignore_log(r"AH\d+: .*INADEQUATE_SECURITY")
    with H2Socket(env, sni=host(env, "weak"), tls_max=ssl.TLSVersion.TLSv1_2,
                  ciphers="AES128-SHA") as c:
        assert (c.tls_version, c.cipher) == ("TLSv1.2", "AES128-SHA")
        if c.alpn == "h2":
            r = c.get("/653b.txt")
            assert r.status is None, r
            assert c.goaway_code == INADEQUATE_SECURITY
        else:
            assert c.alpn is None


def test_modern_tls_only_serves_h2_over_tls12_ecdhe_gcm(env, tls_hosts):
    r = curl_host(env, "weak", "/1k.txt", "--http2", "--tls-max", "1.2",
                  "--ciphers", "ECDHE-RSA-AES128-GCM-SHA256", "-v")
    assert r.exit_code == 0, r
    assert curl_tls(r) == ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256")
    assert r.status_line == "HTTP/2 200"
    assert r.headers["x-vhost"] == "weak"
    assert r.body == env.docroot_file("1k.txt")


def test_modern_tls_only_serves_h2_over_tls13(env, tls_hosts):
    r = curl_host(env, "weak", "/1k.txt", "--http2", "--tlsv1.3", "-v")
    assert r.exit_code == 0, r
    assert curl_tls(r)[0] == "TLSv1.3"
    assert r.status_line == "HTTP/2 200"
    assert r.body == env.docroot_file("1k.txt")


def test_modern_tls_only_off_in_vhost_allows_h2_over_blocklisted_cipher(env, tls_hosts):
    r = curl_host(env, "weakok", "/1k.txt", "--http2", "--tls-max", "1.2",
                  "--ciphers", "AES128-SHA", "-v")
    assert curl_tls(r) == ("TLSv1.2", "AES128-SHA")
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/2 200"
    assert r.headers["x-vhost"] == "weakok"
    assert r.body == env.docroot_file("1k.txt")


@pytest.fixture
def default_vhost_modern_off(env, tls_hosts):
    """H2ModernTLSOnly off in the https port's default vhost only."""
    env.add_conf("modern-off", "H2ModernTLSOnly off", where="https")
    env.reload()
    yield
    os.unlink(env.path("vhost-https.d", "modern-off.conf"))
    env.reload()


def test_modern_tls_only_off_serves_h2_over_blocklisted_cipher(
        env, default_vhost_modern_off):
    r = env.get("h2", "/1k.txt", "--tls-max", "1.2",
                "--ciphers", "ECDHE-ECDSA-AES128-SHA", "-v")
    assert curl_tls(r) == ("TLSv1.2", "ECDHE-ECDSA-AES128-SHA")
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/2 200"
    assert r.body == env.docroot_file("1k.txt")


def test_modern_tls_only_on_in_vhost_wins_over_off_in_default_vhost(
        env, default_vhost_modern_off):
    env.ignore_log(r"AH\d+: .*INADEQUATE_SECURITY")
    marker = "modern-vhost-" + uuid.uuid4().hex
    r = curl_host(env, "weak", "/1k.txt?" + marker, "--http2", "--tls-max", "1.2",
                  "--ciphers", "AES128-SHA", "-v")
    assert curl_tls(r) == ("TLSv1.2", "AES128-SHA")
    assert r.protocol != "HTTP/2", r
    assert not [l for l in access_log_lines(env, marker) if "HTTP/2" in l]


# ------------------------------------- connection reuse across vhosts (421)

def test_vhost_with_identical_tls_setup_is_served_on_same_connection(env, tls_hosts):
    with H2Socket(env, sni=env.domain) as c:
        assert c.alpn == "h2"
        r = c.get("/653b.txt", authority=host(env, "same"))
        assert r.status == 200, r
        assert r.headers["x-vhost"] == "same"
        assert r.body == env.docroot_file("653b.txt")
        r = c.get("/653b.txt", authority=env.domain)
        assert r.status == 200, r
        assert "x-vhost" not in r.headers
    with H2Socket(env, sni=host(env, "same")) as c:
        r = c.get("/1k.txt", authority=env.domain)
        assert r.status == 200, r
        assert "x-vhost" not in r.headers
        assert r.body == env.docroot_file("1k.txt")


@pytest.mark.parametrize("name", ["clientauth", "weak"])
def test_vhost_with_other_tls_setup_gets_421_misdirected_request(env, tls_hosts, name):
    # mod_ssl logs the mismatch at error level (AH02032)
    env.ignore_log(r"AH02032: Hostname %s provided via SNI and hostname %s "
                   % (re.escape(env.domain), re.escape(host(env, name))))
    with H2Socket(env, sni=env.domain) as c:
        r = c.get("/653b.txt", authority=host(env, name))
        assert r.status == 421, r
        assert r.ended and r.reset_code is None
        assert b"Misdirected Request" in r.body
        # the connection stays usable for the vhost it was opened for
        r = c.get("/653b.txt", authority=env.domain)
        assert r.status == 200, r
        assert r.body == env.docroot_file("653b.txt")
        assert c.goaway_code is None


def test_vhost_reached_by_own_sni_is_served_over_h2(env, tls_hosts):
    for name in ("clientauth", "same", "renego"):
        with H2Socket(env, sni=host(env, name)) as c:
            r = c.get("/653b.txt")
            assert r.status == 200, (name, r)
            assert r.headers["x-vhost"] == name
            assert r.body == env.docroot_file("653b.txt")


# --------------------------------------------- mod_ssl on HTTP/2 streams

def test_cgi_on_h2_stream_sees_https_on(env, tls_hosts):
    r = env.get("h2", "/cgi-bin/env.py")
    assert r.status_line == "HTTP/2 200"
    e = cgi_env(r)
    assert e["HTTPS"] == "on"
    assert e["SERVER_PROTOCOL"] == "HTTP/2.0"
    assert e["REQUEST_SCHEME"] == "https"


@pytest.mark.parametrize("tls", ["1.2", "1.3"])
def test_cgi_on_h2_stream_sees_ssl_protocol_and_cipher(env, tls_hosts, tls):
    args = ["--tls-max", "1.2"] if tls == "1.2" else ["--tlsv1.3"]
    r = curl_host(env, "clientauth", "/cgi-bin/env.py", "--http2", "-v", *args)
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/2 200"
    proto, cipher = curl_tls(r)
    assert proto == "TLSv" + tls
    e = cgi_env(r)
    assert e["HTTPS"] == "on"
    assert e["SERVER_PROTOCOL"] == "HTTP/2.0"
    assert e["SSL_PROTOCOL"] == proto
    assert e["SSL_CIPHER"] == cipher
    assert e["SSL_TLS_SNI"] == host(env, "clientauth")
    assert e["SSL_CLIENT_VERIFY"] == "NONE"
    assert "SSL_CLIENT_S_DN" not in e


def test_client_certificate_dn_reaches_cgi_on_h2_stream(env, tls_hosts):
    sb = env.sandbox
    r = curl_host(env, "clientauth", "/cgi-bin/env.py", "--http2",
                  "--cert", sb.client_cert, "--key", sb.client_key)
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/2 200"
    e = cgi_env(r)
    assert e["SSL_CLIENT_VERIFY"] == "SUCCESS"
    assert e["SSL_CLIENT_S_DN"] == CLIENT_DN
    assert e["SSL_CLIENT_S_DN_CN"] == "h2 test client"
    assert e["SSL_CLIENT_I_DN_CN"] == "mod_h2 sandbox CA"


def test_require_expr_on_ssl_protocol_admits_tls13_on_h2(env, tls_hosts):
    r = curl_host(env, "clientauth", "/tls13/653b.txt", "--http2", "--tlsv1.3")
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/2 200"
    assert r.body == env.docroot_file("653b.txt")


def test_require_expr_on_ssl_protocol_refuses_tls12_on_h2(env, tls_hosts):
    env.ignore_log(r"AH01630: client denied by server configuration")
    r = curl_host(env, "clientauth", "/tls13/653b.txt", "--http2", "--tls-max", "1.2")
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/2 403"


@pytest.mark.parametrize("tls", ["1.2", "1.3"])
def test_location_client_cert_works_over_http11_by_renegotiation(env, tls_hosts, tls):
    """The premise of the next tests: over HTTP/1.1, mod_ssl asks for the
    certificate after the handshake (renegotiation / TLS 1.3 post-handshake
    authentication) and serves the file."""
    sb = env.sandbox
    args = ["--tls-max", "1.2"] if tls == "1.2" else ["--tlsv1.3"]
    r = curl_host(env, "renego", "/1k.txt", "--http1.1", "--cert", sb.client_cert,
                  "--key", sb.client_key, *args)
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/1.1 200 OK"
    assert r.body == env.docroot_file("1k.txt")


@pytest.mark.parametrize("tls", ["1.2", "1.3"])
def test_location_client_cert_on_h2_stream_resets_with_http11_required(env, tls_hosts, tls):
    tls_max = ssl.TLSVersion.TLSv1_2 if tls == "1.2" else None
    with H2Socket(env, sni=host(env, "renego"), tls_max=tls_max) as c:
        assert c.alpn == "h2"
        r = c.get("/1k.txt")
        assert r.status is None, r
        assert HTTP_1_1_REQUIRED in (r.reset_code, c.goaway_code), (r, c.goaway_code)


def test_curl_retries_over_http11_when_h2_stream_needs_client_cert(env, tls_hosts):
    sb = env.sandbox
    r = curl_host(env, "renego", "/1k.txt", "--http2", "--cert", sb.client_cert,
                  "--key", sb.client_key, "-v")
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/1.1 200 OK"
    assert r.body == env.docroot_file("1k.txt")
    assert "HTTP_1_1_REQUIRED" in r.stderr or "HTTP/1.1" in r.stderr


def test_file_without_client_cert_requirement_is_served_over_h2_on_renego_vhost(env, tls_hosts):
    r = curl_host(env, "renego", "/2k.txt", "--http2")
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/2 200"
    assert hashlib.sha256(r.body).digest() == hashlib.sha256(
        env.docroot_file("2k.txt")).digest()


# ------------------------- a port whose first vhost speaks http/1.1 only

@pytest.fixture(scope="module")
def h1_first_port(env):
    """A TLS port of its own (base+84) whose first (default) vhost has
    Protocols http/1.1 and whose second, reached by SNI, h2 http/1.1."""
    from h2client import remove_conf
    port = env.port_base + 84
    sb = env.sandbox
    hosts = "".join("""\
<VirtualHost 127.0.0.1:{port}>
    ServerName {name}.{domain}
    DocumentRoot "{docroot}"
    Protocols {protocols}
    SSLEngine on
    SSLCertificateFile "{cert}"
    SSLCertificateKeyFile "{key}"
    Header always set X-Vhost {name}
</VirtualHost>
""".format(port=port, name=name, protocols=protocols, domain=env.domain,
           docroot=sb.docroot, cert=sb.server_cert, key=sb.server_key)
        for name, protocols in (("h1only", "http/1.1"), ("h2too", "h2 http/1.1")))
    env.add_conf("tls-h1first", "Listen 127.0.0.1:%d\n%s" % (port, hosts))
    env.reload()
    yield port
    remove_conf(env, "tls-h1first", "server")
    env.reload()


@pytest.mark.parametrize("name,version", [("h2too", "2"), ("h1only", "1.1")])
def test_sni_vhost_decides_h2_not_the_first_vhost_of_the_port(env, h1_first_port,
                                                             name, version):
    """ALPN follows the vhost SNI selects: h2 for the second vhost even
    though the port's first one allows only http/1.1 (and the request is
    answered, not dropped), http/1.1 for the first one."""
    url = "https://%s.%s:%d/653b.txt" % (name, env.domain, h1_first_port)
    r = env.curl(url, "--http2", "--resolve", "%s.%s:%d:127.0.0.1" % (
        name, env.domain, h1_first_port), "-w", "%{http_version}")
    assert r.exit_code == 0, r
    assert r.stdout == version
    assert r.status == 200 and r.headers.get("x-vhost") == name, r
    assert r.body == env.docroot_file("653b.txt")


# ------------------- every per-location TLS demand a stream cannot meet

@pytest.fixture(scope="module")
def reneg_matrix(env):
    """A vhost that verifies client certificates optionally, with
    locations that ask for more than the handshake gave; and the same with
    an ErrorDocument for the 403 that mod_ssl answers over HTTP/1.1 where
    it cannot renegotiate."""
    from h2client import install_file, remove_conf
    sb = env.sandbox
    install_file(env, "htdocs/errors/403.html", "<p>no, says the admin</p>\n")
    env.add_conf("tls-reneg-matrix", "".join(vhost(env, name, """\
    Protocols h2 http/1.1
{errordoc}    SSLCACertificateFile "{ca}"
    SSLVerifyClient optional
    SSLVerifyDepth 5
    <Location /1k.txt>
        SSLVerifyDepth 0
    </Location>
    <Location /2k.txt>
        SSLVerifyClient require
    </Location>
    <Location /4k.txt>
        SSLVerifyClient none
    </Location>
    <Location /10k.txt>
        SSLCipherSuite AES256-SHA
    </Location>""".format(ca=sb.ca_cert, errordoc=errordoc))
        for name, errordoc in (("renegmatrix", ""), ("renegerrdoc",
                               "    ErrorDocument 403 /errors/403.html\n"))))
    env.reload()
    yield
    remove_conf(env, "tls-reneg-matrix", "server")
    env.reload()


# (path, TLS version) -> what the stream gets: a status, or the reset code.
# TLS 1.3 has no renegotiation (a new depth needs post-handshake auth),
# TLS 1.2 has no TLS 1.3 cipher suites to change.
RENEG_CASES = [
    ("/1k.txt", "1.2", 200), ("/1k.txt", "1.3", HTTP_1_1_REQUIRED),
    ("/2k.txt", "1.2", HTTP_1_1_REQUIRED), ("/2k.txt", "1.3", HTTP_1_1_REQUIRED),
    ("/4k.txt", "1.2", 200), ("/4k.txt", "1.3", 200),
    ("/10k.txt", "1.2", HTTP_1_1_REQUIRED), ("/10k.txt", "1.3", 200),
]


@pytest.mark.parametrize("errordoc", [False, True])
@pytest.mark.parametrize("path,tls,expect", RENEG_CASES)
def test_location_needing_renegotiation_gets_http11_required(env, reneg_matrix, path,
                                                             tls, expect, errordoc):
    """Whatever the location asks of TLS that the connection does not have
    (a client certificate, another verify depth, another cipher suite),
    the stream gets RST_STREAM HTTP_1_1_REQUIRED (RFC 9113 8.1.1), never
    a 403, as with the stock module, also where an ErrorDocument would
    answer the 403; what needs nothing new is served."""
    tls_max = ssl.TLSVersion.TLSv1_2 if tls == "1.2" else None
    name = "renegerrdoc" if errordoc else "renegmatrix"
    with H2Socket(env, sni=host(env, name), tls_max=tls_max) as c:
        assert c.alpn == "h2"
        r = c.get(path)
    if expect == 200:
        assert r.status == 200 and r.body == env.docroot_file(path[1:]), r
    else:
        assert r.status is None and r.reset_code == expect, r
