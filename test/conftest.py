"""pytest fixtures for the mod_h2 test suite.

One sandbox httpd instance serves the whole run (the `env` fixture); it is
started before the first test and stopped after the last. Every test also
checks the server's error log: a test during which an [error] (or worse)
line or a crashed child shows up fails, and so does the run if such lines
appear at shutdown.
"""

import pytest

from h2env import H2TestEnv

# lines printed in pytest's terminal summary (e.g. h2spec counts)
REPORT_LINES = []


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


@pytest.fixture(autouse=True)
def error_log_clean(env):
    """Fail the test if the server logged errors or crashed during it."""
    env.reset_ignored()
    env.mark_log_checked()
    yield
    problems = env.log_problems()
    env.mark_log_checked()
    env.reset_ignored()
    if problems:
        pytest.fail("server error log (%s) got errors during this test:\n%s"
                    % (env.sandbox.error_log, "\n".join(problems)), pytrace=False)


def pytest_report_header(config):
    e = H2TestEnv()
    return ["mod_h2 test server: module=%s mpm=%s http=%d https=%d dir=%s"
            % (e.module, e.mpm, e.http_port, e.https_port, e.run_dir)]


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if REPORT_LINES:
        terminalreporter.section("mod_h2 report")
        for line in REPORT_LINES:
            terminalreporter.write_line(line)


def pytest_collection_modifyitems(config, items):
    if H2TestEnv().has_h2:
        return
    skip = pytest.mark.skip(reason="H2_TEST_MODULE=none: no HTTP/2 module loaded")
    for item in items:
        if "h2" in item.keywords:
            item.add_marker(skip)
