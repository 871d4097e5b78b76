#!/usr/bin/env python3
"""Who spends a callgrind profile's instructions: every instruction is
charged to the object that executes it, and what the shared libraries (libc,
APR, APR-util, the dynamic loader) execute is charged to the object that
called into them, so "mod_h2's own" means mod_h2.so's code plus the libc and
APR work it asks for, without nghttp2's, httpd's or OpenSSL's.

    python3 bench/cgparse.py callgrind.out.N [callgrind.out.M]

With two files, prints the classes of the second less the first (a run
with requests less a run without). bench/instr.py uses it."""

import os
import re
import sys

# object file name -> class; the first pattern that matches wins
CLASSES = [
    ("mod_h2", r"/mod_h2\.so$|/mod_http2\.so$"),
    ("nghttp2", r"libnghttp2"),
    ("openssl", r"libssl|libcrypto|/mod_ssl\.so$"),
    ("lib", r"libc[.-]|libapr-|libaprutil-|ld-linux|libpthread|libm[.-]|"
            r"libz\.|libuuid|libcrypt\.|libexpat|libgcc|libstdc|vgpreload|"
            r"libpcre|libdl|librt|libresolv"),
    ("httpd", r""),          # the apache2 binary and every other module
                             # (for nginx: its binary)
]
SHARED = "lib"

# a module build run by another name (H2_MODULE_PATH, as for A/B runs) is
# still mod_h2's: otherwise its code would count as httpd's
if os.environ.get("H2_MODULE_PATH"):
    CLASSES[0] = ("mod_h2", CLASSES[0][1] + "|" + re.escape(os.environ["H2_MODULE_PATH"]) + "$")


def classify(obj):
    for name, pat in CLASSES:
        if re.search(pat, obj or ""):
            return name
    return "httpd"


def parse(path):
    """(self cost per (obj, fn), call arcs [(caller, callee, inclusive)],
    inclusive cost per callee as seen over its incoming arcs)."""
    names = {"ob": {}, "fn": {}}
    self_cost, arcs = {}, []
    ob = cob = fn = cfn = None
    pending_call = False
    total = 0

    def name_of(kind, val):
        m = re.match(r"\((\d+)\)(?: (.*))?$", val)
        if not m:
            return val
        if m.group(2) is not None:
            names[kind][m.group(1)] = m.group(2)
        return names[kind].get(m.group(1), val)

    with open(path, errors="replace") as f:
        for line in f:
            if not line or line[0] == "\n":
                continue
            c0 = line[0]
            if c0.isdigit() or c0 in "+-*":
                parts = line.split()
                if len(parts) < 2:
                    continue
                ir = int(parts[1])
                if pending_call:
                    arcs.append(((ob, fn), (cob or ob, cfn), ir))
                    pending_call = False
                    cob = None
                else:
                    key = (ob, fn)
                    self_cost[key] = self_cost.get(key, 0) + ir
                    total += ir
                continue
            if line.startswith("ob="):
                ob = name_of("ob", line[3:].strip())
            elif line.startswith("fn="):
                fn = name_of("fn", line[3:].strip())
                cob = None
            elif line.startswith("cob="):
                cob = name_of("ob", line[4:].strip())
            elif line.startswith("cfn="):
                cfn = name_of("fn", line[4:].strip())
            elif line.startswith("calls="):
                pending_call = True
    return self_cost, arcs, total


def shares(path):
    """Instructions per class, the shared libraries' charged to their callers."""
    self_cost, arcs, total = parse(path)
    incl_in = {}
    out_arcs = {}
    for caller, callee, ir in arcs:
        incl_in[callee] = incl_in.get(callee, 0) + ir
        out_arcs.setdefault(caller, []).append((callee, ir))
    cls = {}

    def klass(key):
        c = cls.get(key[0])
        if c is None:
            c = cls[key[0]] = classify(key[0])
        return c

    # ratio(G): the part of a shared function's inclusive cost that stays in
    # shared code (the rest is callbacks into httpd, mod_h2, ...): a fixed
    # point over the call graph, which converges in a few rounds
    shared_fns = {k for k in set(self_cost) | set(incl_in) if klass(k) == SHARED}
    ratio = {k: 1.0 for k in shared_fns}
    for _ in range(8):
        new = {}
        for g in shared_fns:
            inc = incl_in.get(g, 0)
            if inc <= 0:
                new[g] = 1.0
                continue
            inside = self_cost.get(g, 0)
            for callee, ir in out_arcs.get(g, ()):
                if callee != g and klass(callee) == SHARED:
                    inside += ir * ratio.get(callee, 1.0)
            new[g] = max(0.0, min(1.0, inside / inc))
        ratio = new
    out = {name: 0.0 for name, _ in CLASSES if name != SHARED}
    for key, ir in self_cost.items():
        c = klass(key)
        if c != SHARED:
            out[c] += ir
    charged = 0.0
    for caller, callee, ir in arcs:
        cc = klass(caller)
        if cc != SHARED and klass(callee) == SHARED:
            part = ir * ratio.get(callee, 1.0)
            out[cc] += part
            charged += part
    shared_self = sum(ir for k, ir in self_cost.items() if klass(k) == SHARED)
    # shared code reached from no class (process start, valgrind's preload)
    out["unattributed shared"] = shared_self - charged
    out["total"] = total
    return out


def main(argv):
    if len(argv) == 2:
        for k, v in shares(argv[1]).items():
            print("%-20s %14.0f" % (k, v))
    elif len(argv) == 3:
        a, b = shares(argv[1]), shares(argv[2])
        for k in b:
            print("%-20s %14.0f" % (k, b[k] - a.get(k, 0)))
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
