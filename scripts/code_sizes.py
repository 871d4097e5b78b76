#!/usr/bin/env python3
"""Print the largest source files and functions of mod_h2.

    python3 scripts/code_sizes.py [--top N] [--max-file L] [--max-func L]

Lines are physical lines; a function counts from its signature to its
closing brace. With --max-file/--max-func it exits 1 when any file or
function is longer than that (the style: files up to about 1,000 lines,
functions up to about 80)."""

import argparse
import glob
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIG = re.compile(r"^[A-Za-z_][\w\s\*]*?\b([A-Za-z_]\w*)\s*\([^;]*$")


def functions(path):
    """(name, first line, length) of each function defined in path."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = SIG.match(lines[i])
        if m and not lines[i].startswith(("typedef", "struct", "#")):
            j = i
            while j < len(lines) and not lines[j].startswith("{"):
                if lines[j].rstrip().endswith(";"):
                    break
                j += 1
            if j < len(lines) and lines[j].startswith("{"):
                k = j
                while k < len(lines) and lines[k] != "}":
                    k += 1
                out.append((m.group(1), i + 1, k - i + 1))
                i = k + 1
                continue
        i += 1
    return out


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--max-file", type=int, default=0)
    ap.add_argument("--max-func", type=int, default=0)
    args = ap.parse_args(argv)
    files = sorted(glob.glob(os.path.join(TOP, "mod_h2", "*.[ch]")))
    sizes = sorted(((sum(1 for _ in open(f, encoding="utf-8")), os.path.relpath(f, TOP))
                    for f in files), reverse=True)
    funcs = sorted(((n, os.path.relpath(f, TOP), name, line)
                    for f in files if f.endswith(".c")
                    for (name, line, n) in functions(f)), reverse=True)
    print("largest files (lines):")
    for n, f in sizes[:args.top]:
        print("  %5d  %s" % (n, f))
    print("largest functions (lines):")
    for n, f, name, line in funcs[:args.top]:
        print("  %5d  %s:%d %s()" % (n, f, line, name))
    print("%d files, %d lines; %d functions" % (len(sizes), sum(n for n, _ in sizes), len(funcs)))
    bad = [("file", f, n) for n, f in sizes if args.max_file and n > args.max_file]
    bad += [("function", "%s:%d %s()" % (f, line, name), n)
            for n, f, name, line in funcs if args.max_func and n > args.max_func]
    for kind, what, n in bad:
        print("over the limit: %s %s, %d lines" % (kind, what, n))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
