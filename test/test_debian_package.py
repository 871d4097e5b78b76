"""The Debian package (debian/; README.md, "Install on Debian"): built with
`dpkg-buildpackage -us -uc -b` from a clean clone of this repository,
checked with lintian, and installed, upgraded over itself, refused removal,
removed and purged with apt on this machine's apache2, as an administrator
would.

Installed, the package puts mod_h2 in the stock module's place in
/etc/apache2 (Debian's http2.load and http2.conf diverted to *.stock, links
to its conffiles in /etc/libapache2-mod-h2 in their place) and leaves
enabling to the administrator: http2 and proxy_http2 stay enabled, or off,
as they were. A second instance of the system apache2 (/etc/apache2-<name>,
as test_install_debian.py makes it) serves with whatever module the package
has put in place: the package changes /etc/apache2 only, so the instance's
http2.load and http2.conf are links to /etc/apache2's. Removal brings the
stock module back, unless the configuration uses something stock refuses:
then it stops and says so. Purged, the package leaves /etc/apache2 and
Debian's module state (/var/lib/apache2) exactly as they were before.

The machine is put back as it was whatever happens: its /etc/apache2 and
/var/lib/apache2 are copied to /var/tmp/h2pkgtest-<port base>/ first and
restored from there (also by the next run, if this one was killed), and a
policy-rc.d keeps the package scripts from starting the system apache2."""

import os
import hashlib
import re
import shutil
import stat
import subprocess
import time
import types

import pytest

from test_install_debian import (FILES, cleanup, curl_one, run, site, total_accesses,
                                 use_event_mpm, wait_port)

pytestmark = [pytest.mark.no_server,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root: installs a package")]

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = "libapache2-mod-h2"
MODS = "/etc/apache2/mods-available"
ENABLED = "/etc/apache2/mods-enabled"
OURS = "/etc/libapache2-mod-h2"
MODULE = "/usr/lib/apache2/modules/mod_h2.so"
STOCK_MODULE = "/usr/lib/apache2/modules/mod_http2.so"
PORT_BASE = int(os.environ.get("H2_TEST_PORT_BASE") or 22100)   # make exports it empty
SNAPSHOT = "/var/tmp/h2pkgtest-%d" % PORT_BASE
POLICY = "/usr/sbin/policy-rc.d"
# a setting mod_h2 takes and the stock module refuses (migration.md)
REFUSED_CONF = "/etc/apache2/conf-enabled/zz-h2pkgtest-%d-timeout.conf" % PORT_BASE
REFUSED = "<Location /slow>\n    H2StreamTimeout 30\n</Location>\n"


# ---------------------------------------------------------------- helpers

def sh(cmd, check=True, timeout=120, **kw):
    env = {k: v for k, v in os.environ.items() if k not in ("APACHE_CONFDIR",
                                                           "APACHE_STATE_DIRECTORY")}
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=timeout,
                       env=dict(env, **kw.pop("env", {})), **kw)
    if check:
        assert r.returncode == 0, "%s: %s%s" % (cmd, r.stdout[-3000:], r.stderr[-3000:])
    return r


def apt(*args, check=True):
    """apt-get as an administrator runs it, without a terminal; what it
    said is in the test's captured output (pytest -rP shows it)."""
    r = sh(["apt-get", "-y", "-q", "-o", "DPkg::Lock::Timeout=120",
            "-o", "Dpkg::Use-Pty=0"] + list(args), check=check, timeout=300,
           env={"DEBIAN_FRONTEND": "noninteractive"})
    print("# apt-get -y %s  (exit %d)\n%s%s" % (" ".join(args), r.returncode, r.stdout,
                                               "".join("stderr: " + l + "\n"
                                                       for l in r.stderr.splitlines())))
    return r


def status():
    """dpkg's status of the package: 'ii ' installed, 'rc ' config files
    left, '' not known."""
    r = sh(["dpkg-query", "-W", "-f=${db:Status-Abbrev}", PKG], check=False)
    return r.stdout if r.returncode == 0 else ""


def our_diversions():
    out = sh(["dpkg-divert", "--list"]).stdout
    return sorted(l for l in out.splitlines() if l.endswith(" by " + PKG))


def entries(top):
    """Every path under top: (kind, mode, link target or content hash)."""
    out = {}
    for root, dirs, files in os.walk(top):
        for name in dirs + files:
            p = os.path.join(root, name)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[os.path.relpath(p, top)] = ("link", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[os.path.relpath(p, top)] = ("dir", stat.S_IMODE(st.st_mode))
            else:
                with open(p, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
                out[os.path.relpath(p, top)] = ("file", stat.S_IMODE(st.st_mode), digest)
    return out


def differences(before, after):
    return sorted("%s: %s -> %s" % (k, before.get(k), after.get(k))
                  for k in set(before) | set(after) if before.get(k) != after.get(k))


def restore_tree(src, dst):
    """Makes dst what src is, touching only what differs."""
    want, have = entries(src), entries(dst)
    for rel in sorted(set(have) - set(want), reverse=True):
        p = os.path.join(dst, rel)
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p, ignore_errors=True)
        elif os.path.lexists(p):
            os.unlink(p)
    for rel in sorted(want):
        if have.get(rel) == want[rel]:
            continue
        s, d = os.path.join(src, rel), os.path.join(dst, rel)
        if os.path.lexists(d) and not (want[rel][0] == "dir" and os.path.isdir(d)
                                       and not os.path.islink(d)):
            if os.path.isdir(d) and not os.path.islink(d):
                shutil.rmtree(d)
            else:
                os.unlink(d)
        if want[rel][0] == "dir":
            os.makedirs(d, exist_ok=True)
            os.chmod(d, want[rel][1])
        elif want[rel][0] == "link":
            os.symlink(os.readlink(s), d)
        else:
            shutil.copy2(s, d)


def conffile_md5(package, path):
    out = sh(["dpkg-query", "-W", "-f=${Conffiles}\n", package]).stdout
    return {l.split()[0]: l.split()[1] for l in out.splitlines() if l.strip()}[path]


def md5(path):
    with open(path, "rb") as f:
        return hashlib.md5(f.read()).hexdigest()


def read(path):
    with open(path) as f:
        return f.read()


def system_modules():
    """The modules the system's configuration loads (apache2ctl -M, which
    only reads it)."""
    return sh(["apache2ctl", "-M"]).stdout


# ---------------------------------------------------------------- the build

def changelog_entry(version):
    return ("%s (%s) unstable; urgency=medium\n\n"
            "  * The same tree with a higher version, to test an upgrade.\n\n"
            " -- mod_h2 tests <root@localhost>  %s\n\n"
            % (PKG, version, time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime())))


def build(src, log):
    with open(log, "w") as f:
        r = subprocess.run(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=src,
                           stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
                           timeout=900)
    assert r.returncode == 0, "dpkg-buildpackage failed:\n" + read(log)[-5000:]


@pytest.fixture(scope="module")
def debs(tmp_path_factory):
    """Two builds of the repository's HEAD in a clean clone: as it is, and
    with a changelog entry one version up (the upgrade)."""
    top = tmp_path_factory.mktemp("deb")
    src = str(top / "src")
    sh(["git", "clone", "-q", REPO, src])
    version = sh(["dpkg-parsechangelog", "-S", "Version"], cwd=src).stdout.strip()
    build(src, str(top / "build1.log"))
    newer = version + "+pkgtest1"
    changelog = os.path.join(src, "debian", "changelog")
    text = read(changelog)
    with open(changelog, "w") as f:
        f.write(changelog_entry(newer) + text)
    build(src, str(top / "build2.log"))
    arch = sh(["dpkg", "--print-architecture"]).stdout.strip()
    d = {"version": version, "newer": newer, "dir": str(top)}
    for key, v in (("deb", version), ("deb2", newer)):
        d[key] = str(top / ("%s_%s_%s.deb" % (PKG, v, arch)))
        d[key.replace("deb", "changes")] = d[key][:-4] + ".changes"
        assert os.path.exists(d[key]), os.listdir(str(top))
    return d


# ---------------------------------------------------------------- the machine

def restore_machine():
    """Back to what SNAPSHOT holds: the package purged, no diversion of
    ours, /etc/apache2 and /var/lib/apache2 as they were, the machine's
    policy-rc.d. Returns what had to be put right."""
    fixed = []
    if os.path.exists(REFUSED_CONF):
        os.unlink(REFUSED_CONF)
    if status():
        r = apt("purge", PKG, check=False)
        if status():
            fixed.append("apt-get purge failed: %s%s" % (r.stdout[-2000:], r.stderr[-2000:]))
            sh(["dpkg", "--purge", "--force-remove-reinstreq", PKG], check=False)
    for line in our_diversions():
        fixed.append("diversion left: " + line)
        path = re.match(r"diversion of (\S+) to ", line).group(1)
        sh(["dpkg-divert", "--package", PKG, "--remove", "--no-rename", path], check=False)
    for saved, live in (("etc-apache2", "/etc/apache2"), ("var-lib-apache2", "/var/lib/apache2")):
        src = os.path.join(SNAPSHOT, saved)
        if os.path.isdir(src):
            restore_tree(src, live)
            diff = differences(entries(src), entries(live))
            assert not diff, "could not restore %s: %s" % (live, diff)
    if os.path.exists(os.path.join(SNAPSHOT, "policy-rc.d.ours")):
        os.unlink(POLICY)
        machine_policy = os.path.join(SNAPSHOT, "policy-rc.d.machine")
        if os.path.exists(machine_policy):
            shutil.move(machine_policy, POLICY)
    shutil.rmtree(SNAPSHOT)
    return fixed


def deny_service_starts():
    """invoke-rc.d asks policy-rc.d: 101 = not allowed, so no package
    script starts or reloads the system apache2 (on port 80 of all
    interfaces)."""
    if os.path.exists(POLICY) and sh([POLICY, "apache2", "start"], check=False).returncode == 101:
        return
    if os.path.exists(POLICY):
        shutil.move(POLICY, os.path.join(SNAPSHOT, "policy-rc.d.machine"))
    with open(POLICY, "w") as f:
        f.write("#!/bin/sh\n# test/test_debian_package.py: no service starts\nexit 101\n")
    os.chmod(POLICY, 0o755)
    open(os.path.join(SNAPSHOT, "policy-rc.d.ours"), "w").close()


@pytest.fixture(scope="module")
def machine(debs):
    if os.path.isdir(SNAPSHOT):
        restore_machine()          # what a killed run left
    if status():
        pytest.fail("%s is installed on this machine (%s), not by this test: it would "
                    "purge it" % (PKG, status().strip()))
    assert not our_diversions()
    os.makedirs(SNAPSHOT)
    shutil.copytree("/etc/apache2", os.path.join(SNAPSHOT, "etc-apache2"), symlinks=True)
    shutil.copytree("/var/lib/apache2", os.path.join(SNAPSHOT, "var-lib-apache2"), symlinks=True)
    deny_service_starts()
    state = {"original": {f: read(os.path.join(MODS, f)) for f in ("http2.load", "http2.conf")}}
    conf = os.path.join(MODS, "http2.conf")
    state["pristine"] = md5(conf) == conffile_md5("apache2", conf)
    try:
        yield state
    finally:
        fixed = restore_machine()
    assert not fixed, fixed


def as_admin(*cmd):
    """a2enmod/a2dismod on the system, as its administrator would."""
    return sh(list(cmd))


def before_install(state):
    state["etc"] = entries("/etc/apache2")
    state["var"] = entries("/var/lib/apache2")


# ---------------------------------------------------------------- the instance

@pytest.fixture(scope="module")
def instance(machine):
    """A second instance of the system apache2, copied from /etc/apache2
    with the package installed; its http2.load and http2.conf are links to
    /etc/apache2's, so it loads what the package has put in place."""
    assert status() == "ii ", "the package is installed by the test before"
    name = "h2pkg%d" % PORT_BASE
    inst = {"confdir": "/etc/apache2-" + name, "logdir": "/var/log/apache2-" + name,
            "rundir": "/var/run/apache2-" + name, "lockdir": "/var/lock/apache2-" + name,
            "docroot": "/tmp/apache2-%s-htdocs" % name,
            "statedir": "/tmp/apache2-%s-state" % name,
            "http": PORT_BASE + 72, "https": PORT_BASE + 73}
    inst["access_log"] = os.path.join(inst["logdir"], "h2test_access.log")
    inst["error_log"] = os.path.join(inst["logdir"], "error.log")
    cleanup(inst)
    try:
        shutil.copytree("/etc/apache2", inst["confdir"], symlinks=True)
        for f in ("http2.load", "http2.conf"):
            p = os.path.join(inst["confdir"], "mods-available", f)
            os.unlink(p)
            os.symlink(os.path.join(MODS, f), p)
        use_event_mpm(inst)
        for d in ("logdir", "docroot", "statedir"):
            os.makedirs(inst[d], exist_ok=True)
        os.chmod(inst["docroot"], 0o755)
        for fname, size in FILES.items():
            with open(os.path.join(inst["docroot"], fname), "wb") as f:
                f.write(b"d" * size)
        tls = types.SimpleNamespace(server_cert=os.path.join(inst["statedir"], "cert.pem"),
                                    server_key=os.path.join(inst["statedir"], "key.pem"))
        sh(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-subj", "/CN=test.localhost", "-keyout", tls.server_key, "-out", tls.server_cert])
        with open(os.path.join(inst["confdir"], "ports.conf"), "w") as f:
            f.write("Listen 127.0.0.1:%d\nListen 127.0.0.1:%d\n" % (inst["http"], inst["https"]))
        with open(os.path.join(inst["confdir"], "sites-available", "h2test.conf"), "w") as f:
            f.write("LogLevel warn http2:info\n" + site(inst, tls))
        run(["a2dissite", "000-default"], inst)
        run(["a2ensite", "h2test"], inst)
        run(["a2enmod", "ssl", "status"], inst)
        run(["apache2ctl", "start"], inst)
        wait_port(inst["http"])
        wait_port(inst["https"])
        yield inst
    finally:
        cleanup(inst)


def loaded_http2_modules(inst, want, timeout=15):
    """The HTTP/2 module files the instance's parent process has mapped,
    once they are `want` (a graceful restart reloads them)."""
    pid = int(read(os.path.join(inst["rundir"], "apache2.pid")))
    deadline = time.monotonic() + timeout
    while True:
        got = sorted({l.split(None, 5)[5].strip() for l in open("/proc/%d/maps" % pid)
                      if "/usr/lib/apache2/modules/mod_h" in l})
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.2)


def graceful(inst):
    run(["apache2ctl", "graceful"], inst)


# ---------------------------------------------------------------- the package

def test_the_package_builds_from_a_clean_clone_with_debians_dependencies(debs):
    f = {k: sh(["dpkg-deb", "-f", debs["deb"], k]).stdout.strip()
         for k in ("Package", "Version", "Depends")}
    assert f["Package"] == PKG and f["Version"] == debs["version"]
    deps = [d.strip() for d in f["Depends"].split(",")]
    assert "apache2" in deps, deps                      # a2enmod, the files it diverts
    assert "apache2-api-20120211" in deps, deps         # from dh_apache2
    assert any(re.match(r"libnghttp2-14 \(>= 1\.5[2-9]", d) for d in deps), deps
    files = sh(["dpkg-deb", "-c", debs["deb"]]).stdout
    paths = [l.split()[-1] for l in files.splitlines()]
    for p in ("./usr/lib/apache2/modules/mod_h2.so", "./etc/libapache2-mod-h2/http2.load",
              "./etc/libapache2-mod-h2/http2.conf"):
        assert p in paths, files
    # nothing at apache2's paths: the maintainer scripts put links there
    assert not [p for p in paths if p.startswith("./etc/apache2")], files
    sh(["dpkg-deb", "-e", debs["deb"], os.path.join(debs["dir"], "control")])
    assert read(os.path.join(debs["dir"], "control", "conffiles")).split() == [
        "/etc/libapache2-mod-h2/http2.conf", "/etc/libapache2-mod-h2/http2.load"]
    assert sh(["dpkg", "--compare-versions", debs["newer"], "gt", debs["version"]],
              check=False).returncode == 0


def test_lintian_has_nothing_to_say_but_the_explained_overrides(debs):
    """Each override in debian/libapache2-mod-h2.lintian-overrides says why."""
    if not shutil.which("lintian"):
        pytest.fail("lintian is not installed (make -C sandbox deps installs it)")
    r = sh(["lintian", "--fail-on", "error,warning", "-I", debs["changes"]], check=False,
           timeout=300)
    tags = [l for l in r.stdout.splitlines() if re.match(r"^[EWIPX]: ", l)]
    assert r.returncode == 0 and not tags, r.stdout + r.stderr


# ---------------------------------------------------------------- install

def test_install_puts_mod_h2_in_place_and_http2_stays_enabled(machine, debs):
    """The administrator had enabled proxy_http2 (and so http2, its
    dependency); after the install both are still enabled and http2 loads
    mod_h2. Debian's two files are kept as diversions, unchanged."""
    as_admin("a2enmod", "-q", "proxy_http2")
    before_install(machine)
    r = apt("install", debs["deb"])
    assert "http2 is enabled and now loads mod_h2" in r.stdout + r.stderr, r.stdout + r.stderr
    assert status() == "ii "
    assert our_diversions() == sorted(
        "diversion of %s/%s to %s/%s.stock by %s" % (MODS, f, MODS, f, PKG)
        for f in ("http2.conf", "http2.load"))
    for f in ("http2.load", "http2.conf"):
        assert os.readlink(os.path.join(MODS, f)) == os.path.join(OURS, f)
        assert read(os.path.join(MODS, f + ".stock")) == machine["original"][f]
        # where dpkg puts apache2's file from now on: its upgrades go there
        assert sh(["dpkg-divert", "--truename", os.path.join(MODS, f)]).stdout.strip() == \
            os.path.join(MODS, f + ".stock")
    # Debian's http2.conf as shipped gives way to mod_h2's (one with local
    # changes stays in use: the last test)
    ours = read(os.path.join(REPO, "setup", "http2.conf"))
    assert read(os.path.join(OURS, "http2.conf")) == (
        ours if machine["pristine"] else machine["original"]["http2.conf"])
    assert os.path.realpath(os.path.join(ENABLED, "http2.load")) == os.path.join(
        OURS, "http2.load")
    assert os.path.exists(os.path.join(ENABLED, "proxy_http2.load"))
    assert "LoadModule http2_module %s" % MODULE in read(os.path.join(ENABLED, "http2.load"))
    mods = system_modules()
    assert "http2_module (shared)" in mods and "proxy_http2_module (shared)" in mods, mods
    # the package enabled nor disabled anything: Debian's module state is as it was
    assert differences(machine["var"], entries("/var/lib/apache2")) == []


def test_setup_switch_back_leaves_the_switch_to_apt(machine):
    r = sh([os.path.join(REPO, "setup", "switch-back"), "--check"], check=False)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "switch back with 'apt-get remove libapache2-mod-h2'" in r.stderr
    assert len(our_diversions()) == 2


def test_an_instance_serves_h2_and_h2c_with_the_installed_mod_h2(instance):
    paths = ["/%s?n=%d" % (f, i) for i, f in enumerate(sorted(FILES))]
    before = total_accesses(instance)
    got = [curl_one(instance, how, p) for how in ("h2c", "h2") for p in paths]
    assert [g[0] for g in got] == [2] * len(got), got
    assert total_accesses(instance) >= before + len(got)
    h2 = [l.split() for l in read(instance["access_log"]).splitlines() if " HTTP/2.0 " in l]
    assert len(h2) == len(got), h2
    for status_, out, sid, proto, uri in h2:
        assert status_ == "200" and int(sid) > 0
        assert int(out) >= FILES[uri.lstrip("/")] + 50, (uri, out)
    assert re.search(r"AH21060: mod_h2 \S+ \(nghttp2 ", read(instance["error_log"]))
    assert loaded_http2_modules(instance, [MODULE]) == [MODULE]


# ---------------------------------------------------------------- upgrade

def test_an_upgrade_keeps_the_switch_and_the_administrators_changes(machine, debs, instance):
    """apt-get install of a higher version: no question asked, the
    diversions and links stay, a change to the package's http2.conf stays,
    and a graceful restart of the instance loads the new mod_h2.so."""
    conf = os.path.join(OURS, "http2.conf")
    with open(conf, "a") as f:
        f.write("# the administrator's line\n")
    diversions = our_diversions()
    r = apt("install", debs["deb2"])
    assert sh(["dpkg-query", "-W", "-f=${Version}", PKG]).stdout == debs["newer"]
    assert our_diversions() == diversions
    assert os.readlink(os.path.join(MODS, "http2.load")) == os.path.join(OURS, "http2.load")
    assert read(conf).endswith("# the administrator's line\n")
    assert not [f for f in os.listdir(OURS) if ".dpkg-" in f], os.listdir(OURS)
    assert "http2_module (shared)" in system_modules()
    # the instance still runs the file the upgrade replaced, until it reloads
    assert loaded_http2_modules(instance, [MODULE + " (deleted)"]) == [MODULE + " (deleted)"]
    graceful(instance)
    assert loaded_http2_modules(instance, [MODULE]) == [MODULE]
    assert curl_one(instance, "h2c", "/1k.bin")[0] == 2
    assert len(re.findall(r"AH21060: mod_h2 ", read(instance["error_log"]))) >= 2, r.stdout


# ---------------------------------------------------------------- removal

def test_removal_stops_while_the_stock_module_refuses_the_configuration(machine, instance):
    """H2StreamTimeout in a <Location>: mod_h2 takes it, stock refuses it.
    apt-get remove fails, the refused line is on stderr, and mod_h2 stays
    installed and in place (until the line is changed)."""
    with open(REFUSED_CONF, "w") as f:
        f.write(REFUSED)
    try:
        sh(["apache2ctl", "configtest"])
        r = apt("remove", PKG, check=False)
        assert r.returncode != 0, r.stdout
        assert "the stock mod_http2 refuses this configuration; mod_h2 stays" in r.stderr, r.stderr
        assert "H2StreamTimeout not allowed in <Location> context" in r.stderr, r.stderr
        assert REFUSED_CONF in r.stderr, r.stderr        # the file, not the check's copy
        assert status() == "ii "
        assert len(our_diversions()) == 2
        assert os.readlink(os.path.join(MODS, "http2.load")) == os.path.join(OURS, "http2.load")
        assert os.path.exists(MODULE)
        assert curl_one(instance, "h2c", "/1k.bin")[0] == 2
    finally:
        os.unlink(REFUSED_CONF)


def test_remove_brings_the_stock_module_back_and_http2_stays_enabled(machine, instance):
    r = apt("remove", PKG)
    assert "the stock mod_http2 is back; http2 stays enabled" in r.stdout + r.stderr, r.stderr
    assert status() == "rc "                   # the conffiles stay until purge
    assert our_diversions() == []
    for f in ("http2.load", "http2.conf"):
        p = os.path.join(MODS, f)
        assert not os.path.islink(p) and read(p) == machine["original"][f]
        assert not os.path.exists(p + ".stock")
        assert os.path.exists(os.path.join(OURS, f))
    assert not os.path.exists(MODULE)
    assert os.path.exists(os.path.join(ENABLED, "http2.load"))
    assert os.path.exists(os.path.join(ENABLED, "proxy_http2.load"))
    mods = system_modules()
    assert "http2_module (shared)" in mods and "proxy_http2_module (shared)" in mods, mods
    graceful(instance)
    assert loaded_http2_modules(instance, [STOCK_MODULE]) == [STOCK_MODULE]
    assert curl_one(instance, "h2c", "/1k.bin")[0] == 2
    assert curl_one(instance, "h2", "/1k.bin")[0] == 2


def test_purge_leaves_etc_apache2_as_it_was_before_the_install(machine):
    apt("purge", PKG)
    assert status() == ""
    assert not os.path.exists(OURS)
    assert our_diversions() == []
    assert differences(machine["etc"], entries("/etc/apache2")) == []
    assert differences(machine["var"], entries("/var/lib/apache2")) == []


# ---------------------------------------------------------------- with http2 off

def test_with_http2_off_it_stays_off_and_local_changes_to_http2_conf_stay_in_use(machine,
                                                                                debs):
    """An administrator who turned h2c off in Debian's http2.conf and has
    http2 disabled: the install keeps both (mod_h2's http2.conf is a copy
    of theirs), and the purge gives Debian's file back with the change."""
    as_admin("a2dismod", "-q", "-f", "proxy_http2", "http2")
    stock_conf = os.path.join(MODS, "http2.conf")
    with open(stock_conf) as f:
        text = f.read()
    changed = re.sub(r"(?m)^Protocols h2 h2c http/1.1$", "Protocols h2 http/1.1", text)
    assert changed != text, text
    with open(stock_conf, "w") as f:
        f.write(changed)
    before_install(machine)
    r = apt("install", debs["deb2"])
    out = r.stdout + r.stderr
    assert "http2 is not enabled (a2enmod http2 enables it)" in out, out
    assert "%s has local changes: they stay in use" % stock_conf in out, out
    assert read(os.path.join(OURS, "http2.conf")) == changed
    assert read(stock_conf) == changed           # through the link
    assert read(stock_conf + ".stock") == changed
    assert not os.path.lexists(os.path.join(ENABLED, "http2.load"))
    assert "http2_module" not in system_modules()
    assert differences(machine["var"], entries("/var/lib/apache2")) == []
    apt("purge", PKG)
    assert read(stock_conf) == changed and not os.path.islink(stock_conf)
    assert differences(machine["etc"], entries("/etc/apache2")) == []


def test_install_takes_over_from_readmes_steps_by_hand(machine, debs):
    """README's steps without the package (Debian's files copied to *.stock,
    setup's copied into their place, here with a line of the
    administrator's in http2.conf), then the package: the *.stock files
    become its diversions as they are, the copies give way to its links,
    the changed http2.conf stays in use. The purge leaves /etc/apache2 as
    it was before the steps by hand."""
    before = entries("/etc/apache2")
    stock = {f: read(os.path.join(MODS, f)) for f in ("http2.load", "http2.conf")}
    for f in ("http2.load", "http2.conf"):
        shutil.copy2(os.path.join(MODS, f), os.path.join(MODS, f + ".stock"))
        shutil.copy(os.path.join(REPO, "setup", f), os.path.join(MODS, f))
    with open(os.path.join(MODS, "http2.conf"), "a") as f:
        f.write("# the administrator's line\n")
    by_hand = read(os.path.join(MODS, "http2.conf"))
    r = apt("install", debs["deb"])
    assert "mod_h2 was switched in by hand" in r.stdout + r.stderr, r.stdout + r.stderr
    assert len(our_diversions()) == 2
    for f in ("http2.load", "http2.conf"):
        assert os.readlink(os.path.join(MODS, f)) == os.path.join(OURS, f)
        assert read(os.path.join(MODS, f + ".stock")) == stock[f]
    assert read(os.path.join(OURS, "http2.conf")) == by_hand
    apt("purge", PKG)
    assert our_diversions() == []
    assert differences(before, entries("/etc/apache2")) == []
