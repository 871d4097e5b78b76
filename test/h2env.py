"""Test environment for the mod_h2 pytest suite.

H2TestEnv wraps a private sandbox instance (sandbox/sandbox.py) for the
test run and offers the clients the tests talk to it with: curl, nghttp,
h2load and h2spec. Settings come from the environment:

  H2_TEST_MODULE     ours (default) | stock (Debian's mod_http2) | none
  H2_TEST_MPM        event (default) | worker | prefork
  H2_TEST_PORT_BASE  http = base+80, https = base+443 (default 22100,
                     i.e. 22180/22543; below the kernel's ephemeral
                     range, so no client socket can hold one)
  H2_TEST_RUN_DIR    runtime dir (default sandbox/run-test-<base>, with
                     -asan, -tsan or -valgrind appended under H2_SANITIZE)
  H2_SANITIZE        asan | tsan | valgrind: httpd runs with the ASan+UBSan
                     build of the module (build-asan/) or its ThreadSanitizer
                     build (build-tsan/) and the sanitizer runtime preloaded,
                     or under valgrind memcheck; any report fails the test
                     during which it appeared (see sandbox.py)
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time

TEST_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(TEST_DIR)
sys.path.insert(0, os.path.join(REPO_DIR, "sandbox"))

from sandbox import (Sandbox, SandboxError, SIZED_FILES, port_open,  # noqa: E402,F401
                     read_head, sized_content, slowdown)

DEFAULT_TEST_PORT_BASE = 22100

# error log lines that fail a test: any error or worse, crashed children,
# and sanitizer output that went to stderr instead of its report file
LOG_PROBLEM_PATTERNS = [
    re.compile(r"^\[[^\]]*\] \[[^\]]*:(error|crit|alert|emerg)\]"),
    re.compile(r"child pid \d+ exit signal"),
    re.compile(r"ERROR: (Address|Leak)Sanitizer|runtime error: |^==\d+==ERROR"),
    # a stream, session or hand-off took a transition its table does not
    # have (h2_lifecycle.c, h2_x.c): a bug, whatever the client did
    re.compile(r"AH\d+: h2_\w+\([-\d]+\): invalid transition"),
]

# error-log lines of httpd's own that are no problem of the test's: at a
# graceful restart on a busy machine, mod_cgid's daemon once found its
# socket name (cgid.sock.<parent pid>, the same in every generation) bound
# between its unlink and its bind (AH01243), exited, and the parent said so
# (AH01238); CGI went on working. Nothing of HTTP/2 is in that path, and the
# suite restarts httpd hundreds of times a run.
HTTPD_RACES = [
    re.compile(r"AH01243: Couldn't bind unix domain socket .*/cgid\.sock"),
    re.compile(r"AH01238: cgid daemon failed to initialize"),
]

# the sandboxes started in this process, whose sanitizer reports the tests
# check (the suite's instance and test_load.py's second one)
STARTED = []


# pytest-xdist: worker gwN's instances sit on the port base plus N times
# this (each instance uses offsets below 1000, test_deploy.py's topology
# 4000 up), in run dirs of their own
WORKER_PORT_STEP = 1000
# the most workers `finish` looks for
MAX_WORKERS = 8


def worker_index():
    """N in pytest-xdist's worker gwN, 0 outside xdist."""
    w = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(w[2:]) if w.startswith("gw") and w[2:].isdigit() else 0


def shift_for_worker():
    """In worker gwN (N > 0): move this process's test settings by N port
    steps, before anything reads them, so that workers share no port and
    no run dir. Returns N."""
    n = worker_index()
    if n == 0 or os.environ.get("H2_TEST_WORKER_SHIFTED"):
        return n
    base = int(os.environ.get("H2_TEST_PORT_BASE") or DEFAULT_TEST_PORT_BASE)
    os.environ["H2_TEST_PORT_BASE"] = str(base + n * WORKER_PORT_STEP)
    if os.environ.get("H2_TEST_PORT_BASE2"):
        os.environ["H2_TEST_PORT_BASE2"] = str(int(os.environ["H2_TEST_PORT_BASE2"])
                                               + n * WORKER_PORT_STEP)
    if os.environ.get("H2_TEST_RUN_DIR"):
        os.environ["H2_TEST_RUN_DIR"] += "-gw%d" % n
    os.environ["H2_TEST_WORKER_SHIFTED"] = "1"
    return n


def run_dir_for(port_base):
    """The default runtime dir of a test instance on `port_base`."""
    suffix = os.environ.get("H2_SANITIZE", "")
    return os.path.join(REPO_DIR, "sandbox", "run-test-%d%s" % (
        port_base, "-" + suffix if suffix else ""))


def find_program(name, extra_dirs=()):
    p = shutil.which(name)
    if p:
        return p
    dirs = list(extra_dirs)
    try:
        gp = subprocess.run(["go", "env", "GOPATH"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL).stdout.decode().strip()
        if gp:
            dirs.append(os.path.join(gp, "bin"))
    except OSError:
        pass
    dirs += [os.path.expanduser("~/go/bin"), "/usr/local/go/bin"]
    for d in dirs:
        c = os.path.join(d, name)
        if os.access(c, os.X_OK):
            return c
    return None


class CurlResult:
    """Outcome of one curl call: the final response's status line, headers
    and body bytes, plus every header block curl saw (e.g. a 101 first)."""

    def __init__(self, args, exit_code, stdout, stderr, header_text, body):
        self.args = args
        self.exit_code = exit_code
        self.stdout = stdout
        self.stderr = stderr
        self.body = body
        self.header_blocks = self._parse_blocks(header_text)
        last = self.header_blocks[-1] if self.header_blocks else {
            "status_line": "", "headers": []}
        self.status_line = last["status_line"]
        self.header_list = last["headers"]
        m = re.match(r"^HTTP/(\S+)\s+(\d{3})", self.status_line)
        self.protocol = "HTTP/" + m.group(1) if m else None
        self.status = int(m.group(2)) if m else None

    @staticmethod
    def _parse_blocks(text):
        blocks = []
        cur = None
        for line in text.split("\r\n" if "\r\n" in text else "\n"):
            if line.startswith("HTTP/"):
                cur = {"status_line": line.strip(), "headers": []}
                blocks.append(cur)
            elif cur is not None and ":" in line:
                k, v = line.split(":", 1)
                cur["headers"].append((k.strip().lower(), v.strip()))
        return blocks

    @property
    def headers(self):
        """Final response headers, lower-case names, repeated ones joined."""
        d = {}
        for k, v in self.header_list:
            d[k] = d[k] + ", " + v if k in d else v
        return d

    def json(self):
        return json.loads(self.body.decode("utf-8"))

    def __repr__(self):
        return "<CurlResult exit=%s %s stderr=%r>" % (
            self.exit_code, self.status_line, self.stderr[-300:])


class H2TestEnv:

    def __init__(self):
        self.port_base = int(os.environ.get("H2_TEST_PORT_BASE")
                             or DEFAULT_TEST_PORT_BASE)
        self.module = os.environ.get("H2_TEST_MODULE") or "ours"
        self.mpm = os.environ.get("H2_TEST_MPM") or "event"
        run_dir = os.environ.get("H2_TEST_RUN_DIR") or run_dir_for(self.port_base)
        self.sandbox = Sandbox(run_dir=run_dir, port_base=self.port_base,
                               mpm=self.mpm, module=self.module)
        self.domain = self.sandbox.server_name
        self.http_port = self.sandbox.http_port
        self.https_port = self.sandbox.https_port
        self.run_dir = self.sandbox.run_dir
        self.sanitize = self.sandbox.sanitize
        self.log_checked = 0
        self._ignored = []
        self.curl_bin = find_program("curl")
        self.nghttp_bin = find_program("nghttp")
        self.h2load_bin = find_program("h2load")
        self.h2spec_bin = os.environ.get("H2SPEC") or find_program("h2spec")
        self._tmp_count = 0

    # ----------------------------------------------------------- lifecycle
    def start(self):
        """(Re)start a fresh instance with empty logs and no extra config."""
        sb = self.sandbox
        if sb.is_running():
            sb.stop()
        sb.clear_conf()
        for name in ("error_log", "access_log"):
            p = sb.path("logs", name)
            if os.path.exists(p):
                os.unlink(p)
        os.makedirs(self.path("tmp"), exist_ok=True)
        self.track_sanitizer_reports()
        sb.start()
        self.log_checked = 0

    @property
    def slow(self):
        """Factor by which the sanitizer slows the server down (1 without)."""
        return self.sandbox.slow

    def prepare_fresh(self):
        """Before a start with a configuration of its own: the instance
        stopped, its configuration and logs gone, tmp/ there, and its
        sanitizer reports tracked."""
        sb = self.sandbox
        if sb.is_running():
            sb.stop()
        sb.clear_conf()
        for name in ("error_log", "access_log"):
            if os.path.exists(sb.path("logs", name)):
                os.unlink(sb.path("logs", name))
        os.makedirs(self.path("tmp"), exist_ok=True)
        self.track_sanitizer_reports()

    def track_sanitizer_reports(self):
        """Empty the sanitizer report dir and have sanitizer_reports()
        look at it from now on."""
        self.sandbox.clear_sanitizer_reports()
        self.sandbox.reports_seen = {}
        if self.sandbox not in STARTED:
            STARTED.append(self.sandbox)

    @staticmethod
    def sanitizer_reports():
        """New ASan/UBSan/valgrind reports of every instance started in this
        process: a list of (file, text)."""
        found = []
        for sb in STARTED:
            found += sb.sanitizer_reports(sb.reports_seen)
        return found

    def stop(self, graceful=False):
        self.sandbox.stop(graceful=graceful)

    def restart(self):
        self.sandbox.restart()

    def reload(self, fresh=True):
        self.sandbox.reload(fresh=fresh)

    def add_conf(self, name, text, where="server"):
        self.sandbox.add_conf(name, text, where)

    def clear_conf(self):
        self.sandbox.clear_conf()

    def path(self, *parts):
        return self.sandbox.path(*parts)

    # ----------------------------------------------------------- URLs
    @property
    def has_h2(self):
        return self.module != "none"

    def url(self, scheme, path="/"):
        port = self.https_port if scheme == "https" else self.http_port
        return "%s://%s:%d%s" % (scheme, self.domain, port, path)

    def https_url(self, path="/"):
        return self.url("https", path)

    def http_url(self, path="/"):
        return self.url("http", path)

    def docroot_file(self, name):
        with open(os.path.join(self.sandbox.docroot, name), "rb") as f:
            return f.read()

    # ----------------------------------------------------------- curl
    def _tmpfile(self, prefix):
        self._tmp_count += 1
        return self.path("tmp", "%s-%d-%d" % (prefix, os.getpid(), self._tmp_count))

    def curl(self, url, *args, timeout=20):
        """Run curl with name resolution and CA set up for the sandbox;
        `args` are extra curl options (e.g. "--http2-prior-knowledge")."""
        timeout *= self.slow
        hdr = self._tmpfile("curl-headers")
        body = self._tmpfile("curl-body")
        cmd = [self.curl_bin, "-sS", "--max-time", str(timeout),
               "--resolve", "%s:%d:127.0.0.1" % (self.domain, self.http_port),
               "--resolve", "%s:%d:127.0.0.1" % (self.domain, self.https_port),
               "--cacert", self.sandbox.ca_cert,
               "-D", hdr, "-o", body] + list(args) + [url]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, timeout=timeout + 10)
        header_text = ""
        body_bytes = b""
        if os.path.exists(hdr):
            with open(hdr, "rb") as f:
                header_text = f.read().decode("iso-8859-1")
            os.unlink(hdr)
        if os.path.exists(body):
            with open(body, "rb") as f:
                body_bytes = f.read()
            os.unlink(body)
        return CurlResult(cmd, r.returncode, r.stdout.decode(errors="replace"),
                          r.stderr.decode(errors="replace"), header_text, body_bytes)

    def get(self, how, path, *args, **kw):
        """GET `path` with one of the standard ways to reach the server:
          h2       HTTP/2 over TLS (ALPN) on the https port
          h2c      HTTP/2 prior knowledge on the http port
          upgrade  HTTP/1.1 + Upgrade: h2c on the http port
          http1    HTTP/1.1 on the http port
          https1   HTTP/1.1 over TLS on the https port
        """
        opts = {
            "h2": ("https", "--http2"),
            "h2c": ("http", "--http2-prior-knowledge"),
            "upgrade": ("http", "--http2"),
            "http1": ("http", "--http1.1"),
            "https1": ("https", "--http1.1"),
        }
        scheme, opt = opts[how]
        return self.curl(self.url(scheme, path), opt, *args, **kw)

    def status_h2(self):
        """The H2* lines of `/server-status?auto` (asked over HTTP/1.1) as
        {name: int}: H2Connections, H2StreamsOpen, H2WorkersBusy, ...
        summed over the children; {} for a module that adds none (stock)."""
        r = self.get("http1", "/server-status?auto")
        assert r.status == 200, r
        return {k: int(v) for k, v in re.findall(r"^(H2\w+): (\d+)$", r.body.decode(), re.M)}

    def status_h2_when(self, predicate, seconds=5):
        """status_h2() once predicate(it) holds, asking again for at most
        seconds; else what it is then."""
        def met():
            v = self.status_h2()
            return v if predicate(v) else None
        return eventually(met, seconds) or self.status_h2()

    # ----------------------------------------------------------- nghttp/h2load
    def nghttp(self, url, *args, timeout=60):
        timeout *= self.slow
        cmd = [self.nghttp_bin] + list(args) + [url]
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, timeout=timeout)

    def h2load(self, url, *args, timeout=120):
        """Run h2load; returns (CompletedProcess, stats dict)."""
        timeout *= self.slow
        cmd = [self.h2load_bin] + list(args) + [url]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, timeout=timeout)
        out = r.stdout.decode(errors="replace")
        stats = {}
        m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, "
                      r"(\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout", out)
        if m:
            for k, v in zip(("total", "started", "done", "succeeded", "failed",
                             "errored", "timeout"), m.groups()):
                stats[k] = int(v)
        m = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
        if m:
            for k, v in zip(("2xx", "3xx", "4xx", "5xx"), m.groups()):
                stats[k] = int(v)
        m = re.search(r"Application protocol: (\S+)", out)
        stats["protocol"] = m.group(1) if m else None
        return r, stats

    # ----------------------------------------------------------- error log
    def log_offset(self):
        return self.sandbox.log_size()

    def ignore_log(self, regex):
        """Let error log lines matching `regex` pass the check for the rest
        of the current test (for tests that provoke errors on purpose)."""
        self._ignored.append(re.compile(regex))

    def reset_ignored(self):
        self._ignored = []

    def log_problems(self, start=None):
        """Error-or-worse lines (and child crashes) logged since `start`
        (default: since the last check), minus ignored ones."""
        if start is None:
            start = self.log_checked
        text = self.sandbox.log_since(start)
        bad = []
        for line in text.splitlines():
            if any(p.search(line) for p in LOG_PROBLEM_PATTERNS) and not any(
                    i.search(line) for i in self._ignored + HTTPD_RACES):
                bad.append(line)
        return bad

    def mark_log_checked(self):
        self.log_checked = self.log_offset()


def second_port_base(first_base):
    """Port base of test_load.py's second instance."""
    return int(os.environ.get("H2_TEST_PORT_BASE2") or first_base + 500)


def eventually(probe, seconds, step=0.1):
    """probe() again until it returns something true or seconds pass; its
    last value. For what the server does just after the client has its
    answer: httpd writes a request's access log line after the response
    left, so a client can hold every answer before the last line is there."""
    deadline = time.monotonic() + seconds
    while True:
        value = probe()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(step)


def wait_ports_free(*ports, seconds=20):
    """Wait, at most seconds, until nothing listens on ports: the children
    of an instance stopped before may still hold them."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(port_open(p) for p in ports):
        time.sleep(0.2)


class SecondEnv(H2TestEnv):
    """A second instance beside the suite's (test_load.py's with Debian's
    MPM settings, test_upload_memory.py's with stock mod_http2), on ports
    of its own (second_port_base) and a run dir of its own per module."""

    def __init__(self, first, conf, module=None):
        super().__init__()
        self.conf = conf
        base = second_port_base(first.port_base)
        self.port_base = base
        # another module: its own run dir (logs), on the same ports
        run_dir = run_dir_for(base) + ("-" + module if module else "")
        self.sandbox = Sandbox(run_dir=run_dir, port_base=base,
                               mpm=first.mpm, module=module or first.module)
        self.http_port = self.sandbox.http_port
        self.https_port = self.sandbox.https_port
        self.run_dir = self.sandbox.run_dir

    def start(self):
        """Start with its configuration in place from the beginning (one
        start, no restart), once a previous run's children let go of the
        ports."""
        sb = self.sandbox
        self.prepare_fresh()
        wait_ports_free(self.http_port, self.https_port)
        self.add_conf("second", self.conf + os.environ.get("H2_TEST_EXTRA_CONF", ""))
        # our ports lie in the kernel's ephemeral range: a client socket
        # (ours or another instance's) may hold one for a moment
        for attempt in range(20):
            try:
                sb.start()
                break
            except SandboxError as e:
                if "Address already in use" not in str(e) or attempt == 19:
                    raise
                time.sleep(1)
        self.log_checked = 0


def instances_of(port_base, run_dir=None):
    """The sandboxes a test process on `port_base` may have left: its own,
    test_load.py's second one, test_php_prefork.py's."""
    first = H2TestEnv()
    dirs = [Sandbox(run_dir=run_dir or run_dir_for(port_base), port_base=port_base,
                    mpm=first.mpm, module=first.module)]
    # (H2_TEST_PORT_BASE2 moves with the worker as the first base does)
    second_base = second_port_base(first.port_base) + port_base - first.port_base
    second = run_dir_for(second_base)
    # test_load.py's second instance, its variant without HTTP/2, and
    # test_upload_memory.py's with stock mod_http2
    for run_dir2, module in ((second, first.module), (second + "-none", "none"),
                             (second + "-stock", "stock")):
        if os.path.exists(os.path.join(run_dir2, "sandbox.json")):
            dirs.append(Sandbox(run_dir=run_dir2, port_base=second_base,
                                mpm=first.mpm, module=module))
    # test_php_prefork.py's prefork + mod_php instance (ports base+90/91)
    php = run_dir_for(port_base) + "-php"
    if os.path.exists(os.path.join(php, "sandbox.json")):
        dirs.append(Sandbox(run_dir=php, http_port=port_base + 90,
                            https_port=port_base + 91, mpm="prefork",
                            module=first.module))
    # test_module_matrix.py's one-child instance (ports base+680/681) and
    # what it runs next to it (slapd, a backend, php-fpm)
    matrix = run_dir_for(port_base) + "-matrix"
    if os.path.exists(os.path.join(matrix, "sandbox.json")):
        from modmatrix_helpers import stop_leftovers
        stop_leftovers(matrix, port_base + 680)
        dirs.append(Sandbox(run_dir=matrix, http_port=port_base + 680,
                            https_port=port_base + 681, mpm=first.mpm,
                            module=first.module))
    return dirs


def finish(argv):
    """`python3 test/h2env.py finish [--reports]`, run by sandbox/Makefile
    after pytest: stop the test instances pytest may have left running,
    those of every pytest-xdist worker too; with --reports print the
    sanitizer reports of the whole run and exit 1 if there are any."""
    first = H2TestEnv()
    dirs = instances_of(first.port_base, first.run_dir)
    for n in range(1, MAX_WORKERS):
        base = first.port_base + n * WORKER_PORT_STEP
        run_dir = (os.environ["H2_TEST_RUN_DIR"] + "-gw%d" % n
                   if os.environ.get("H2_TEST_RUN_DIR") else run_dir_for(base))
        if os.path.exists(os.path.join(run_dir, "sandbox.json")):
            dirs += instances_of(base, run_dir)
    for sb in dirs:
        try:
            sb.stop()
        except Exception as e:      # a hung instance must not hide the reports
            if "--reports" in argv:
                print("stopping %s: %s" % (sb.run_dir, e), file=sys.stderr)
    if "--reports" not in argv:
        return 0
    count = 0
    for sb in dirs:
        reports = sb.sanitizer_reports()
        for path, text in reports:
            print("=== %s\n%s" % (path, text.rstrip()))
        print("%s: %d sanitizer report(s) in %s" % (sb.sanitize or "no sanitizer",
                                                     len(reports), sb.sanitizer_dir))
        count += len(reports)
    return 1 if count else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["finish"]:
        sys.exit(finish(sys.argv[2:]))
    sys.exit("usage: h2env.py finish [--reports]")
