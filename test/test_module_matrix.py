"""The module matrix: every module of Debian's apache2 package that serves,
alters, authenticates or logs a request, and the third-party module
packages an administrator installs, answers over HTTP/2 as over HTTP/1.1.

Each case (test/modmatrix_cases.py, modmatrix_drivers.py,
modmatrix_thirdparty.py) runs in a one-child server (test/modmatrix.py),
first over h2, then HTTP/1.1, h2 again, h2c and HTTP/1.1 in cleartext; its
answers (status, body, the headers that matter) over h2 and h2c equal
those over HTTP/1.1 on the same port, the HTTP/1.1 ones are what the case
expects, and no child exits on a signal. The apr-util driver users get a
fresh child each, whose first use of the driver is over h2, under the
event, worker and prefork MPMs.

H2_TEST_MPM unset runs every case under each MPM it lists; set, under that
MPM only. The results go to <run dir>-matrix/matrix-<module>.json, from
which scripts/module_matrix.py writes docs/modules.md.
"""

import os

import pytest

from h2env import STARTED
from modmatrix import ALL_MPMS, MatrixClient, MatrixServer, Results, run_case
from modmatrix_cases import all_cases

pytestmark = pytest.mark.h2

CASES = all_cases()


def selected_mpms():
    mpm = os.environ.get("H2_TEST_MPM")
    return (mpm,) if mpm else ALL_MPMS


def params():
    """(mpm, group, case) in the order that starts each group's server
    once per MPM."""
    out = []
    for mpm in selected_mpms():
        groups = []
        for case in CASES:
            if mpm in case.mpms and case.group not in groups:
                groups.append(case.group)
        for g in groups:
            for case in CASES:
                if case.group == g and mpm in case.mpms:
                    out.append(pytest.param(mpm, case, id="%s-%s" % (mpm, case.name)))
    return out


class Servers:
    """The group server running now; another group (or MPM) stops it."""

    def __init__(self, env):
        self.env = env
        self.current = None
        self.key = None
        self.results = Results(env)
        self.tracked = False

    def get(self, mpm, case):
        key = (mpm, case.group)
        if key != self.key:
            self.close()
            cases = [c for c in CASES if c.group == case.group and mpm in c.mpms
                     and not c.missing()]
            srv = MatrixServer(self.env, mpm, case.group, cases)
            if not self.tracked:
                # sanitizer reports of the matrix's instances fail the test
                # during which they appear (conftest.py), as the suite's
                srv.clear_sanitizer_reports()
                srv.reports_seen = {}
                STARTED.append(srv)
                self.tracked = srv
            srv.reports_seen = self.tracked.reports_seen
            self.key = key
            self.current = srv
            self.error = None
            try:
                srv.start_group()
            except Exception as e:
                self.error = "the %s server of group %s did not start: %s" % (
                    mpm, case.group, e)
            srv.first_case = True
        if self.error:
            pytest.fail(self.error, pytrace=False)
        return self.current

    def close(self):
        if self.current:
            self.current.stop_group()
        self.current = None
        self.key = None


@pytest.fixture(scope="module")
def servers(env):
    s = Servers(env)
    yield s
    s.close()


@pytest.mark.parametrize("mpm,case", params())
def test_module_answers_over_h2_and_h2c_as_over_http1(servers, env, mpm, case):
    if case.missing():
        pytest.skip("not installed: %s (sandbox/deps.sh installs it)" % ", ".join(case.missing()))
    srv = servers.get(mpm, case)
    if case.fresh and not srv.first_case:
        srv.fresh_child()
    srv.first_case = False
    client = MatrixClient(env, srv)
    problems, outcomes, crashes = run_case(case, srv, client)
    if crashes:
        # the crashed child's successor must not carry the next case
        srv.fresh_child()
    skipped = None
    if env.module == "stock" and mpm == "prefork":
        skipped = "stock mod_http2 offers no h2 under prefork (AH10034)"
        problems = [p for p in problems if not p.startswith(("h2", "h2-again", "h2c"))]
    servers.results.add(case, mpm, outcomes, problems, crashes, skipped)
    assert not problems, "%s under %s:\n%s" % (case.name, mpm, "\n".join(problems))
    if skipped:
        pytest.skip(skipped)
