"""103 Early Hints: with H2EarlyHints on, the fields H2EarlyHint adds and a
preload Link for each H2PushResource go to the client as a 103 interim
response before the final one. With H2EarlyHints off (the default) no
103 is sent. (An H2PushResource is also pushed: test_push.py.)"""

import re

import pytest

HINTS_CONF = """
<Location /1k.txt>
    H2EarlyHint Link "</style.css>;rel=preload;as=style"
    H2PushResource /app.js
</Location>
"""


def responses(out):
    """[(status, [link values])] in the order nghttp -v received them."""
    result = []
    for line in out.splitlines():
        m = re.search(r"recv \(stream_id=\d+\) :status: (\d+)", line)
        if m:
            result.append((int(m.group(1)), []))
            continue
        m = re.search(r"recv \(stream_id=\d+\) link: (.*)$", line)
        if m and result:
            result[-1][1].append(m.group(1))
    return result


def url(env, scheme, path):
    port = env.https_port if scheme == "https" else env.http_port
    return "%s://127.0.0.1:%d%s" % (scheme, port, path)


@pytest.fixture
def hints(env):
    def configure(early_hints):
        env.add_conf("early-hints.conf", HINTS_CONF
                     + ("H2EarlyHints on\n" if early_hints else ""))
        env.reload()
    yield configure
    env.clear_conf()
    env.reload()


@pytest.mark.h2
@pytest.mark.parametrize("scheme", ["http", "https"])
def test_early_hints_on_sends_103_with_configured_links_before_200(env, hints, scheme):
    hints(True)
    r = env.nghttp(url(env, scheme, "/1k.txt"), "-nv", "--no-push")
    assert r.returncode == 0, r.stderr
    got = responses(r.stdout.decode())
    assert got == [(103, ["</style.css>;rel=preload;as=style", "</app.js>; rel=preload"]),
                   (200, [])]


@pytest.mark.h2
def test_early_hints_off_sends_no_103_even_with_hints_configured(env, hints):
    hints(False)
    r = env.nghttp(url(env, "http", "/1k.txt"), "-nv", "--no-push")
    assert r.returncode == 0, r.stderr
    assert responses(r.stdout.decode()) == [(200, [])]


@pytest.mark.h2
def test_early_hints_only_where_configured(env, hints):
    hints(True)
    r = env.nghttp(url(env, "http", "/2k.txt"), "-nv", "--no-push")
    assert responses(r.stdout.decode()) == [(200, [])]


@pytest.mark.h2
def test_a_pushed_resource_is_promised_before_the_103_that_links_it(env, hints):
    """H2EarlyHints on with H2PushResource: the 103 carries the resource's
    preload link, and its PUSH_PROMISE comes before the 103 (RFC 9113 8.4:
    before any frame that refers to it, so that a client does not fetch it
    itself); the push is served."""
    hints(True)
    r = env.nghttp(url(env, "http", "/1k.txt"), "-nv")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    promise = out.index("recv PUSH_PROMISE frame")
    early = out.index(":status: 103")
    assert promise < early, out
    assert "/app.js" in out[promise - 600:promise]
    links = responses(out)[0][1]
    assert any(p.startswith("</app.js>") for l in links for p in l.split(", ")), links
    assert re.search(r"recv \(stream_id=2\) :status: \d+", out), out
