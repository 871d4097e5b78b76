"""Tiny windows: a client that opens its flow-control window a byte at a
time would get a DATA frame per byte, about a thousand times the server's
work per byte of a normal download. mod_h2 sends no DATA frame smaller
than 1 KiB while more of the response waits (or than the client's own
initial window, when that is smaller), beyond a small bucket of such
frames (64, refilled at 100 a second) that keeps h2spec's one-byte windows
answered; WINDOW_UPDATEs that leave a waiting stream below that size count
as abuse, more than 200 a second get GOAWAY ENHANCE_YOUR_CALM.
"""

import os
import time

import pytest

from h2raw import (ENHANCE_YOUR_CALM, SETTINGS_INITIAL_WINDOW_SIZE, DATA, RawConn,
                   Watch, headers_frame, httpd_children, request_block,
                   window_update_frame)

pytestmark = pytest.mark.h2

MIN_FRAME = 1024
TINY_BURST, TINY_RATE = 64, 100


def cpu_ns(pids):
    """Time on CPU of the processes' threads, in ns (schedstat: finer than
    clock ticks)."""
    total = 0
    for pid in pids:
        try:
            tids = os.listdir("/proc/%d/task" % pid)
        except OSError:
            continue
        for tid in tids:
            try:
                with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                    total += int(f.read().split()[0])
            except OSError:
                pass
    return total


class FrameLog(RawConn):
    """A RawConn that also records every DATA frame's length and flags."""

    def __init__(self, *a, **kw):
        self.data_frames = []
        super().__init__(*a, **kw)

    def _frame(self, ftype, flags, sid, payload, out):
        if ftype == DATA:
            self.data_frames.append((sid, len(payload), flags & 1))
        super()._frame(ftype, flags, sid, payload, out)


def normal_download(env, path, n):
    """n streams of path on one connection with ordinary windows: server
    CPU ns, DATA frames and bytes."""
    pids = httpd_children(env)
    cpu0 = cpu_ns(pids)
    c = FrameLog(env, "h2c")
    sids = [1 + 2 * i for i in range(n)]
    c.send(b"".join(headers_frame(s, request_block(c, path)) for s in sids))
    c.wait(lambda: all(c.stream_done(s) for s in sids), 30)
    c.close()
    cpu = cpu_ns(pids) - cpu0
    return cpu, len(c.data_frames), sum(ln for _, ln, _ in c.data_frames)


def tiny_updates(env, path, nconns, nstreams, increment, seconds):
    """nconns connections with window 0 and nstreams streams each, opening
    every stream's window by `increment` per round until the server says
    goodbye or `seconds` pass."""
    conns = []
    for _ in range(nconns):
        c = FrameLog(env, "h2c", settings=[(SETTINGS_INITIAL_WINDOW_SIZE, 0)],
                     auto_window=False)
        sids = [1 + 2 * i for i in range(nstreams)]
        c.send(window_update_frame(0, 1 << 30)
               + b"".join(headers_frame(s, request_block(c, path)) for s in sids))
        conns.append((c, sids))
    t0 = time.monotonic()
    rounds = 0
    while time.monotonic() - t0 < seconds:
        live = [(c, sids) for c, sids in conns if not c.closed and not c.goaways]
        if not live:
            break
        for c, sids in live:
            c.send(b"".join(window_update_frame(s, increment) for s in sids))
            c.pump(0)
        rounds += 1
    for c, _ in conns:
        c.wait(lambda: c.closed or c.goaways, 2)
    return conns, rounds, time.monotonic() - t0


def test_one_byte_window_updates_cost_no_more_than_a_normal_download(env):
    """4 connections x 100 streams of /100k.txt, window 0, every stream's
    window opened by 1 byte per round: the DATA frames per byte and the
    server CPU stay within 10x of a normal download of the same bytes, and
    each connection ends with GOAWAY ENHANCE_YOUR_CALM."""
    pids = httpd_children(env)
    with Watch(env, "tiny windows 4 x 100 streams, +1 byte") as w:
        cpu0 = cpu_ns(pids)
        conns, rounds, took = tiny_updates(env, "/100k.txt?tiny", 4, 100, 1, 10)
        attack_cpu = cpu_ns(pids) - cpu0
        frames = sum(len(c.data_frames) for c, _ in conns)
        got = sum(ln for c, _ in conns for _, ln, _ in c.data_frames)
        w.answer = "%s after %d rounds in %.1fs; %d DATA frames, %d bytes" % (
            conns[0][0].answer(), rounds, took, frames, got)
        for c, _ in conns:
            c.close()
    requested = 4 * 100 * len(env.docroot_file("100k.txt"))
    norm_cpu, norm_frames, norm_bytes = normal_download(env, "/10m.txt?tiny-ref", 4)
    from conftest import report
    report("tiny windows: attack %.1f ms server CPU for %d bytes asked (%d frames, %d "
           "bytes sent); normal download %.1f ms for %d bytes (%d frames)"
           % (attack_cpu / 1e6, requested, frames, got, norm_cpu / 1e6, norm_bytes,
              norm_frames))
    for c, _ in conns:
        assert c.goaway_code == ENHANCE_YOUR_CALM, c.answer()
        assert b"WINDOW_UPDATE" in c.goaway[2]
    # frames per byte sent: within 10x of the normal download's
    assert frames <= 10 * (norm_frames / norm_bytes) * max(got, 1) + 4 * (TINY_BURST + 1) \
        + 4 * TINY_RATE * took, (frames, got)
    # the server's work for the attack: within 10x of serving what it asked
    assert attack_cpu <= 10 * norm_cpu * requested / norm_bytes, (attack_cpu, norm_cpu)
    w.check()


def test_small_initial_window_is_honoured(env):
    """A client whose initial window is 100 bytes (and that reopens it as
    it reads) gets its whole response in frames of at most 100 bytes:
    below 1 KiB, its own window is the worthwhile size."""
    c = FrameLog(env, "h2c", settings=[(SETTINGS_INITIAL_WINDOW_SIZE, 100)])
    c.send(headers_frame(1, request_block(c, "/10k.txt?small-window")))
    c.wait(lambda: c.stream_done(1), 20)
    c.close()
    assert c.status(1) == 200, c.answer()
    assert c.data[1] == env.docroot_file("10k.txt")
    assert max(ln for _, ln, _ in c.data_frames) <= 100
    assert not c.goaways


def test_window_opened_in_small_steps_still_gets_every_byte(env):
    """Window 0, then 300 more bytes at a time as frames arrive (slow, but
    honest): the whole 10 KB arrives, in frames of 1 KiB or more but for
    the first few and the last, and the connection is not cut."""
    c = FrameLog(env, "h2c", settings=[(SETTINGS_INITIAL_WINDOW_SIZE, 0)],
                 auto_window=False)
    c.send(window_update_frame(0, 1 << 20) + headers_frame(1, request_block(c, "/10k.txt?steps")))
    t0 = time.monotonic()
    while not c.stream_done(1) and not c.closed and time.monotonic() - t0 < 20:
        c.send(window_update_frame(1, 300))
        c.pump(0.02)
    c.close()
    assert c.status(1) == 200, c.answer()
    assert c.data[1] == env.docroot_file("10k.txt")
    assert not c.goaways, c.answer()
    small = [ln for _, ln, end in c.data_frames if ln < MIN_FRAME and not end]
    assert len(small) <= TINY_BURST, c.data_frames


def test_client_that_reopens_only_a_drained_window_is_not_stalled(env):
    """Initial window 16984 (a full frame and 600 bytes), reopened only when
    all of it has arrived: every window ends in a 600-byte frame, more of
    them than the bucket of small frames holds. Streams that wait for the
    bucket get another try when it refills, so 2.5 MB arrive within 20 s
    and the client is not taken for an abuser (it sends no small
    updates)."""
    win = 16384 + 600
    want = 2500 * 1024
    c = FrameLog(env, "h2c", settings=[(SETTINGS_INITIAL_WINDOW_SIZE, win)],
                 auto_window=False)
    c.send(window_update_frame(0, 1 << 30)
           + headers_frame(1, request_block(c, "/10m.txt?drained-window")))
    opened = win
    t0 = time.monotonic()
    while time.monotonic() - t0 < 20 and not c.closed and not c.goaways:
        c.pump(0.05)
        got = len(c.data.get(1, b""))
        if got >= want:
            break
        if got >= opened:          # the whole window arrived: reopen it
            c.send(window_update_frame(1, win))
            opened += win
    c.close()
    got = len(c.data.get(1, b""))
    assert got >= want, "stalled after %d bytes in %.1f s" % (got, time.monotonic() - t0)
    assert not c.goaways, c.answer()
    assert c.data[1][:got] == env.docroot_file("10m.txt")[:got]
