"""Authority, Host and scheme: what httpd sees of them on HTTP/2 streams.
`:authority` is the request's authority; a `host` field that names another
one is replaced by it (RFC 9113 8.3.1 makes refusing it a SHOULD, and one
authority everywhere in httpd is what keeps vhost selection, access rules
and logs consistent), with the field as sent kept in H2_ORIGINAL_HOST, as
the stock module does. A `:scheme` other than http and https makes the
target an absolute URI, which httpd answers with 400 unless a proxy takes
it, as for HTTP/1.1.
"""

import pytest

from h2raw import PROTOCOL_ERROR, RawConn, headers_frame, hp_block

pytestmark = pytest.mark.h2


def request(env, how, path, scheme=None, extra=(), authority=None):
    c = RawConn(env, how)
    hdrs = [(":method", "GET"), (":scheme", scheme or c.scheme),
            (":authority", authority or c.authority), (":path", path)] + list(extra)
    c.send(headers_frame(1, hp_block(hdrs)))
    c.wait(lambda: c.stream_done(1) or c.closed, 10 * env.slow)
    c.close()
    return c


def cgi_env(c):
    return dict(line.split("=", 1) for line in c.data.get(1, b"").decode().splitlines()
                if "=" in line)


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_host_differing_from_authority_is_replaced_and_kept_aside(env, how):
    c = request(env, how, "/cgi-bin/env.py?host-differs", extra=[("host", "evil.example")])
    assert c.status(1) == 200, c.answer()
    e = cgi_env(c)
    assert e["HTTP_HOST"] == c.authority
    assert e["SERVER_NAME"] == env.domain


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_host_replaced_by_authority_is_in_h2_original_host(env, how):
    """mod_h2 shows the host field it replaced to handlers and logs
    (`%{H2_ORIGINAL_HOST}e`); mod_http2 2.0.42 keeps it from CGIs."""
    c = request(env, how, "/cgi-bin/env.py?host-differs", extra=[("host", "evil.example")])
    assert c.status(1) == 200, c.answer()
    assert cgi_env(c)["H2_ORIGINAL_HOST"] == "evil.example"


@pytest.mark.parametrize("authority,host", [
    ("{name}:{port}", "{NAME}:{port}"),       # letter case
    ("{name}", "{name}:443"),                 # the default port of https
    ("{name}:443", "{name}")])
def test_host_differing_only_in_case_or_default_port_is_the_same(env, authority, host):
    port = env.https_port
    fill = dict(name=env.domain, NAME=env.domain.upper(), port=port)
    c = request(env, "h2", "/cgi-bin/env.py?host-same",
                authority=authority.format(**fill), extra=[("host", host.format(**fill))])
    assert c.status(1) == 200, c.answer()
    assert "H2_ORIGINAL_HOST" not in cgi_env(c)


@pytest.mark.parametrize("scheme,status", [("invalid", 400), ("ftp", 400),
                                           ("http", 200), ("https", 200)])
def test_scheme_other_than_http_or_https_gets_400(env, scheme, status):
    """As HTTP/1.1 on the same server answers `GET invalid://host/ HTTP/1.1`;
    http and https are both served on either port, as absolute-form
    targets with those schemes are over HTTP/1.1."""
    c = request(env, "h2c", "/1k.txt?scheme-" + scheme, scheme=scheme)
    assert c.status(1) == status, c.answer()
    assert PROTOCOL_ERROR not in c.rst_codes
