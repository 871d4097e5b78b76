"""mod_h2 installed into Debian's apache2 as README.md ("Install on
Debian") says, with Debian's own tools: a second instance of the system
apache2 by Debian's multi-instance mechanism (/etc/apache2-<name>, see
/usr/share/doc/apache2/README.multiple-instances), its configuration a copy
of /etc/apache2, on loopback ports. `a2enmod http2 proxy_http2 ssl status`
enables ours (proxy_http2 depends on http2), `apache2ctl` starts it, h2
and h2c answer, mod_status's totals count every HTTP/2 request and `%O`
counts each response's bytes. Switching back to the stock module is the
reverse step. The only departure from README: http2.load names the build
tree's module, where `make install` would have put it into
/usr/lib/apache2/modules."""

import os
import re
import shutil
import subprocess
import time

import pytest

pytestmark = pytest.mark.h2

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE = os.path.join(REPO, "mod_h2", ".libs", "mod_h2.so")
SETUP = os.path.join(REPO, "setup")
FILES = {"1k.bin": 1024, "10k.bin": 10240, "100k.bin": 102400}
LOG_FORMAT = "%>s %O %{H2_STREAM_ID}e %H %U"


def run(cmd, inst, check=True):
    # a2enmod and a2dismod keep "enabled/disabled by" markers in a state
    # directory: the copy's go to one of its own, not to the system's
    r = subprocess.run(cmd, env=dict(os.environ, APACHE_CONFDIR=inst["confdir"],
                                     APACHE_STATE_DIRECTORY=inst["statedir"]),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       stdin=subprocess.DEVNULL, timeout=60)
    if check:
        assert r.returncode == 0, "%s: %s" % (cmd, r.stdout)
    return r


def site(inst, sb):
    return """\
<Directory "{docroot}">
    Require all granted
</Directory>
LogFormat "{fmt}" h2test
<VirtualHost 127.0.0.1:{http}>
    ServerName test.localhost
    DocumentRoot "{docroot}"
    Protocols h2c http/1.1
    CustomLog "{log}" h2test
</VirtualHost>
<VirtualHost 127.0.0.1:{https}>
    ServerName test.localhost
    DocumentRoot "{docroot}"
    Protocols h2 http/1.1
    SSLEngine on
    SSLCertificateFile "{cert}"
    SSLCertificateKeyFile "{key}"
    CustomLog "{log}" h2test
</VirtualHost>
""".format(docroot=inst["docroot"], fmt=LOG_FORMAT.replace('"', '\\"'),
           http=inst["http"], https=inst["https"], log=inst["access_log"],
           cert=sb.server_cert, key=sb.server_key)


def use_event_mpm(inst):
    """The copy runs Debian's default MPM, event, whatever the system's
    is: installing mod_php (libapache2-mod-php8.2, for
    test_php_prefork.py) switches a system to prefork and enables php8.2,
    which refuses threaded MPMs, and the stock module this file switches
    back to refuses h2 under prefork (AH10034). README's steps are the
    same under every MPM; test_php_prefork.py covers prefork."""
    enabled = os.listdir(os.path.join(inst["confdir"], "mods-enabled"))
    off = sorted(f[:-5] for f in enabled if f.endswith(".load") and (
        f.startswith("php") or f in ("mpm_prefork.load", "mpm_worker.load")))
    if off:
        run(["a2dismod", "-q", "-f"] + off, inst)
    if "mpm_event.load" not in enabled:
        run(["a2enmod", "-q", "mpm_event"], inst)


def cleanup(inst):
    if os.path.isdir(inst["confdir"]):
        run(["apache2ctl", "stop"], inst, check=False)
        pidfile = os.path.join(inst["rundir"], "apache2.pid")
        deadline = time.monotonic() + 15
        while os.path.exists(pidfile) and time.monotonic() < deadline:
            time.sleep(0.1)
    for d in ("confdir", "logdir", "rundir", "lockdir", "docroot", "statedir"):
        shutil.rmtree(inst[d], ignore_errors=True)


def wait_port(port, timeout=15):
    import socket
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("port %d not answering" % port)


@pytest.fixture(scope="module")
def debian(env):
    if env.module != "ours":
        pytest.skip("installs mod_h2 in the stock module's place")
    if os.geteuid() != 0:
        pytest.skip("needs root: it makes /etc/apache2-<name>")
    if not shutil.which("a2enmod") or not os.path.isdir("/etc/apache2/mods-available"):
        pytest.skip("no Debian apache2 layout on this machine")
    if not os.path.exists(MODULE):
        pytest.skip("module not built (make -s -C sandbox build)")
    name = "h2test%d" % env.port_base
    inst = {"confdir": "/etc/apache2-" + name, "logdir": "/var/log/apache2-" + name,
            "rundir": "/var/run/apache2-" + name, "lockdir": "/var/lock/apache2-" + name,
            "docroot": "/tmp/apache2-%s-htdocs" % name,
            "statedir": "/tmp/apache2-%s-state" % name,
            "http": env.port_base + 70, "https": env.port_base + 71}
    inst["access_log"] = os.path.join(inst["logdir"], "h2test_access.log")
    cleanup(inst)      # what a killed run may have left
    try:
        shutil.copytree("/etc/apache2", inst["confdir"], symlinks=True)
        use_event_mpm(inst)
        os.makedirs(inst["logdir"])
        os.makedirs(inst["docroot"])
        os.chmod(inst["docroot"], 0o755)
        for fname, size in FILES.items():
            with open(os.path.join(inst["docroot"], fname), "wb") as f:
                f.write(b"d" * size)
        mods = os.path.join(inst["confdir"], "mods-available")
        # README: keep Debian's files, put ours in their place
        for f in ("http2.load", "http2.conf"):
            shutil.copy2(os.path.join(mods, f), os.path.join(mods, f + ".stock"))
        shutil.copy(os.path.join(SETUP, "http2.conf"), os.path.join(mods, "http2.conf"))
        with open(os.path.join(SETUP, "http2.load")) as f:
            load = f.read().replace("/usr/lib/apache2/modules/mod_h2.so", MODULE)
        with open(os.path.join(mods, "http2.load"), "w") as f:
            f.write(load)
        with open(os.path.join(inst["confdir"], "ports.conf"), "w") as f:
            f.write("Listen 127.0.0.1:%d\nListen 127.0.0.1:%d\n" % (inst["http"], inst["https"]))
        with open(os.path.join(inst["confdir"], "sites-available", "h2test.conf"), "w") as f:
            f.write(site(inst, env.sandbox))
        run(["a2dissite", "000-default"], inst)
        run(["a2ensite", "h2test"], inst)
        inst["a2enmod"] = run(["a2enmod", "http2", "proxy_http2", "ssl", "status"], inst)
        run(["apache2ctl", "configtest"], inst)
        run(["apache2ctl", "start"], inst)
        wait_port(inst["http"])
        wait_port(inst["https"])
        yield inst
    finally:
        cleanup(inst)


def curl(inst, how, paths):
    """Per path, one curl (curl 7.88 fails a second request on a reused
    h2c prior-knowledge connection, with either module): per response
    (HTTP version, header bytes, body bytes) as curl counts them."""
    return [curl_one(inst, how, p) for p in paths]


def curl_one(inst, how, path):
    if how == "h2c":
        base, opts = "http://test.localhost:%d" % inst["http"], ["--http2-prior-knowledge"]
    else:
        base, opts = "https://test.localhost:%d" % inst["https"], ["--http2", "-k"]
    cmd = ["curl", "-sS", "--max-time", "20",
           "--resolve", "test.localhost:%d:127.0.0.1" % inst["http"],
           "--resolve", "test.localhost:%d:127.0.0.1" % inst["https"],
           "-w", "%{http_version} %{size_header} %{size_download}\\n"] + opts
    cmd += ["-o", "/dev/null", base + path]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=30)
    assert r.returncode == 0, r.stderr
    return tuple(int(x) if x.isdigit() else x for x in r.stdout.split())


def total_accesses(inst):
    r = subprocess.run(["curl", "-sS", "--http1.1", "http://127.0.0.1:%d/server-status?auto"
                        % inst["http"]], stdout=subprocess.PIPE, text=True, timeout=20)
    return int(re.search(r"^Total Accesses: (\d+)$", r.stdout, re.M).group(1))


def test_a2enmod_http2_enables_mod_h2_and_proxy_http2_depends_on_it(debian):
    out = debian["a2enmod"].stdout
    enabled = os.path.join(debian["confdir"], "mods-enabled", "http2.load")
    assert os.path.realpath(enabled) == os.path.join(debian["confdir"], "mods-available",
                                                     "http2.load"), out
    with open(enabled) as f:
        assert "LoadModule http2_module %s" % MODULE in f.read()
    assert os.path.exists(os.path.join(debian["confdir"], "mods-enabled", "proxy_http2.load"))
    mods = run(["apache2ctl", "-M"], debian).stdout
    for m in ("http2_module (shared)", "proxy_http2_module (shared)",
              "ssl_module (shared)", "status_module (shared)"):
        assert m in mods, mods


def test_h2_and_h2c_are_counted_by_server_status_and_logged_with_their_bytes(debian):
    paths = ["/%s?n=%d" % (f, i) for i, f in enumerate(sorted(FILES) * 2)]
    before = total_accesses(debian)
    got = curl(debian, "h2c", paths) + curl(debian, "h2", paths)
    assert [g[0] for g in got] == [2] * (2 * len(paths)), got
    # the first status request, the HTTP/2 ones, then each poll before
    # the last one counts as it ends
    polls, deadline = 0, time.monotonic() + 5
    while True:
        polls += 1
        after = total_accesses(debian)
        if after >= before + 2 * len(paths) + polls or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert after == before + 2 * len(paths) + polls, (before, after, polls)

    lines = [l.split() for l in open(debian["access_log"]).read().splitlines()]
    h2 = [l for l in lines if l[3] == "HTTP/2.0"]
    assert len(h2) == 2 * len(paths), lines
    for status, out, sid, proto, uri in h2:
        size = FILES[uri.lstrip("/")]
        assert status == "200" and int(sid) > 0
        assert size + 50 <= int(out) <= size + 400, (uri, out)
    # per response, what curl counted (its header text and the body)
    # and %O agree to within how each writes the head down
    for (_, hdr, body), (_, out, *_rest) in zip(got, h2):
        assert abs(int(out) - (hdr + body)) <= 120, (hdr, body, out)


def test_switching_back_refuses_a_configuration_the_stock_module_refuses(debian):
    """H2StreamTimeout in a <Location> (mod_h2 takes it, stock refuses it):
    setup/switch-back --check and setup/switch-back both say so, name the
    line, and leave mod_h2 in place and serving."""
    conf = os.path.join(debian["confdir"], "conf-enabled", "zz-h2test-timeout.conf")
    with open(conf, "w") as f:
        f.write("<Location /slow>\n    H2StreamTimeout 30\n</Location>\n")
    try:
        run(["apache2ctl", "graceful"], debian)
        for args in (["--check"], []):
            r = run([os.path.join(SETUP, "switch-back")] + args, debian, check=False)
            assert r.returncode == 1, r.stdout
            assert "H2StreamTimeout not allowed in <Location> context" in r.stdout
            assert "mod_h2 stays" in r.stdout
        mods = os.path.join(debian["confdir"], "mods-available")
        with open(os.path.join(mods, "http2.load")) as f:
            assert MODULE in f.read()
        assert sorted(f for f in os.listdir(mods) if f.startswith("http2.")) == [
            "http2.conf", "http2.conf.stock", "http2.load", "http2.load.stock"]
        run(["apache2ctl", "configtest"], debian)
        assert curl(debian, "h2c", ["/1k.bin"])[0][0] == 2
    finally:
        os.unlink(conf)
        run(["apache2ctl", "graceful"], debian)


def test_switching_back_to_the_stock_module_is_one_command(debian):
    mods = os.path.join(debian["confdir"], "mods-available")
    r = run([os.path.join(SETUP, "switch-back"), "--check"], debian)
    assert "the stock mod_http2 takes this configuration" in r.stdout
    run([os.path.join(SETUP, "switch-back")], debian)
    with open(os.path.join(debian["confdir"], "mods-enabled", "http2.load")) as f:
        assert "/usr/lib/apache2/modules/mod_http2.so" in f.read()
    assert os.path.exists(os.path.join(mods, "http2.load.h2"))
    time.sleep(1)
    got = curl(debian, "h2c", ["/1k.bin"])
    assert got[0][0] == 2
    assert "http2_module (shared)" in run(["apache2ctl", "-M"], debian).stdout
    errors = [l for l in open(os.path.join(debian["logdir"], "error.log"))
              if re.search(r":(error|crit|alert|emerg)\]", l)]
    assert not errors, errors
