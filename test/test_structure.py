"""The code's structure, as docs/design.md states it: no source file over
1,000 lines and no function over 90 (scripts/code_sizes.py), and the
thread-naming rule of the boundary between connection threads and workers
(scripts/check_threads.py). These read the sources; they need no server."""

import os
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.no_server

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(script, *args):
    return subprocess.run([sys.executable, os.path.join(TOP, "scripts", script)] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_no_file_over_1000_lines_and_no_function_over_90():
    r = run("code_sizes.py", "--max-file", "1000", "--max-func", "90")
    assert r.returncode == 0, r.stdout
    assert "largest functions" in r.stdout


def test_worker_code_sees_no_session_and_c1_code_no_worker_side():
    r = run("check_threads.py")
    assert r.returncode == 0, r.stdout
    assert r.stdout.strip().endswith("thread naming: 0 violation(s)")


def test_thread_check_finds_a_worker_calling_connection_code(tmp_path):
    src = tmp_path / "mod_h2"
    shutil.copytree(os.path.join(TOP, "mod_h2"), src,
                    ignore=shutil.ignore_patterns("*.o", "*.lo", ".libs", ".deps"))
    c2 = src / "h2_c2.c"
    c2.write_text(c2.read_text() + "\nstatic void bad(h2_x *x) { h2_x_c1_abort(x); }\n"
                  + '#include "h2_stream.h"\n')
    r = run("check_threads.py", "--src", str(src))
    assert r.returncode == 1
    assert "h2_c2.c (worker) calls h2_x_c1_abort()" in r.stdout
    assert "h2_c2.c (worker) includes h2_stream.h" in r.stdout


def test_every_source_and_header_is_in_the_distribution():
    """mod_h2/Makefile.am lists each .c and .h: `make distdir` (the
    sanitizer build, release tarballs) copies only what it lists."""
    import re
    am = open(os.path.join(TOP, "mod_h2", "Makefile.am")).read()
    listed = set(re.findall(r"\b(h2\w*\.[ch]|mod_http2\.c)\b", am))
    present = {f for f in os.listdir(os.path.join(TOP, "mod_h2"))
               if re.fullmatch(r"(h2\w*|mod_http2)\.[ch]", f)}
    assert present - listed == set()


def test_every_source_file_opens_with_a_line_on_what_it_is_for():
    """After the licence, a .c file's first line is a comment (docs: "one
    file per concern, named for it, opening with a line on what it is
    for")."""
    bad = []
    src = os.path.join(TOP, "mod_h2")
    for name in sorted(os.listdir(src)):
        if not name.endswith(".c"):
            continue
        lines = open(os.path.join(src, name), encoding="utf-8").read().split("\n")
        end = next(i for i, l in enumerate(lines) if l.strip() == "*/") + 1
        first = next(l for l in lines[end:] if l.strip())
        if not first.startswith("/*"):
            bad.append("%s: %s" % (name, first))
    assert not bad, bad
