"""Each H2* directive in each context the Apache manual allows for it
(server config, virtual host, directory, .htaccess) takes effect there and
only there, as a client sees it. One case per directive and context: the
directive is set in that one place, then a probe reads the value a client
observes inside the place and, where there is an outside, outside it.

The places: "server" is the main server (conf.d); "vhost" is the h2c
virtual host (the TLS one is "outside"), or the TLS one for directives
about TLS (which has no TLS neighbour on its port to be the outside); "directory" is <Directory htdocs/ctx>; ".htaccess" is
htdocs/ctx/.htaccess under AllowOverride FileInfo. H2SerializeHeaders is obsolete and has no
effect to observe; H2StreamMaxMemSize's effect is a memory bound
(test_abuse_memory.py). H2OutputBuffering decides whether a handler's
write that is not flushed goes out before a frame's worth has gathered;
httpd flushes whenever a CGI or a proxied backend pauses, so a client
sees no difference with those handlers (test_output.py checks that
output flows with it off). H2ProxyRequests, H2WebSockets and push have
their own files (test_forward_proxy.py, test_websockets.py,
test_push.py) and their contexts here; H2PushPriority (server, vhost)
is shown in test_push.py."""

import os
import re
import time
import uuid

import pytest

from h2client import (FORWARD_PROXY_CONF, H2Client, install_cgi, install_file, origin_server,
                      remove_conf)
from h2raw import (RawConn, data_frame, headers_frame, request_block,
                   window_update_frame)

pytestmark = pytest.mark.h2

MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE, ENABLE_CONNECT_PROTOCOL = 3, 4, 8
CTX_FILE = "ctx/f.bin"
CTX_SIZE = 200000
ORIGIN_PORT_OFFSET = 63     # base + 63: the origin of the forward proxy case


def setting(env, how, path, ident):
    with RawConn(env, how) as c:
        c.wait(lambda: c.server_settings, 5)
        return dict(c.server_settings[0]).get(ident)


def probe_max_streams(env, how, path):
    return setting(env, how, path, MAX_CONCURRENT_STREAMS)


def probe_connect_protocol(env, how, path):
    return setting(env, how, path, ENABLE_CONNECT_PROTOCOL)


def probe_window(env, how, path):
    return setting(env, how, path, INITIAL_WINDOW_SIZE)


def data_frames(env, how, path):
    with H2Client.connect(env, how, window=1 << 24) as c:
        r = c.get(path)
    assert r.status == 200 and len(r.body) == CTX_SIZE, r
    return r.data_frames


def probe_max_frame(env, how, path):
    return max(n for n, _ in data_frames(env, how, path))


def probe_padded(env, how, path):
    # 13 frames, each unpadded with odds 1/16 when padding is on
    frames = data_frames(env, how, path)
    padded = any(flow > n for n, flow in frames)
    print("padded=%s frames=%s" % (padded, frames))
    return padded


def response_blocks(env, how, path, extra=()):
    with RawConn(env, how) as c:
        c.send(headers_frame(1, request_block(c, path, extra=extra)))
        c.wait(lambda: c.stream_done(1) or c.rst.get(1) is not None or c.closed, 10)
        return c.headers.get(1, []), c


def probe_early_hint_links(env, how, path):
    blocks, _ = response_blocks(env, how, path)
    return sorted(v for b in blocks if (":status", "103") in b
                  for k, v in b if k == "link")


def probe_status_with_big_head(env, how, path):
    # 10 fields of 300 bytes: over H2MaxHeaderBlockLen 2000, within httpd's limits
    blocks, c = response_blocks(env, how, path,
                                [("x-big-%d" % i, "v" * 300) for i in range(10)])
    return c.status(1)


def probe_upgraded(env, how, path):
    r = env.get("upgrade", path, "-w", "%{http_version}")
    assert r.exit_code == 0, r
    return r.stdout == "2"


def probe_direct(env, how, path):
    r = env.get("h2c", path, "-w", "%{http_version}")
    return r.exit_code == 0 and r.stdout == "2"


def probe_goaway_after_two_errors(env, how, path):
    with RawConn(env, how) as c:
        # a HEADERS block without pseudo-headers: a stream error each
        for sid in (1, 3):
            c.send(headers_frame(sid, b"", end_stream=False))
        c.send(headers_frame(5, request_block(c, path)))
        c.wait(lambda: c.goaways or c.stream_done(5), 5)
        return bool(c.goaways)


DRAIN_CGI = r"""
import sys
sys.stdin.buffer.read()
sys.stdout.write("Content-Type: text/plain\r\n\r\nread all\n")
"""


def probe_stream_timeout_ended_wait(env, how, path):
    """A request body that stops after one byte: does the handler's wait
    end within 4 s (H2StreamTimeout 1) or not (the default, Timeout)?"""
    env.ignore_log(r"AH0(1270|1225): Error reading request entity data")
    env.ignore_log(r"AH21032")
    cgi = "/ctx/drain.py" if path.startswith("/ctx/") else "/cgi-bin/ctx-drain.py"
    with RawConn(env, how) as c:
        c.send(headers_frame(1, request_block(c, cgi, "POST"), end_stream=False)
               + data_frame(1, b"x"))
        return bool(c.wait(lambda: c.status(1) or c.rst.get(1) is not None or c.closed, 4))


def probe_file_read_when_sent(env, how, path):
    """H2CopyFiles: is a file's content taken when the handler runs (copy)
    or when its DATA is sent (handed over)? The client holds its window
    shut, the file changes in place, then the window opens."""
    full = env.path("htdocs", *path.lstrip("/").split("/"))
    old = b"o" * CTX_SIZE
    with open(full, "wb") as f:
        f.write(old)
    with RawConn(env, how, settings=[(INITIAL_WINDOW_SIZE, 0)], auto_window=False) as c:
        c.send(headers_frame(1, request_block(c, path)))
        c.wait(lambda: c.status(1), 5)
        time.sleep(0.5)         # the handler is done with what it could do
        with open(full, "r+b") as f:
            f.write(b"n" * CTX_SIZE)
        c.send(window_update_frame(0, 1 << 20) + window_update_frame(1, 1 << 20))
        c.wait(lambda: c.stream_done(1), 10)
        body = c.data.get(1, b"")
    assert c.status(1) == 200 and len(body) == CTX_SIZE, c.answer()
    return not body.startswith(b"o")


def probe_full_tls_records(env, how, path):
    """Does a 200 KB response over TLS go out in full 16 KB records (no
    warm-up), or all in small ones (warm-up: its first megabyte)? Over a
    connection with 1460 byte segments: on loopback's large ones warm-up
    records are full too."""
    with H2Client.connect(env, "h2-tap", window=1 << 24, mss=1460) as c:
        r = c.get(path)
        recs = c.sock.plaintext_records()
    assert r.status == 200 and len(r.body) == CTX_SIZE, r
    return 16384 in recs


def probe_forwarded(env, how, path):
    """Is a request for another origin (a loopback server started here)
    forwarded by mod_proxy (ProxyRequests On everywhere)?"""
    with origin_server(env.port_base + ORIGIN_PORT_OFFSET) as origin:
        with H2Client.connect(env, how) as c:
            c.authority, c.scheme = origin, "http"
            r = c.get(path)
    return r.headers.get("x-origin") == "yes"


def promises(env, how, path, times=1):
    """How many PUSH_PROMISEs `times` GETs of path on one connection get
    (every response there links /ctx-push.css for preload)."""
    with RawConn(env, how) as c:
        for i in range(times):
            sid = 1 + 2 * i
            c.send(headers_frame(sid, request_block(c, path)))
            c.wait(lambda: c.stream_done(sid), 10)
        c.wait(lambda: all(c.stream_done(p) for _, p, _ in c.promises), 10)
        return len(c.promises)


def probe_pushed(env, how, path):
    return promises(env, how, path) > 0


def probe_pushed_twice(env, how, path):
    return promises(env, how, path, times=2) == 2


def auto_h2(env):
    if env.module != "ours":
        pytest.skip("stock adds no HTTP/2 lines to ?auto")
    return env.status_h2()


def probe_workers_all_started(env, how, path):
    """H2MaxWorkers below the MPM's threads: the minimum (ThreadsPerChild,
    25 here) is cut to it, so every child has started all it may. Under
    prefork (1-1 by default) the start-up line of the last (re)start
    names the maximum instead."""
    v = auto_h2(env)
    if env.mpm == "prefork":
        lines = re.findall(r"AH21060: .*, workers \d+-(\d+)", env.sandbox.log_since(0))
        return lines[-1] == "7"
    return v["H2WorkersIdle"] + v["H2WorkersBusy"] == v["H2WorkersMax"]


# directive text -> (contexts, probe, connection, value by default, value set)
CASES = {
    "H2MaxSessionStreams 7": (("server", "vhost"), probe_max_streams, "h2c", 100, 7),
    "H2WindowSize 12345": (("server", "vhost"), probe_window, "h2c", 65535, 12345),
    "H2MaxDataFrameLen 1000": (("server", "vhost"), probe_max_frame, "h2c", 16384, 1000),
    "H2Padding 4": (("server", "vhost"), probe_padded, "h2c", False, True),
    "H2MaxHeaderBlockLen 2000": (("server", "vhost"), probe_status_with_big_head,
                                 "h2c", 200, 431),
    "H2MaxStreamErrors 1": (("server", "vhost"), probe_goaway_after_two_errors,
                            "h2c", False, True),
    "H2Direct off": (("server", "vhost"), probe_direct, "h2c", True, False),
    "H2Upgrade off": (("server", "vhost", "directory", ".htaccess"), probe_upgraded,
                      "h2c", True, False),
    'H2EarlyHint Link "</ctx.css>; rel=preload"':
        (("server", "vhost", "directory", ".htaccess"), probe_early_hint_links, "h2c",
         [], ["</ctx.css>; rel=preload"]),
    "H2PushResource /ctx.js":
        (("server", "vhost", "directory", ".htaccess"), probe_early_hint_links, "h2c",
         [], ["</ctx.js>; rel=preload"]),
    "H2EarlyHints off": (("server", "vhost"), probe_early_hint_links, "h2c",
                         ["</base.css>; rel=preload"], []),
    "H2StreamTimeout 1": (("server", "vhost", "directory"), probe_stream_timeout_ended_wait,
                          "h2c", False, True),
    "H2CopyFiles on": (("server", "vhost", "directory", ".htaccess"),
                       probe_file_read_when_sent, "h2c", True, False),
    "H2TLSWarmUpSize 0": (("server", "vhost"), probe_full_tls_records, "h2", False, True),
    "H2MaxWorkers 7": (("server",), probe_workers_all_started, "h2c", False, True),
    "H2ProxyRequests on": (("server", "vhost"), probe_forwarded, "h2c", False, True),
    "H2WebSockets on": (("server", "vhost"), probe_connect_protocol, "h2c", None, 1),
    "H2Push off": (("server", "vhost", "directory", ".htaccess"), probe_pushed, "h2c",
                   True, False),
    "H2PushDiarySize 0": (("server", "vhost"), probe_pushed_twice, "h2c", False, True),
}

# For the push cases: every response links a stylesheet for preload.
PUSH_BASE = 'Header always add Link "</ctx-push.css>; rel=preload"\n'

# For the early hints cases: 103s are on everywhere, with one hint set
# server wide (which "H2EarlyHints off" then switches off where it is).
BASE = """\
H2EarlyHints on
H2EarlyHint Link "</base.css>; rel=preload"
"""


def cases():
    for text, (contexts, *_rest) in CASES.items():
        for ctx in contexts:
            yield pytest.param(text, ctx, id="%s-%s" % (text.split()[0], ctx))


@pytest.fixture
def places(env):
    docroot = env.path("htdocs")
    install_file(env, "htdocs/" + CTX_FILE, b"x" * CTX_SIZE)
    install_file(env, "htdocs/ctx/.htaccess", "")
    install_file(env, "htdocs/ctx-out.bin", b"x" * CTX_SIZE)
    install_cgi(env, "ctx-drain.py", DRAIN_CGI)
    install_file(env, "htdocs/ctx/drain.py", "#!%s\n%s" % (env.sandbox.cgi_python(), DRAIN_CGI),
                 0o755)
    yield docroot
    for where in ("server", "http", "https"):
        remove_conf(env, "ctx", where)
        remove_conf(env, "ctx-name", where)
    remove_conf(env, "ctx-base", "server")
    env.reload()


def configure(env, docroot, text, ctx):
    early = "H2EarlyHint" in text or "H2PushResource" in text or "EarlyHints" in text
    base = BASE if early else ""
    if "H2EarlyHints" in text:
        # the hint server wide; the switch in the context under test
        base = 'H2EarlyHint Link "</base.css>; rel=preload"\n'
        text = "H2EarlyHints off" if ctx != "server" else text
        if ctx != "server":
            base = BASE
    elif "H2EarlyHint " in text or "H2PushResource" in text:
        base = "H2EarlyHints on\n"
    if text.startswith(("H2Push ", "H2PushDiarySize")):
        base = PUSH_BASE
    if "H2WebSockets" in text and env.mpm == "prefork":
        # one stream at a time does not announce WebSockets (they would
        # hold the only worker): opt into more, as test_websockets.py does
        base = "H2MaxWorkers 2\n"
    if "H2ProxyRequests" in text:
        base = FORWARD_PROXY_CONF
        # with their ports in ServerName, the vhosts take absolute targets
        # naming them for themselves (ap_matches_request_vhost)
        for where in ("http", "https"):
            env.add_conf("ctx-name", "ServerName %s:%d\n" % (
                env.domain, env.http_port if where == "http" else env.https_port), where)
    ht = ""
    directory = """
<Directory "{d}/ctx">
    AllowOverride FileInfo
    Options +ExecCGI
    AddHandler cgi-script .py
{inner}</Directory>
""".format(d=docroot, inner="    %s\n" % text if ctx == "directory" else "")
    if ctx == ".htaccess":
        ht = text + "\n"
    with open(os.path.join(docroot, "ctx", ".htaccess"), "w") as f:
        f.write(ht)
    gen = uuid.uuid4().hex
    env.add_conf("ctx-base", base + directory + 'Header always set X-Ctx-Gen "%s"\n' % gen
                 + (text + "\n" if ctx == "server" else ""), "server")
    if ctx == "vhost":
        env.add_conf("ctx", text + "\n", "https" if "TLS" in text else "http")
    env.reload()
    # connections from here on meet the new configuration, none of them
    # a child of the old generation that had not stopped accepting yet
    deadline = time.monotonic() + 5
    for how in ("http1", "h2") + (() if text.startswith("H2Direct") else ("h2c",)):
        while env.get(how, "/ctx-out.bin").headers.get("x-ctx-gen") != gen:
            assert time.monotonic() < deadline, "new configuration not in effect"
            time.sleep(0.1)


@pytest.mark.parametrize("text,ctx", list(cases()))
def test_directive_takes_effect_in_its_context_only(env, places, text, ctx):
    contexts, probe, how, dflt, value = CASES[text]
    configure(env, places, text, ctx)
    inside = "/" + CTX_FILE
    assert probe(env, how, inside) == value, "inside %s" % ctx
    if ctx == "vhost" and probe not in (probe_direct, probe_upgraded, probe_full_tls_records):
        # the TLS virtual host keeps the default; its DATA frames fill TLS
        # records (16,384 bytes with the 9-byte frame header), full from
        # the start on loopback, whose segment is larger than a record
        other = 16384 - 9 if probe is probe_max_frame else dflt
        assert probe(env, "h2", inside) == other, "other vhost"
    elif ctx in ("directory", ".htaccess"):
        outside = "/ctx-out.bin"
        assert probe(env, how, outside) == dflt, "outside the directory"


SLEEP_CGI = r"""
import sys, time
time.sleep(1)
sys.stdout.write("Content-Type: text/plain\r\n\r\nslept\n")
"""


@pytest.fixture
def idle_workers(env):
    install_cgi(env, "ctx-sleep.py", SLEEP_CGI)
    env.add_conf("ctx", "H2MinWorkers 1\nH2MaxWorkers 6\nH2MaxWorkerIdleSeconds 1")
    env.reload()
    yield
    remove_conf(env, "ctx", "server")
    env.reload()


def test_workers_above_the_minimum_retire_after_max_worker_idle_seconds(env, idle_workers):
    """H2MinWorkers 1, H2MaxWorkers 6, H2MaxWorkerIdleSeconds 1: streams in
    parallel start workers beyond the one each child keeps; a second or
    two after they are done, each child is back to one (server-status)."""
    with H2Client.connect(env, "h2c") as c:
        sids = [c.request("GET", "/cgi-bin/ctx-sleep.py?%d" % i) for i in range(3)]
        time.sleep(0.5)
        during = auto_h2(env)
        for sid in sids:
            c.wait_done(sid)
            assert c.responses[sid].status == 200
    # the MPM may start children meanwhile; each keeps H2MinWorkers
    children = lambda v: v["H2WorkersMax"] // 6
    started = lambda v: v["H2WorkersIdle"] + v["H2WorkersBusy"]
    assert during["H2WorkersBusy"] >= 2 and started(during) > children(during), during
    deadline = time.monotonic() + 6
    after = auto_h2(env)
    while started(after) > children(after) and time.monotonic() < deadline:
        time.sleep(0.2)
        after = auto_h2(env)
    assert started(after) == children(after), (during, after)


@pytest.mark.parametrize("where,text,says", [
    ("http", "H2MaxWorkers 7", "H2MaxWorkers cannot occur within <VirtualHost> section"),
    ("server", "<Directory /tmp>\nH2WindowSize 1024\n</Directory>",
     "H2WindowSize not allowed in <Directory> context"),
    ("server", "<Location /x>\nH2Direct off\n</Location>", "H2Direct not allowed in <Location> context"),
], ids=["server-only-in-vhost", "vhost-directive-in-directory",
        "vhost-directive-in-location"])
def test_directive_outside_its_contexts_fails_the_config_test_naming_it(env, where,
                                                                        text, says):
    env.add_conf("ctx-bad", text + "\n", where)
    try:
        rc, out = env.sandbox.configtest()
    finally:
        remove_conf(env, "ctx-bad", where)
    assert rc != 0, out
    assert says in out, out


def test_stream_timeout_in_htaccess_is_refused_with_500(env, places):
    """The manual allows H2StreamTimeout in directory sections, not in
    .htaccess: there httpd answers 500 and logs the directive."""
    env.ignore_log(r"H2StreamTimeout not allowed here")
    configure(env, places, "H2StreamTimeout 1", ".htaccess")
    r = env.get("h2c", "/" + CTX_FILE)
    assert r.exit_code == 0 and r.status == 500, r
    assert "H2StreamTimeout not allowed here" in open(env.path("logs", "error_log")).read()


@pytest.mark.parametrize("text,says", [
    ("H2WindowSize 10", "H2WindowSize: '10' is not a number in 1024..2147483647"),
    ("H2Padding 9", "H2Padding: '9' is not a number in 0..8"),
    ("H2MaxWorkers 0", "H2MaxWorkers: '0' is not a number in 1..10000"),
    ("H2Direct maybe", "H2Direct: 'maybe' is neither 'on' nor 'off'"),
    ("H2StreamTimeout soon", "H2StreamTimeout: 'soon' is not a time interval of 0 or more"),
], ids=["below-range", "above-range", "zero-workers", "not-a-flag", "not-a-time"])
def test_bad_value_fails_the_config_test_naming_directive_value_and_range(env, text, says):
    if env.module != "ours":
        pytest.skip("stock words its errors differently")
    env.add_conf("ctx-bad", text + "\n", "server")
    try:
        rc, out = env.sandbox.configtest()
    finally:
        remove_conf(env, "ctx-bad", "server")
    assert rc != 0, out
    assert says in out, out
