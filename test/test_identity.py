"""mod_h2 answers to mod_http2's names, so a configuration written for the
stock module works unchanged: `LogLevel http2:...`, `<IfModule
http2_module>` and `<IfModule mod_http2.c>` (the module is `http2_module`,
defined in `mod_http2.c`; the file stays mod_h2.so), and httpd refuses to
load two HTTP/2 modules at once. The same checks pass with the stock
module (H2_TEST_MODULE=stock)."""

import os
import subprocess

import pytest

from h2client import H2Client, with_conf
from sandbox import HTTPD_BIN, SYS_MODULE_DIR

pytestmark = pytest.mark.h2

IDENTITY_CONF = """\
LogLevel warn http2:info
<IfModule http2_module>
    Header always set X-IfModule-Name "http2_module"
</IfModule>
<IfModule mod_http2.c>
    Header always set X-IfModule-File "mod_http2.c"
</IfModule>
<IfModule !http2_module>
    Header always set X-IfModule-Missing "yes"
</IfModule>
"""


@pytest.fixture
def identity_conf(env):
    yield from with_conf(env, "identity", IDENTITY_CONF)


@pytest.mark.parametrize("how", ["h2c", "h2"])
def test_ifmodule_blocks_in_both_forms_and_loglevel_http2_apply(env, identity_conf, how):
    with H2Client.connect(env, how) as c:
        r = c.get("/1k.txt")
    assert r.status == 200, r
    assert r.headers.get("x-ifmodule-name") == "http2_module"
    assert r.headers.get("x-ifmodule-file") == "mod_http2.c"
    assert "x-ifmodule-missing" not in r.headers


def test_configuration_with_mod_http2_names_passes_the_config_test(env, identity_conf):
    """`apache2 -t` accepts LogLevel http2:info (httpd refuses a LogLevel
    for a module it does not know: "Cannot find module")."""
    rc, out = env.sandbox.configtest()     # with the sanitizer runtime, if any
    assert rc == 0, out
    assert "Syntax OK" in out
    assert "Cannot find module" not in out


def test_httpd_refuses_to_load_a_second_http2_module(env, tmp_path):
    if env.module != "ours":
        pytest.skip("needs both modules: runs with ours")
    mpm = os.path.join(SYS_MODULE_DIR, "mod_mpm_event.so")
    conf = tmp_path / "two.conf"
    conf.write_text("\n".join([
        "ServerRoot %s" % tmp_path,
        "LoadModule mpm_event_module %s" % mpm,
        "LoadModule http2_module %s" % env.sandbox.module_path,
        "LoadModule http2_module %s/mod_http2.so" % SYS_MODULE_DIR,
        "ServerName localhost",
        "Listen 127.0.0.1:%d" % (env.http_port + 7),
        "PidFile %s/httpd.pid" % tmp_path,
        "ErrorLog %s/error_log" % tmp_path,
        ""]))
    r = subprocess.run([HTTPD_BIN, "-t", "-f", str(conf)], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, env=env.sandbox.httpd_env())
    assert "http2_module is already loaded" in r.stdout, r.stdout
