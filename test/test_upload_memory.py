"""What uploads make the server hold: a stream's receive window grows only
to what its measured bandwidth-delay product needs, so what an upload holds
follows what its handler reads, not the window it was granted; and what
uploads leave behind goes back within seconds of their end.

Two sinks: mod_dav_fs (a file on disk) and the test module's h2-discard
handler, which reads every body as fast as it comes; the httpd children's
RSS is sampled every 50 ms from /proc. The limits are the per-upload
budget (16 MB, about what stock's own buffers cost) and the children's
RSS before the uploads. Stock mod_http2 runs the same uploads in the same
run, on an instance of its own beside ours (the suite's second ports), and
its figures are reported next to ours: it keeps its peaks within the
budget but not the return (5 s after 20 parallel uploads its children
were at 1.76x of before with mod_dav and 1.33x with h2-discard, ours at
1.09-1.15x)."""

import os
import pwd
import subprocess
import threading
import time

import pytest

from h2client import module_conf, with_conf
from h2env import SecondEnv
from sandbox import SYS_MODULE_DIR
from h2raw import httpd_children, rss_bytes

pytestmark = pytest.mark.h2

UPLOAD_BUDGET = 16 << 20       # peak RSS growth one upload may cost
BIG = 512 << 20                # one upload
PARALLEL, EACH = 20, 10 << 20  # parallel uploads, each
RETURN_WAIT = 5                # seconds after the last upload ends
RETURN_RATIO = 1.2             # RSS then, against before


# The children there are serve every upload: the MPM starts no more for 20
# busy connections (their RSS would count as the uploads').
FIXED_CHILDREN = """\
<IfModule mpm_event_module>
    MinSpareThreads 1
</IfModule>
<IfModule mpm_worker_module>
    MinSpareThreads 1
</IfModule>
"""


def dav_conf(e):
    """/dav/: mod_dav_fs takes PUTs into a directory of e's run dir (its
    lock database in the state directory), writing each body to disk as
    it reads it."""
    root = e.path("dav")
    os.makedirs(root, exist_ok=True)
    if os.geteuid() == 0:
        uid, gid = pwd.getpwnam("www-data")[2:4]
        os.chown(root, uid, gid)
    for name in os.listdir(root):
        os.unlink(os.path.join(root, name))
    return """\
<IfModule !dav_module>
LoadModule dav_module %(mods)s/mod_dav.so
</IfModule>
<IfModule !dav_fs_module>
LoadModule dav_fs_module %(mods)s/mod_dav_fs.so
</IfModule>
DavLockDB "%(state)s/davlock"
Alias /dav/ "%(root)s/"
<Directory "%(root)s">
    Dav On
    Require all granted
</Directory>
""" % {"mods": SYS_MODULE_DIR, "state": e.path("state"), "root": root}


@pytest.fixture
def fixed_children(env):
    yield from with_conf(env, "upload-memory-children", FIXED_CHILDREN)


@pytest.fixture
def discard(env, optfn_module, fixed_children):
    yield from module_conf(env, optfn_module, "/discard", "h2-discard")


@pytest.fixture
def dav(env, fixed_children):
    yield from with_conf(env, "upload-memory-dav", dav_conf(env))


@pytest.fixture(scope="module")
def stock(env, optfn_module):
    """Stock mod_http2 beside ours with the same MPM, children and sinks
    (None where the suite runs against stock itself)."""
    if env.module != "ours":
        yield None
        return
    e = SecondEnv(env, "", module="stock")
    os.makedirs(e.path("state"), exist_ok=True)
    e.conf = FIXED_CHILDREN + dav_conf(e) + """\
<IfModule !h2_optfn_test_module>
LoadModule h2_optfn_test_module %s
</IfModule>
<Location "/discard">
    SetHandler h2-discard
</Location>
""" % optfn_module
    e.start()
    e.mark_log_checked()
    yield e
    if e.sandbox.is_running():
        e.stop()
    problems = e.log_problems()
    assert not problems, "stock instance's error log:\n" + "\n".join(problems)


@pytest.fixture(params=["dav", "discard"])
def sink(request):
    """Where uploads go: mod_dav_fs (a file on disk), or the test module's
    handler that reads and drops them."""
    request.getfixturevalue(request.param)
    return "/dav/upload" if request.param == "dav" else "/discard?"


@pytest.fixture(scope="module")
def bodies(tmp_path_factory):
    d = tmp_path_factory.mktemp("bodies")
    big, small, tiny = d / "big.bin", d / "small.bin", d / "tiny.bin"
    for path, size in ((big, BIG), (small, EACH), (tiny, 256 << 10)):
        with open(path, "wb") as f:
            f.truncate(size)
    return str(big), str(small), str(tiny)


class RssSampler:
    """The children's summed RSS every 50 ms, from before to after."""

    def __init__(self, env):
        self.env = env
        self.peak = 0
        self._halt = threading.Event()

    def now(self):
        return rss_bytes(httpd_children(self.env))

    def __enter__(self):
        self.before = self.now()
        self.peak = self.before
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def _run(self):
        while not self._halt.wait(0.05):
            self.peak = max(self.peak, self.now())

    def __exit__(self, *exc):
        self._halt.set()
        self._t.join(5)
        return False


def put(env, body, path):
    """PUT file body over h2 (TLS) with curl; returns (status, seconds)."""
    t0 = time.monotonic()
    r = env.curl(env.url("https", path), "--http2", "-T", body, "-w", "%{http_code}",
                 timeout=120)
    # mod_dav: 201 Created, 204 No Content for a file it replaced
    assert r.exit_code == 0 and r.stdout in ("200", "201", "204"), (
        r.exit_code, r.stdout, r.stderr)
    return time.monotonic() - t0


def settle(env):
    """Let the children's memory settle before measuring."""
    time.sleep(RETURN_WAIT)
    return rss_bytes(httpd_children(env))


def parallel_puts(env, body, n, path):
    """n PUTs of body at once, each on a connection of its own."""
    errors = []

    def one(i):
        try:
            put(env, body, "%s%d" % (path, i))
        except AssertionError as e:
            errors.append(e)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    assert not errors, errors[:3]


def warm_up(env, bodies, path):
    """What the first connections cost once (TLS code paged in, the MPM's
    and OpenSSL's per-thread state, workers started) is not the uploads':
    measured from after a round of small uploads as the test's own."""
    parallel_puts(env, bodies[2], PARALLEL, path)
    return settle(env)


def report(what, server, before, peak, after):
    from conftest import report as out
    out("%s, %s: RSS %.1f MiB before, peak %+.1f MiB, %d s after the end %.2fx of before"
        % (what, server, before / 2 ** 20, (peak - before) / 2 ** 20, RETURN_WAIT,
           after / before))


def one_big(e, bodies, sink):
    """warm-up, then one BIG upload to e: (seconds, before, peak, after)"""
    warm_up(e, bodies, sink)
    with RssSampler(e) as w:
        took = put(e, bodies[0], sink)
    return took, w.before, w.peak, settle(e)


def twenty_parallel(e, bodies, sink):
    """warm-up, then PARALLEL uploads of EACH to e: (before, peak, after)"""
    warm_up(e, bodies, sink)
    with RssSampler(e) as w:
        parallel_puts(e, bodies[1], PARALLEL, sink)
    return w.before, w.peak, settle(e)


def test_one_big_upload_holds_at_most_its_budget_and_gives_it_back(env, sink, bodies,
                                                                      stock):
    """A 512 MB PUT over h2 (TLS) to mod_dav_fs or to a handler that reads
    it as it comes (h2-discard): the children's RSS grows by at most 16 MB
    at any time, and 5 s after the upload it is within 1.2x of what it was
    before (or of stock's ratio for the same upload, where that is more). (Into
    mod_dav_fs on a busy machine the peak was up to 27 MB while a window
    could grow 64-fold past 4 MB: a PING answered late made the round trip
    look long and the window went to 256 MB, which a handler behind on its
    disk writes let fill; windows past 4 MB now grow to four times what a
    round trip carried.)"""
    what = "%s: one %d MB upload" % (sink, BIG >> 20)
    ratio = RETURN_RATIO
    if stock:
        took, before, peak, after = one_big(stock, bodies, sink)
        report("%s in %.2f s" % (what, took), "stock", before, peak, after)
        ratio = max(ratio, after / before)
    took, before, peak, after = one_big(env, bodies, sink)
    report("%s in %.2f s" % (what, took), env.module, before, peak, after)
    assert peak - before <= UPLOAD_BUDGET
    assert after <= ratio * before


def test_parallel_uploads_give_their_memory_back_within_seconds(env, sink, bodies, stock):
    """20 parallel 10 MB PUTs over h2 (TLS), each on its own connection:
    the children's RSS grows by at most the budget of each, and 5 s after
    the last one ended it is within 1.2x of before (or of stock's ratio for
    the same uploads, where that is more)."""
    what = "%s: %d parallel %d MB uploads" % (sink, PARALLEL, EACH >> 20)
    ratio = RETURN_RATIO
    if stock:
        before, peak, after = twenty_parallel(stock, bodies, sink)
        report(what, "stock", before, peak, after)
        ratio = max(ratio, after / before)
    before, peak, after = twenty_parallel(env, bodies, sink)
    report(what, env.module, before, peak, after)
    assert peak - before <= PARALLEL * UPLOAD_BUDGET
    assert after <= ratio * before
