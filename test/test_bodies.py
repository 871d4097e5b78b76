"""Large bodies: a 100 MB upload and a 100 MB download over h2 and h2c
arrive byte-exact (sha256), each within a bounded time."""

import hashlib
import os
import time

import pytest

from h2client import H2Client, file_sha, make_big_file

H2_WAYS = ["h2", "h2c"]
pytestmark = pytest.mark.h2

BIG_SIZE = 100 * 1024 * 1024
BIG_NAME = "100m.bin"
# seconds one 100 MB transfer may take on the 2-core test machine
BIG_TIMEOUT = 120


@pytest.fixture(scope="session")
def big_file(env):
    """100 MB file in the test instance's docroot (the run dir, not the
    repo): (url path, local path, sha256)."""
    path = os.path.join(env.sandbox.docroot, BIG_NAME)
    return "/" + BIG_NAME, path, make_big_file(path, BIG_SIZE)


@pytest.mark.parametrize("how", H2_WAYS)
def test_100mb_download_arrives_intact(env, big_file, how):
    url_path, _, digest = big_file
    t = time.monotonic()
    r = env.get(how, url_path, timeout=BIG_TIMEOUT)
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/2 200"
    assert r.headers["content-length"] == str(BIG_SIZE)
    assert len(r.body) == BIG_SIZE
    assert hashlib.sha256(r.body).hexdigest() == digest
    assert time.monotonic() - t < BIG_TIMEOUT


@pytest.mark.parametrize("how", H2_WAYS)
def test_100mb_upload_arrives_intact(env, big_file, how):
    _, path, digest = big_file
    r = env.get(how, "/cgi-bin/upload.py", "-X", "POST", "-T", path,
                "-H", "Content-Type: application/octet-stream",
                timeout=BIG_TIMEOUT)
    assert r.exit_code == 0, r
    assert r.status_line == "HTTP/2 200"
    assert r.json() == {"size": BIG_SIZE, "sha256": digest}


@pytest.mark.parametrize("how", H2_WAYS)
def test_100mb_download_with_protocol_default_window(env, big_file, how):
    """The same download through a client that keeps the 64 KB default
    windows, i.e. the server has to wait for WINDOW_UPDATEs all the way."""
    url_path, _, digest = big_file
    with H2Client.connect(env, how, window=65535) as c:
        c.wait_settings()
        sid = c.request("GET", url_path, keep_body=False)
        c.responses[sid].hasher = hashlib.sha256()
        r = c.wait_done(sid, BIG_TIMEOUT)
        assert r.status == 200
        assert r.body_len == BIG_SIZE
        assert r.hasher.hexdigest() == digest
