#!/usr/bin/env python3
"""Print mod_h2's dependency graphs between its files, and fail on a cycle.

Two graphs, between modules (a .c file and the .h of the same name are one
module; a header without a .c of its name is a module of its own):

  * includes: the modules whose headers a module's files #include "...";
  * calls: the modules whose .c defines a (non-static) function that a
    module's .c calls or takes the address of.

Then the cycles of the two together: modules that depend on each other,
through any mix of includes and calls. The session's own files (h2_session*,
h2_stream*, h2_upgrade*) are one module, "h2_session*": they are one
concern split by size, and may use each other. A cycle between other
modules is a tangle: the script prints it and exits 1.

--src DIR reads the sources in DIR instead of mod_h2/."""

import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SESSION = ("h2_session", "h2_stream", "h2_upgrade")
SESSION_NODE = "h2_session*"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)\.h"', re.M)
DEF = re.compile(r"^([A-Za-z_][\w \t\*]*?)\b([A-Za-z_]\w*)\s*\(", re.M)
IDENT = re.compile(r"\b[A-Za-z_]\w*\b")


def module_of(stem):
    return SESSION_NODE if stem.startswith(SESSION) else stem


def code_of(path):
    """The text of path without comments, strings and character literals."""
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(\\.|[^'\\\n])+'", "''", text)


def definitions(code):
    """(name, static) of each function defined at top level in code."""
    out = []
    for m in DEF.finditer(code):
        if re.match(r"\s*(typedef|return|else|if|while|for|switch|do)\b", m.group(1)):
            continue
        body = code.find("\n{", m.end())
        semi = code.find(";", m.end())
        if body < 0 or 0 <= semi < body:
            continue
        out.append((m.group(2), "static" in m.group(1).split()))
    return out


def graphs(src):
    """(includes, calls): {module: set of modules it depends on}."""
    names = sorted(f for f in os.listdir(src) if re.fullmatch(r"\w+\.[ch]", f))
    codes = {f: code_of(os.path.join(src, f)) for f in names}
    defined_in = {}         # non-static function -> the module defining it
    statics = {}            # .c file -> its static functions
    for f in names:
        if f.endswith(".c"):
            for name, static in definitions(codes[f]):
                if static:
                    statics.setdefault(f, set()).add(name)
                else:
                    defined_in[name] = module_of(f[:-2])
    includes, calls = {}, {}
    for f in names:
        mod = module_of(f[:-2])
        deps = includes.setdefault(mod, set())
        deps.update(module_of(h) for h in INCLUDE.findall(open(os.path.join(src, f),
                                                             encoding="utf-8").read())
                    if os.path.exists(os.path.join(src, h + ".h")))
        deps.discard(mod)
        calls.setdefault(mod, set())
        if f.endswith(".c"):
            used = set(IDENT.findall(codes[f])) - statics.get(f, set())
            calls[mod].update(defined_in[n] for n in used if n in defined_in)
            calls[mod].discard(mod)
    return includes, calls


def cycles(graph):
    """The strongly connected components of graph with more than one node
    (Tarjan's algorithm), each sorted, in sorted order."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def print_graph(title, graph):
    print("%s:" % title)
    for mod in sorted(graph):
        print("  %s -> %s" % (mod, " ".join(sorted(graph[mod])) or "-"))


def main(argv):
    src = os.path.join(TOP, "mod_h2")
    if argv[:1] == ["--src"] and len(argv) > 1:
        src = argv[1]
    if not os.path.isdir(src):
        print("no sources in %s" % src)
        return 2
    includes, calls = graphs(src)
    both = {m: includes.get(m, set()) | calls.get(m, set()) for m in set(includes) | set(calls)}
    print_graph("includes (module -> modules whose headers it includes)", includes)
    print_graph("calls (module -> modules whose functions it calls)", calls)
    found = cycles(both)
    print("cycles (modules that depend on each other, by includes and calls):")
    for comp in found:
        members = set(comp)
        edges = ["%s -> %s (%s)" % (a, b, "+".join(k for k, g in (("include", includes),
                                                                 ("call", calls))
                                                   if b in g.get(a, ())))
                 for a in comp for b in sorted(both[a] & members)]
        print("  %s: %s" % (" ".join(comp), "; ".join(edges)))
    print("%d cycle(s) outside the session's files" % len(found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
