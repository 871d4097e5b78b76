"""Processes the module matrix starts next to its httpd instance, each a
plain process on loopback with everything under the matrix's run dir,
stopped by the pid it was started with: a private slapd (Debian's slapd
package, with a slapd.conf written here, loaded with slapadd) for
mod_ldap/mod_authnz_ldap, an HTTP/1.0 backend (python's http.server)
for the proxy cases, and SCGI and uwsgi backends and a FastCGI authorizer
(modmatrix_gateways.py)."""

import os
import shutil
import signal
import subprocess
import sys
import time

from sandbox import pid_alive, port_open

LDAP_SUFFIX = "dc=example,dc=test"
LDAP_USERS = {"alice": "alice-pw", "bob": "bob-pw"}
LDAP_ADMINS = ("alice",)


def stop_pid(pid, timeout=10):
    if not pid or not pid_alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and pid_alive(pid):
        time.sleep(0.05)
    if pid_alive(pid):
        os.kill(pid, signal.SIGKILL)


def stop_by_pid_file(pid_file, marker):
    """Stop the process pid_file names if its command line holds marker
    (so that a pid reused by another process is left alone)."""
    try:
        with open(pid_file) as f:
            pid = int(f.read().strip())
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            mine = marker in f.read()
    except (OSError, ValueError):
        return
    if mine:
        stop_pid(pid)


def wait_port(port, proc, what, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_open(port):
            return
        if proc.poll() is not None:
            raise RuntimeError("%s exited with %s" % (what, proc.returncode))
        time.sleep(0.05)
    raise RuntimeError("%s did not listen on %d within %ds" % (what, port, timeout))


class Helper:
    """What the helpers share: the process they started (proc), or one
    an interrupted run left (stop_stale())."""

    def stop(self):
        if self.proc:
            stop_pid(self.proc.pid)
            self.proc.wait()
            self.proc = None
        else:
            self.stop_stale()


class Slapd(Helper):
    """slapd with one mdb database (LDAP_SUFFIX): ou=people with the
    LDAP_USERS (inetOrgPerson, userPassword in {SSHA}), ou=groups with
    cn=admins (groupOfNames) holding LDAP_ADMINS."""

    def __init__(self, base_dir, port):
        self.dir = os.path.join(base_dir, "slapd")
        self.port = port
        self.proc = None
        self.pid_file = os.path.join(self.dir, "slapd.pid")

    @property
    def url(self):
        return "ldap://127.0.0.1:%d" % self.port

    def conf(self):
        return """\
# written by test/modmatrix_helpers.py: the module matrix's own slapd
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include /etc/ldap/schema/nis.schema
pidfile {d}/slapd.pid
argsfile {d}/slapd.args
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
maxsize 10485760
suffix "{s}"
rootdn "cn=admin,{s}"
rootpw admin-pw
directory {d}/db
access to attrs=userPassword by anonymous auth by * none
access to * by * read
""".format(d=self.dir, s=LDAP_SUFFIX)

    def ldif(self):
        out = ["dn: %s\nobjectClass: dcObject\nobjectClass: organization\n"
               "dc: example\no: example\n" % LDAP_SUFFIX,
               "dn: ou=people,%s\nobjectClass: organizationalUnit\nou: people\n" % LDAP_SUFFIX,
               "dn: ou=groups,%s\nobjectClass: organizationalUnit\nou: groups\n" % LDAP_SUFFIX]
        for user, pw in LDAP_USERS.items():
            h = subprocess.run(["slappasswd", "-s", pw], stdout=subprocess.PIPE,
                               check=True, text=True).stdout.strip()
            out.append("dn: uid=%s,ou=people,%s\nobjectClass: inetOrgPerson\nuid: %s\n"
                       "cn: %s\nsn: %s\nuserPassword: %s\n" % (user, LDAP_SUFFIX, user,
                                                               user, user, h))
        out.append("dn: cn=admins,ou=groups,%s\nobjectClass: groupOfNames\ncn: admins\n%s"
                   % (LDAP_SUFFIX, "".join("member: uid=%s,ou=people,%s\n" % (u, LDAP_SUFFIX)
                                          for u in LDAP_ADMINS)))
        return "\n".join(out)

    def start(self):
        self.stop_stale()
        if os.path.isdir(self.dir):
            shutil.rmtree(self.dir)
        os.makedirs(os.path.join(self.dir, "db"))
        conf = os.path.join(self.dir, "slapd.conf")
        with open(conf, "w") as f:
            f.write(self.conf())
        with open(os.path.join(self.dir, "data.ldif"), "w") as f:
            f.write(self.ldif())
        subprocess.run(["slapadd", "-q", "-f", conf, "-l", os.path.join(self.dir, "data.ldif")],
                       check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        # -d 0: in the foreground, so that the pid is the one we started
        self.proc = subprocess.Popen(["slapd", "-f", conf, "-h", self.url + "/", "-d", "0"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(self.dir, "slapd.log"), "w"))
        wait_port(self.port, self.proc, "slapd")

    def stop_stale(self):
        """A slapd of an interrupted run, by its pid file."""
        stop_by_pid_file(self.pid_file, self.dir.encode())



class HttpBackend(Helper):
    """python's http.server (HTTP/1.0) serving `root` on a loopback port."""

    def __init__(self, base_dir, port, root):
        self.port = port
        self.root = root
        self.pid_file = os.path.join(base_dir, "backend.pid")
        self.proc = None

    def start(self):
        self.stop_stale()
        os.makedirs(self.root, exist_ok=True)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "http.server", "--bind", "127.0.0.1",
             "--directory", self.root, str(self.port)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(self.pid_file, "w") as f:
            f.write("%d\n" % self.proc.pid)
        wait_port(self.port, self.proc, "the backend")

    def stop_stale(self):
        stop_by_pid_file(self.pid_file, b"http.server")



class Gateways(Helper):
    """test/modmatrix_gateways.py: an SCGI and a uwsgi backend, a FastCGI
    authorizer."""

    def __init__(self, base_dir, scgi_port, uwsgi_port, fcgi_port):
        self.ports = (scgi_port, uwsgi_port, fcgi_port)
        self.pid_file = os.path.join(base_dir, "gateways.pid")
        self.proc = None

    def start(self):
        self.stop_stale()
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "modmatrix_gateways.py")
        self.proc = subprocess.Popen([sys.executable, script] + [str(p) for p in self.ports],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        with open(self.pid_file, "w") as f:
            f.write("%d\n" % self.proc.pid)
        for p in self.ports:
            wait_port(p, self.proc, "the gateways")

    def stop_stale(self):
        stop_by_pid_file(self.pid_file, b"modmatrix_gateways")


def stop_leftovers(matrix_dir, http_port):
    """Stop what an interrupted matrix run left next to its httpd (by the
    pid files under matrix_dir): `python3 test/h2env.py finish` calls it."""
    Slapd(matrix_dir, http_port + 6).stop_stale()
    HttpBackend(matrix_dir, http_port + 5, None).stop_stale()
    Gateways(matrix_dir, http_port + 7, http_port + 8, http_port + 9).stop_stale()
    from phpfpm import PhpFpm
    fpm = PhpFpm(matrix_dir, name="fpm-matrix")
    pid = fpm._stale_pid()
    if pid:
        fpm._stop_pid(pid)
