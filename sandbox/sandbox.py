#!/usr/bin/env python3
"""A private Apache httpd instance for developing and testing mod_h2.

It runs the system's httpd binary (/usr/sbin/apache2) from a runtime
directory of its own (default: sandbox/run/) holding the generated
httpd.conf, logs, pid file, document root, CGI scripts and a self-signed
CA plus server certificate. It listens on 127.0.0.1 only:

  http  port (default 22080): Protocols h2c http/1.1
  https port (default 22443): Protocols h2 http/1.1 (mod_ssl)

Usage (all options also come from the environment, see --help):

  sandbox.py start|stop|restart|reload|status|setup|urls|reports
      [--dir DIR] [--port-base N | --http-port P --https-port P]
      [--mpm event|worker|prefork] [--module ours|stock|none]
      [--sanitize asan|tsan|valgrind]

`reports` lists what AddressSanitizer, UBSan, ThreadSanitizer or valgrind
reported (exit status 1 if anything).

The test suite imports this file and uses the Sandbox class directly.
"""

import argparse
import hashlib
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

SANDBOX_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(SANDBOX_DIR)

HTTPD_BIN = os.environ.get("H2_HTTPD", "/usr/sbin/apache2")
SYS_MODULE_DIR = os.environ.get("H2_HTTPD_MODULE_DIR", "/usr/lib/apache2/modules")
OUR_MODULE = os.path.join(REPO_DIR, "mod_h2", ".libs", "mod_h2.so")
# the AddressSanitizer + UBSan build of `make -C sandbox build-asan`
ASAN_MODULE = os.path.join(REPO_DIR, "build-asan", "obj", "mod_h2", ".libs", "mod_h2.so")
# the ThreadSanitizer build of `make -C sandbox build-tsan`
TSAN_MODULE = os.path.join(REPO_DIR, "build-tsan", "obj", "mod_h2", ".libs", "mod_h2.so")
# APR's atomics built with TSan, preloaded with it (sandbox/tsan_apr_atomic.c)
TSAN_APR_ATOMIC = os.path.join(REPO_DIR, "build-tsan", "libh2_tsan_apr_atomic.so")
VALGRIND_SUPP = os.path.join(SANDBOX_DIR, "valgrind.supp")
# ASan keeps freed memory this long (in MB per process) before reusing it:
# a use after free within that much later allocation is caught. Less than
# the default 256 MB, so that RSS bounds of the tests still mean something.
ASAN_QUARANTINE_MB = 64

MPMS = ("event", "worker", "prefork")
MODULES = ("ours", "stock", "none")
# H2_SANITIZE: run httpd plain, with the ASan/UBSan runtime preloaded (and
# the module of build-asan/), with the TSan runtime preloaded (and the
# module of build-tsan/), or under valgrind memcheck
SANITIZERS = ("", "asan", "valgrind", "tsan")
# how much slower httpd gets under each: scales the time limits of the
# sandbox (start, stop, reload) and of the tests' clients
SLOWDOWN = {"": 1, "asan": 3, "valgrind": 10, "tsan": 5}


def slowdown():
    """The factor for the sanitizer H2_SANITIZE names (1 without)."""
    return SLOWDOWN.get(os.environ.get("H2_SANITIZE", ""), 1)

# http port = base + 80, https port = base + 443; below the kernel's
# ephemeral range (32768-60999), where a client socket could hold a port
DEFAULT_PORT_BASE = 22000

# Static files in the document root: name -> size in bytes.
SIZED_FILES = {
    "653b.txt": 653,
    "1k.txt": 1024,
    "2k.txt": 2048,
    "4k.txt": 4096,
    "7.5k.txt": 7526,
    "10k.txt": 10 * 1024,
    "100k.txt": 100 * 1024,
    "10m.txt": 10 * 1024 * 1024,
}

INDEX_HTML = """<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>mod_h2 sandbox</title>
</head>
<body>
<h1>mod_h2 sandbox</h1>
<p>This page is served by a private Apache httpd instance.</p>
<ul>
<li><a href="/1k.txt">1k.txt</a></li>
<li><a href="/100k.txt">100k.txt</a></li>
<li><a href="/cgi-bin/env.py">cgi-bin/env.py</a></li>
<li><a href="/server-status">server-status</a></li>
</ul>
</body>
</html>
"""

SSI_HTML = """<!DOCTYPE html>
<html><body>
<p>protocol: <!--#echo var="SERVER_PROTOCOL" --></p>
<p>uri: <!--#echo var="DOCUMENT_URI" --></p>
</body></html>
"""

MIME_TYPES = """\
text/html                   html htm
text/plain                  txt
text/css                    css
text/javascript             js
application/json            json
application/octet-stream    bin
application/pdf             pdf
application/xml             xml
image/gif                   gif
image/jpeg                  jpg jpeg
image/png                   png
image/svg+xml               svg
image/x-icon                ico
"""

CGI_ENV = """\
import os, sys
out = ["Content-Type: text/plain; charset=utf-8", "", ""]
body = "".join("%s=%s\\n" % (k, v) for k, v in sorted(os.environ.items()))
sys.stdout.write("\\r\\n".join(out) + body)
"""

CGI_ECHO = """\
import hashlib, os, sys
data = sys.stdin.buffer.read()
w = sys.stdout.buffer
w.write(b"Content-Type: application/octet-stream\\r\\n")
w.write(b"X-Body-Length: %d\\r\\n" % len(data))
w.write(b"X-Body-Sha256: %s\\r\\n" % hashlib.sha256(data).hexdigest().encode())
w.write(b"\\r\\n")
w.write(data)
w.flush()
"""

CGI_UPLOAD = """\
import hashlib, json, sys
h = hashlib.sha256()
n = 0
while True:
    chunk = sys.stdin.buffer.read(65536)
    if not chunk:
        break
    n += len(chunk)
    h.update(chunk)
body = json.dumps({"size": n, "sha256": h.hexdigest()}) + "\\n"
sys.stdout.write("Content-Type: application/json\\r\\n\\r\\n" + body)
"""

CGI_HELLO = """\
import os, sys
sys.stdout.write("Content-Type: text/plain\\r\\n\\r\\n")
sys.stdout.write("Hello from %s\\n" % os.environ.get("SERVER_PROTOCOL", "?"))
"""


def sized_content(size, name=""):
    """Deterministic text of exactly `size` bytes: numbered 64-byte lines."""
    line_len = 64
    n_lines = size // line_len + 1
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    parts = []
    for i in range(n_lines):
        prefix = "%08d " % i
        fill = alphabet[i % len(alphabet):] + alphabet
        parts.append((prefix + fill)[:line_len - 1] + "\n")
    return "".join(parts)[:size].encode("ascii")


def env_int(name, default):
    v = os.environ.get(name)
    return int(v) if v not in (None, "") else default


def read_head(sock, data=b""):
    """Receive from sock until an HTTP/1.1 head (and its blank line) is in
    data, or the peer closed; returns all that came (the head may be
    incomplete then)."""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def port_open(port, host="127.0.0.1", timeout=0.5):
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie still answers kill(0); treat it as gone
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def child_pids(ppid):
    """Pids of the processes whose parent is ppid."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == ppid:
                        out.append(int(d))
            except (OSError, IndexError, ValueError):
                continue
    return out


def listen_inodes(ports):
    """Inodes of the sockets listening on 127.0.0.1 at the given ports."""
    want = set("0100007F:%04X" % p for p in ports)
    out = set()
    try:
        with open("/proc/net/tcp") as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[1] in want:
                    out.add(fields[9])
    except OSError:
        pass
    return out


def socket_inodes(pid):
    """Inodes of the sockets process pid has open (empty once it exited)."""
    out = set()
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            except OSError:
                continue
            if link.startswith("socket:["):
                out.add(link[8:-1])
    except OSError:
        pass
    return out


class SandboxError(Exception):
    pass


class Sandbox:
    """One httpd instance with its own runtime directory and ports."""

    def __init__(self, run_dir=None, http_port=None, https_port=None,
                 port_base=None, mpm=None, module=None, server_name=None,
                 sanitize=None, module_path=None):
        self.run_dir = os.path.abspath(
            run_dir or os.environ.get("H2_SANDBOX_DIR")
            or os.path.join(SANDBOX_DIR, "run"))
        base = port_base if port_base is not None else env_int(
            "H2_PORT_BASE", DEFAULT_PORT_BASE)
        self.http_port = http_port or env_int("H2_HTTP_PORT", base + 80)
        self.https_port = https_port or env_int("H2_HTTPS_PORT", base + 443)
        self.mpm = mpm or os.environ.get("H2_MPM") or "event"
        self.module = module or os.environ.get("H2_MODULE") or "ours"
        self.server_name = server_name or "test.localhost"
        if self.mpm not in MPMS:
            raise SandboxError("unknown MPM %r, use one of %s" % (self.mpm, MPMS))
        if self.module not in MODULES:
            raise SandboxError("unknown module %r, use one of %s" % (self.module, MODULES))
        self.sanitize = (sanitize if sanitize is not None
                         else os.environ.get("H2_SANITIZE", ""))
        if self.sanitize not in SANITIZERS:
            raise SandboxError("unknown H2_SANITIZE %r, use one of %s"
                               % (self.sanitize, SANITIZERS[1:]))
        self.module_path = os.path.abspath(
            module_path or os.environ.get("H2_MODULE_PATH")
            or {"asan": ASAN_MODULE, "tsan": TSAN_MODULE}.get(self.sanitize, OUR_MODULE))

    # ------------------------------------------------------------ paths
    def path(self, *parts):
        return os.path.join(self.run_dir, *parts)

    @property
    def docroot(self):
        return self.path("htdocs")

    @property
    def conf_file(self):
        return self.path("conf", "httpd.conf")

    @property
    def pid_file(self):
        return self.path("logs", "httpd.pid")

    @property
    def error_log(self):
        return self.path("logs", "error_log")

    @property
    def access_log(self):
        return self.path("logs", "access_log")

    @property
    def ca_cert(self):
        return self.path("ca", "ca.pem")

    @property
    def server_cert(self):
        return self.path("ca", "server.pem")

    @property
    def server_key(self):
        return self.path("ca", "server.key")

    @property
    def rsa_server_cert(self):
        """An RSA certificate for the same names as server.pem: static-RSA
        TLS 1.2 suites (e.g. AES128-SHA) need an RSA key on the server."""
        return self.path("ca", "server-rsa.pem")

    @property
    def rsa_server_key(self):
        return self.path("ca", "server-rsa.key")

    @property
    def client_cert(self):
        """A client certificate (CN=h2 test client) signed by the CA."""
        return self.path("ca", "client.pem")

    @property
    def client_key(self):
        return self.path("ca", "client.key")

    @property
    def module_name(self):
        """The module identifier to use in LogLevel and <IfModule>: mod_h2
        answers to mod_http2's names."""
        return {"ours": "http2", "stock": "http2", "none": None}[self.module]

    def http_url(self, path="/"):
        return "http://127.0.0.1:%d%s" % (self.http_port, path)

    def https_url(self, path="/"):
        return "https://%s:%d%s" % (self.server_name, self.https_port, path)

    @property
    def is_root(self):
        return os.geteuid() == 0

    # ------------------------------------------------------------ setup
    def setup(self):
        """Write the runtime dir: config, docroot, CGIs, certificates."""
        for d in ("conf", "conf.d", "vhost-http.d", "vhost-https.d", "logs",
                  "state", "htdocs", "cgi-bin", "ca", "sanitizer"):
            os.makedirs(self.path(d), exist_ok=True)
        # children write their reports after switching to www-data
        os.chmod(self.path("sanitizer"), 0o1777)
        self._write_docroot()
        self._write_cgi()
        self._make_certs()
        self._make_extra_certs()
        with open(self.path("conf", "mime.types"), "w") as f:
            f.write(MIME_TYPES)
        with open(self.conf_file, "w") as f:
            f.write(self.httpd_conf())
        with open(self.path("sandbox.json"), "w") as f:
            json.dump(self.settings(), f, indent=2)
            f.write("\n")
        self._fix_permissions()

    def settings(self):
        return {"run_dir": self.run_dir, "http_port": self.http_port,
                "https_port": self.https_port, "mpm": self.mpm,
                "module": self.module, "sanitize": self.sanitize,
                "module_path": self.module_path}

    def _write_file(self, path, data, mode=0o644):
        if isinstance(data, str):
            data = data.encode("utf-8")
        if os.path.exists(path) and os.path.getsize(path) == len(data):
            with open(path, "rb") as f:
                if f.read() == data:
                    os.chmod(path, mode)
                    return
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, mode)

    def _write_docroot(self):
        self._write_file(self.path("htdocs", "index.html"), INDEX_HTML)
        self._write_file(self.path("htdocs", "ssi.shtml"), SSI_HTML)
        for name, size in SIZED_FILES.items():
            p = self.path("htdocs", name)
            if os.path.exists(p) and os.path.getsize(p) == size:
                continue
            self._write_file(p, sized_content(size, name))
        os.makedirs(self.path("htdocs", "sub"), exist_ok=True)
        self._write_file(self.path("htdocs", "sub", "index.html"),
                         "<html><body>sub</body></html>\n")

    def cgi_python(self):
        """An interpreter the httpd user can run (root's pyenv may not be)."""
        for cand in ("/usr/bin/python3", sys.executable):
            if cand and os.access(cand, os.X_OK):
                if not self.is_root or not cand.startswith("/root/"):
                    return cand
        return "/usr/bin/env python3"

    def _write_cgi(self):
        shebang = "#!%s\n" % self.cgi_python()
        for name, src in (("env.py", CGI_ENV), ("echo.py", CGI_ECHO),
                          ("upload.py", CGI_UPLOAD), ("hello.py", CGI_HELLO)):
            self._write_file(self.path("cgi-bin", name), shebang + src, 0o755)

    def _make_certs(self):
        if all(os.path.exists(p) for p in
               (self.ca_cert, self.server_cert, self.server_key)):
            return
        ca_dir = self.path("ca")
        ca_key = os.path.join(ca_dir, "ca.key")

        def ossl(*args):
            r = subprocess.run(["openssl"] + list(args), cwd=ca_dir,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if r.returncode != 0:
                raise SandboxError("openssl %s failed:\n%s" % (
                    " ".join(args), r.stdout.decode(errors="replace")))

        ossl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-nodes", "-keyout", ca_key, "-out", self.ca_cert, "-days", "3650",
             "-subj", "/O=mod_h2 sandbox/CN=mod_h2 sandbox CA",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        csr = os.path.join(ca_dir, "server.csr")
        ossl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-nodes", "-keyout", self.server_key, "-out", csr,
             "-subj", "/O=mod_h2 sandbox/CN=%s" % self.server_name)
        ext = os.path.join(ca_dir, "server.ext")
        with open(ext, "w") as f:
            f.write("basicConstraints=critical,CA:FALSE\n"
                    "keyUsage=critical,digitalSignature,keyEncipherment\n"
                    "extendedKeyUsage=serverAuth\n"
                    "subjectAltName=DNS:%s,DNS:*.%s,DNS:localhost,IP:127.0.0.1\n"
                    % (self.server_name, self.server_name))
        ossl("x509", "-req", "-in", csr, "-CA", self.ca_cert, "-CAkey", ca_key,
             "-CAcreateserial", "-out", self.server_cert, "-days", "3650",
             "-sha256", "-extfile", ext)
        for p in (ca_key, self.server_key):
            os.chmod(p, 0o600)

    def _make_extra_certs(self):
        """The RSA server certificate and the client certificate, both
        signed by the sandbox CA (made by _make_certs)."""
        ca_dir = self.path("ca")
        ca_key = os.path.join(ca_dir, "ca.key")
        todo = [(self.rsa_server_cert, self.rsa_server_key, "rsa:2048",
                 "/O=mod_h2 sandbox/CN=%s" % self.server_name,
                 "extendedKeyUsage=serverAuth\n"
                 "subjectAltName=DNS:%s,DNS:*.%s,DNS:localhost,IP:127.0.0.1\n"
                 % (self.server_name, self.server_name)),
                (self.client_cert, self.client_key, "ec",
                 "/O=mod_h2 sandbox/CN=h2 test client",
                 "extendedKeyUsage=clientAuth\n")]
        for cert, key, kind, subj, ext_text in todo:
            if os.path.exists(cert) and os.path.exists(key):
                continue
            if not os.path.exists(ca_key):
                raise SandboxError("%s missing: remove %s to remake the CA"
                                   % (ca_key, ca_dir))
            base = os.path.splitext(cert)[0]
            newkey = ["-newkey", "rsa:2048"] if kind.startswith("rsa") else [
                "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
            ext = base + ".ext"
            with open(ext, "w") as f:
                f.write("basicConstraints=critical,CA:FALSE\n"
                        "keyUsage=critical,digitalSignature,keyEncipherment\n"
                        + ext_text)
            for args in (["req"] + newkey + ["-nodes", "-keyout", key,
                                              "-out", base + ".csr", "-subj", subj],
                         ["x509", "-req", "-in", base + ".csr", "-CA", self.ca_cert,
                          "-CAkey", ca_key, "-CAcreateserial", "-out", cert,
                          "-days", "3650", "-sha256", "-extfile", ext]):
                r = subprocess.run(["openssl"] + args, cwd=ca_dir,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                if r.returncode != 0:
                    raise SandboxError("openssl %s failed:\n%s" % (
                        " ".join(args), r.stdout.decode(errors="replace")))
            os.chmod(key, 0o600)

    def _fix_permissions(self):
        """When root, httpd's children run as www-data: they must be able to
        reach the docroot and CGI dir (every parent dir needs o+x)."""
        if not self.is_root:
            return
        d = self.run_dir
        while d and d != "/":
            st = os.stat(d)
            if not st.st_mode & 0o001:
                os.chmod(d, st.st_mode | 0o001)
            d = os.path.dirname(d)
        for top in ("htdocs", "cgi-bin"):
            for root, dirs, files in os.walk(self.path(top)):
                os.chmod(root, 0o755)
                for fn in files:
                    p = os.path.join(root, fn)
                    os.chmod(p, os.stat(p).st_mode | 0o444)
        os.chmod(self.run_dir, 0o755)
        # state/ holds the cgid socket and mutexes; writable for the workers
        try:
            uid = pwd.getpwnam("www-data").pw_uid
            os.chown(self.path("state"), uid, -1)
        except KeyError:
            pass

    # ------------------------------------------------------------ config
    def load_modules(self):
        mods = ["mpm_%s" % self.mpm,
                "authz_core", "authz_host", "authn_core", "authn_file",
                "auth_basic", "authz_user", "mime", "dir", "alias",
                "log_config", "env", "setenvif", "headers", "socache_shmcb",
                "ssl", "rewrite", "filter", "deflate", "include", "status",
                "cgi" if self.mpm == "prefork" else "cgid"]
        builtin = self.builtin_modules()
        lines = ["LoadModule %s_module %s/mod_%s.so" % (m, SYS_MODULE_DIR, m)
                 for m in mods if "mod_%s.c" % m not in builtin]
        if self.module == "ours":
            lines.append("LoadModule http2_module %s" % self.module_path)
        elif self.module == "stock":
            lines.append("LoadModule http2_module %s/mod_http2.so" % SYS_MODULE_DIR)
        return "\n".join(lines)

    def builtin_modules(self):
        """Modules compiled into the httpd binary (`httpd -l`); Debian's has
        e.g. mod_log_config built in, which must not be loaded again."""
        try:
            out = subprocess.run([HTTPD_BIN, "-l"], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL).stdout.decode()
        except OSError:
            return set()
        return set(l.strip() for l in out.splitlines() if l.strip().endswith(".c"))

    def httpd_conf(self):
        r = self.run_dir
        # a new mark for each configuration written: see reload()
        self.generation = "%d-%d" % (os.getpid(), time.monotonic_ns())
        if self.module == "none":
            proto_http, proto_https = "http/1.1", "http/1.1"
            loglevel = "LogLevel warn core:notice"
        else:
            proto_http, proto_https = "h2c http/1.1", "h2 http/1.1"
            loglevel = "LogLevel warn core:notice %s:info" % self.module_name
        user = ""
        if self.is_root:
            user = "User www-data\nGroup www-data\n"
        site = """\
    DocumentRoot "{r}/htdocs"
    ScriptAlias /cgi-bin/ "{r}/cgi-bin/"
    RewriteEngine on
    # a mod_rewrite example: everything under /rewrite/ serves the index page
    RewriteRule "^/rewrite/" "/index.html" [PT]
""".format(r=r)
        return """\
# Generated by sandbox/sandbox.py -- edits are overwritten on the next start.
# Put extra directives into conf.d/*.conf (server wide),
# vhost-http.d/*.conf or vhost-https.d/*.conf (inside the two vhosts).
#   module: {module}   mpm: {mpm}

ServerRoot "{r}"
ServerName {sname}
DefaultRuntimeDir "{r}/state"
PidFile "{r}/logs/httpd.pid"
Mutex file:{r}/state default

{modules}

{user}
Listen 127.0.0.1:{http_port}
Listen 127.0.0.1:{https_port}

ErrorLog "{r}/logs/error_log"
{loglevel}
LogFormat "%h %l %u %t \\"%r\\" %>s %b %H \\"%{{User-Agent}}i\\" %D" h2access
CustomLog "{r}/logs/access_log" h2access
# which configuration generation answers (reload() waits for the new one)
Header always set X-Sandbox-Gen "{gen}"

TypesConfig "{r}/conf/mime.types"
AddType text/html .shtml
AddOutputFilter INCLUDES .shtml
DirectoryIndex index.html
ServerTokens Prod
Timeout 30
KeepAliveTimeout 5
MaxKeepAliveRequests 0

# ServerLimit leaves room for the processes of an old generation that
# still finish their connections after a graceful restart (else: AH03490)
<IfModule mpm_event_module>
    StartServers 1
    ServerLimit 8
    ThreadsPerChild 25
    MaxRequestWorkers 100
</IfModule>
<IfModule mpm_worker_module>
    StartServers 1
    ServerLimit 8
    ThreadsPerChild 25
    MaxRequestWorkers 100
</IfModule>
<IfModule mpm_prefork_module>
    StartServers 4
    MaxRequestWorkers 50
</IfModule>
{sanitize_conf}
<IfModule mod_cgid.c>
    ScriptSock "{r}/state/cgid.sock"
</IfModule>

SSLSessionCache "shmcb:{r}/state/ssl_scache(512000)"
SSLProtocol all -SSLv3 -TLSv1 -TLSv1.1
{random_seed}

<Directory />
    AllowOverride None
    Require all denied
</Directory>
<Directory "{r}/htdocs">
    Options +Includes
    AllowOverride None
    Require all granted
</Directory>
<Directory "{r}/cgi-bin">
    Options +ExecCGI
    AllowOverride None
    Require all granted
</Directory>
<Location /server-status>
    SetHandler server-status
    Require ip 127.0.0.1
</Location>
ExtendedStatus on

# The first vhost on each port is its default: it serves every host name no
# other vhost claims, so vhosts added in conf.d/ can use any other name
# under *.{sname} (the certificate covers them).
<VirtualHost 127.0.0.1:{http_port}>
    ServerName {sname}
    Protocols {proto_http}
{site}
    IncludeOptional "{r}/vhost-http.d/*.conf"
</VirtualHost>

<VirtualHost 127.0.0.1:{https_port}>
    ServerName {sname}
    Protocols {proto_https}
    SSLEngine on
    SSLCertificateFile "{r}/ca/server.pem"
    SSLCertificateKeyFile "{r}/ca/server.key"
{site}
    IncludeOptional "{r}/vhost-https.d/*.conf"
</VirtualHost>

IncludeOptional "{r}/conf.d/*.conf"
""".format(r=r, sname=self.server_name, modules=self.load_modules(), gen=self.generation,
           user=user, http_port=self.http_port, https_port=self.https_port,
           loglevel=loglevel, proto_http=proto_http, proto_https=proto_https,
           site=site, module=self.module, mpm=self.mpm,
           sanitize_conf=self.sanitize_conf(),
           random_seed=("SSLRandomSeed startup builtin" if self.sanitize != "valgrind" else
                        # "builtin" seeds with bytes of an uninitialised
                        # stack buffer on purpose; under valgrind that
                        # taints every random number, key and TLS record
                        # of the server (thousands of reports in OpenSSL)
                        "SSLRandomSeed startup file:/dev/urandom 256"))

    def sanitize_conf(self):
        if not self.sanitize:
            return ""
        conf = """
# H2_SANITIZE={0}: pools hand the memory they free back to malloc at once
# (APR keeps it for reuse otherwise), so that {0} sees a use of memory
# after its pool was cleared or destroyed
MaxMemFree 1
""".format(self.sanitize)
        if self.sanitize == "asan" and self.is_root:
            # With a core dump directory httpd keeps its children dumpable
            # after they switch to www-data, which lets them read their own
            # /proc/self/environ: UBSan, set up at its first report, finds
            # UBSAN_OPTIONS (log_path, print_stacktrace) there. ASan itself
            # disables core dumps (RLIMIT_CORE 0).
            conf += 'CoreDumpDirectory "%s"\n' % self.path("state")
        if self.sanitize == "valgrind":
            conf += """\
# A child takes seconds to start under valgrind, and its first requests
# are slow: a stable set of children, none spawned for spare threads
# (which costs the CPU the tests need) nor retired mid-test
<IfModule mpm_event_module>
    MinSpareThreads 10
    MaxSpareThreads 200
</IfModule>
<IfModule mpm_worker_module>
    MinSpareThreads 10
    MaxSpareThreads 200
</IfModule>
<IfModule mpm_prefork_module>
    MinSpareServers 1
    MaxSpareServers 50
</IfModule>
"""
        return conf

    # ----------------------------------------------- extra config snippets
    SNIPPET_DIRS = {"server": "conf.d", "http": "vhost-http.d",
                    "https": "vhost-https.d"}

    def add_conf(self, name, text, where="server"):
        """Write an extra config snippet; takes effect on the next
        start/restart/reload. `where` is server, http or https."""
        d = self.path(self.SNIPPET_DIRS[where])
        os.makedirs(d, exist_ok=True)
        if not name.endswith(".conf"):
            name += ".conf"
        with open(os.path.join(d, name), "w") as f:
            f.write(text if text.endswith("\n") else text + "\n")

    def clear_conf(self):
        """Remove all extra config snippets."""
        for d in self.SNIPPET_DIRS.values():
            dd = self.path(d)
            if os.path.isdir(dd):
                for fn in os.listdir(dd):
                    if fn.endswith(".conf"):
                        os.unlink(os.path.join(dd, fn))

    # ------------------------------------------------------------ control
    def httpd_cmd(self, *args):
        return [HTTPD_BIN, "-d", self.run_dir, "-f", self.conf_file] + list(args)

    @property
    def slow(self):
        """How much slower than plain httpd the sanitizer makes it; scales
        the start/stop time limits (tests may use it for theirs)."""
        return SLOWDOWN[self.sanitize]

    @property
    def sanitizer_dir(self):
        """Where ASan/UBSan (asan.PID, ubsan.PID) and valgrind
        (valgrind.PID.log) write their reports."""
        return self.path("sanitizer")

    def sanitizer_runtimes(self):
        """The sanitizer runtimes the module is linked with (per ldd), so
        the preloaded ones are those of the compiler that built it: gcc's
        libasan (configure links UBSan into the module statically, see
        configure.ac; a shared libubsan would be preloaded too)."""
        try:
            out = subprocess.run(["ldd", self.module_path], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL).stdout.decode()
        except OSError:
            out = ""
        libs = []
        for name in ("libasan", "libubsan", "libtsan"):
            m = re.search(r"^\s*%s\.so\S*\s+=>\s+(/\S+)" % name, out, re.M)
            if m:
                libs.append(m.group(1))
        if self.sanitize == "tsan":
            if not libs or "libtsan" not in libs[0]:
                raise SandboxError("%s is not linked with gcc's libtsan: build it with "
                                   "`make -C sandbox build-tsan`" % self.module_path)
            return libs
        if not libs or "libasan" not in libs[0]:
            raise SandboxError("%s is not linked with gcc's libasan: build it with "
                               "`make -C sandbox build-asan`" % self.module_path)
        return libs

    def httpd_env(self):
        """Environment for every httpd process we run (start, -t, graceful):
        with H2_SANITIZE=asan the ASan runtime is preloaded (apache2 itself
        is not instrumented, and the runtime must come first in the process)
        and reports go to files in sanitizer_dir. CGI scripts do not see
        these variables: mod_cgi(d) builds their environment from the
        request alone."""
        env = dict(os.environ)
        if self.sanitize == "tsan" and self.module == "ours":
            return self.tsan_env(env)
        if self.sanitize != "asan" or self.module != "ours":
            return env
        d = self.sanitizer_dir
        env["LD_PRELOAD"] = " ".join(self.sanitizer_runtimes()
                                     + env.get("LD_PRELOAD", "").split())
        # detect_leaks=0: httpd leaves much of what it, APR, OpenSSL and PCRE
        # allocated at start-up to the end of the process, so LeakSanitizer
        # reports dozens of leaks at every process exit (even `-k start`,
        # which it then fails), with one-frame stacks from these libraries
        # (no frame pointers), too shallow to suppress narrowly; and a leak
        # of ours would be memory kept in a pool, which it does not see
        # (the attack tests bound the children's RSS instead).
        # abort_on_error=1: a child with an error dies by SIGABRT, which the
        # parent logs ("exit signal Aborted") besides the report file.
        opts = ["log_path=%s/asan" % d, "detect_leaks=0", "abort_on_error=1",
                "quarantine_size_mb=%d" % ASAN_QUARANTINE_MB,
                "detect_stack_use_after_return=1"]
        env["ASAN_OPTIONS"] = ":".join(opts + [os.environ.get("ASAN_OPTIONS", "")]).rstrip(":")
        # UBSan reports and goes on; the report file fails the test
        opts = ["log_path=%s/ubsan" % d, "print_stacktrace=1", "halt_on_error=0",
                "report_error_type=1"]
        env["UBSAN_OPTIONS"] = ":".join(opts + [os.environ.get("UBSAN_OPTIONS", "")]).rstrip(":")
        return env

    def tsan_env(self, env):
        """httpd with the ThreadSanitizer runtime preloaded (apache2, APR
        and the other modules are not instrumented: TSan sees their
        threads' synchronization only through the pthread calls it
        intercepts). Reports go to tsan.PID in sanitizer_dir."""
        if not os.path.exists(TSAN_APR_ATOMIC):
            raise SandboxError("%s not built yet: run `make -C sandbox build-tsan`"
                               % TSAN_APR_ATOMIC)
        env["LD_PRELOAD"] = " ".join(self.sanitizer_runtimes() + [TSAN_APR_ATOMIC]
                                     + env.get("LD_PRELOAD", "").split())
        # report_signal_unsafe=0: httpd's children stop from their SIGTERM
        # handler, which runs the pool cleanups (OpenSSL's, the sessions'
        # teardown) and so malloc and free inside a signal handler: that is
        # httpd's way to exit, reported thousands of times per run, in its
        # code and in OpenSSL's, never a race
        # ignore_noninstrumented_modules=1: what httpd and APR themselves do
        # through intercepted calls (close() of a listener while the
        # listener thread has it in its epoll set, memcpy) is checked only
        # when called from instrumented code, i.e. mod_h2's: their own
        # races are not ours to find, and they are reported without a
        # frame of ours. Their locks still order mod_h2's accesses.
        opts = ["log_path=%s/tsan" % self.sanitizer_dir, "halt_on_error=0",
                "second_deadlock_stack=1", "report_signal_unsafe=0",
                "ignore_noninstrumented_modules=1"]
        env["TSAN_OPTIONS"] = ":".join(opts + [os.environ.get("TSAN_OPTIONS", "")]).rstrip(":")
        return env

    def launcher(self):
        """What `httpd -k start` runs under: nothing, or valgrind memcheck,
        which follows httpd's forks (the daemon, its children, the cgid
        daemon) but not the CGI scripts they exec."""
        if self.sanitize != "valgrind":
            return []
        d = self.sanitizer_dir
        cmd = ["valgrind", "--tool=memcheck", "--trace-children=no",
               "--num-callers=30", "--error-limit=no", "--leak-check=no",
               "--log-file=%s/valgrind.%%p.log" % d]
        if os.path.exists(VALGRIND_SUPP):
            cmd.append("--suppressions=%s" % VALGRIND_SUPP)
        return cmd + os.environ.get("H2_VALGRIND_ARGS", "").split()

    def pid(self):
        try:
            with open(self.pid_file) as f:
                pid = int(f.read().strip())
        except (OSError, ValueError):
            return None
        return pid if pid_alive(pid) else None

    def is_running(self):
        return self.pid() is not None

    def check_prerequisites(self):
        if not os.access(HTTPD_BIN, os.X_OK):
            raise SandboxError("%s not found: install apache2 (make -C sandbox deps)"
                               % HTTPD_BIN)
        if self.module == "ours" and not os.path.exists(self.module_path):
            raise SandboxError("%s not built yet: run `make -C sandbox %s`"
                               % (self.module_path, self.sanitize in ("asan", "tsan")
                                  and "build-" + self.sanitize or "build"))
        if self.sanitize == "valgrind" and not shutil.which("valgrind"):
            raise SandboxError("valgrind not found: apt-get install valgrind")
        if self.module == "stock" and not os.path.exists(
                os.path.join(SYS_MODULE_DIR, "mod_http2.so")):
            raise SandboxError("stock mod_http2.so not found in %s" % SYS_MODULE_DIR)

    def configtest(self):
        r = subprocess.run(self.httpd_cmd("-t"), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, env=self.httpd_env())
        return r.returncode, r.stdout.decode(errors="replace")

    def start(self, timeout=None):
        if self.is_running():
            raise SandboxError("already running (pid %d) in %s" % (self.pid(), self.run_dir))
        self.check_prerequisites()
        self.setup()
        for port in (self.http_port, self.https_port):
            if port_open(port):
                raise SandboxError("port %d is already in use by another process" % port)
        rc, out = self.configtest()
        if rc != 0:
            raise SandboxError("httpd config test failed:\n" + out)
        marker = self.log_size()
        r = subprocess.run(self.launcher() + self.httpd_cmd("-k", "start"),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, env=self.httpd_env(),
                           preexec_fn=self._limit_descriptors if self.nofile else None)
        if r.returncode != 0:
            raise SandboxError("httpd -k start failed (%d):\n%s\n%s" % (
                r.returncode, r.stdout.decode(errors="replace"), self.log_tail()))
        self.wait_ready(timeout, marker)

    # descriptors httpd (and so its children) may have open, None: as is;
    # for tests of what happens when they run out
    nofile = None

    def _limit_descriptors(self):
        import resource
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.nofile, hard))

    def wait_ready(self, timeout=None, log_marker=None):
        timeout = timeout or 20 * self.slow
        deadline = time.time() + timeout
        while time.time() < deadline:
            if (self.is_running() and port_open(self.http_port)
                    and port_open(self.https_port)):
                return
            if (log_marker is not None and "AH00072" in self.log_since(log_marker)
                    and not self.is_running()):
                raise SandboxError("httpd exited, a port was in use (Address already "
                                   "in use)\n%s" % self.log_tail())
            time.sleep(0.1)
        raise SandboxError("httpd did not come up on ports %d/%d within %ds\n%s" % (
            self.http_port, self.https_port, timeout, self.log_tail()))

    def stop(self, timeout=None, graceful=False):
        """Stop httpd (graceful: `-k graceful-stop`, which lets the children
        finish their connections) and wait until it is gone."""
        timeout = timeout or 20 * self.slow
        pid = self.pid()
        if pid is None:
            return False
        os.kill(pid, signal.SIGWINCH if graceful else signal.SIGTERM)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if not pid_alive(pid):
                break
            time.sleep(0.1)
        else:
            raise SandboxError("httpd (pid %d) did not stop within %ds" % (pid, timeout))
        # the listening sockets may linger a moment in the children
        deadline = time.time() + 5
        while time.time() < deadline and (port_open(self.http_port)
                                          or port_open(self.https_port)):
            time.sleep(0.1)
        return True

    def restart(self):
        """Full stop + start with a freshly written config."""
        self.stop()
        self.start()

    def reload(self, timeout=None, fresh=True):
        """Graceful restart (`-k graceful`) with a freshly written config;
        the parent process and its pid stay the same. fresh: also wait
        until a new connection meets the new configuration (a test that
        holds a connection through the restart may not want the delay)."""
        if not self.is_running():
            return self.start()
        self.setup()
        rc, out = self.configtest()
        if rc != 0:
            raise SandboxError("httpd config test failed:\n" + out)
        gen_marker = self.log_size()
        old_children = self.child_pids()
        r = subprocess.run(self.httpd_cmd("-k", "graceful"), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                           env=self.httpd_env())
        if r.returncode != 0:
            raise SandboxError("httpd -k graceful failed:\n" + r.stdout.decode(errors="replace"))
        # wait for the "resuming normal operations" line of the new generation
        timeout = timeout or 20 * self.slow
        deadline = time.time() + timeout
        while time.time() < deadline:
            log = self.log_since(gen_marker)
            if "resuming normal operations" in log:
                break
            if "AH00072" in log and not self.is_running():
                # With a base in the kernel's ephemeral range, a port that
                # a snippet adds (e.g. base+81) may be held by a client
                # socket for a moment: the new generation could not bind it, and httpd
                # exited. Start again with the same configuration.
                return self.start_retrying_bind()
            time.sleep(0.1)
        self.wait_ready(timeout)
        # Children of the old generation keep accepting until they notice
        # the restart; a client connecting meanwhile meets the old config
        # (or its GOAWAY). Wait until none of them holds a listening socket.
        while time.time() < deadline:
            listening = listen_inodes([self.http_port, self.https_port])
            if not any(listening & socket_inodes(p) for p in old_children):
                break
            time.sleep(0.05)
        # and a new connection meets the new configuration
        while (fresh and time.time() < deadline
               and self.answering_generation() != self.generation):
            time.sleep(0.05)

    def answering_generation(self):
        """The X-Sandbox-Gen a fresh HTTP/1.1 connection gets, or None."""
        try:
            with socket.create_connection(("127.0.0.1", self.http_port), timeout=2) as c:
                c.sendall(b"HEAD / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
                          % self.server_name.encode())
                data = read_head(c)
        except OSError:
            return None
        m = re.search(rb"\r\nX-Sandbox-Gen: ([^\r]*)\r\n", data, re.I)
        return m.group(1).decode() if m else None

    def child_pids(self):
        """Pids of the running httpd's child processes."""
        ppid = self.pid()
        return child_pids(ppid) if ppid else []

    def start_retrying_bind(self, attempts=20):
        """start(), again for a while when a port is in use for a moment
        (AH00072 "could not bind": a base in the ephemeral range)."""
        try:
            with open(self.pid_file) as f:
                old = int(f.read().strip())
        except (OSError, ValueError):
            old = None
        deadline = time.time() + 10 * self.slow
        # the exiting parent (`-k start` takes even its zombie for a running
        # server) and the children of the failed generation
        while time.time() < deadline and (
                (old and os.path.exists("/proc/%d" % old))
                or port_open(self.http_port) or port_open(self.https_port)):
            time.sleep(0.1)
        for attempt in range(attempts):
            try:
                return self.start()
            except SandboxError as e:
                if "Address already in use" not in str(e) or attempt == attempts - 1:
                    raise
                time.sleep(1)

    # ------------------------------------------------------------ logs
    def log_size(self):
        try:
            return os.path.getsize(self.error_log)
        except OSError:
            return 0

    def log_since(self, offset=0):
        try:
            with open(self.error_log, "rb") as f:
                f.seek(offset)
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def clear_sanitizer_reports(self):
        d = self.sanitizer_dir
        if os.path.isdir(d):
            for fn in os.listdir(d):
                os.unlink(os.path.join(d, fn))

    def sanitizer_reports(self, seen=None):
        """Sanitizer reports written since the last call with the same
        `seen` dict (file name -> offset read so far; updated here), as a
        list of (file, text). Every line ASan or UBSan writes is a report;
        of valgrind's log the error records (and a fatal signal) are, not
        its banner, summaries and warnings; suppressed errors are not in
        the log at all."""
        seen = {} if seen is None else seen
        d = self.sanitizer_dir
        found = []
        try:
            names = sorted(os.listdir(d))
        except OSError:
            return found
        for fn in names:
            p = os.path.join(d, fn)
            try:
                with open(p, "rb") as f:
                    f.seek(seen.get(fn, 0))
                    data = f.read().decode(errors="replace")
            except OSError:
                continue
            if fn.startswith("valgrind."):
                # whole records only: up to the last empty "==PID== " line
                m = None
                for m in re.finditer(r"^==\d+== *\n", data, re.M):
                    pass
                if m is None:
                    continue
                data = data[:m.end()]
                seen[fn] = seen.get(fn, 0) + len(data.encode())
                for text in valgrind_errors(data):
                    found.append((p, text))
            elif data:
                seen[fn] = seen.get(fn, 0) + len(data.encode())
                found.append((p, data))
        return found

    def log_tail(self, n=20):
        lines = self.log_since(0).splitlines()[-n:]
        return "--- %s (last %d lines) ---\n%s" % (self.error_log, n, "\n".join(lines))

    # ------------------------------------------------------------ info
    def urls(self):
        h, s, n = self.http_port, self.https_port, self.server_name
        return """\
mod_h2 sandbox running: module={module} mpm={mpm} dir={dir}
  https (h2, ALPN):  curl -sk --http2 https://{n}:{s}/ --resolve {n}:{s}:127.0.0.1
                     curl --cacert {ca} --http2 https://{n}:{s}/ --resolve {n}:{s}:127.0.0.1
  http (h2c prior):  curl --http2-prior-knowledge http://127.0.0.1:{h}/
  http (h2c upgr.):  curl --http2 http://127.0.0.1:{h}/
  nghttp:            nghttp -nv http://127.0.0.1:{h}/   |   nghttp -nv https://127.0.0.1:{s}/
  load:              h2load -n 1000 -c 10 -m 10 http://127.0.0.1:{h}/1k.txt
  cgi:               curl -sk --http2 https://127.0.0.1:{s}/cgi-bin/env.py
  logs:              {dir}/logs/error_log  {dir}/logs/access_log
  extra config:      {dir}/conf.d/*.conf, then make -C sandbox restart""".format(
            h=h, s=s, n=n, ca=self.ca_cert, module=self.module, mpm=self.mpm,
            dir=self.run_dir)

    def status(self):
        pid = self.pid()
        if pid is None:
            return "not running (%s)" % self.run_dir
        return "running, pid %d, ports %d (http) %d (https), module=%s mpm=%s%s, dir %s" % (
            pid, self.http_port, self.https_port, self.module, self.mpm,
            " sanitize=%s" % self.sanitize if self.sanitize else "", self.run_dir)


def valgrind_errors(text):
    """The error records in (a whole-record piece of) a valgrind text log:
    a record is a message line followed by a stack ("   at 0x..."), except
    valgrind's own "Warning: ..." notes and the end of a process by a signal
    httpd uses to stop its processes (SIGTERM, SIGKILL, ...); a crash
    (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) counts, and so does an
    ERROR SUMMARY with errors when no record was seen."""
    errors = []
    record = []
    for line in text.splitlines() + [""]:
        line = re.sub(r"^==\d+== ?", "", line)
        if line.strip():
            record.append(line)
            continue
        stopped = re.match(r"Process terminating with default action of signal \d+ "
                           r"\((?!SIGSEGV|SIGBUS|SIGILL|SIGFPE|SIGABRT)", record[0]
                           ) if record else None
        if record and not record[0].startswith("Warning:") and not stopped and (
                any(re.match(r"\s+at 0x", l) for l in record)
                or record[0].startswith("Process terminating")):
            errors.append("\n".join(record) + "\n")
        elif record and re.match(r"ERROR SUMMARY: [1-9]", record[0]) and not errors:
            errors.append(record[0] + "\n")
        record = []
    return errors


def sandbox_from_args(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["start", "stop", "restart", "reload",
                                        "status", "setup", "urls", "configtest",
                                        "reports"])
    ap.add_argument("--dir", help="runtime dir (env H2_SANDBOX_DIR, default sandbox/run)")
    ap.add_argument("--port-base", type=int,
                    help="http = base+80, https = base+443 (env H2_PORT_BASE, default 22000)")
    ap.add_argument("--http-port", type=int, help="env H2_HTTP_PORT")
    ap.add_argument("--https-port", type=int, help="env H2_HTTPS_PORT")
    ap.add_argument("--mpm", choices=MPMS, help="env H2_MPM, default event")
    ap.add_argument("--module", choices=MODULES,
                    help="ours = build tree mod_h2, stock = Debian mod_http2, "
                         "none = HTTP/1.1 only (env H2_MODULE, default ours)")
    ap.add_argument("--sanitize", choices=SANITIZERS,
                    help="asan = module of build-asan/ with the ASan+UBSan runtime "
                         "preloaded, tsan = module of build-tsan/ with the TSan "
                         "runtime preloaded, valgrind = httpd under valgrind memcheck "
                         "(env H2_SANITIZE, default none)")
    args = ap.parse_args(argv)
    kw = dict(run_dir=args.dir, port_base=args.port_base, http_port=args.http_port,
              https_port=args.https_port, mpm=args.mpm, module=args.module,
              sanitize=args.sanitize)
    # stop/status/urls of an existing instance: reuse its recorded settings
    run_dir = os.path.abspath(args.dir or os.environ.get("H2_SANDBOX_DIR")
                              or os.path.join(SANDBOX_DIR, "run"))
    saved = os.path.join(run_dir, "sandbox.json")
    if args.command in ("stop", "status", "urls", "reports") and os.path.exists(saved):
        with open(saved) as f:
            s = json.load(f)
        kw = dict(run_dir=run_dir, http_port=s["http_port"], https_port=s["https_port"],
                  mpm=s["mpm"], module=s["module"], sanitize=s.get("sanitize", ""),
                  module_path=s.get("module_path"))
    return args.command, Sandbox(**kw)


def main(argv=None):
    try:
        cmd, sb = sandbox_from_args(argv)
        if cmd == "start":
            if sb.is_running():
                print("already " + sb.status())
            else:
                sb.start()
            print(sb.urls())
        elif cmd == "stop":
            print("stopped" if sb.stop() else "not running")
        elif cmd == "restart":
            if sb.is_running():
                sb.stop()
            sb.start()
            print(sb.urls())
        elif cmd == "reload":
            sb.reload()
            print(sb.status())
        elif cmd == "status":
            print(sb.status())
            return 0 if sb.is_running() else 3
        elif cmd == "setup":
            sb.setup()
            print("wrote %s" % sb.conf_file)
        elif cmd == "urls":
            print(sb.urls())
        elif cmd == "reports":
            # exit status 1 when ASan/UBSan/valgrind reported anything
            reports = sb.sanitizer_reports()
            for path, text in reports:
                print("=== %s\n%s" % (path, text.rstrip()))
            print("sanitizer reports in %s: %d" % (sb.sanitizer_dir, len(reports)))
            return 1 if reports else 0
        elif cmd == "configtest":
            sb.setup()
            rc, out = sb.configtest()
            print(out, end="")
            return rc
    except SandboxError as e:
        print("sandbox: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
