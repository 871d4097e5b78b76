"""Every input of the fuzz corpora runs clean: the request-head validator's
(test/fuzz/corpus/), the Priority field reader's (corpus-priority/) and the whole session's (test/fuzz/corpus-session/,
client frame sequences from h2spec, nghttp, h2load and the abuse cases,
driven through the test seam), built with ASan and UBSan. A crash, a
sanitizer report, an invalid transition or an error logged by the session
fails the replay. The bounded fuzzing runs are in .ci/run."""

import os
import subprocess

import pytest

pytestmark = pytest.mark.no_server

FUZZ = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz")


def replay(target, corpus):
    build = subprocess.run(["make", "-s", "-C", FUZZ, target], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=600)
    assert build.returncode == 0, build.stdout
    inputs = os.listdir(os.path.join(FUZZ, corpus))
    r = subprocess.run([os.path.join(FUZZ, target), "-runs=0", "-timeout=10", corpus],
                       cwd=FUZZ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-4000:]
    assert "Done" in r.stdout
    return len(inputs)


def test_request_head_corpus_replays_clean():
    assert replay("fuzz_request_head", "corpus") >= 9


def test_priority_field_corpus_replays_clean():
    assert replay("fuzz_priority", "corpus-priority") >= 10


def test_session_corpus_replays_clean():
    assert replay("fuzz_session", "corpus-session") >= 80
