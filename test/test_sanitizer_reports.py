"""The sanitizer report check itself (sandbox.py), on report files made up
here: which output counts as a report and which does not. The sanitizer
runs (make -C sandbox test-asan / test-valgrind) rely on it to fail."""

import os

from h2env import Sandbox

VALGRIND_LOG = """\
==100== Memcheck, a memory error detector
==100== Copyright (C) 2002-2022, and GNU GPL'd, by Julian Seward et al.
==100== Command: /usr/sbin/apache2 -k start
==100== 
==100== Warning: invalid file descriptor -1 in syscall close()
==100==    at 0x4A2C1E4: close (close.c:27)
==100== 
==100== Invalid read of size 8
==100==    at 0x5A1B2C3: h2_stream_destroy (h2_stream.c:133)
==100==    by 0x5A1B3D4: purge_streams (h2_session.c:700)
==100==  Address 0x6b2c040 is 16 bytes inside a block of size 8,192 free'd
==100==    at 0x48431EF: free (vg_replace_malloc.c:872)
==100== 
==100== Process terminating with default action of signal 15 (SIGTERM)
==100==    at 0x538DDEC: ??? (in /usr/lib/x86_64-linux-gnu/libcrypto.so.3)
==100== 
==100== Process terminating with default action of signal 11 (SIGSEGV)
==100==  Access not within mapped region at address 0x0
==100==    at 0x5A1B2C3: h2_c1_io_flush (h2_c1_io.c:300)
==100== 
==100== HEAP SUMMARY:
==100==     in use at exit: 0 bytes in 0 blocks
==100== 
==100== ERROR SUMMARY: 2 errors from 2 contexts (suppressed: 0 from 0)
"""

CLEAN_VALGRIND_LOG = """\
==101== Memcheck, a memory error detector
==101== Command: /usr/sbin/apache2 -k start
==101== 
==101== Process terminating with default action of signal 15 (SIGTERM)
==101==    at 0x538DDEC: ??? (in /usr/lib/x86_64-linux-gnu/libcrypto.so.3)
==101== 
==101== ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 0 from 0)
"""

ASAN_REPORT = """\
=================================================================
==200==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010
READ of size 1 at 0x602000000010 thread T3
    #0 0x7f0 in h2_stream_destroy ../../src/mod_h2/h2_stream.c:133
"""


def _sandbox(tmp_path):
    sb = Sandbox(run_dir=str(tmp_path), sanitize="")
    os.makedirs(sb.sanitizer_dir)
    return sb


def _write(sb, name, text, mode="w"):
    with open(os.path.join(sb.sanitizer_dir, name), mode) as f:
        f.write(text)


def test_valgrind_errors_and_crashes_are_reports_stops_and_warnings_not(tmp_path):
    sb = _sandbox(tmp_path)
    _write(sb, "valgrind.100.log", VALGRIND_LOG)
    _write(sb, "valgrind.101.log", CLEAN_VALGRIND_LOG)
    texts = [t for _, t in sb.sanitizer_reports()]
    assert len(texts) == 2, texts
    assert texts[0].startswith("Invalid read of size 8")
    assert "h2_stream_destroy (h2_stream.c:133)" in texts[0]
    assert "free'd" in texts[0]
    assert texts[1].startswith("Process terminating with default action of signal 11")


def test_every_asan_or_ubsan_output_is_a_report_once(tmp_path):
    sb = _sandbox(tmp_path)
    seen = {}
    assert sb.sanitizer_reports(seen) == []
    _write(sb, "asan.200", ASAN_REPORT)
    _write(sb, "ubsan.201", "h2_util.c:10:5: runtime error: signed integer overflow\n")
    reports = sb.sanitizer_reports(seen)
    assert [os.path.basename(p) for p, _ in reports] == ["asan.200", "ubsan.201"]
    assert "heap-use-after-free" in reports[0][1]
    # seen before: not again; more output of the same process: again
    assert sb.sanitizer_reports(seen) == []
    _write(sb, "ubsan.201", "h2_util.c:12:5: runtime error: shift exponent\n", "a")
    reports = sb.sanitizer_reports(seen)
    assert len(reports) == 1 and "shift exponent" in reports[0][1]
    # the whole run's reports, as `sandbox.py reports` lists them
    assert len(sb.sanitizer_reports()) == 2


def test_valgrind_record_is_read_only_when_complete(tmp_path):
    sb = _sandbox(tmp_path)
    seen = {}
    head, tail = VALGRIND_LOG.split("==100==  Address 0x6b2c040", 1)
    _write(sb, "valgrind.100.log", head)
    assert sb.sanitizer_reports(seen) == []
    _write(sb, "valgrind.100.log", "==100==  Address 0x6b2c040" + tail, "a")
    texts = [t for _, t in sb.sanitizer_reports(seen)]
    assert len(texts) == 2 and texts[0].startswith("Invalid read")
    assert "free'd" in texts[0]
