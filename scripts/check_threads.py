#!/usr/bin/env python3
"""Check mod_h2's thread-naming rule (docs/design.md, "Threads"):

  * code that runs in workers (WORKER_FILES) sees no session or stream:
    it includes neither h2_session*.h nor h2_stream.h, and calls no
    h2_session_*, h2_stream_*, h2_c1_* or h2_x_c1_* function;
  * code that runs in connection threads (C1_FILES) calls no h2_x_worker_*;
  * each side sees only its own half of the exchange: no worker file
    includes h2_x_c1.h and no connection file h2_x_worker.h, directly or
    through another of mod_h2's headers (then the compiler, with
    -Werror=implicit-function-declaration, refuses a call across);
  * in h2_x.c, a h2_x_c1_* function calls no h2_x_worker_* function and the
    other way round;
  * h2_x_c1.h declares only h2_x_c1_* functions, h2_x_worker.h only
    h2_x_worker_*, and h2_x_types.h only the few either thread may call
    (EITHER; h2_x_child_init runs once at child init, before both).

Prints each violation and exits 1 if there is any. --src DIR checks the
sources in DIR instead of mod_h2/."""

import glob
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(TOP, "mod_h2")

# which file runs where, by name (docs/design.md, "Which file runs where"):
# a new file is checked as soon as it is named for its side
WORKER_GLOBS = ["h2_c2*.c", "h2_request*.c", "h2_response*.c"]
C1_GLOBS = ["h2_session*.c", "h2_c1*.c", "h2_upgrade*.c", "h2_stream*.c", "h2_protocol*.c"]
EITHER = {"h2_x_child_init"}
CALL = re.compile(r"\b(h2_\w+)\s*\(")
DEF = re.compile(r"^[A-Za-z_][\w\s\*]*?\b(h2_x_\w+)\s*\(", re.M)


def files(globs):
    """The names of SRC's sources that match globs, sorted."""
    return sorted({os.path.basename(p) for g in globs
                   for p in glob.glob(os.path.join(SRC, g))})


def includes_of(name, seen=None):
    """{header: the header of name's own includes it came through} for every
    mod_h2 header name includes, directly or not."""
    seen = {} if seen is None else seen
    path = os.path.join(SRC, name)
    if not os.path.exists(path):
        return seen
    for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', open(path, encoding="utf-8").read(),
                          re.M):
        if inc not in seen:
            seen[inc] = seen.get(name, inc)
            includes_of(inc, seen)
    return seen


def wrong_half(f, side, other_header):
    """The violation if f, of side, includes the other side's header."""
    via = includes_of(f).get(other_header)
    if via is None:
        return []
    how = "" if via == other_header else " (through %s)" % via
    return ["%s (%s) includes %s%s" % (f, side, other_header, how)]


def code_of(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)      # comments
    return re.sub(r'"(\\.|[^"\\])*"', '""', text)          # strings


def bodies(text):
    """(name, body) of each function defined at top level in text."""
    out = []
    for m in DEF.finditer(text):
        start = text.find("\n{", m.end())
        semi = text.find(";", m.end())
        if start < 0 or (0 <= semi < start):
            continue
        end = text.find("\n}", start)
        out.append((m.group(1), text[start:end]))
    return out


def main(argv):
    global SRC
    if argv[:1] == ["--src"]:
        SRC = argv[1]
    bad = []
    worker_files = files(WORKER_GLOBS)
    c1_files = files(C1_GLOBS)
    if not worker_files or not c1_files:
        bad.append("no sources found in %s" % SRC)
    for f in worker_files:
        code = code_of(os.path.join(SRC, f))
        raw = open(os.path.join(SRC, f), encoding="utf-8").read()
        for inc in re.findall(r'#include "(h2_session\w*\.h|h2_stream\.h)"', raw):
            bad.append("%s (worker) includes %s" % (f, inc))
        for name in sorted(set(CALL.findall(code))):
            if re.match(r"h2_(session|stream|c1|x_c1)_", name):
                bad.append("%s (worker) calls %s()" % (f, name))
        bad += wrong_half(f, "worker", "h2_x_c1.h")
    for f in c1_files:
        bad += wrong_half(f, "connection thread", "h2_x_worker.h")
        for name in sorted(set(CALL.findall(code_of(os.path.join(SRC, f))))):
            if name.startswith("h2_x_worker_"):
                bad.append("%s (connection thread) calls %s()" % (f, name))
    for name, body in [nb for f in ("h2_x.c", "h2_x_body.c")
                       for nb in bodies(code_of(os.path.join(SRC, f)))]:
        calls = set(CALL.findall(body))
        for other in ("c1", "worker"):
            mine = "h2_x_%s_" % ("worker" if other == "c1" else "c1")
            if name.startswith(mine):
                for c in sorted(calls):
                    if c.startswith("h2_x_%s_" % other):
                        bad.append("h2_x: %s() calls %s()" % (name, c))
    for header, prefix in (("h2_x_c1.h", "h2_x_c1_"), ("h2_x_worker.h", "h2_x_worker_"),
                           ("h2_x_types.h", None)):
        decls = re.sub(r"typedef[^;]*;", "", code_of(os.path.join(SRC, header)))
        for name in re.findall(r"\b(h2_x_\w+)\s*\(", decls):
            if prefix is None and name not in EITHER:
                bad.append("%s: %s() is not one either thread may call" % (header, name))
            elif prefix is not None and not name.startswith(prefix):
                bad.append("%s: %s() is not named %s*" % (header, name, prefix))
    for b in bad:
        print(b)
    print("thread naming: %d violation(s)" % len(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
