"""The directive pages in docs/directives/ are generated from the table
the module is built from (scripts/gen_directive_docs.py), so they cannot
drift from the code: they are up to date, every directive has one, and
each names the contexts the Apache manual gives for the directive."""

import os
import re
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.no_server

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(REPO, "scripts", "gen_directive_docs.py")
MANUAL = "/usr/share/doc/apache2-doc/manual/en/mod/mod_http2.html"

sys.path.insert(0, os.path.join(REPO, "scripts"))
import gen_directive_docs  # noqa: E402


def gen(*args, root=REPO):
    return subprocess.run([sys.executable, GEN, "--root", root] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_directive_pages_are_what_the_generator_writes():
    r = gen("--check")
    assert r.returncode == 0, r.stdout


def test_every_directive_of_the_module_has_a_page_with_its_facts():
    entries = gen_directive_docs.c_entries(REPO)
    assert len(entries) == 29, sorted(entries)
    for name, e in entries.items():
        page = open(os.path.join(REPO, "docs", "directives", name + ".md")).read()
        assert page.startswith("# %s\n" % name)
        assert "| Description | %s |" % e["help"] in page


def test_a_directive_added_to_the_table_without_prose_fails_the_check(tmp_path):
    for d in ("mod_h2", "docs", "scripts"):
        shutil.copytree(os.path.join(REPO, d), str(tmp_path / d),
                        ignore=shutil.ignore_patterns("*.o", "*.lo", ".libs"))
    hdr = tmp_path / "mod_h2" / "h2_config.h"
    text = hdr.read_text().replace(
        '    X(DIRECT, "H2Direct",',
        '    X(NEWONE, "H2NewOne", FLAG, 0, 0, 1, SRV, "a new one") \\\n'
        '    X(DIRECT, "H2Direct",', 1)
    hdr.write_text(text)
    r = gen("--check", root=str(tmp_path))
    assert r.returncode != 0
    assert "directives without prose: H2NewOne" in r.stdout


# directives stock mod_http2 does not have
OURS_ONLY = {"H2MaxSessionWorkers"}


def manual_contexts():
    text = open(MANUAL).read()
    out = {}
    for part in text.split('<div class="directive-section">')[1:]:
        name = re.search(r'<span id="(\w+)"', part).group(1)
        ctx = re.search(r'Context:</a></th><td>(.*?)</td>', part).group(1)
        out[name] = re.sub(r"<.*?>", "", ctx).strip()
    return out


def test_each_page_names_the_contexts_the_apache_manual_gives():
    assert os.path.exists(MANUAL), "apache2-doc (sandbox/deps.sh installs it) is missing"
    manual = manual_contexts()
    entries = gen_directive_docs.c_entries(REPO)
    # the manual no longer lists the obsolete H2SessionExtraFiles, and
    # never listed ours
    assert set(manual) == set(entries) - {"H2SessionExtraFiles"} - OURS_ONLY
    for name, ctx in manual.items():
        assert gen_directive_docs.CONTEXTS[entries[name]["ctx"]] == ctx, name


def test_every_case_of_the_module_matrix_is_in_docs_modules_md():
    sys.path.insert(0, os.path.join(REPO, "test"))
    from modmatrix_cases import all_cases
    from modmatrix_more import NOT_COVERED
    page = open(os.path.join(REPO, "docs", "modules.md")).read()
    for case in all_cases():
        assert "| `%s` | %s |" % (case.name, case.module) in page, case.name
    for mod in NOT_COVERED:
        assert "| %s |" % mod in page, mod


def test_every_module_debian_ships_has_a_matrix_case_or_a_reason():
    """Each /etc/apache2/mods-available/*.load is loaded by a case of
    test/test_module_matrix.py, built into httpd or the sandbox's
    configuration, or listed with the reason it has none."""
    avail = "/etc/apache2/mods-available"
    if not os.path.isdir(avail):
        pytest.skip("no %s (Debian's apache2)" % avail)
    sys.path.insert(0, os.path.join(REPO, "test"))
    from modmatrix_cases import all_cases
    from modmatrix_more import NOT_COVERED
    covered = set()
    for case in all_cases():
        covered.update(case.modules)
        covered.update(m.strip().split(" ")[0].replace("mod_", "")
                       for m in case.module.split(","))
    for text in NOT_COVERED:
        covered.update(m.strip().replace("mod_", "") for m in text.split(","))
    # loaded by every sandbox (sandbox.py), exercised by the core cases
    covered.update(("authz_core", "authz_user", "authn_file", "mime", "dir", "alias",
                    "env", "setenvif", "headers", "socache_shmcb", "ssl", "rewrite",
                    "filter", "deflate", "include", "status", "cgi", "cgid"))
    names = sorted(fn[:-5] for fn in os.listdir(avail) if fn.endswith(".load"))
    assert [n for n in names if n not in covered] == []
