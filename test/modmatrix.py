"""The module matrix's harness: one-child httpd instances that serve the
cases of test/modmatrix_cases.py, and the comparison of one case's
answers over h2, HTTP/1.1, h2 again and h2c.

A case is data: the modules it loads, its configuration, the files it
needs and the requests (steps) that exercise it. Cases of one group share
a server configuration; a case marked `fresh` gets a fresh child (a
graceful restart) so that its first request, over h2, is the child's first
use of what the case tests (apr-util's DBM, DBD, LDAP and crypto drivers
are loaded by a process's first user). The server (MatrixServer) runs
one child process (StartServers 1, ServerLimit 1) on ports base+680
(http: h2c and HTTP/1.1) and base+681 (https: h2 and HTTP/1.1), in
<run dir>-matrix.

A case passes when every step's status, body and compared headers over
h2 equal those over HTTP/1.1 on TLS, over h2c equal those over HTTP/1.1
on cleartext, the reference answers are what the case expects, and no
child exits on a signal. Results go to <run dir>-matrix/matrix-<module>.json
(scripts/module_matrix.py renders docs/modules.md from them).
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field

from h2env import H2TestEnv, Sandbox, run_dir_for, wait_ports_free
from sandbox import SYS_MODULE_DIR, child_pids, pid_alive

HTTP_OFFSET, HTTPS_OFFSET = 680, 681
MODS_AVAILABLE = "/etc/apache2/mods-available"
ALL_MPMS = ("event", "worker", "prefork")

# The passes of a case, in order: the first is over h2, so that the
# child's first use of a driver happens on an HTTP/2 stream. Each pass
# names its reference pass (same scheme and port, HTTP/1.1).
PASSES = (
    ("h2", "https", "--http2", "h1"),
    ("h1", "https", "--http1.1", None),
    ("h2-again", "https", "--http2", "h1"),
    ("h2c", "http", "--http2-prior-knowledge", "h1c"),
    ("h1c", "http", "--http1.1", None),
)
# what a pass's answers must have come over
PASS_PROTOCOL = {"h2": "HTTP/2", "h1": "HTTP/1.1", "h2-again": "HTTP/2",
                 "h2c": "HTTP/2", "h1c": "HTTP/1.1"}

THREADED_ONE_CHILD = """\
    StartServers 1
    ServerLimit 1
    ThreadsPerChild 25
    MaxRequestWorkers 25
    MinSpareThreads 1
    MaxSpareThreads 50
"""
# the module matrix: one child process, so that a case's requests all
# meet the same child (and a crash shows in the next one)
ONE_CHILD = """\
<IfModule mpm_event_module>
{t}</IfModule>
<IfModule mpm_worker_module>
{t}</IfModule>
<IfModule mpm_prefork_module>
    StartServers 1
    ServerLimit 1
    MaxRequestWorkers 1
    MinSpareServers 1
    MaxSpareServers 1
</IfModule>
""".format(t=THREADED_ONE_CHILD)


def two_vhosts(name, body):
    """Configuration text (a format string, as Case.conf) of a name-based
    vhost `name` on both ports, as the server's own: h2c and HTTP/1.1 on
    the http port, h2 and HTTP/1.1 over TLS on the https port."""
    return """\
<VirtualHost 127.0.0.1:{{http}}>
    ServerName {name}
    Protocols h2c http/1.1
{body}</VirtualHost>
<VirtualHost 127.0.0.1:{{https}}>
    ServerName {name}
    Protocols h2 http/1.1
    SSLEngine on
    SSLCertificateFile "{{r}}/ca/server.pem"
    SSLCertificateKeyFile "{{r}}/ca/server.key"
{body}</VirtualHost>
""".format(name=name, body=body)


@dataclass
class Step:
    """One request of a case. `path` is relative to the case's location
    (/m/<case>/) unless it starts with /; `{run}` in path, headers and body
    becomes the pass's name, so that passes that change state (DAV) work
    on resources of their own, and `{name}` a value an earlier step of the
    same pass captured (`capture`: response header -> name)."""
    method: str = "GET"
    path: str = ""
    headers: tuple = ()
    body: bytes = None
    expect: int = 200              # the reference (HTTP/1.1) status
    compare: tuple = ()            # response headers that must be equal
    scrub: tuple = ()              # regexes whose matches are ignored
    expect_body: bytes = None      # a part the reference body must hold
    curl_args: tuple = ()          # e.g. ("-u", "user:pw")
    capture: dict = None
    host: str = None               # another host name (a vhost of the case)
    digest: str = None             # "user:password": Digest auth (see below)


@dataclass
class Case:
    name: str                      # id: /m/<name>/ is its location
    module: str                    # the module(s) under test, as in the table
    summary: str                   # the configuration, in a few words
    modules: tuple = ()            # names of /etc/apache2/mods-available/*.load
    conf: str = ""                 # server config; {loc} {doc} {data} {r} {http} {https}
    files: dict = field(default_factory=dict)   # path under {doc} -> content
    data: dict = field(default_factory=dict)    # path under {data} -> content
    setup: object = None           # callable(case, server): e.g. htdbm
    steps: tuple = ()
    group: str = "core"            # cases of a group share a configuration
    fresh: bool = False            # a fresh child before its first request
    mpms: tuple = ("event",)
    needs: tuple = ()              # files that must exist (packages)
    helpers: tuple = ()            # "backend" (HTTP/1.0 on {backend}), "slapd" ({ldap}),
                                   # "gateways" ({scgi}, {uwsgi}, {fcgi}), "fpm"
    vhost_conf: str = ""           # inside both of the server's vhosts
    settle: float = 0              # seconds to wait, then one more request
    log: str = ""                  # a log file whose lines are compared too
    note: str = ""                 # a documented difference, for the table

    def vars(self, server):
        return {"loc": "/m/%s" % self.name, "doc": server.path("htdocs", "m", self.name),
                "data": server.path("mdata", self.name), "r": server.run_dir,
                "http": server.http_port, "https": server.https_port,
                "backend": server.http_port + 5, "ldap": server.http_port + 6,
                "scgi": server.http_port + 7, "uwsgi": server.http_port + 8,
                "fcgi": server.http_port + 9,
                "mods": SYS_MODULE_DIR}

    def missing(self):
        return [p for p in self.needs if not os.path.exists(p)]


def load_line(name):
    """The LoadModule line of Debian's mods-available/<name>.load."""
    with open(os.path.join(MODS_AVAILABLE, name + ".load")) as f:
        for line in f:
            if line.strip().startswith("LoadModule"):
                return line.strip()
    raise ValueError("no LoadModule in %s.load" % name)


class MatrixServer(Sandbox):
    """A one-child instance serving a group of cases."""

    def __init__(self, first, mpm, group, cases):
        super().__init__(run_dir=run_dir_for(first.port_base) + "-matrix",
                         http_port=first.port_base + HTTP_OFFSET,
                         https_port=first.port_base + HTTPS_OFFSET,
                         mpm=mpm, module=first.module)
        self.group = group
        self.cases = cases
        self.helpers = []          # started with the group, stopped with it

    def httpd_env(self):
        """Under ASan or TSan, mod_php loads no extensions: it opens them
        with RTLD_DEEPBIND, which the sanitizer runtimes refuse (as
        test_php_prefork.py's instance)."""
        env = super().httpd_env()
        if self.sanitize in ("asan", "tsan"):
            env["PHP_INI_SCAN_DIR"] = ""
        return env

    def group_conf(self):
        loaded = set(re.findall(r"LoadModule (\w+)_module", self.load_modules()))
        builtin = self.builtin_modules()
        # a crashed child leaves a core there when the limit allows it
        # (`ulimit -c unlimited` before the run)
        cores = self.path("cores")
        os.makedirs(cores, exist_ok=True)
        os.chmod(cores, 0o1777)
        lines = [ONE_CHILD, 'CoreDumpDirectory "%s"\n' % cores]
        seen = set()
        for case in self.cases:
            for m in case.modules:
                line = load_line(m)
                mod_id = line.split()[1]
                src = "mod_%s.c" % m
                if mod_id in seen or mod_id[:-len("_module")] in loaded or src in builtin:
                    continue
                seen.add(mod_id)
                lines.append(line)
        for case in self.cases:
            lines.append("# --- case %s" % case.name)
            lines.append(case.conf.format(**case.vars(self)))
        return "\n".join(lines) + "\n"

    def write_cases(self):
        for d in ("htdocs/m", "mdata"):
            p = self.path(d)
            if os.path.isdir(p):
                shutil.rmtree(p)
            os.makedirs(p)
        for case in self.cases:
            v = case.vars(self)
            os.makedirs(v["doc"], exist_ok=True)
            os.makedirs(v["data"], exist_ok=True)
            for base, files in ((v["doc"], case.files), (v["data"], case.data)):
                for rel, content in files.items():
                    p = os.path.join(base, rel)
                    os.makedirs(os.path.dirname(p), exist_ok=True)
                    mode = 0o755 if rel.endswith((".cgi", ".sh", ".py")) else 0o644
                    with open(p, "wb") as f:
                        f.write(content.format(**v).encode() if isinstance(content, str)
                                else content)
                    os.chmod(p, mode)
            if case.setup:
                case.setup(case, self)
        # files an hour old: httpd makes the ETag of a file changed within
        # the last second weak, which would differ from pass to pass
        past = time.time() - 3600
        for top in (self.path("htdocs", "m"), self.path("mdata")):
            for root, dirs, files in os.walk(top):
                for fn in files:
                    os.utime(os.path.join(root, fn), (past, past))
        if self.is_root:
            # DAV, caches, lock and session databases write there
            for d in ("htdocs/m", "mdata"):
                subprocess.run(["chown", "-R", "www-data:www-data", self.path(d)], check=True)
            for root, dirs, files in os.walk(self.path("htdocs", "m")):
                os.chmod(root, 0o755)

    def start_group(self):
        if self.is_running():
            self.stop()
        self.clear_conf()
        self.setup()
        self.write_cases()
        self.add_conf("matrix", self.group_conf())
        vconf = "".join(c.vhost_conf.format(**c.vars(self)) for c in self.cases)
        self.add_conf("matrix", vconf, "http")
        self.add_conf("matrix", vconf, "https")
        self.start_helpers()
        wait_ports_free(self.http_port, self.https_port)
        self.start()
        self.wait_children()

    def start_helpers(self):
        from modmatrix_helpers import Gateways, HttpBackend, Slapd
        wanted = set(h for c in self.cases for h in c.helpers)
        if "backend" in wanted:
            root = self.path("backend")
            b = HttpBackend(self.run_dir, self.http_port + 5, root)
            os.makedirs(os.path.join(root, "backend"), exist_ok=True)
            with open(os.path.join(root, "backend", "hello.txt"), "w") as f:
                f.write("hello from the module matrix\n")
            with open(os.path.join(root, "backend", "page.html"), "w") as f:
                f.write('<html><body><a href="http://backend.example/backend/hello.txt">'
                        'link</a></body></html>\n')
            b.start()
            self.helpers.append(b)
        if "fpm" in wanted:
            from phpfpm import PhpFpm
            f = PhpFpm(self.run_dir, children=2, name="fpm-matrix", docroot=self.docroot)
            f.start()
            self.helpers.append(f)
            self.add_conf("phpfpm", f.httpd_conf())
        if "gateways" in wanted:
            g = Gateways(self.run_dir, self.http_port + 7, self.http_port + 8,
                         self.http_port + 9)
            g.start()
            self.helpers.append(g)
        if "slapd" in wanted:
            s = Slapd(self.run_dir, self.http_port + 6)
            s.start()
            self.helpers.append(s)

    def stop_group(self):
        try:
            self.stop()
        finally:
            for h in self.helpers:
                h.stop()
            self.helpers = []

    def wait_children(self, old=(), timeout=20):
        """Wait until a child other than those in `old` runs (under the
        event and worker MPMs: its listener is up once a connection is
        taken, which the next curl does)."""
        deadline = time.monotonic() + timeout * self.slow
        while time.monotonic() < deadline:
            kids = [p for p in self.child_pids() if p not in old and not self.is_cgid(p)]
            if kids:
                return kids
            time.sleep(0.05)
        raise AssertionError("no new child within %ds\n%s" % (timeout, self.log_tail()))

    def is_cgid(self, pid):
        """mod_cgid's daemon is a child of the parent too."""
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                cmd = f.read()
        except OSError:
            return False
        return b"cgid" in cmd

    def serving_children(self):
        # not a child that has exited and waits for the parent to reap it
        # (within a second): a case counted one such zombie, left by the
        # graceful restart before it, as a child that died during the case
        return [p for p in self.child_pids() if not self.is_cgid(p) and pid_alive(p)]

    def fresh_child(self):
        """A graceful restart: the next connection meets a new child."""
        old = self.serving_children()
        self.reload(fresh=False)
        deadline = time.monotonic() + 20 * self.slow
        while time.monotonic() < deadline and any(pid_alive(p) for p in old):
            time.sleep(0.05)
        return self.wait_children(old)


class MatrixClient(H2TestEnv):
    """curl against a MatrixServer (H2TestEnv's curl with its ports)."""

    def __init__(self, first, server):
        super().__init__()
        self.sandbox = server
        self.http_port = server.http_port
        self.https_port = server.https_port
        self.run_dir = server.run_dir
        os.makedirs(self.path("tmp"), exist_ok=True)

    def digest_auth(self, url, path, opt, host, port, user_pw):
        r = self.curl(url, opt, "--resolve", "%s:%d:127.0.0.1" % (host, port))
        user, pw = user_pw.split(":", 1)
        return digest_header(r.headers.get("www-authenticate", ""), "GET", path, user, pw)

    def request(self, case, step, pass_name, scheme, opt, values):
        def fill(s):
            return s.replace("{run}", token(pass_name)).format(**values) if "{" in s else s
        path = fill(step.path)
        if not path.startswith("/"):
            path = "/m/%s/%s" % (case.name, path)
        host = step.host or self.domain
        port = self.https_port if scheme == "https" else self.http_port
        url = "%s://%s:%d%s" % (scheme, host, port, path)
        args = [opt, "--resolve", "%s:%d:127.0.0.1" % (host, port)]
        if step.method == "HEAD":
            args.append("--head")
        elif step.method != "GET" or step.body is not None:
            args += ["-X", step.method]
        for h in step.headers:
            args += ["-H", fill(h)]
        if step.body is not None:
            body = step.body.replace(b"{run}", token(pass_name).encode())
            bf = self._tmpfile("body")
            with open(bf, "wb") as f:
                f.write(body)
            args += ["--data-binary", "@" + bf]
        args += [fill(a) for a in step.curl_args]
        if step.digest:
            # curl (7.88) answers a challenge on the connection it came
            # on, which fails over h2c with prior knowledge: the challenge
            # comes in a request of its own, the answer in the next
            args += ["-H", self.digest_auth(url, path, opt, host, port, step.digest)]
        r = self.curl(url, *args)
        if step.body is not None:
            os.unlink(bf)
        return r


def digest_header(challenge, method, uri, user, password):
    """The Authorization field answering a Digest challenge (RFC 7616,
    MD5, qop auth)."""
    params = dict(re.findall(r'(\w+)="?([^",]*)"?', challenge))
    def md5(s):
        return hashlib.md5(s.encode()).hexdigest()
    ha1 = md5("%s:%s:%s" % (user, params["realm"], password))
    ha2 = md5("%s:%s" % (method, uri))
    cnonce, nc = "0a4f113b", "00000001"
    resp = md5("%s:%s:%s:%s:auth:%s" % (ha1, params["nonce"], nc, cnonce, ha2))
    return ('Authorization: Digest username="%s", realm="%s", nonce="%s", uri="%s", '
            'algorithm=MD5, qop=auth, nc=%s, cnonce="%s", response="%s"'
            % (user, params["realm"], params["nonce"], uri, nc, cnonce, resp))


def token(pass_name):
    """What `{run}` becomes in a pass's requests: unlike the pass's name
    ("h1"), nothing else an answer holds looks like it, and all have the
    same length (a DAV property lists the length of a file naming it)."""
    return "mxrun-p%d" % [p[0] for p in PASSES].index(pass_name)


def normalize(text, case, step, pass_name, server):
    """What is compared of a body or header value: the pass's own names
    and ports in a neutral form, the step's scrubbed parts removed."""
    text = text.replace(token(pass_name), "{run}")
    for port in (server.http_port, server.https_port):
        text = text.replace(":%d" % port, ":{port}")
    for rx in step.scrub:
        text = re.sub(rx, "<scrubbed>", text)
    return text


def answer(r, case, step, pass_name, server):
    """The comparable part of one curl result."""
    body = r.body.decode("latin-1")
    heads = {h: normalize(r.headers.get(h, "<absent>"), case, step, pass_name, server)
             for h in step.compare}
    return {"status": r.status, "exit": r.exit_code, "protocol": r.protocol,
            "body": normalize(body, case, step, pass_name, server), "headers": heads}


def first_difference(a, b):
    """Where two bodies part, with some context."""
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    lo = max(0, i - 60)
    return "at byte %d (of %d, over HTTP/1.1 %d): %r, over HTTP/1.1 %r" % (
        i, len(a), len(b), a[lo:i + 100], b[lo:i + 100])


def read_log(path, offset, lines, timeout=3):
    """What was appended to `path` after `offset`, once it has `lines`
    lines (a request is logged after its response went out)."""
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        try:
            with open(path, "rb") as f:
                f.seek(offset)
                text = f.read().decode("latin-1")
        except OSError:
            text = ""
        if text.count("\n") >= lines:
            break
        time.sleep(0.05)
    return text


def run_passes(case, server, client):
    """Every step over every pass: {pass: [answer, ...]}, and with
    case.log {pass + "#log": the lines logged}."""
    answers = {}
    log_path = case.log.format(**case.vars(server)) if case.log else None
    for pass_name, scheme, opt, ref in PASSES:
        port = server.https_port if scheme == "https" else server.http_port
        values = {"base": "%s://%s:%d" % (scheme, client.domain, port)}
        answers[pass_name] = []
        offset = os.path.getsize(log_path) if log_path and os.path.exists(log_path) else 0
        for step in case.steps:
            r = client.request(case, step, pass_name, scheme, opt, values)
            answers[pass_name].append(answer(r, case, step, pass_name, server))
            for hname, var in (step.capture or {}).items():
                values[var] = r.headers.get(hname, "")
        if log_path:
            text = read_log(log_path, offset, len(case.steps))
            answers[pass_name + "#log"] = normalize(text, case, Step(), pass_name, server)
    if case.settle:
        # what a module left to run later (a timer) runs, and a request
        # after it shows whether the child survived that
        time.sleep(case.settle)
        client.curl(client.url("https", "/index.html"), "--http2")
    return answers


def check_reference(step, a, where):
    bad = []
    if step.expect is not None and a["status"] != step.expect:
        bad.append("%s: status %s, expected %s" % (where, a["status"], step.expect))
    if step.expect_body is not None and step.expect_body.decode("latin-1") not in a["body"]:
        bad.append("%s: body lacks %r: %r" % (where, step.expect_body, a["body"][:200]))
    return bad


def check_pass(case, server, answers, pass_name, ref):
    """What is wrong with one pass's answers: against the case's
    expectations (a reference pass) or against its reference's."""
    bad = []
    for i, (step, a) in enumerate(zip(case.steps, answers[pass_name])):
        where = "step %d (%s %s)" % (i + 1, step.method, step.path or "/")
        if a["exit"] != 0 or a["status"] is None:
            bad.append("%s: no answer (curl exit %s)" % (where, a["exit"]))
            continue
        if a["protocol"] != PASS_PROTOCOL[pass_name] and not (
                server.module == "stock" and server.mpm == "prefork"):
            bad.append("%s: answered over %s" % (where, a["protocol"]))
        if ref is None:
            bad += check_reference(step, a, where)
            continue
        b = answers[ref][i]
        if a["status"] != b["status"]:
            bad.append("%s: status %s, over HTTP/1.1 %s" % (where, a["status"], b["status"]))
        if a["body"] != b["body"]:
            bad.append("%s: body differs: %s" % (where, first_difference(a["body"], b["body"])))
        for h in step.compare:
            if a["headers"][h] != b["headers"][h]:
                bad.append("%s: %s: %r, over HTTP/1.1 %r"
                           % (where, h, a["headers"][h], b["headers"][h]))
    if case.log:
        logged = answers[pass_name + "#log"]
        if ref is None and logged.count("\n") != len(case.steps):
            bad.append("logged %d lines for %d requests: %r"
                       % (logged.count("\n"), len(case.steps), logged))
        elif ref is not None and logged != answers[ref + "#log"]:
            bad.append("log differs: %r, over HTTP/1.1 %r" % (logged, answers[ref + "#log"]))
    return bad


def child_problems(server, kids, log_start):
    """Children that died during the case, and errors the HTTP/2 module
    logged: (problems, crashed pids)."""
    problems = []
    crashed = [p for p in kids if not pid_alive(p)]
    time.sleep(0.05)
    log = server.log_since(log_start)
    # a child the parent reaped in this case's time may have died in the
    # one before (it notices within a second): only this case's count
    signals = [(p, sig) for p, sig in re.findall(
        r"AH0005[12]: child pid (\d+) exit signal ([^,\n]*)", log) if int(p) in kids]
    crashes = sorted(set(crashed) | set(int(p) for p, _ in signals))
    if crashes:
        problems.append("child process(es) %s died (%s)" % (
            crashes, ", ".join(s for _, s in signals) or "exited"))
    ours = [l for l in log.splitlines() if re.search(r"\[http2:(error|crit|alert|emerg)\]", l)]
    if ours:
        problems.append("the HTTP/2 module logged errors:\n" + "\n".join(ours))
    return problems, crashes


def run_case(case, server, client):
    """Run the passes of `case`; returns (problems, per-pass outcomes,
    crashes seen). Problems are strings; none means the case passed."""
    kids = server.serving_children()
    log_start = server.log_size()
    answers = run_passes(case, server, client)
    problems, outcomes = [], {}
    for pass_name, scheme, opt, ref in PASSES:
        bad = check_pass(case, server, answers, pass_name, ref)
        outcomes[pass_name] = "; ".join(bad) if bad else "ok"
        problems += ["%s: %s" % (pass_name, b) for b in bad]
    more, crashes = child_problems(server, kids, log_start)
    return problems + more, outcomes, crashes


class Results:
    """The run's results, one JSON file per module under test."""

    def __init__(self, first):
        self.path = os.path.join(run_dir_for(first.port_base) + "-matrix",
                                 "matrix-%s.json" % first.module)
        self.module = first.module
        self.entries = {}
        if os.path.exists(self.path):
            with open(self.path) as f:
                data = json.load(f)
            if data.get("module") == first.module:
                self.entries = {(e["case"], e["mpm"]): e for e in data["cases"]}

    def add(self, case, mpm, outcomes, problems, crashes, skipped=None):
        self.entries[(case.name, mpm)] = {
            "case": case.name, "module": case.module, "summary": case.summary,
            "mpm": mpm, "passed": not problems and not skipped,
            "skipped": skipped, "passes": outcomes, "crashes": len(crashes),
            "problems": problems, "note": case.note}
        self.write()

    def write(self):
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"module": self.module, "cases": [
                self.entries[k] for k in sorted(self.entries)]}, f, indent=1)
            f.write("\n")
        os.replace(tmp, self.path)
