"""A private php-fpm behind the test httpd (mod_proxy_fcgi), for tests of
real application stacks: Debian's /usr/sbin/php-fpm8.2 with a config of
its own under the run directory (socket, pid file, error log), never the
system's php8.2-fpm service.

    fpm = PhpFpm(env.run_dir)          # <run dir>/fpm/
    fpm.start()                        # pm = static, 5 children
    env.add_conf("fpm", fpm.httpd_conf(env)); env.reload()
    ... /fpm/upload.php, /fpm/slow_read.php?rate=..., ...
    fpm.stop()                         # by the pid we started

The pool runs as the user httpd's children run as (www-data when the
suite runs as root; the master stays root, so no -R is needed), listens
on a unix socket only httpd's user may use, and has no php.ini (-n): what
the scripts depend on is set in the pool (request bodies are not read
before the script runs, so php://input streams and a script that reads
slowly really holds its upload back; no output buffering, so flush()
sends).

The scripts (PHP_SCRIPTS) go into <docroot>/fpm/, which is the only
directory handed to php-fpm; <docroot>/fpm/list/ is a directory listing.
"""

import hashlib
import os
import signal
import socket
import subprocess
import time

from sandbox import pid_alive   # noqa: E402 (h2env puts sandbox/ on the path)

FPM_BIN = os.environ.get("H2_PHP_FPM", "/usr/sbin/php-fpm8.2")
SYS_MODULE_DIR = os.environ.get("H2_HTTPD_MODULE_DIR", "/usr/lib/apache2/modules")

# big.php's answer: BIG_BLOCKS blocks of BIG_BLOCK bytes, each starting
# with its number (see big_body())
BIG_BLOCK = 65536
BIG_BLOCKS = 320                       # 20 MiB

# the pieces flush.php sends, with its pauses between them
FLUSH_PART = "part %d of %d " + "." * 200 + "\n"

COOKIES = [
    "a=1; Path=/",
    "b=2; Path=/fpm; HttpOnly",
    "c=3; Expires=Thu, 01 Jan 2037 00:00:00 GMT; Path=/",
    "d=4; Path=/; Secure; SameSite=Lax",
]

PHP_SCRIPTS = {
    # reads its whole body as it streams in; answers size and sha256
    "upload.php": r"""<?php
$in = fopen('php://input', 'rb');
$h = hash_init('sha256');
$n = 0;
while (($b = fread($in, 65536)) !== false && $b !== '') {
    $n += strlen($b);
    hash_update($h, $b);
}
header('Content-Type: application/json');
echo json_encode(['size' => $n, 'sha256' => hash_final($h),
                  'content_length' => $_SERVER['CONTENT_LENGTH'] ?? null,
                  'protocol' => $_SERVER['SERVER_PROTOCOL']]), "\n";
""",
    # reads its body in small pieces at ?rate= bytes a second (?piece=
    # bytes at a time), far under what the link could do
    "slow_read.php": r"""<?php
$rate = max(1024, (int)($_GET['rate'] ?? 262144));
$piece = max(512, (int)($_GET['piece'] ?? 16384));
$in = fopen('php://input', 'rb');
$h = hash_init('sha256');
$n = 0;
$t0 = microtime(true);
while (($b = fread($in, $piece)) !== false && $b !== '') {
    $n += strlen($b);
    hash_update($h, $b);
    $wait = $t0 + $n / $rate - microtime(true);
    if ($wait > 0) {
        usleep((int)($wait * 1e6));
    }
}
header('Content-Type: application/json');
echo json_encode(['size' => $n, 'sha256' => hash_final($h),
                  'secs' => round(microtime(true) - $t0, 3)]), "\n";
""",
    # reads nothing until released: until the flag file ?flag= appears in
    # the flag directory (at most ?max= seconds), or for ?sleep= seconds;
    # then reads its whole body
    "stall.php": r"""<?php
$t0 = microtime(true);
$flag = basename($_GET['flag'] ?? '');
$max = (float)($_GET['max'] ?? 30);
if ($flag !== '') {
    while (!file_exists(FLAG_DIR . '/' . $flag) && microtime(true) - $t0 < $max) {
        usleep(20000);
    }
} else {
    usleep((int)(1e6 * (float)($_GET['sleep'] ?? 5)));
}
$waited = microtime(true) - $t0;
$in = fopen('php://input', 'rb');
$h = hash_init('sha256');
$n = 0;
while (($b = fread($in, 65536)) !== false && $b !== '') {
    $n += strlen($b);
    hash_update($h, $b);
}
header('Content-Type: application/json');
echo json_encode(['size' => $n, 'sha256' => hash_final($h),
                  'waited' => round($waited, 3)]), "\n";
""",
    # ?parts= pieces, flushed one by one with ?pause= seconds between them
    "flush.php": r"""<?php
header('Content-Type: text/plain');
$parts = max(1, (int)($_GET['parts'] ?? 3));
$pause = (float)($_GET['pause'] ?? 1.0);
for ($i = 1; $i <= $parts; $i++) {
    echo sprintf(FLUSH_PART, $i, $parts);
    flush();
    if ($i < $parts) {
        usleep((int)($pause * 1e6));
    }
}
""",
    "cookies.php": r"""<?php
header('Content-Type: text/plain');
foreach (COOKIES as $c) {
    header('Set-Cookie: ' . $c, false);
}
echo "cookies set\n";
""",
    "redirect.php": r"""<?php
http_response_code(302);
header('Location: /fpm/hello.php');
header('Content-Type: text/plain');
echo "moved to /fpm/hello.php\n";
""",
    # a 404 that PHP makes (ProxyErrorOverride is off: its body passes)
    "missing.php": r"""<?php
http_response_code(404);
header('Content-Type: text/plain');
echo "no such thing here\n";
""",
    "hello.php": r"""<?php
header('Content-Type: text/plain');
echo "Hello from PHP\n";
""",
    # answers after ?secs= seconds (default 3)
    "long.php": r"""<?php
$secs = (float)($_GET['secs'] ?? 3);
usleep((int)($secs * 1e6));
header('Content-Type: text/plain');
echo "done after $secs s\n";
""",
    # 20 MiB, BIG_BLOCKS blocks of BIG_BLOCK bytes each starting with its number
    "big.php": r"""<?php
header('Content-Type: application/octet-stream');
$fill = str_repeat('0123456789abcdef', BIG_BLOCK / 16);
for ($i = 0; $i < BIG_BLOCKS; $i++) {
    echo substr(sprintf('%08d', $i) . $fill, 0, BIG_BLOCK);
}
""",
}


def big_body():
    fill = "0123456789abcdef" * (BIG_BLOCK // 16)
    return b"".join((("%08d" % i) + fill)[:BIG_BLOCK].encode()
                    for i in range(BIG_BLOCKS))


def big_sha256():
    return hashlib.sha256(big_body()).hexdigest()


def flush_parts(parts=3):
    return [FLUSH_PART % (i, parts) for i in range(1, parts + 1)]


def _php_str(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


class FpmError(Exception):
    pass


class PhpFpm:
    """One php-fpm master with one static pool, all under `<run_dir>/<name>/`."""

    def __init__(self, run_dir, children=5, terminate_timeout=60, name="fpm",
                 docroot=None):
        self.run_dir = run_dir
        self.dir = os.path.join(run_dir, name)
        self.children = children
        self.terminate_timeout = terminate_timeout
        self.socket = os.path.join(self.dir, "php-fpm.sock")
        self.pid_file = os.path.join(self.dir, "php-fpm.pid")
        self.error_log = os.path.join(self.dir, "php-fpm.log")
        self.conf = os.path.join(self.dir, "php-fpm.conf")
        self.flag_dir = os.path.join(self.dir, "flags")
        self.docroot = docroot or os.path.join(run_dir, "htdocs")
        self.script_dir = os.path.join(self.docroot, "fpm")
        self.proc = None
        self.log_offset = 0
        if len(self.socket) > 100:
            raise FpmError("socket path too long for AF_UNIX: %s" % self.socket)

    # ------------------------------------------------------------ setup
    @property
    def user(self):
        """The pool's user: httpd's (www-data) when we are root, else none
        (php-fpm then keeps ours)."""
        return "www-data" if os.geteuid() == 0 else None

    def fpm_conf(self):
        u = self.user
        user = ("user = {u}\ngroup = {u}\nlisten.owner = {u}\nlisten.group = {u}\n"
                "listen.mode = 0660\n").format(u=u) if u else "listen.mode = 0666\n"
        return """\
; written by test/phpfpm.py: a private php-fpm for the mod_h2 tests
[global]
pid = {pid}
error_log = {log}
log_level = notice
daemonize = no
process_control_timeout = 5s

[h2test]
{user}listen = {sock}
listen.backlog = 511
pm = static
pm.max_children = {children}
request_terminate_timeout = {term}s
catch_workers_output = yes
decorate_workers_output = no
clear_env = yes
security.limit_extensions = .php
php_admin_value[enable_post_data_reading] = Off
php_admin_value[post_max_size] = 0
php_admin_value[max_execution_time] = 0
php_admin_value[max_input_time] = -1
php_admin_value[output_buffering] = 0
php_admin_value[zlib.output_compression] = Off
php_admin_value[memory_limit] = 256M
php_admin_value[expose_php] = Off
php_admin_flag[display_errors] = off
php_admin_flag[log_errors] = on
php_admin_value[error_log] = {log}
""".format(pid=self.pid_file, log=self.error_log, user=user, sock=self.socket,
           children=self.children, term=self.terminate_timeout)

    def write_scripts(self):
        os.makedirs(os.path.join(self.script_dir, "list"), exist_ok=True)
        consts = ("<?php\ndefine('FLAG_DIR', {flags});\ndefine('FLUSH_PART', {part});\n"
                  "define('BIG_BLOCK', {bb});\ndefine('BIG_BLOCKS', {bn});\n"
                  "define('COOKIES', [{cookies}]);\n").format(
                      flags=_php_str(self.flag_dir), part=_php_str(FLUSH_PART),
                      bb=BIG_BLOCK, bn=BIG_BLOCKS,
                      cookies=", ".join(_php_str(c) for c in COOKIES))
        for name, src in PHP_SCRIPTS.items():
            # the constants first, in the same file (no include path games)
            text = consts + src[len("<?php\n"):]
            p = os.path.join(self.script_dir, name)
            with open(p, "w") as f:
                f.write(text)
            os.chmod(p, 0o644)
        for name in ("a.txt", "b.txt", "c.txt"):
            p = os.path.join(self.script_dir, "list", name)
            with open(p, "w") as f:
                f.write("listed file %s\n" % name)
            os.chmod(p, 0o644)
        for d in (self.script_dir, os.path.join(self.script_dir, "list")):
            os.chmod(d, 0o755)

    def httpd_conf(self, env=None):
        """Server-wide httpd config: mod_proxy(_fcgi) and mod_autoindex
        loaded unless they are, *.php in <docroot>/fpm/ handed to this
        php-fpm, a directory listing in <docroot>/fpm/list/."""
        return """\
<IfModule !proxy_module>
LoadModule proxy_module {m}/mod_proxy.so
</IfModule>
<IfModule !proxy_fcgi_module>
LoadModule proxy_fcgi_module {m}/mod_proxy_fcgi.so
</IfModule>
<IfModule !autoindex_module>
LoadModule autoindex_module {m}/mod_autoindex.so
</IfModule>
# the worker SetHandler names after the pipe; flushpackets=on: what PHP
# flushes is passed on at once (HTTP/1.1's output filter holds small
# pieces back otherwise)
<Proxy "fcgi://h2test-fpm/" flushpackets=on>
</Proxy>
<Directory "{d}">
    <FilesMatch "\\.php$">
        SetHandler "proxy:unix:{sock}|fcgi://h2test-fpm/"
    </FilesMatch>
</Directory>
<Directory "{d}/list">
    Options +Indexes
</Directory>
""".format(m=SYS_MODULE_DIR, d=self.script_dir, sock=self.socket)

    # ------------------------------------------------------------ control
    def _stale_pid(self):
        """The pid in our pid file if that process is a php-fpm master
        started with our config (left by an interrupted run), else None."""
        try:
            with open(self.pid_file) as f:
                pid = int(f.read().strip())
        except (OSError, ValueError):
            return None
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                cmd = f.read().split(b"\0")
        except OSError:
            return None
        if self.conf.encode() in cmd and pid_alive(pid):
            return pid
        return None

    def _stop_pid(self, pid, timeout=10):
        for sig, wait in ((signal.SIGQUIT, timeout), (signal.SIGTERM, 5),
                          (signal.SIGKILL, 5)):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                return
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                if self.proc is not None and self.proc.pid == pid:
                    if self.proc.poll() is not None:
                        return
                elif not pid_alive(pid):
                    return
                time.sleep(0.05)

    def start(self, timeout=15):
        if not os.access(FPM_BIN, os.X_OK):
            raise FpmError("%s missing: sandbox/deps.sh installs php8.2-fpm" % FPM_BIN)
        os.makedirs(self.dir, exist_ok=True)
        os.makedirs(self.flag_dir, exist_ok=True)
        os.chmod(self.dir, 0o755)
        os.chmod(self.flag_dir, 0o755)
        stale = self._stale_pid()
        if stale:
            self._stop_pid(stale)
        for p in (self.socket, self.pid_file):
            if os.path.exists(p):
                os.unlink(p)
        for fn in os.listdir(self.flag_dir):
            os.unlink(os.path.join(self.flag_dir, fn))
        with open(self.conf, "w") as f:
            f.write(self.fpm_conf())
        self.write_scripts()
        r = subprocess.run([FPM_BIN, "-n", "-t", "-y", self.conf, "-p", self.dir],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            raise FpmError("php-fpm config test failed:\n%s" % r.stdout.decode(errors="replace"))
        self.log_offset = os.path.getsize(self.error_log) if os.path.exists(self.error_log) else 0
        out = open(os.path.join(self.dir, "php-fpm.out"), "ab")
        # its own session: a Ctrl-C of pytest does not reach it, stop() does
        self.proc = subprocess.Popen([FPM_BIN, "-n", "-F", "-y", self.conf, "-p", self.dir],
                                     stdout=out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        out.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise FpmError("php-fpm exited (%d):\n%s" % (self.proc.returncode,
                                                             self.log_tail()))
            if self.ready():
                return self
            time.sleep(0.05)
        self.stop()
        raise FpmError("php-fpm did not come up within %ds:\n%s" % (timeout, self.log_tail()))

    def ready(self):
        if not os.path.exists(self.socket) or len(self.worker_pids()) < self.children:
            return False
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.settimeout(1)
            s.connect(self.socket)
            return True
        except OSError:
            return False
        finally:
            s.close()

    @property
    def pid(self):
        return self.proc.pid if self.proc is not None and self.proc.poll() is None else None

    def worker_pids(self):
        if self.pid is None:
            return []
        out = []
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open("/proc/%s/stat" % d) as f:
                        if int(f.read().rsplit(")", 1)[1].split()[1]) == self.pid:
                            out.append(int(d))
                except (OSError, IndexError, ValueError):
                    continue
        return out

    def stop(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            # SIGQUIT: graceful, the children finish what they do
            self._stop_pid(self.proc.pid)
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        self.proc = None

    # ------------------------------------------------------------ flags, logs
    def release(self, flag):
        """Let stall.php?flag=<flag> go on reading."""
        p = os.path.join(self.flag_dir, flag)
        with open(p, "w") as f:
            f.write("go\n")
        os.chmod(p, 0o644)

    def log_text(self):
        try:
            with open(self.error_log, "rb") as f:
                f.seek(self.log_offset)
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def log_tail(self, n=20):
        return "--- %s ---\n%s" % (self.error_log, "\n".join(self.log_text().splitlines()[-n:]))

    def log_problems(self):
        """php-fpm errors, PHP errors/warnings, killed or crashed children."""
        bad = []
        for line in self.log_text().splitlines():
            if any(k in line for k in ("ERROR:", "ALERT:", "PHP Fatal", "PHP Warning",
                                        "PHP Parse", "timed out", "exited on signal")):
                bad.append(line)
        return bad

    def mark_log_checked(self):
        self.log_offset = os.path.getsize(self.error_log) if os.path.exists(self.error_log) else 0

