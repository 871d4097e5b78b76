"""File responses: a file is served with the content it has when it is
requested, however often it was served before, and any number of files
may be served at once.

mod_h2 keeps read-only mappings of the files it served (EnableMMAP on, the
default; see mod_h2/h2_fmap.h): at most 16 files of 256 KB to 64 MB per
child and 256 MB in all. These tests change, replace and outnumber such
files and check every byte a client gets."""

import hashlib
import os

import pytest

from h2client import H2Client, content, install_file

H2_WAYS = ["h2", "h2c"]
pytestmark = pytest.mark.h2

MB = 1 << 20
# a client window that never makes the server wait
BIG_WINDOW = 1 << 30


def rewrite_in_place(path, data):
    """New content in the same inode (truncate and write)."""
    ino = os.stat(path).st_ino
    with open(path, "r+b") as f:
        f.truncate(0)
        f.write(data)
    assert os.stat(path).st_ino == ino


def fetch(c, path):
    r = c.get(path, timeout=60)
    assert r.status == 200
    return r


def fetch_all_at_once(c, files, timeout):
    """Request every path of files ({path: sha256}) at once on c; each
    response is 200 with exactly the file's bytes. Returns the responses."""
    sids = {}
    for p in files:
        sid = c.request("GET", p, keep_body=False)
        c.responses[sid].hasher = hashlib.sha256()
        sids[sid] = p
    done = []
    for sid, p in sids.items():
        r = c.wait_done(sid, timeout)
        assert r.status == 200
        assert r.hasher.hexdigest() == files[p], p
        done.append(r)
    return done


@pytest.mark.parametrize("how", H2_WAYS)
def test_file_rewritten_in_place_is_served_with_its_new_content(env, how):
    name = "fmap-inplace-%s.bin" % how
    first = content("first", MB)
    path = install_file(env, "htdocs/" + name, first)
    with H2Client.connect(env, how, window=BIG_WINDOW) as c:
        c.wait_settings()
        for _ in range(2):      # the second time from a kept mapping
            r = fetch(c, "/" + name)
            assert r.headers["content-length"] == str(MB)
            assert r.body == first
        # another size
        longer = content("longer", MB + 4096)
        rewrite_in_place(path, longer)
        r = fetch(c, "/" + name)
        assert r.headers["content-length"] == str(MB + 4096)
        assert r.body == longer
        # the same size, written within the same moment: the bytes of now
        same_size = content("same size", MB + 4096)
        rewrite_in_place(path, same_size)
        r = fetch(c, "/" + name)
        assert r.headers["content-length"] == str(MB + 4096)
        assert r.body == same_size
        # shorter than the mapping that was kept
        shorter = content("shorter", 300 * 1024)
        rewrite_in_place(path, shorter)
        r = fetch(c, "/" + name)
        assert r.headers["content-length"] == str(300 * 1024)
        assert r.body == shorter


@pytest.mark.parametrize("how", H2_WAYS)
def test_file_replaced_by_rename_is_served_as_the_new_file(env, how):
    name = "fmap-renamed-%s.bin" % how
    old = content("old", 2 * MB)
    path = install_file(env, "htdocs/" + name, old)
    with H2Client.connect(env, how, window=BIG_WINDOW) as c:
        c.wait_settings()
        assert fetch(c, "/" + name).body == old
        new = content("new", 2 * MB)
        tmp = install_file(env, "htdocs/" + name + ".new", new)
        os.rename(tmp, path)
        r = fetch(c, "/" + name)
        assert r.headers["content-length"] == str(2 * MB)
        assert r.body == new


@pytest.mark.parametrize("how", H2_WAYS)
def test_more_files_than_a_child_keeps_mapped_arrive_intact(env, how):
    """24 files (the cache holds 16), all at once on one connection, twice."""
    files = {}
    for i in range(24):
        name = "fmap-many-%s-%02d.bin" % (how, i)
        data = content(name, 300 * 1024 + i)
        install_file(env, "htdocs/" + name, data)
        files["/" + name] = hashlib.sha256(data).hexdigest()
    with H2Client.connect(env, how, window=BIG_WINDOW) as c:
        c.wait_settings()
        for _ in range(2):
            fetch_all_at_once(c, files, 60)


@pytest.mark.parametrize("how", H2_WAYS)
def test_files_beyond_the_mapping_budget_at_once_arrive_intact(env, how):
    """Five 60 MB files at once: 300 MB, over the 256 MB a child maps; the
    fifth is sent while the others hold their mappings."""
    files = {}
    for i in range(5):
        name = "fmap-budget-%d.bin" % i
        path = env.path("htdocs", name)
        if not (os.path.exists(path) and os.path.getsize(path) == 60 * MB):
            install_file(env, "htdocs/" + name, content(name, 60 * MB))
        with open(path, "rb") as f:
            files["/" + name] = hashlib.sha256(f.read()).hexdigest()
    with H2Client.connect(env, how, window=BIG_WINDOW) as c:
        c.wait_settings()
        for r in fetch_all_at_once(c, files, 180):
            assert r.body_len == 60 * MB
