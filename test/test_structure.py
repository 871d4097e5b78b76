"""The code's structure, as docs/design.md states it: no source file over
1,000 lines and no function over 90 (scripts/code_sizes.py), and the
thread-naming rule of the boundary between connection threads and workers
(scripts/check_threads.py), which the compiler enforces too, and that no
two modules depend on each other (scripts/graph.py). They read and compile
the sources; they need no server."""

import os
import re
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


def test_thread_check_finds_a_side_including_the_others_half(tmp_path):
    src = tmp_path / "mod_h2"
    shutil.copytree(os.path.join(TOP, "mod_h2"), src,
                    ignore=shutil.ignore_patterns("*.o", "*.lo", ".libs", ".deps"))
    for name, inc in (("h2_request.c", "h2_x_c1.h"), ("h2_upgrade.c", "h2_c2_int.h")):
        f = src / name
        f.write_text(f.read_text() + '\n#include "%s"\n' % inc)
    r = run("check_threads.py", "--src", str(src))
    assert r.returncode == 1
    assert "h2_request.c (worker) includes h2_x_c1.h" in r.stdout
    assert ("h2_upgrade.c (connection thread) includes h2_x_worker.h (through h2_c2_int.h)"
            in r.stdout)


def compile_in_module(tmp_path, header, call):
    """Compile a file that includes header and calls call (on a h2_x *x),
    with the compiler and flags mod_h2/Makefile builds the module with."""
    mod = os.path.join(TOP, "mod_h2")
    if not os.path.exists(os.path.join(mod, "Makefile")):
        pytest.skip("mod_h2 is not configured (run make -C sandbox build)")
    show = ("show-compile:\n\t@echo $(CC) $(DEFS) $(DEFAULT_INCLUDES) $(INCLUDES)"
            " $(AM_CPPFLAGS) $(CPPFLAGS) $(AM_CFLAGS) $(CFLAGS)\n")
    r = subprocess.run(["make", "-s", "--no-print-directory", "-C", mod, "-f", "Makefile",
                        "-f", "-", "show-compile"], input=show, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert r.returncode == 0, r.stdout
    cc = r.stdout.split()
    assert "-Werror=implicit-function-declaration" in cc
    probe = tmp_path / "probe.c"
    probe.write_text('#include "%s"\n\nvoid probe(h2_x *x);\n'
                     "void probe(h2_x *x)\n{\n    %s;\n}\n" % (header, call))
    return subprocess.run(cc + ["-fsyntax-only", str(probe)], cwd=mod, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


@pytest.mark.parametrize("header,call", [
    ("h2_x_worker.h", "h2_x_c1_abort(x)"),
    ("h2_x_c1.h", "h2_x_worker_done(x, NULL)"),
])
def test_the_compiler_refuses_a_call_into_the_other_side(tmp_path, header, call):
    r = compile_in_module(tmp_path, header, call)
    assert r.returncode != 0, r.stdout
    name = call.split("(")[0]
    assert re.search(r"error: implicit declaration of function .%s" % name, r.stdout), r.stdout


@pytest.mark.parametrize("header,call", [
    ("h2_x_worker.h", "h2_x_worker_done(x, NULL)"),
    ("h2_x_c1.h", "h2_x_c1_abort(x)"),
])
def test_the_compiler_takes_a_call_on_the_own_side(tmp_path, header, call):
    r = compile_in_module(tmp_path, header, call)
    assert r.returncode == 0, r.stdout


def test_no_two_modules_depend_on_each_other_but_the_sessions_files():
    r = run("graph.py")
    assert r.returncode == 0, r.stdout
    c1_deps = [l.split("->")[1].split() for l in r.stdout.splitlines()
               if l.startswith("  h2_c1 ->")]
    assert len(c1_deps) == 2 and not any("h2_protocol" in d for d in c1_deps), r.stdout
    assert r.stdout.strip().endswith("0 cycle(s) outside the session's files")


@pytest.mark.parametrize("name,added,cycle", [
    # a back-include: the idle registry knows connections, not sessions
    ("h2_c1_idle.c", '#include "h2_session.h"\n', "h2_c1_idle h2_session*"),
    # a back-call: the output side of a secondary connection calls its run
    ("h2_c2_out.c", "void h2_c2_register_hooks(void);\n"
                    "static void back(void) { h2_c2_register_hooks(); }\n",
     "h2_c2 h2_c2_out"),
])
def test_graph_finds_a_cycle(tmp_path, name, added, cycle):
    src = tmp_path / "mod_h2"
    shutil.copytree(os.path.join(TOP, "mod_h2"), src,
                    ignore=shutil.ignore_patterns("*.o", "*.lo", ".libs", ".deps"))
    f = src / name
    f.write_text(f.read_text() + "\n" + added)
    r = run("graph.py", "--src", str(src))
    assert r.returncode == 1, r.stdout
    assert "\n  %s: " % cycle in r.stdout, r.stdout


def test_every_source_and_header_is_in_the_distribution():
    """mod_h2/Makefile.am lists each .c and .h: `make distdir` (the
    sanitizer build, release tarballs) copies only what it lists."""
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
