"""Where a request's pools hang: in httpd's pool tree, over HTTP/2 as over
HTTP/1.1.

Modules walk up from r->pool to the root pool and keep process-wide state
there: apr-util loads its DBM, DBD, LDAP and crypto drivers once per
process and keeps the table and mutex for that in the root of the first
pool it is handed. When a stream's pools were roots of the module's own,
cleared after the stream, a child whose first DBM access came over HTTP/2
crashed at its next one (mod_dav_fs, mod_authn_dbm). A test module
(test/modules/mod_h2_pooltree_test.c) walks up from inside the request and
reports the root it reaches, and opens a DBM file of the type asked for."""

import os
import shutil

import pytest

from h2client import H2Client, module_conf

pytestmark = pytest.mark.h2

PROTOCOLS = ["h2", "h2c"]


@pytest.fixture
def pooltree(env, pooltree_module):
    yield from module_conf(env, pooltree_module, "/pooltree", "h2-pool-tree")


def answers(body):
    return dict(l.split("=", 1) for l in body.decode().splitlines() if "=" in l)


def over_http2(env, how, path):
    with H2Client.connect(env, how) as c:
        r = c.get(path)
    assert r.status == 200, r
    return answers(r.body)


def over_http11(env, path):
    r = env.get("http1", path)
    assert r.status == 200, r
    return answers(r.body)


@pytest.mark.parametrize("how", PROTOCOLS)
def test_a_streams_request_pool_reaches_the_root_an_http11_request_reaches(
        env, pooltree, how):
    h1 = over_http11(env, "/pooltree")
    h2 = over_http2(env, how, "/pooltree")
    assert h1["protocol"] == "HTTP/1.1"
    assert h2["protocol"] == "HTTP/2.0"
    assert h2["root"] == h1["root"]
    # both through the configuration pool the child was forked with, and
    # the request's connection pool (the secondary's, over HTTP/2)
    assert (h1["through_pconf"], h2["through_pconf"]) == ("1", "1")
    assert (h1["through_connection_pool"], h2["through_connection_pool"]) == ("1", "1")


@pytest.mark.parametrize("dbm_type", ["DB", "GDBM"])
def test_a_dbm_driver_first_loaded_on_a_stream_serves_every_later_request(
        env, pooltree, dbm_type):
    """After the reload, fresh children: the first DBM access of at least
    one of them is over HTTP/2. Each later access, over either protocol,
    must find apr-util's driver table intact (before, the child crashed)."""
    d = env.path("state", "pooltree-" + dbm_type)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    os.chmod(d, 0o777)      # the children's user writes the file
    path = os.path.join(d, "db")
    query = "/pooltree?type=%s&dbm=%s" % (dbm_type, path)
    firsts = {}
    for _ in range(4):
        for how in ("h2", "http1", "http1", "http1", "h2c"):
            a = over_http11(env, query) if how == "http1" else over_http2(env, how, query)
            assert a["dbm"] == "1", (how, a)
            firsts[a["pid"]] = a["first_dbm"]
    assert "HTTP/2.0" in firsts.values(), firsts
