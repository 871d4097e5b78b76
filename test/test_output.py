"""Output framing as a client sees it: the size of DATA frames
(H2MaxDataFrameLen, H2Padding), where frames end in TLS records, and when
handler output reaches the client (H2OutputBuffering, H2CopyFiles).

TLS records are seen through a TLS 1.3 client that splits what it reads
into records; a record's payload is its length less 17 bytes (content type
byte and AEAD tag), full ones 16384 (RFC 8446 5.1). The records of a
connection's warm-up (H2TLSWarmUpSize, H2TLSCoolDownSecs) follow the TCP
segment of its path: test_tls_records.py. On loopback they are full."""

import pytest

from h2client import H2Client, content, install_cgi, install_file, remove_conf

pytestmark = pytest.mark.h2

H2_WAYS = ["h2", "h2c"]
KB = 1024
MB = 1 << 20
FULL = 16384            # TLS record payload limit, also the default frame size
BIG_WINDOW = 1 << 30    # never make the server wait for WINDOW_UPDATE


@pytest.fixture(scope="module")
def files(env):
    """path -> bytes of the files these tests fetch."""
    out = {}
    for name, size in (("out-200k.bin", 200000), ("out-1m.bin", MB),
                       ("out-3m.bin", 3 * MB)):
        data = content(name, size)
        install_file(env, "htdocs/" + name, data)
        out["/" + name] = data
    return out


def conf_fixture(name, text, where=("server",)):
    """A fixture that adds a config snippet for one test: reloads, and
    takes it away again afterwards."""
    @pytest.fixture
    def fixture(env):
        for w in where:
            env.add_conf(name, text, w)
        env.reload()
        yield
        for w in where:
            remove_conf(env, name, w)
        env.reload()
    return fixture


max_frame_1000 = conf_fixture("output-maxframe", "H2MaxDataFrameLen 1000")
warmup_off = conf_fixture("output-nowarm", "H2TLSWarmUpSize 0", ("https",))
padding_4 = conf_fixture("output-padding", "H2Padding 4")
copy_files = conf_fixture("output-copy", "H2CopyFiles on")
unbuffered = conf_fixture("output-unbuffered", "H2OutputBuffering off")


def fetch(c, path, data):
    r = c.get(path, timeout=60)
    assert r.status == 200
    assert r.ended
    assert r.body == data
    return r


def payloads(r):
    return [n for n, _ in r.data_frames]


# ------------------------------------------------------------- DATA frames

def test_data_frames_are_as_large_as_the_clients_max_frame_size(env, files):
    with H2Client.connect(env, "h2c", window=BIG_WINDOW) as c:
        r = fetch(c, "/out-200k.bin", files["/out-200k.bin"])
    # 200000 = 12 x 16384 + 3392
    assert payloads(r) == [FULL] * 12 + [3392]


@pytest.mark.parametrize("how", H2_WAYS)
def test_max_data_frame_len_caps_every_data_frame(env, files, max_frame_1000, how):
    with H2Client.connect(env, how, window=BIG_WINDOW) as c:
        r = fetch(c, "/out-200k.bin", files["/out-200k.bin"])
    if how == "h2c":
        assert payloads(r) == [1000] * 200
        return
    # TLS: a frame may be cut shorter to end where its (full) record ends,
    # at most one per record
    sizes = payloads(r)
    assert max(sizes) == 1000
    assert sum(sizes) == 200000
    assert len([n for n in sizes if n < 1000]) <= 200000 // FULL + 1, sizes


@pytest.mark.parametrize("how", H2_WAYS)
def test_padding_adds_up_to_2_pow_bits_minus_1_bytes_to_data_frames(env, files,
                                                                  padding_4, how):
    with H2Client.connect(env, how, window=BIG_WINDOW) as c:
        r = fetch(c, "/out-200k.bin", files["/out-200k.bin"])
    pads = [flow - n for n, flow in r.data_frames]
    assert all(0 <= p <= 15 for p in pads), pads
    # 13+ frames, each unpadded with odds 1/16: most are padded, full
    # frames too (nghttp2 pads only within the length it offered)
    assert sum(p > 0 for p in pads) >= len(pads) // 2, r.data_frames
    assert all(n + p <= FULL for n, p in zip(payloads(r), pads))


# ------------------------------------------------------------- TLS records

def test_tls_data_frames_end_where_their_records_end(env, files, warmup_off):
    """Frames are cut to the record they start in (16375 payload bytes plus
    the 9-byte header), so no frame straddles two records."""
    with H2Client.connect(env, "h2-tap", window=BIG_WINDOW) as c:
        r = fetch(c, "/out-3m.bin", files["/out-3m.bin"])
    sizes = payloads(r)
    assert sum(sizes) == 3 * MB
    assert max(sizes) == FULL - 9
    assert sizes.count(FULL - 9) >= 0.95 * len(sizes)


# ------------------------------------------------------------- handler output

@pytest.mark.parametrize("how", H2_WAYS)
def test_copy_files_on_serves_files_byte_exact(env, files, copy_files, how):
    with H2Client.connect(env, how, window=BIG_WINDOW) as c:
        for p in ("/out-200k.bin", "/out-3m.bin"):
            fetch(c, p, files[p])


CGI_TICK = r"""
import sys, time
sys.stdout.write("Content-Type: text/event-stream\r\n\r\n")
sys.stdout.write("data: one\n\n")
sys.stdout.flush()
time.sleep(3)
sys.stdout.write("data: two\n\n")
"""


@pytest.mark.parametrize("how", H2_WAYS)
def test_output_buffering_off_passes_each_write_on_at_once(env, unbuffered, how):
    install_cgi(env, "tick.py", CGI_TICK)
    with H2Client.connect(env, how) as c:
        sid = c.request("GET", "/cgi-bin/tick.py")
        r = c.responses[sid]
        c.wait(lambda: r.body_len > 0 or r.done, 20, "first event")
        # the first event arrives while the script still sleeps
        assert r.body == b"data: one\n\n"
        assert not r.ended
        c.wait_done(sid)
    assert r.status == 200
    assert r.headers["content-type"] == "text/event-stream"
    assert r.body == b"data: one\n\ndata: two\n\n"
