"""Input from the client as the rest of httpd sees it. On h2c, once the
core holds nothing, the connection reads its socket itself (one recv() of
up to 64 KB where the core reads 8000 bytes at a time), but only while its
input filters are the core's and mod_logio's: any other connection input
filter (here mod_dumpio's) gets every byte as over HTTP/1.1, for the whole
life of the connection."""

import hashlib
import json
import os
import re
import time

import pytest

from h2client import H2Client, with_conf

pytestmark = pytest.mark.h2

BODY = 300 * 1024          # several reads, more than one turn of the session


def upload_with_pauses(env, tag, n):
    """n bodies, one after the other on one h2c connection, with 0.3 s of
    nothing to read after each (the connection reads the socket itself from
    then on, when it may): each arrives whole, in order."""
    with H2Client.connect(env, "h2c") as c:
        for i in range(n):
            body = (("%s-%d;" % (tag, i)).encode() * BODY)[:BODY]
            sid = c.request("POST", "/cgi-bin/upload.py",
                            headers=[("content-type", "application/octet-stream"),
                                     ("content-length", str(BODY))], body=body)
            r = c.wait_done(sid)
            assert r.status == 200
            assert json.loads(r.body) == {"size": BODY,
                                          "sha256": hashlib.sha256(body).hexdigest()}
            time.sleep(0.3)


@pytest.fixture
def dumpio(env):
    so = "/usr/lib/apache2/modules/mod_dumpio.so"
    if not os.path.exists(so):
        pytest.skip("mod_dumpio is not installed")
    yield from with_conf(env, "input-dumpio",
                         "LoadModule dumpio_module %s\nDumpIOInput On\n"
                         "LogLevel dumpio:trace7\n" % so)


def dumped_in(log):
    """Bytes mod_dumpio saw come in, by its per-bucket lines."""
    return sum(int(n) for n in re.findall(r"dumpio_in \(data-\w+\): (\d+) bytes", log))


def test_h2c_bodies_arrive_byte_exact_on_one_connection_across_idle_pauses(env):
    upload_with_pauses(env, "body", 3)


def test_a_connection_input_filter_sees_every_byte_of_every_h2c_request(env, dumpio):
    """With mod_dumpio's input filter on the connection, the second body,
    sent after the connection found nothing to read for a while, passes
    through the filter as the first did."""
    offset = env.log_offset()
    upload_with_pauses(env, "dumped", 2)
    # mod_dumpio sits on the client's connection and on each stream's
    # secondary one: every body twice, plus the frame headers, the
    # preface, SETTINGS and HEADERS on the first
    deadline = time.monotonic() + 5
    while dumped_in(env.sandbox.log_since(offset)) < 4 * BODY and time.monotonic() < deadline:
        time.sleep(0.1)
    assert 4 * BODY < dumped_in(env.sandbox.log_since(offset)) < 4 * BODY + 8192
