"""103 Early Hints: with H2EarlyHints on, a preload Link for each
H2PushResource and the fields H2EarlyHint adds go to the client as a 103
interim response before the final one, the values of one name joined
into one field, as stock sends them. With H2EarlyHints off (the default)
no 103 is sent. The paths H2PushResource names and those H2EarlyHint's
Link fields ask to preload are pushed (with H2Push on, to a client that
takes pushes), as stock pushes them: before the 103 with H2EarlyHints
on, with the response with it off. (More on push: test_push.py.)"""

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
    assert got == [(103, ["</app.js>; rel=preload, </style.css>;rel=preload;as=style"]),
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


def events(out, sid=13):
    """What nghttp -v received on stream sid, in order: ("promise", path)
    for a PUSH_PROMISE, (status, {field: value}) for a head."""
    result, fields = [], []
    for line in out.splitlines():
        m = re.search(r"recv \(stream_id=%d\) ([^:]+|:[a-z]+): (.*)$" % sid, line)
        if m:
            fields.append((m.group(1), m.group(2)))
        elif re.search(r"recv PUSH_PROMISE frame .*stream_id=%d>" % sid, line):
            result.append(("promise", dict(fields)[":path"]))
            fields = []
        elif re.search(r"recv HEADERS frame .*stream_id=%d>" % sid, line):
            d = dict(fields)
            status = int(d.pop(":status"))
            result.append((status, d if status == 103 else {}))
            fields = []
    return result


PUSH_HINTS_CONF = """
<Location /1k.txt>
    H2EarlyHint X-Hint one
    H2EarlyHint Link "</eh/style.css>;rel=preload;as=style"
    H2PushResource /eh/app.js
    H2EarlyHint Link "</eh/page.html>;rel=next"
    H2EarlyHint X-Hint two
</Location>
"""


@pytest.fixture
def push_hints(env):
    from h2client import install_file
    install_file(env, "htdocs/eh/style.css", "body {}\n")
    install_file(env, "htdocs/eh/app.js", "let a = 1;\n")

    def configure(extra):
        env.add_conf("early-hints.conf", PUSH_HINTS_CONF + extra)
        env.reload()
    yield configure
    env.clear_conf()
    env.reload()


LINKS = ("</eh/app.js>; rel=preload, </eh/style.css>;rel=preload;as=style, "
         "</eh/page.html>;rel=next")


@pytest.mark.h2
@pytest.mark.parametrize("scheme", ["http", "https"])
def test_early_hint_preload_links_are_pushed_before_the_103(env, push_hints, scheme):
    """H2EarlyHints on: the H2PushResource path, then the path an
    H2EarlyHint Link asks to preload, are promised before the 103 (a
    rel=next link is not); the 103 carries the H2PushResource's Link
    first, each name's values joined, and push-policy; both pushes are
    served."""
    push_hints("H2EarlyHints on\n")
    r = env.nghttp(url(env, scheme, "/1k.txt"), "-nv")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert events(out) == [("promise", "/eh/app.js"), ("promise", "/eh/style.css"),
                           (103, {"x-hint": "one, two", "link": LINKS,
                                  "push-policy": "default"}),
                           (200, {})], out
    assert len(re.findall(r"recv \(stream_id=(?:2|4)\) :status: 200", out)) == 2, out


@pytest.mark.h2
def test_early_hint_preload_links_are_pushed_without_103_when_off(env, push_hints):
    """H2EarlyHints off: no 103, and the same two paths are promised with
    the response, as stock does."""
    push_hints("")
    r = env.nghttp(url(env, "http", "/1k.txt"), "-nv")
    assert r.returncode == 0, r.stderr
    assert events(r.stdout.decode()) == [("promise", "/eh/app.js"),
                                         ("promise", "/eh/style.css"), (200, {})]


@pytest.mark.h2
@pytest.mark.parametrize("how", ["H2Push off", "--no-push"])
def test_early_hints_without_push_send_the_103_alone(env, push_hints, how):
    """With H2Push off, or a client that takes no pushes, the 103 goes out
    with its links, without promises or push-policy."""
    push_hints("H2EarlyHints on\n" + ("H2Push off\n" if how == "H2Push off" else ""))
    args = ["-nv"] + ([how] if how.startswith("--") else [])
    r = env.nghttp(url(env, "http", "/1k.txt"), *args)
    assert r.returncode == 0, r.stderr
    assert events(r.stdout.decode()) == [(103, {"x-hint": "one, two", "link": LINKS}),
                                         (200, {})]
