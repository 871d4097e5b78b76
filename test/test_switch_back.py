"""Switching back to the stock module: which configurations written for
mod_h2 the stock mod_http2 refuses. Every directive in every context its
page lists (docs/directives/, made from the module's directive table),
except .htaccess, is put into a minimal configuration that `apache2 -t`
checks, once with our module and once with Debian's mod_http2. Ours takes
all of them; what stock refuses must be exactly what docs/migration.md
lists under "What stock refuses", so that the list an administrator reads
before switching back is the truth. setup/switch-back (test_install_debian.py)
checks the running configuration itself."""

import os
import re
import subprocess

import pytest

pytestmark = pytest.mark.no_server

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OURS = os.path.join(REPO, "mod_h2", ".libs", "mod_h2.so")
STOCK = "/usr/lib/apache2/modules/mod_http2.so"
MODULES = "/usr/lib/apache2/modules"

# a valid value for each directive
SAMPLES = {
    "H2CopyFiles": "on", "H2Direct": "on", "H2EarlyHint": "Link </a.css>;rel=preload",
    "H2EarlyHints": "on", "H2MaxDataFrameLen": "16384", "H2MaxHeaderBlockLen": "65536",
    "H2MaxSessionStreams": "100", "H2MaxSessionWorkers": "4", "H2MaxStreamErrors": "8",
    "H2MaxWorkerIdleSeconds": "600", "H2MaxWorkers": "16", "H2MinWorkers": "2",
    "H2ModernTLSOnly": "on", "H2OutputBuffering": "on", "H2Padding": "0",
    "H2ProxyRequests": "off", "H2Push": "on", "H2PushDiarySize": "256",
    "H2PushPriority": "* after", "H2PushResource": "/a.css", "H2SerializeHeaders": "off",
    "H2SessionExtraFiles": "5", "H2StreamMaxMemSize": "65536", "H2StreamTimeout": "30",
    "H2TLSCoolDownSecs": "1", "H2TLSWarmUpSize": "1048576", "H2Upgrade": "on",
    "H2WebSockets": "on", "H2WindowSize": "65535",
}
SECTIONS = {
    "server config": ("", ""),
    "virtual host": ("<VirtualHost 127.0.0.1:9>", "</VirtualHost>"),
    "directory": ("<Directory /tmp>", "</Directory>"),
    "location": ("<Location /x>", "</Location>"),
}


def contexts():
    """(directive, context) for every context a directive page lists;
    "directory" stands for <Directory> and <Location> both."""
    out = []
    d = os.path.join(REPO, "docs", "directives")
    for name in sorted(os.listdir(d)):
        if not name.startswith("H2"):
            continue
        text = open(os.path.join(d, name)).read()
        ctx = re.search(r"^\| Context \| (.*) \|$", text, re.M).group(1).split(", ")
        for c in ctx:
            if c == "directory":
                out += [(name[:-3], "directory"), (name[:-3], "location")]
            elif c in SECTIONS:
                out.append((name[:-3], c))
    return out


def documented_refusals():
    text = open(os.path.join(REPO, "docs", "migration.md")).read()
    part = text.split("## What stock refuses", 1)[1].split("\n## ", 1)[0]
    return {(m.group(1), m.group(2)) for m in
            re.finditer(r"^\| `(H2\w+)` \| (server config|virtual host|directory|location) \|",
                        part, re.M)}


def check(tmp_path, module, directive, context):
    begin, end = SECTIONS[context]
    conf = tmp_path / "httpd.conf"
    conf.write_text("""ServerRoot {root}
LoadModule mpm_event_module {mods}/mod_mpm_event.so
LoadModule authz_core_module {mods}/mod_authz_core.so
LoadModule http2_module {module}
Listen 127.0.0.1:9
PidFile {root}/httpd.pid
ErrorLog {root}/error.log
ServerName localhost
{begin}
{directive} {value}
{end}
""".format(root=tmp_path, mods=MODULES, module=module, begin=begin, end=end,
           directive=directive, value=SAMPLES[directive]))
    r = subprocess.run(["/usr/sbin/apache2", "-t", "-f", str(conf)], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=30)
    return r.returncode == 0, r.stdout


def test_every_directive_has_a_sample_value():
    assert {d for d, _ in contexts()} == set(SAMPLES)


@pytest.mark.skipif(not os.path.exists(STOCK), reason="Debian's mod_http2 is not installed")
def test_what_stock_refuses_is_what_migration_md_lists(tmp_path):
    if not os.path.exists(OURS):
        pytest.skip("module not built (make -s -C sandbox build)")
    refused = set()
    for directive, context in contexts():
        ok, out = check(tmp_path, OURS, directive, context)
        assert ok, "ours refuses %s in %s: %s" % (directive, context, out)
        ok, out = check(tmp_path, STOCK, directive, context)
        if not ok:
            refused.add((directive, context))
    assert refused == documented_refusals(), sorted(refused)
