"""The variables HTTP/2 requests have, as the stock module gives them:
HTTP2, H2PUSH, H2_PUSH, H2_PUSHED, H2_PUSHED_ON, H2_STREAM_ID and
H2_STREAM_TAG in a CGI's environment, and the same names in ap_expr
(`Require expr "%{HTTP2} == 'on'"`, `<If>`), where a request that is not
on HTTP/2 sees HTTP2 "off".
"""

import time

import pytest

from h2client import H2Client, install_file, with_vhost_conf

pytestmark = pytest.mark.h2


def cgi_env(r):
    return dict(line.split("=", 1) for line in r.body.decode().splitlines() if "=" in line)


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_cgi_sees_the_http2_variables(env, how):
    with H2Client.connect(env, how) as c:
        r = c.get("/cgi-bin/env.py?vars")
    assert r.status == 200
    e = cgi_env(r)
    assert e["HTTP2"] == "on"
    assert e["H2_STREAM_ID"] == str(r.stream_id)
    assert e["H2_STREAM_TAG"].endswith("-%d" % r.stream_id)
    # the h2 library's client takes pushes (SETTINGS_ENABLE_PUSH 1)
    assert (e["H2PUSH"], e["H2_PUSH"]) == ("on", "on")
    # set, empty: the request was not pushed
    assert (e["H2_PUSHED"], e["H2_PUSHED_ON"]) == ("", "")


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_push_variables_are_off_when_the_client_refuses_pushes(env, how):
    """curl sends SETTINGS_ENABLE_PUSH 0: H2PUSH and H2_PUSH are "off" with
    either module."""
    r = env.get(how, "/cgi-bin/env.py?nopush")
    assert r.status == 200, r
    e = cgi_env(r)
    assert e["HTTP2"] == "on"
    assert (e["H2PUSH"], e["H2_PUSH"], e["H2_PUSHED"], e["H2_PUSHED_ON"]) == \
        ("off", "off", "", "")


@pytest.fixture(scope="module")
def expr_conf(env):
    install_file(env, "htdocs/h2only/index.html", "only over HTTP/2\n")
    conf = ('<Location "/h2only/">\n  Require expr "%{HTTP2} == \'on\'"\n</Location>\n'
            '<If "%{HTTP2} == \'on\'">\n'
            '  Header always set X-Via-H2 "stream %{H2_STREAM_ID}e"\n</If>\n'
            '<Else>\n  Header always set X-Via-H2 "no"\n</Else>\n')
    yield from with_vhost_conf(env, "vars-expr", conf)


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_require_expr_http2_is_true_over_http2(env, expr_conf, how):
    with H2Client.connect(env, how) as c:
        r = c.get("/h2only/")
    assert r.status == 200, r
    assert r.body == b"only over HTTP/2\n"
    assert r.headers["x-via-h2"] == "stream %d" % r.stream_id


@pytest.mark.parametrize("how", ["http1", "https1"])
def test_require_expr_http2_is_false_over_http1(env, expr_conf, how):
    env.ignore_log(r"AH01630")    # "client denied by server configuration"
    r = env.get(how, "/h2only/")
    assert r.status == 403, r
    r = env.get(how, "/1k.txt")
    assert r.status == 200
    assert r.headers.get("x-via-h2") == "no", r.headers


def test_stream_tag_is_pid_connection_stream_and_stable_on_a_connection(env):
    """H2_STREAM_TAG is "<pid>-<connection>-<stream id>" as stock gives it;
    the connection part stays the same for every stream of a connection,
    also after idle gaps (the event MPM hands an idle connection back to
    another thread, which renumbers it)."""
    tags = []
    with H2Client.connect(env, "h2c") as c:
        for i in range(3):
            r = c.get("/cgi-bin/env.py?tag%d" % i)
            assert r.status == 200
            tags.append((r.stream_id, cgi_env(r)["H2_STREAM_TAG"]))
            time.sleep(1.2)
    parts = [t.split("-") for _, t in tags]
    assert all(len(p) == 3 and all(x.isdigit() for x in p) for p in parts), tags
    assert len(set((p[0], p[1]) for p in parts)) == 1, tags
    assert [int(p[2]) for p in parts] == [sid for sid, _ in tags]
