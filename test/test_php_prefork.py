"""mod_php under the prefork MPM: a child runs one request at a time.

Debian's libapache2-mod-php8.2 is not thread-safe, so installing it
switches Apache to prefork. mod_h2 then runs the streams of a connection
one after the other on the child's single worker, most urgent first, and
never two at once: many streams of PHP pages and static files on one
connection each get their own answer, no child crashes. (Before, a child
ran up to 16 streams at once and crashed within a few requests, static
files included, as mod_php's handler touches its globals before it
declines.)

The suite's own instance runs whatever H2_TEST_MPM says, and mod_php
refuses threaded MPMs, so these tests start a second instance of their
own: prefork, mod_php loaded, on ports base+90 (h2c) and base+91 (h2).
PHP pages echo their id, POST body and uploaded files, and write
start/end stamps (id, pid) to a file, from which the tests tell whether
two requests of one process ever overlapped.

With H2_TEST_MODULE=stock: stock mod_http2 refuses h2 under prefork
(AH10034, no h2 by ALPN or Upgrade); the tests check that its answers come
over HTTP/1.1 and skip what needs h2 (docs/migration.md)."""

import contextlib
import hashlib
import json
import os
import re
import time
import urllib.parse

import pytest

from h2client import H2Client, remove_conf
from h2env import H2TestEnv, Sandbox, run_dir_for, wait_ports_free

pytestmark = pytest.mark.h2

PHP_MODULE = "/usr/lib/apache2/modules/libphp8.2.so"
HTTP_OFFSET, HTTPS_OFFSET = 90, 91     # base + 90/91: this file's instance

PHP_CONF = """\
LoadModule php_module {module}
<FilesMatch "\\.php$">
    SetHandler application/x-httpd-php
</FilesMatch>
SetEnv H2_PHP_STAMPS "{stamps}"
"""

# One request, answered with what it alone got; its start and end go to
# the stamps file (appended under a lock), with the process id.
ECHO_PHP = r"""<?php
$stamps = $_SERVER["H2_PHP_STAMPS"];
$id = isset($_GET["id"]) ? $_GET["id"] : "-";
$pid = getmypid();
file_put_contents($stamps, "start $id $pid\n", FILE_APPEND | LOCK_EX);
if (isset($_GET["hold_ms"])) {
    usleep(1000 * (int)$_GET["hold_ms"]);
}
$input = file_get_contents("php://input");
$files = array();
foreach ($_FILES as $name => $f) {
    $files[$name] = array("name" => $f["name"], "size" => $f["size"],
        "error" => $f["error"], "sha256" => $f["error"] == UPLOAD_ERR_OK
            ? hash_file("sha256", $f["tmp_name"]) : null);
}
header("Content-Type: application/json");
echo json_encode(array("id" => $id, "pid" => $pid,
    "method" => $_SERVER["REQUEST_METHOD"],
    "protocol" => $_SERVER["SERVER_PROTOCOL"], "post" => $_POST,
    "input_len" => strlen($input), "input_sha256" => hash("sha256", $input),
    "files" => $files)), "\n";
file_put_contents($stamps, "end $id $pid\n", FILE_APPEND | LOCK_EX);
"""


class PhpSandbox(Sandbox):
    """Under H2_SANITIZE=asan or tsan, PHP loads no extensions (the .ini
    files of /etc/php/8.2/apache2/conf.d, opcache among them): it opens
    them with RTLD_DEEPBIND, which the sanitizer runtimes refuse, ending
    the child."""

    def httpd_env(self):
        env = super().httpd_env()
        if self.sanitize in ("asan", "tsan"):
            env["PHP_INI_SCAN_DIR"] = ""
        return env


class PhpPreforkEnv(H2TestEnv):
    """A prefork instance with mod_php, on its own ports and run dir."""

    def __init__(self, first):
        super().__init__()
        self.port_base = first.port_base
        self.sandbox = PhpSandbox(run_dir=run_dir_for(first.port_base) + "-php",
                               http_port=first.port_base + HTTP_OFFSET,
                               https_port=first.port_base + HTTPS_OFFSET,
                               mpm="prefork", module=first.module)
        self.mpm = "prefork"
        self.http_port = self.sandbox.http_port
        self.https_port = self.sandbox.https_port
        self.run_dir = self.sandbox.run_dir
        self.stamps = self.path("state", "php-stamps")

    def start(self):
        sb = self.sandbox
        self.prepare_fresh()
        self.add_conf("php", PHP_CONF.format(module=PHP_MODULE, stamps=self.stamps))
        sb.setup()
        os.makedirs(self.path("htdocs", "php"), exist_ok=True)
        with open(self.path("htdocs", "php", "echo.php"), "w") as f:
            f.write(ECHO_PHP)
        os.chmod(self.path("htdocs", "php"), 0o755)
        os.chmod(self.path("htdocs", "php", "echo.php"), 0o644)
        wait_ports_free(self.http_port, self.https_port)
        sb.start()
        self.log_checked = 0

    def clear_stamps(self):
        with open(self.stamps, "w"):
            pass
        os.chmod(self.stamps, 0o666)

    def stamps_by_pid(self):
        """{pid: [("start"|"end", id), ...]} in the order they were written."""
        out = {}
        with open(self.stamps) as f:
            for line in f:
                what, rid, pid = line.split()
                out.setdefault(int(pid), []).append((what, rid))
        return out

    @property
    def h2(self):
        return self.module == "ours"


def no_overlap(stamps):
    """Every process ran its PHP requests one after the other: starts and
    ends alternate, each end closing the request just started."""
    for pid, seq in stamps.items():
        for i in range(0, len(seq), 2):
            pair = seq[i:i + 2]
            assert len(pair) == 2 and pair[0][0] == "start" and pair[1] == ("end", pair[0][1]), \
                "pid %d ran requests at once: %r" % (pid, seq[max(0, i - 2):i + 4])


@pytest.fixture(scope="module")
def php(env):
    if not os.path.exists(PHP_MODULE):
        pytest.skip("%s missing: apt-get install libapache2-mod-php8.2 "
                    "(sandbox/deps.sh installs it)" % PHP_MODULE)
    e = PhpPreforkEnv(env)
    e.start()
    yield e
    e.stop()
    # the parent logs a crashed child at its next maintenance round
    problems = e.log_problems()
    assert not problems, "prefork+mod_php instance's error log:\n" + "\n".join(problems)


@pytest.fixture(autouse=True)
def php_log_clean(php):
    """Fail a test during which the mod_php instance logged an error or a
    child crashed (prefork's parent notices a crash within a second)."""
    php.mark_log_checked()
    php.clear_stamps()
    yield
    time.sleep(1.2 * php.slow)
    problems = php.log_problems()
    php.mark_log_checked()
    assert not problems, "prefork+mod_php instance's error log:\n" + "\n".join(problems)


def h2_only(php):
    if not php.h2:
        pytest.skip("stock mod_http2 refuses h2 under prefork (AH10034): "
                    "its HTTP/1.1 answers are tested instead (docs/migration.md)")


def form_body(i):
    """A urlencoded form that differs per request, some beyond a window."""
    return urllib.parse.urlencode({"n": str(i), "tag": "req-%d" % i,
                                   "fill": ("x%d" % i) * (16 * i * i)}).encode()


def multipart(fields, files, boundary="h2testboundary7MA4YWxk"):
    """A multipart/form-data body: fields {name: value}, files {name:
    (filename, bytes)}. Returns (content-type, body)."""
    out = []
    for k, v in fields.items():
        out.append(("--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n"
                    % (boundary, k, v)).encode())
    for k, (fname, data) in files.items():
        out.append(("--%s\r\nContent-Disposition: form-data; name=\"%s\"; "
                    "filename=\"%s\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                    % (boundary, k, fname)).encode() + data + b"\r\n")
    out.append(("--%s--\r\n" % boundary).encode())
    return "multipart/form-data; boundary=" + boundary, b"".join(out)


def test_start_up_line_says_one_request_at_a_time(php):
    log = php.sandbox.log_since(0)
    if php.h2:
        assert re.search(r"AH21060: mod_h2 \S+ \(nghttp2 \S+\), mpm prefork, workers 1-1, "
                         r"one request at a time per child", log), log
        assert "AH21200" not in log
    else:
        assert "AH10034" in log and "prefork" in log, log


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_parallel_php_and_static_streams_each_get_their_own_answer(php, how):
    """48 streams at once on one connection: PHP GETs, PHP POSTs with
    bodies of up to 100 KB, multipart uploads and static files. Each answer
    is its own (id, body, file), all PHP ran in the connection's one child,
    one request after the other."""
    h2_only(php)
    with H2Client.connect(php, how) as c:
        expect = {}
        for i in range(48):
            kind = i % 4
            if kind == 0:
                sid = c.request("GET", "/php/echo.php?id=get-%d" % i)
                expect[sid] = ("get-%d" % i, "GET", b"", None)
            elif kind == 1:
                body = form_body(i)
                sid = c.request("POST", "/php/echo.php?id=post-%d" % i, body=body,
                                headers=[("content-type", "application/x-www-form-urlencoded")])
                expect[sid] = ("post-%d" % i, "POST", body, None)
            elif kind == 2:
                data = hashlib.shake_256(b"file-%d" % i).digest(1000 + 500 * i)
                ctype, body = multipart({"tag": "up-%d" % i}, {"f": ("f%d.bin" % i, data)})
                sid = c.request("POST", "/php/echo.php?id=up-%d" % i, body=body,
                                headers=[("content-type", ctype)])
                expect[sid] = ("up-%d" % i, "POST", None, ("f%d.bin" % i, data))
            else:
                name = ("index.html", "1k.txt", "100k.txt")[i % 3]
                sid = c.request("GET", "/" + name)
                expect[sid] = (name, None, None, None)
        c.wait(lambda: all(c.responses[s].done for s in expect), 60 * php.slow,
               "all 48 streams")
    pids = set()
    for sid, (rid, method, body, upload) in expect.items():
        r = c.responses[sid]
        assert r.status == 200, (sid, rid, r)
        if method is None:
            assert r.body == php.docroot_file(rid), (sid, rid)
            continue
        got = json.loads(r.body)
        pids.add(got["pid"])
        assert (got["id"], got["method"], got["protocol"]) == (rid, method, "HTTP/2.0"), got
        if upload is None:
            assert got["input_len"] == len(body), (rid, got)
            assert got["input_sha256"] == hashlib.sha256(body).hexdigest(), (rid, got)
            form = urllib.parse.parse_qs(body.decode())
            # json_encode makes an empty array of an empty $_POST
            assert (got["post"] or {}) == {k: v[0] for k, v in form.items()}, rid
        else:
            fname, data = upload
            assert got["post"] == {"tag": rid}, got
            assert got["files"] == {"f": {"name": fname, "size": len(data), "error": 0,
                                          "sha256": hashlib.sha256(data).hexdigest()}}, got
    assert len(pids) == 1, pids
    stamps = php.stamps_by_pid()
    assert sum(len(s) for s in stamps.values()) == 2 * 36, stamps
    no_overlap(stamps)


def h2load_args(php, how):
    if how == "h2c" and not php.h2:
        return ["--h1"]         # stock speaks HTTP/1.1 here (pipelined)
    return []


@pytest.mark.parametrize("path", ["/php/echo.php?id=load", "/index.html"])
@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_h2load_of_php_and_static_on_one_connection_loses_nothing(php, how, path):
    """h2load -c 1 -m 10 -n 300: all answered, no crash (the error log
    check), and the PHP requests never overlapped."""
    port = php.https_port if how == "h2" else php.http_port
    url = "%s://127.0.0.1:%d%s" % ("https" if how == "h2" else "http", port, path)
    r, stats = php.h2load(url, "-c", "1", "-m", "10", "-n", "300",
                          *h2load_args(php, how))
    assert stats.get("succeeded") == 300 and stats.get("2xx") == 300, \
        r.stdout.decode(errors="replace")
    assert stats["protocol"] == (how if php.h2 else "http/1.1"), stats
    if "php" in path:
        no_overlap(php.stamps_by_pid())


def test_php_upload_and_post_over_curl_h2(php):
    """$_FILES and $_POST of one multipart upload, and php://input of a
    JSON POST, over h2 (ALPN; HTTP/1.1 for stock)."""
    data = hashlib.shake_256(b"curl upload").digest(20000)
    src = php.path("tmp", "upload.bin")
    with open(src, "wb") as f:
        f.write(data)
    proto = "HTTP/2" if php.h2 else "HTTP/1.1"
    r = php.curl(php.https_url("/php/echo.php?id=curl-up"), "--http2",
                 "-F", "note=hello", "-F", "doc=@%s;filename=doc.bin" % src)
    assert r.exit_code == 0 and r.status == 200 and r.protocol == proto, r
    got = r.json()
    assert got["post"] == {"note": "hello"}, got
    assert got["files"]["doc"] == {"name": "doc.bin", "size": len(data), "error": 0,
                                   "sha256": hashlib.sha256(data).hexdigest()}, got
    body = json.dumps({"k": "v" * 5000})
    r = php.curl(php.https_url("/php/echo.php?id=curl-json"), "--http2",
                 "-H", "content-type: application/json", "--data-binary", body)
    assert r.exit_code == 0 and r.status == 200 and r.protocol == proto, r
    got = r.json()
    assert got["input_sha256"] == hashlib.sha256(body.encode()).hexdigest(), got
    assert got["post"] == [], got


def test_h2c_upgrade_with_a_body_runs_php_as_stream_1(php):
    """The HTTP/1.1 request that upgrades becomes stream 1, run by the
    worker, not by the connection's thread; its body reaches PHP."""
    r = php.curl(php.http_url("/php/echo.php?id=upgraded"), "--http2", "-d", "a=1&b=2")
    assert r.exit_code == 0 and r.status == 200, r
    got = r.json()
    assert got["post"] == {"a": "1", "b": "2"}, got
    if php.h2:
        assert [b["status_line"] for b in r.header_blocks] == [
            "HTTP/1.1 101 Switching Protocols", "HTTP/2 200"], r.header_blocks
        assert got["protocol"] == "HTTP/2.0", got
    else:
        assert r.protocol == "HTTP/1.1" and got["protocol"] == "HTTP/1.1", r
    no_overlap(php.stamps_by_pid())


def test_h2c_upgrade_whose_client_left_is_logged_after_its_stream(php):
    """The client of an upgraded connection leaves while PHP runs its
    stream 1: the connection's thread logs the HTTP/1.1 request (101) only
    once the stream's request is done, not while a worker runs it."""
    h2_only(php)
    offset = os.path.getsize(php.sandbox.access_log)
    r = php.curl(php.http_url("/php/echo.php?id=gone&hold_ms=%d" % (1000 * php.slow)),
                 "--http2", timeout=0.4)
    assert r.exit_code == 28, r        # curl gave up (timeout) mid-stream
    lines = []
    deadline = time.monotonic() + 10 * php.slow
    while len(lines) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
        with open(php.sandbox.access_log) as f:
            f.seek(offset)
            lines = [l for l in f.read().splitlines() if "id=gone" in l]
    assert [" HTTP/2.0\"" in l for l in lines] == [True, False], lines
    assert '" 101 ' in lines[1], lines


def test_waiting_streams_run_most_urgent_first(php):
    """While one PHP request holds the child's worker, three of u=5 and
    then one of u=0 arrive: the urgent one runs next, the others in order."""
    h2_only(php)
    with H2Client.connect(php, "h2c") as c:
        hold = c.request("GET", "/php/echo.php?id=hold&hold_ms=%d" % (500 * php.slow))
        c.wait(lambda: os.path.getsize(php.stamps) > 0, 10 * php.slow, "hold started")
        sids = [c.request("GET", "/php/echo.php?id=" + q, headers=[("priority", "u=5")])
                for q in ("a", "b", "c")]
        sids.append(c.request("GET", "/php/echo.php?id=urgent",
                              headers=[("priority", "u=0")]))
        c.wait(lambda: all(c.responses[s].done for s in [hold] + sids), 20 * php.slow,
               "all streams")
    stamps = php.stamps_by_pid()
    no_overlap(stamps)
    (seq,) = stamps.values()
    assert [rid for what, rid in seq if what == "start"] == ["hold", "urgent", "a", "b", "c"]


@contextlib.contextmanager
def php_conf(php, text):
    php.add_conf("h2-extra", text)
    try:
        php.reload()
        yield
    finally:
        remove_conf(php, "h2-extra", "server")
        php.reload()


def settings_of(php):
    with H2Client.connect(php, "h2c") as c:
        return c.wait_settings()


def test_websockets_wait_for_more_workers_and_h2maxworkers_opts_in(php):
    """H2WebSockets on: not announced while a connection runs one stream
    at a time (an open WebSocket would hold its only worker), with a
    start-up warning. H2MaxWorkers 4 is honoured (the admin vouches for
    the modules), with a warning naming the risk; WebSockets are
    announced then. No PHP runs while it is on."""
    h2_only(php)
    enable_connect_protocol = 0x8
    offset = php.log_offset()
    with php_conf(php, "H2WebSockets on\n"):
        assert enable_connect_protocol not in settings_of(php)
        log = php.sandbox.log_since(offset)
        assert "AH21201" in log and "AH21200" not in log, log
        assert "workers 1-1, one request at a time per child" in log, log
    offset = php.log_offset()
    with php_conf(php, "H2WebSockets on\nH2MaxWorkers 4\n"):
        assert settings_of(php).get(enable_connect_protocol) == 1
        log = php.sandbox.log_since(offset)
        assert re.search(r"\[http2:warn\].*AH21200: mod_h2: H2MaxWorkers 4 under the prefork "
                         r"MPM: .*mod_php", log), log
        assert "workers 1-4, up to 4 requests at once per child (H2MaxWorkers)" in log, log
        assert "AH21201" not in log, log


def test_stock_serves_http1_under_prefork(php):
    """Stock mod_http2 under prefork: no h2 by ALPN, no h2c Upgrade."""
    if php.h2:
        pytest.skip("stock's behaviour, for comparison (docs/migration.md)")
    r = php.curl(php.https_url("/php/echo.php?id=alpn"), "--http2", "-v")
    assert r.status == 200 and r.protocol == "HTTP/1.1", r
    assert "ALPN: server accepted http/1.1" in r.stderr, r.stderr


def test_mod_php_refuses_threaded_mpms(php):
    """Why this is about prefork: mod_php (not thread-safe) will not start
    under event."""
    sb = Sandbox(run_dir=php.run_dir + "-event", http_port=php.http_port,
                 https_port=php.https_port, mpm="event", module=php.module)
    sb.setup()
    sb.add_conf("php", PHP_CONF.format(module=PHP_MODULE, stamps="/dev/null"))
    rc, out = sb.configtest()
    assert rc != 0, out
    assert "threaded MPM, but your PHP Module is not compiled to be threadsafe" in out, out
