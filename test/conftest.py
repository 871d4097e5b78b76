"""pytest fixtures for the mod_h2 test suite.

One sandbox httpd instance serves the whole run (the `env` fixture); it is
started before the first test and stopped after the last. Every test also
checks the server's error log: a test during which an [error] (or worse)
line or a crashed child shows up fails, and so does the run if such lines
appear at shutdown. Under H2_SANITIZE=asan|valgrind the same goes for
every sanitizer report (see sandbox.py).
"""

import os
import shutil
import subprocess

import pytest

from h2env import H2TestEnv, shift_for_worker

# under pytest-xdist, each worker's instances get ports and a run dir of
# their own (before any test module reads the settings)
shift_for_worker()

# Files that must not run beside each other: both install or build
# Debian packages on the machine (dpkg's lock, /etc/apache2).
SERIAL_SCOPES = {"test_debian_package.py": "debian", "test_install_debian.py": "debian"}

# lines printed in pytest's terminal summary (e.g. h2spec counts)
REPORT_LINES = []


def sanitizer_failure(when):
    """A failure message for new sanitizer reports, or None."""
    reports = H2TestEnv.sanitizer_reports()
    if not reports:
        return None
    return "sanitizer reports %s:\n%s" % (when, "\n".join(
        "=== %s\n%s" % (path, text.rstrip()) for path, text in reports))


def report(line):
    REPORT_LINES.append(line)


@pytest.fixture(scope="session")
def env():
    e = H2TestEnv()
    e.start()
    yield e
    e.stop()
    problems = e.log_problems()
    e.mark_log_checked()
    if problems:
        pytest.fail("server error log (%s) has errors at shutdown:\n%s"
                    % (e.sandbox.error_log, "\n".join(problems)), pytrace=False)
    failure = sanitizer_failure("at shutdown")
    if failure:
        pytest.fail(failure, pytrace=False)


def pytest_configure(config):
    config.addinivalue_line("markers", "no_server: the test reads files only; "
                            "no test server is started for it")


@pytest.fixture(autouse=True)
def error_log_clean(request):
    """Fail the test if the server logged errors or crashed during it."""
    if request.node.get_closest_marker("no_server"):
        yield
        return
    env = request.getfixturevalue("env")
    env.reset_ignored()
    env.mark_log_checked()
    yield
    problems = env.log_problems()
    env.mark_log_checked()
    env.reset_ignored()
    failure = sanitizer_failure("during this test")
    if problems:
        pytest.fail("server error log (%s) got errors during this test:\n%s%s"
                    % (env.sandbox.error_log, "\n".join(problems),
                       "\n" + failure if failure else ""), pytrace=False)
    if failure:
        pytest.fail(failure, pytrace=False)


def pytest_report_header(config):
    e = H2TestEnv()
    return ["mod_h2 test server: module=%s mpm=%s http=%d https=%d dir=%s%s"
            % (e.module, e.mpm, e.http_port, e.https_port, e.run_dir,
               " sanitize=%s (%s)" % (e.sanitize, e.sandbox.module_path)
               if e.sanitize else "")]


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if REPORT_LINES:
        terminalreporter.section("mod_h2 report")
        for line in REPORT_LINES:
            terminalreporter.write_line(line)


def pytest_sessionfinish(session, exitstatus):
    # an xdist worker hands its report lines to the controller
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["h2_report"] = list(REPORT_LINES)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    REPORT_LINES.extend(getattr(node, "workeroutput", {}).get("h2_report", []))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """A file's tests stay on one worker (its module fixtures, its
    configuration of the instance), the files of SERIAL_SCOPES on the
    same one."""
    from xdist.scheduler import LoadScopeScheduling

    class FileScheduling(LoadScopeScheduling):
        ordered = False

        def _split_scope(self, nodeid):
            path = nodeid.split("::", 1)[0]
            return SERIAL_SCOPES.get(os.path.basename(path), path)

        def _assign_work_unit(self, node):
            # xdist queues the files with most tests first; the longest
            # ones go ahead of them (a stable sort keeps xdist's order
            # among the rest)
            if not self.ordered:
                queue = sorted(self.workqueue.items(), key=lambda kv: long_first(kv[0]))
                self.workqueue.clear()
                self.workqueue.update(queue)
                self.ordered = True
            super()._assign_work_unit(node)

    return FileScheduling(config, log)


# The longest files, started first so that no worker is left with one of
# them at the end (xdist hands out files in collection order); the
# Debian package's build alone takes minutes.
LONG_FIRST = ["test_debian_package.py", "test_install_debian.py", "test_app_slow_uploads.py",
              "test_app_stalled_upload_timeout.py", "test_load.py", "test_upload_memory.py",
              "test_attacks.py", "test_fuzz_corpora.py", "test_faults.py"]


def long_first(scope):
    """Sort key of a scope (a file's path, or a SERIAL_SCOPES name)."""
    names = [os.path.basename(scope)] + [f for f, s in SERIAL_SCOPES.items() if s == scope]
    return min([LONG_FIRST.index(n) for n in names if n in LONG_FIRST] or [len(LONG_FIRST)])


def pytest_collection_modifyitems(config, items):
    if H2TestEnv().has_h2:
        return
    skip = pytest.mark.skip(reason="H2_TEST_MODULE=none: no HTTP/2 module loaded")
    for item in items:
        if "h2" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def fpm(env):
    """A private php-fpm (test/phpfpm.py: static pool of 5 children, its
    socket, pid file and log under <run dir>/fpm/) serving *.php in
    <docroot>/fpm/ through mod_proxy_fcgi, for the tests of one file;
    stopped again by its pid afterwards."""
    from h2client import remove_conf
    from phpfpm import PhpFpm
    f = PhpFpm(env.run_dir)
    f.start()
    try:
        env.add_conf("phpfpm", f.httpd_conf())
        env.reload()
        yield f
    finally:
        remove_conf(env, "phpfpm", "server")
        try:
            env.reload()
        finally:
            f.stop()


@pytest.fixture(autouse=True)
def fpm_log_clean(request):
    """With the fpm fixture: fail a test during which php-fpm or PHP logged
    an error or warning, or a child was killed."""
    if "fpm" not in request.fixturenames:
        yield
        return
    f = request.getfixturevalue("fpm")
    f.mark_log_checked()
    yield
    problems = f.log_problems()
    f.mark_log_checked()
    if problems:
        pytest.fail("php-fpm log (%s) got errors during this test:\n%s"
                    % (f.error_log, "\n".join(problems)), pytrace=False)


def build_test_module(tmp_path_factory, name):
    """test/modules/NAME.c built with apxs in a temporary directory: the
    path of its .so."""
    src0 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "modules",
                        name + ".c")
    d = tmp_path_factory.mktemp(name)
    src = str(d / os.path.basename(src0))      # objects land next to the source
    shutil.copy(src0, src)
    r = subprocess.run(["apxs", "-c", "-o", str(d / (name + ".la")), src],
                       cwd=str(d), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    assert r.returncode == 0, r.stdout
    so = d / ".libs" / (name + ".so")
    assert so.exists(), r.stdout
    return str(so)


@pytest.fixture(scope="session")
def optfn_module(tmp_path_factory):
    """The test module test/modules/mod_h2_optfn_test.c, built with apxs:
    its handlers call the optional functions and fail in set ways."""
    return build_test_module(tmp_path_factory, "mod_h2_optfn_test")


@pytest.fixture(scope="session")
def pooltree_module(tmp_path_factory):
    """The test module test/modules/mod_h2_pooltree_test.c, built with
    apxs: its handler reports where the request's pools hang."""
    return build_test_module(tmp_path_factory, "mod_h2_pooltree_test")
