#!/usr/bin/env python3
"""Write docs/modules.md, the module matrix as a table, from the results
test/test_module_matrix.py wrote in a run with mod_h2 (matrix-ours.json)
and, optionally, one with the stock mod_http2 (matrix-stock.json):

    python3 scripts/module_matrix.py OURS.json [--stock STOCK.json] [-o docs/modules.md]

The modules without a case, and why, come from test/modmatrix_more.py."""

import argparse
import json
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "test"))
sys.path.insert(0, os.path.join(REPO, "sandbox"))

MPMS = ("event", "worker", "prefork")

HEAD = """\
# Modules over HTTP/2

Which of Debian's Apache modules work over HTTP/2 with mod_h2, as measured
by `test/test_module_matrix.py`, and from whose run this page is written
(`scripts/module_matrix.py`). Every module of Debian's `apache2` package
(`/etc/apache2/mods-available`) that serves, alters, authenticates or logs
a request has a case: a typical configuration and the requests that
exercise it; so have the module packages administrators add
(`libapache2-mod-php8.2`, `libapache2-mod-perl2`,
`libapache2-mod-wsgi-py3`, `libapache2-mod-security2` with
`modsecurity-crs`, `libapache2-mod-fcgid`, php-fpm through
mod_proxy_fcgi).

Each case runs in a server with one child process, first over h2, then
HTTP/1.1 over TLS, h2 again, h2c and HTTP/1.1 in cleartext. It passes when
the status, body and the headers that matter over h2 and h2c equal those
over HTTP/1.1 on the same port, the HTTP/1.1 answers are the ones the case
expects, and no child process ends on a signal. The users of apr-util's
drivers (DBM, DBD, LDAP, crypto) get a fresh child each, whose first use
of the driver is over h2, under every MPM; the other cases run under the
event MPM (mod_php under prefork, which it requires).

A cell says `pass`, `fail` with the first difference, or `-` where the case
does not run under that MPM. "stock" is the same matrix with Debian's
mod_http2 in mod_h2's place: it names the cases where stock fails and
mod_h2 passes (stock offers no h2 under prefork, so there it is compared
over HTTP/1.1 only).

What it found, and what was changed:

- A child whose first DBM access (mod_dav_fs's lock and property
  databases, mod_authn_dbm's and mod_authz_dbm's files, mod_proxy_express's
  map) happened on an HTTP/2 stream crashed at its next DBM access.
  apr-util loads its drivers once per process and keeps their table and
  lock in the root of the first pool it is handed; for a request over
  HTTP/2 that root was a pool mod_h2 cleared after the stream. Stream and
  secondary connection pools now descend from the child's pool, as
  httpd's own connection pools do (docs/design.md). Stock does not crash.
- mod_dialup returns SUSPENDED and asks the MPM for a timed callback,
  which the event MPM ran after the stream and its pool were gone: a
  crash about a second after any mod_dialup request over h2 or h2c, with
  stock too. mod_h2's worker now runs the callback itself.
- mod_reflector answered an empty 200 over h2 and h2c (stock too): to
  httpd, a connection marked to close during a request means its input
  broke, and mod_reflector then leaves the body alone. A handler now sees
  the connection open, as over HTTP/1.1.
- Where only stock fails (the "stock" column): besides mod_reflector and
  mod_dialup, a file mod_file_cache keeps open (`CacheFile`) comes cut
  short on a later h2 connection, and in some runs, in a case's first h2
  pass, a stream was reset where its request body went to a resource
  that answers without reading it (a PUT to a locked DAV resource, a POST
  to a static file).

Run it: `python3 -m pytest test/test_module_matrix.py` (all three MPMs,
about a minute and a half; `H2_TEST_MPM=worker` for one,
`H2_TEST_MODULE=stock` for the stock module). The results are in
`sandbox/run-test-<port base>-matrix/matrix-<module>.json`.

"""


def load(path):
    with open(path) as f:
        return json.load(f)


# what curl's exit codes in a result mean
CURL_EXITS = {"7": "no connection", "16": "HTTP/2 framing error", "18": "answer cut short",
              "35": "TLS handshake failed", "52": "empty reply", "56": "connection broke",
              "92": "HTTP/2 stream reset"}


def explain(text):
    return re.sub(r"no answer \(curl exit (\d+)\)",
                  lambda m: "no answer: %s (curl exit %s)" % (
                      CURL_EXITS.get(m.group(1), "error"), m.group(1)), text)


def cell(e):
    if e is None:
        return "-"
    if e.get("skipped") and not e.get("problems"):
        return "pass (HTTP/1.1 only)"
    if e["passed"]:
        return "pass"
    if e.get("crashes"):
        return "fail: a child crashed"
    first = explain(e["problems"][0]) if e["problems"] else "?"
    return "fail: %s" % first.replace("|", "\\|").replace("\n", " ")[:160]


def stock_cell(name, ours, stock):
    """Where stock fails and mod_h2 passes, under which MPMs and how."""
    if stock is None:
        return ""
    bad = []
    for mpm in MPMS:
        s, o = stock.get((name, mpm)), ours.get((name, mpm))
        if s and o and o["passed"] and not s["passed"] and not s.get("skipped"):
            bad.append("%s: %s" % (mpm, cell(s)[len("fail: "):]))
    return "fails (%s)" % "; ".join(bad) if bad else "same"


def render(ours_data, stock_data=None):
    from modmatrix_cases import all_cases
    from modmatrix_more import NOT_COVERED
    ours = {(e["case"], e["mpm"]): e for e in ours_data["cases"]}
    stock = {(e["case"], e["mpm"]): e for e in stock_data["cases"]} if stock_data else None
    out = [HEAD]
    cols = ["case", "module", "configuration"] + list(MPMS) + (["stock"] if stock else [])
    out.append("| " + " | ".join(cols) + " |")
    out.append("|" + "---|" * len(cols))
    notes = []
    for case in all_cases():
        row = ["`%s`" % case.name, case.module, case.summary.replace("|", "\\|")]
        row += [cell(ours.get((case.name, mpm))) for mpm in MPMS]
        if stock is not None:
            row.append(stock_cell(case.name, ours, stock))
        out.append("| " + " | ".join(row) + " |")
        if case.note:
            notes.append("- `%s`: %s" % (case.name, case.note))
    if notes:
        out.append("\nNotes on single cases:\n")
        out += notes
    out.append("\n## Modules without a case\n")
    out.append("| module | why |")
    out.append("|---|---|")
    for mod, why in NOT_COVERED.items():
        out.append("| %s | %s |" % (mod, why))
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ours", help="matrix-ours.json of a run with mod_h2")
    ap.add_argument("--stock", help="matrix-stock.json of a run with stock mod_http2")
    ap.add_argument("-o", "--output", default=os.path.join(REPO, "docs", "modules.md"))
    args = ap.parse_args(argv)
    text = render(load(args.ours), load(args.stock) if args.stock else None)
    with open(args.output, "w") as f:
        f.write(text)
    print("wrote %s" % args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
