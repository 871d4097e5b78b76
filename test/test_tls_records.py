"""TLS records on the wire during a connection's warm-up (issue 32): the
records of the first H2TLSWarmUpSize bytes each fit one TCP segment of the
connection's path, so the client can decrypt each segment as it arrives;
after them, records are full (16384 payload bytes, RFC 8446 5.1).

A warm-up record carries the server's segment size (Linux's TCP_MAXSEG,
timestamps already taken off) less 29 bytes, the most a record adds with
the suites HTTP/2 allows; on the wire it is 5 header bytes, the payload, a
content type byte and a 16 byte tag (TLS 1.3). The paths:

  loopback   MTU 65536: segments of tens of KB (Linux bounds TCP_MAXSEG
             by half the largest window the peer offered, up to 65483),
             so records are full from the first byte
  clamped    loopback with the client announcing a 1460 byte MSS
             (TCP_MAXSEG set before connect), as any client behind a
             1500 byte MTU does: segments of 1448, warm-up records of 1419
             payload bytes, 1441 on the wire
  mtu1500    a veth pair at MTU 1500 into a network namespace this file
             makes (root only): the server listens on the host side, the
             client connects from inside; the same 1448/1419/1441

The records are seen through a client that reads the raw TLS stream
(h2client.TlsRecordTap). Each path's sizes go to the run's report."""

import ctypes
import os
import shutil
import socket
import ssl
import subprocess
import time

import pytest

from conftest import report
from h2client import (H2Client, TlsRecordTap, content, install_file, remove_conf,
                      tcp_connect)

pytestmark = pytest.mark.h2

MB = 1 << 20
FULL = 16384                # a full record's payload
AEAD = 17                   # TLS 1.3: content type byte + 16 byte tag
HEADER = 5
OVERHEAD = 29               # what mod_h2 leaves for a record's additions
BIG_WINDOW = 1 << 30        # never make the server wait for WINDOW_UPDATE
PEER_MSS = 1460             # what a host on a 1500 byte MTU link announces
FILE = "/records-3m.bin"
CLONE_NEWNET = 0x40000000


@pytest.fixture(scope="module")
def body(env):
    data = content("records-3m.bin", 3 * MB)
    install_file(env, "htdocs" + FILE, data)
    return data


def segment_of(mtu):
    """Linux's TCP_MAXSEG on an IPv4 path of that MTU: less 20 bytes of IP
    and 20 of TCP header, and 12 of timestamps when they are on (1448 at
    MTU 1500)."""
    with open("/proc/sys/net/ipv4/tcp_timestamps") as f:
        timestamps = f.read().strip() != "0"
    return mtu - 40 - (12 if timestamps else 0)


# ------------------------------------------------------------------ paths

def loopback_socket(env):
    return tcp_connect(env.https_port, 10)


def clamped_socket(env):
    """A loopback connection whose client announces PEER_MSS in its SYN."""
    return tcp_connect(env.https_port, 10, PEER_MSS)


def ip(*args, check=True):
    r = subprocess.run(["ip"] + list(args), stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=30)
    if check and r.returncode != 0:
        raise RuntimeError("ip %s: %s" % (" ".join(args), r.stdout.strip()))
    return r


class Mtu1500Path:
    """A namespace `ns` with one end of a veth pair at MTU 1500 (client
    address `client`), the other end on the host (`server`); names and
    the /30 come from the port base, so test runs on other bases do not
    meet."""

    def __init__(self, port_base):
        n = port_base // 100 % 256
        self.ns = "h2rec%d" % port_base
        self.host_if = "h2r%da" % port_base
        self.ns_if = "h2r%db" % port_base
        self.server = "10.231.%d.1" % n
        self.client = "10.231.%d.2" % n

    def up(self):
        ip("netns", "add", self.ns)
        ip("link", "add", self.host_if, "mtu", "1500", "type", "veth",
           "peer", "name", self.ns_if, "mtu", "1500")
        ip("link", "set", self.ns_if, "netns", self.ns)
        ip("addr", "add", self.server + "/30", "dev", self.host_if)
        ip("link", "set", self.host_if, "up")
        ip("-n", self.ns, "addr", "add", self.client + "/30", "dev", self.ns_if)
        ip("-n", self.ns, "link", "set", self.ns_if, "up")
        ip("-n", self.ns, "link", "set", "lo", "up")

    def set_mtu(self, mtu):
        ip("link", "set", self.host_if, "mtu", str(mtu))
        ip("-n", self.ns, "link", "set", self.ns_if, "mtu", str(mtu))

    def down(self):
        """Remove what up() made, whatever of it exists."""
        ip("link", "del", self.host_if, check=False)
        ip("netns", "del", self.ns, check=False)

    def connect(self, port):
        """A TCP connection to server:port made from inside the namespace
        (only the calling thread switches, and it switches back)."""
        libc = ctypes.CDLL(None, use_errno=True)
        own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        try:
            ns = os.open("/run/netns/" + self.ns, os.O_RDONLY)
            try:
                setns(libc, ns)
                try:
                    return socket.create_connection((self.server, port), timeout=10)
                finally:
                    setns(libc, own)
            finally:
                os.close(ns)
        finally:
            os.close(own)


def setns(libc, fd):
    if libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, "setns: " + os.strerror(e))


def mtu1500_conf(env, path):
    sb = env.sandbox
    return """\
Listen {addr}:{port}
<VirtualHost {addr}:{port}>
    ServerName {domain}
    Protocols h2 http/1.1
    DocumentRoot "{docroot}"
    SSLEngine on
    SSLCertificateFile "{cert}"
    SSLCertificateKeyFile "{key}"
</VirtualHost>
""".format(addr=path.server, port=env.https_port, domain=env.domain,
           docroot=sb.docroot, cert=sb.server_cert, key=sb.server_key)


@pytest.fixture(scope="module")
def mtu1500(env):
    if os.geteuid() != 0:
        pytest.skip("a network namespace needs root")
    if not shutil.which("ip"):
        pytest.skip("no ip(8) to make a network namespace with")
    path = Mtu1500Path(env.port_base)
    path.down()                 # a run killed before its clean-up
    try:
        try:
            path.up()
        except RuntimeError as e:
            pytest.skip("cannot make a network namespace: %s" % e)
        env.add_conf("tls-records-mtu1500", mtu1500_conf(env, path))
        env.reload()
        try:
            yield path
        finally:
            remove_conf(env, "tls-records-mtu1500", "server")
            env.reload()
    finally:
        path.down()


# ------------------------------------------------------------------ client

def tap_client(env, raw):
    """An HTTP/2 client over TLS 1.3 on the connected socket raw that
    notes each record's length (c.sock.records)."""
    ctx = ssl.create_default_context(cafile=env.sandbox.ca_cert)
    ctx.set_alpn_protocols(["h2"])
    try:
        tap = TlsRecordTap(raw, ctx, env.domain)
    except Exception:
        raw.close()
        raise
    assert tap.selected_alpn_protocol() == "h2"
    tap.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    c = H2Client(tap, window=BIG_WINDOW)
    c.host = env.domain
    c.scheme = "https"
    c.authority = "%s:%d" % (env.domain, env.https_port)
    return c


def client_segment(c):
    """The client's segment size (on the paths here the server's is the
    same; its own read is in its trace log, AH21211)."""
    return c.sock.raw.getsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG)


def fetch(c, data):
    r = c.get(FILE, timeout=60)
    assert r.status == 200
    assert r.ended
    assert r.body == data


def response_records(c, data):
    """Payload sizes of the records that carry one response of data."""
    n0 = len(c.sock.records)
    fetch(c, data)
    return [n - AEAD for n in c.sock.records[n0:]]


def summary(recs):
    """Runs of equal sizes, e.g. "1419 x 740, 16384 x 128"."""
    runs = []
    for n in recs:
        if runs and runs[-1][0] == n:
            runs[-1][1] += 1
        else:
            runs.append([n, 1])
    return ", ".join("%d x %d" % (n, k) if k > 1 else str(n) for n, k in runs)


@pytest.fixture(params=["loopback", "clamped", "mtu1500"])
def path(request, env):
    """(name, a function that makes a TCP connection to the https port
    over that path)."""
    name = request.param
    if name == "loopback":
        return name, lambda: loopback_socket(env)
    if name == "clamped":
        return name, lambda: clamped_socket(env)
    ns = request.getfixturevalue("mtu1500")
    return name, lambda: ns.connect(env.https_port)


def conf_fixture(name, text):
    """A fixture that adds a server-wide config snippet for one test."""
    @pytest.fixture
    def fixture(env):
        env.add_conf(name, text)
        env.reload()
        yield
        remove_conf(env, name, "server")
        env.reload()
    return fixture


# the segment size read, logged at trace1 (AH21211)
trace = conf_fixture("tls-records-trace", "LogLevel http2:trace1")
trace_no_cool_down = conf_fixture("tls-records-trace",
                                  "LogLevel http2:trace1\nH2TLSCoolDownSecs 0")


def segment_lines(env, start, port):
    """The AH21211 lines logged since start for the client port."""
    return [l for l in env.sandbox.log_since(start).splitlines()
            if "AH21211" in l and ":%d]" % port in l]


def segment_line_end(segment):
    return ": TCP segment %d bytes, TLS warm-up records of %d bytes" % (
        segment, segment - OVERHEAD)


def first_full(recs):
    return next(i for i, n in enumerate(recs) if n == FULL)


def full_share(recs):
    """The share of the bytes in recs that went in full records."""
    return sum(n for n in recs if n == FULL) / sum(recs)


def not_ours(env, what, recs):
    """Stock mod_http2 sizes records its own way: the test documents that
    (xfail) when the property does not hold for it."""
    if env.module != "ours":
        pytest.xfail("the %s module %s: %s" % (env.module, what, summary(recs)[:300]))


# ------------------------------------------------------------------ tests

def test_records_of_a_3_mib_response_per_path(env, body, path):
    """Every path: the response arrives intact; the record sizes go to the
    report. On loopback the body starts with a full record; on a 1500
    byte MTU path the first MiB (H2TLSWarmUpSize) is in records of one
    segment, full records after it."""
    name, connect = path
    with tap_client(env, connect()) as c:
        seg = client_segment(c)
        recs = response_records(c, body)
    report("TLS records, %s, %s (client's TCP_MAXSEG %d): %s"
           % (env.module, name, seg, summary(recs)[:400]))
    i = first_full(recs)
    if name == "loopback":
        if max(recs[:i]) >= 1000 or full_share(recs[i:]) < 0.95:
            not_ours(env, "does not write full records from the start", recs)
        # before it: the session tickets and the response's HEADERS
        assert max(recs[:i]) < 1000, summary(recs)
        assert full_share(recs[i:]) >= 0.95, summary(recs)
        return
    segment = segment_of(1500)
    warm = segment - OVERHEAD
    assert seg == segment
    if sum(recs[:i]) < MB or max(recs[:i]) > warm:
        not_ours(env, "does not write the warm-up in records of one segment", recs)
    # every record before the first full one fits a segment with its
    # header, content type and tag
    assert max(recs[:i]) + HEADER + AEAD <= segment, summary(recs)
    assert max(recs[:i]) == warm, summary(recs)
    # all of them warm-up sized but where a write ended
    assert sum(n for n in recs[:i] if n == warm) >= 0.99 * sum(recs[:i]), summary(recs)
    # the warm-up ends with the record that passes 1 MiB (the sum here
    # has OpenSSL's session tickets and the HEADERS too)
    assert MB <= sum(recs[:i]) <= MB + 2 * warm, summary(recs)
    assert full_share(recs[i:]) >= 0.95, summary(recs)


def test_the_segment_size_is_read_once_when_the_connection_starts(env, body,
                                                                 trace_no_cool_down):
    """The trace1 log names the segment read and the record size that
    follows from it; without a cool-down there is one warm-up, at the
    connection's first write, and one read."""
    if env.module != "ours":
        pytest.skip("AH21211 is mod_h2's")
    start = env.log_offset()
    with tap_client(env, clamped_socket(env)) as c:
        port = c.sock.raw.getsockname()[1]
        fetch(c, body)
        fetch(c, body)
    lines = segment_lines(env, start, port)
    assert len(lines) == 1, lines
    assert lines[0].endswith(segment_line_end(segment_of(1500)))


def test_a_warm_up_after_the_cool_down_reads_the_segment_again(env, body, mtu1500,
                                                              trace):
    """The path's MTU drops to 1280 while the connection idles: the next
    warm-up after H2TLSCoolDownSecs (1) uses the segment the kernel has
    then. The kernel adjusts a connection's segment when it next sends (or
    when an ICMP "fragmentation needed" comes in); a small response first
    has it send."""
    if env.module != "ours":
        pytest.skip("stock has no warm-up records on this path")
    start = env.log_offset()
    segment = segment_of(1280)
    with tap_client(env, mtu1500.connect(env.https_port)) as c:
        port = c.sock.raw.getsockname()[1]
        before = response_records(c, body)
        try:
            mtu1500.set_mtu(1280)
            r = c.get("/1k.txt")
            assert r.status == 200
            time.sleep(2.5)
            after = response_records(c, body)
        finally:
            mtu1500.set_mtu(1500)
    report("TLS records, %s, MTU 1500 then 1280 after a cool-down (MSS %d): %s"
           % (env.module, segment, summary(after)[:300]))
    assert max(before[:first_full(before)]) == segment_of(1500) - OVERHEAD
    i = first_full(after)
    assert max(after[:i]) == segment - OVERHEAD, summary(after)
    assert sum(n for n in after[:i] if n == segment - OVERHEAD) >= 0.99 * sum(after[:i])
    lines = segment_lines(env, start, port)
    assert lines[0].endswith(segment_line_end(segment_of(1500))), lines
    assert lines[-1].endswith(segment_line_end(segment)), lines


# ------------------------------------------- H2TLSWarmUpSize, H2TLSCoolDownSecs

warm_up_0 = conf_fixture("tls-records-warmup", "H2TLSWarmUpSize 0")
warm_up_100k = conf_fixture("tls-records-warmup", "H2TLSWarmUpSize 100000")


def clamped_warm():
    return segment_of(1500) - OVERHEAD


def test_warm_up_size_sets_the_bytes_written_in_segment_records(env, body,
                                                               warm_up_100k):
    """H2TLSWarmUpSize 100000: the records of one segment stop with the
    one that passes 100000 bytes."""
    with tap_client(env, clamped_socket(env)) as c:
        recs = response_records(c, body)
    i = first_full(recs)
    if sum(recs[:i]) < 100000:
        not_ours(env, "does not write the warm-up in records of one segment", recs)
    assert max(recs[:i]) == clamped_warm(), summary(recs)
    assert 100000 <= sum(recs[:i]) <= 100000 + 2 * clamped_warm(), summary(recs)
    assert full_share(recs[i:]) >= 0.95, summary(recs)


def test_warm_up_size_0_writes_full_records_from_the_start(env, body, warm_up_0):
    """Even where segments are small."""
    with tap_client(env, clamped_socket(env)) as c:
        recs = response_records(c, body)
    i = first_full(recs)
    # before it: the session tickets and the response's HEADERS
    assert max(recs[:i]) < 1000, summary(recs)
    assert full_share(recs[i:]) >= 0.95, summary(recs)


def test_a_busy_connection_stays_at_full_records_and_warms_up_after_cool_down(env,
                                                                            body):
    """H2TLSCoolDownSecs 1 (the default): a response right after another
    starts with full records; after 2.5 s idle the first MiB is in records
    of one segment again."""
    with tap_client(env, clamped_socket(env)) as c:
        fetch(c, body)
        busy = response_records(c, body)
        time.sleep(2.5)
        idle = response_records(c, body)
    if full_share(busy) < 0.95 or sum(idle[:first_full(idle)]) < MB:
        not_ours(env, "does not warm up again after the cool-down", busy + idle)
    # the HEADERS in the first record, or a full one
    assert busy[0] == FULL or busy[1] == FULL, summary(busy)
    assert full_share(busy) >= 0.95, summary(busy)
    i = first_full(idle)
    assert max(idle[:i]) == clamped_warm(), summary(idle)
    assert MB <= sum(idle[:i]) <= MB + 2 * clamped_warm(), summary(idle)
