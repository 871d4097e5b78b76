"""mod_http2's directives, as a configuration written for the stock module
uses them: all of them load together (with their defaults, in the contexts
the Apache manual gives), an obsolete one is accepted with a warning, and
the ones the manual allows per directory take effect there."""

import time

import pytest

from h2client import H2Client, install_file, with_conf
from h2raw import RawConn, data_frame, headers_frame, request_block

pytestmark = pytest.mark.h2

# Every directive of the manual (apache2-doc 2.4.71, mod/mod_http2.html),
# with its default, plus H2SessionExtraFiles, which older versions had.
ALL_DIRECTIVES = """\
H2CopyFiles off
H2Direct on
H2EarlyHints off
H2EarlyHint Link "</1k.txt>; rel=preload"
H2MaxDataFrameLen 0
H2MaxHeaderBlockLen 0
H2MaxSessionStreams 100
H2MaxStreamErrors 8
H2MaxWorkerIdleSeconds 600
H2MinWorkers 4
H2MaxWorkers 25
H2ModernTLSOnly on
H2OutputBuffering on
H2Padding 0
H2ProxyRequests off
H2Push on
H2PushDiarySize 256
H2PushPriority * After 16
H2PushResource /1k.txt
H2SerializeHeaders off
H2StreamMaxMemSize 65536
H2StreamTimeout 30
H2TLSCoolDownSecs 1
H2TLSWarmUpSize 1048576
H2Upgrade on
H2WebSockets off
H2WindowSize 65535
H2SessionExtraFiles 10
<Location "/dir-directives/">
    H2CopyFiles on
    H2EarlyHint Link "</2k.txt>; rel=preload"
    H2Push off
    H2PushResource /2k.txt
    H2Upgrade off
</Location>
"""
# The manual lists H2StreamTimeout for "directory" too; stock refuses it in
# <Location> ("not allowed in <Location> context"), mod_h2 takes it there
# (see test_stream_timeout_set_per_directory_applies_there_only).


@pytest.fixture
def all_directives(env):
    yield from with_conf(env, "directives-all", ALL_DIRECTIVES)


def test_all_28_directives_load_and_requests_are_served(env, all_directives):
    env.ignore_log(r"H2SessionExtraFiles")
    for how in ("h2c", "h2"):
        with H2Client.connect(env, how) as c:
            r = c.get("/1k.txt")
        assert r.status == 200, r
        assert r.body == env.docroot_file("1k.txt")


def test_obsolete_directive_is_accepted_with_a_warning(env, all_directives):
    env.ignore_log(r"H2SessionExtraFiles")
    text = env.sandbox.log_since(env.log_checked)
    warned = [l for l in text.splitlines()
              if "H2SessionExtraFiles" in l and ":warn]" in l]
    assert warned, text[-2000:]


@pytest.fixture
def worker_idle_0(env):
    yield from with_conf(env, "directives-idle0", "H2MaxWorkerIdleSeconds 0\n")


def test_max_worker_idle_seconds_0_is_accepted(env, worker_idle_0):
    """0 as stock takes it: workers above the minimum leave as soon as they
    idle; requests are served all the same."""
    for _ in range(3):
        with H2Client.connect(env, "h2c") as c:
            rs = [c.get("/1k.txt") for _ in range(5)]
        assert [r.status for r in rs] == [200] * 5


SLOW_READER = "#!/bin/sh\nn=$(cat | wc -c)\nprintf 'Content-Type: text/plain\\r\\n\\r\\n%s\\n' \"$n\"\n"


@pytest.fixture
def stream_timeout_per_dir(env):
    if env.module != "ours":
        pytest.skip("stock refuses H2StreamTimeout in <Location>")
    for name in ("drain-dir.sh", "drain-srv.sh"):
        install_file(env, "cgi-bin/" + name, SLOW_READER, 0o755)
    yield from with_conf(env, "directives-timeout", """\
H2StreamTimeout 20
<Location "/cgi-bin/drain-dir.sh">
    H2StreamTimeout 1
</Location>
""")


def test_stream_timeout_set_per_directory_applies_there_only(env, stream_timeout_per_dir):
    """A request body that stops coming: under the <Location> with
    H2StreamTimeout 1 the handler's wait ends within seconds (408 or a
    reset); elsewhere (H2StreamTimeout 20) it still waits."""
    env.ignore_log(r"AH0(1270|1225): Error reading request entity data")
    env.ignore_log(r"AH21032")
    c = RawConn(env, "h2c")
    for sid, path in ((1, "/cgi-bin/drain-dir.sh"), (3, "/cgi-bin/drain-srv.sh")):
        c.send(headers_frame(sid, request_block(c, path, "POST"), end_stream=False)
               + data_frame(sid, b"x"))
    t0 = time.monotonic()
    c.wait(lambda: c.status(1) or c.rst.get(1) is not None or c.closed, 10)
    took = time.monotonic() - t0
    answered_srv = c.status(3) or c.rst.get(3) is not None
    c.close()
    assert c.status(1) == 408 or c.rst.get(1) is not None, c.answer()
    assert took < 6, took
    assert not answered_srv, c.answer()
