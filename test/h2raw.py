"""Raw HTTP/2 frames for hostile-client tests (test_attacks.py,
test_smuggling.py): a connection that sends exactly the bytes a test
builds (no state machine in the way), hand-made HPACK blocks (so any name
or value goes on the wire), and watchers for what the attacks cost the
server: RSS and CPU time of the httpd children, and the latency of a
normal client served meanwhile on a second connection.

    c = RawConn(env, "h2c")
    c.send(headers_frame(1, request_block(c, "/1k.txt")))
    c.wait(lambda: 1 in c.ended or c.rst.get(1) is not None, 5)
"""

import os
import select
import socket
import ssl
import struct
import threading
import time

import hpack

from h2client import H2Client
from sandbox import ASAN_QUARANTINE_MB

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

# frame types
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, \
    WINDOW_UPDATE, CONTINUATION = range(10)
PRIORITY_UPDATE = 0x10      # RFC 9218 7.1
# flags
END_STREAM = 0x1
ACK = 0x1
END_HEADERS = 0x4
PADDED = 0x8
PRIORITY_FLAG = 0x20

# RFC 9113 section 7
ERROR_NAMES = ["NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
               "SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR",
               "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR",
               "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"]
NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR = 0, 1, 2, 3
STREAM_CLOSED, FRAME_SIZE_ERROR, REFUSED_STREAM, CANCEL = 5, 6, 7, 8
COMPRESSION_ERROR, ENHANCE_YOUR_CALM = 9, 11

# RFC 9113 6.8: a shutdown notice is a GOAWAY naming the highest stream id
MAX_STREAM_ID = 2 ** 31 - 1

SETTINGS_HEADER_TABLE_SIZE = 0x1
SETTINGS_ENABLE_PUSH = 0x2
SETTINGS_MAX_CONCURRENT_STREAMS = 0x3
SETTINGS_INITIAL_WINDOW_SIZE = 0x4
SETTINGS_MAX_FRAME_SIZE = 0x5
SETTINGS_NO_RFC7540_PRIORITIES = 0x9     # RFC 9218 2.1


def err_name(code):
    if code is None:
        return "none"
    return ERROR_NAMES[code] if 0 <= code < len(ERROR_NAMES) else "0x%x" % code


# ------------------------------------------------------------- frames
def frame(ftype, flags, sid, payload=b""):
    n = len(payload)
    return struct.pack(">BHBBI", n >> 16, n & 0xffff, ftype, flags,
                       sid & 0x7fffffff) + payload


def settings_frame(pairs=(), ack=False):
    return frame(SETTINGS, ACK if ack else 0, 0,
                 b"".join(struct.pack(">HI", k, v) for k, v in pairs))


def headers_frame(sid, block, end_stream=True, end_headers=True):
    flags = (END_STREAM if end_stream else 0) | (END_HEADERS if end_headers else 0)
    return frame(HEADERS, flags, sid, block)


def continuation_frame(sid, block, end_headers=False):
    return frame(CONTINUATION, END_HEADERS if end_headers else 0, sid, block)


def header_frames(sid, block, end_stream=True, max_frame=16384):
    """A header block of any size: HEADERS, then CONTINUATIONs as needed."""
    parts = [block[i:i + max_frame] for i in range(0, len(block), max_frame)] or [b""]
    out = [headers_frame(sid, parts[0], end_stream, end_headers=len(parts) == 1)]
    for i, part in enumerate(parts[1:], 2):
        out.append(continuation_frame(sid, part, end_headers=i == len(parts)))
    return b"".join(out)


def data_frame(sid, data=b"", end_stream=False):
    return frame(DATA, END_STREAM if end_stream else 0, sid, data)


def rst_frame(sid, code=CANCEL):
    return frame(RST_STREAM, 0, sid, struct.pack(">I", code))


def window_update_frame(sid, increment):
    return frame(WINDOW_UPDATE, 0, sid, struct.pack(">I", increment))


def priority_frame(sid, depends_on=0, weight=16, exclusive=False):
    dep = depends_on | (0x80000000 if exclusive else 0)
    return frame(PRIORITY, 0, sid, struct.pack(">IB", dep, weight - 1))


def priority_update_frame(prioritized, value, sid=0):
    """RFC 9218 7.1: PRIORITY_UPDATE (type 0x10) for stream `prioritized`."""
    if isinstance(value, str):
        value = value.encode()
    return frame(PRIORITY_UPDATE, 0, sid, struct.pack(">I", prioritized) + value)


def ping_frame(data=b"\0" * 8, ack=False):
    return frame(PING, ACK if ack else 0, 0, data)


def goaway_frame(last_sid=0, code=NO_ERROR, debug=b""):
    return frame(GOAWAY, 0, 0, struct.pack(">II", last_sid, code) + debug)


# ------------------------------------------------------------- HPACK by hand
def hp_int(value, prefix, flags=0):
    top = (1 << prefix) - 1
    if value < top:
        return bytes([flags | value])
    out = [flags | top]
    value -= top
    while value >= 128:
        out.append((value & 127) | 128)
        value >>= 7
    out.append(value)
    return bytes(out)


def hp_str(s):
    b = s if isinstance(s, bytes) else s.encode("latin-1")
    return hp_int(len(b), 7) + b


def hp_literal(name, value):
    """Literal field without indexing, new name: no table state, any bytes."""
    return b"\x00" + hp_str(name) + hp_str(value)


def hp_literal_indexed(name, value):
    """Literal field with incremental indexing (enters the dynamic table)."""
    return b"\x40" + hp_str(name) + hp_str(value)


def hp_indexed(index):
    return hp_int(index, 7, 0x80)


def hp_block(headers):
    return b"".join(hp_literal(n, v) for n, v in headers)


def request_headers(conn, path, method="GET", extra=(), authority=None):
    return [(":method", method), (":scheme", conn.scheme),
            (":authority", authority or conn.authority), (":path", path)] + list(extra)


def request_block(conn, path, method="GET", extra=(), authority=None):
    return hp_block(request_headers(conn, path, method, extra, authority))


# ------------------------------------------------------------- connection
class RawConn:
    """One HTTP/2 connection that sends whatever bytes it is given and
    records what the server answers: GOAWAYs (code, last stream, debug
    data), RST_STREAM codes, response status and DATA per stream."""

    def __init__(self, env, how="h2c", settings=(), rcvbuf=None, timeout=5,
                 auto_window=True, ack_settings=True):
        self.how = how
        port = env.https_port if how == "h2" else env.http_port
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        # under a sanitizer (valgrind: code runs slowly the first time)
        raw.settimeout(timeout * getattr(env, "slow", 1))
        raw.connect(("127.0.0.1", port))
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if how == "h2":
            ctx = ssl.create_default_context(cafile=env.sandbox.ca_cert)
            ctx.set_alpn_protocols(["h2"])
            self.sock = ctx.wrap_socket(raw, server_hostname=env.domain)
            assert self.sock.selected_alpn_protocol() == "h2"
        else:
            self.sock = raw
        self.scheme = "https" if how == "h2" else "http"
        self.authority = "%s:%d" % (env.domain, port)
        self.auto_window = auto_window
        self.ack_settings = ack_settings
        self.inbuf = bytearray()
        self.decoder = hpack.Decoder()
        self.decoder.max_header_list_size = 1 << 20
        self._hblock = None
        self.goaways = []          # (last_stream_id, code, debug bytes)
        self.rst = {}              # stream id -> error code
        self.rst_codes = []        # every RST_STREAM code, in order
        self.headers = {}          # stream id -> [header lists]
        self.promises = []         # (stream id, promised id, request fields)
        self.data = {}             # stream id -> bytes received (bytearray)
        self.data_order = []       # stream id of each DATA frame, in order
        self.ended = set()
        self.frames_in = {}        # type -> count
        self.frame_order = []      # (type, stream id) of each frame, in order
        self.server_settings = []
        self.ping_acks = 0
        self.pings = []            # payloads of the server's own PINGs
        self.window_updates = {}   # stream id -> sum of WINDOW_UPDATE increments
        self.closed = False
        self.closed_at = None
        self.send_stalled = False
        self.bytes_sent = 0
        self.send(PREFACE + settings_frame(settings))

    # -- output
    def send(self, data):
        if self.closed:
            return False
        try:
            self.sock.sendall(data)
            self.bytes_sent += len(data)
            return True
        except socket.timeout:
            self.send_stalled = True
            return False
        except OSError:
            self._mark_closed()
            return False

    def _mark_closed(self):
        if not self.closed:
            self.closed = True
            self.closed_at = time.monotonic()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    # -- input
    def _readable(self, timeout):
        if isinstance(self.sock, ssl.SSLSocket) and self.sock.pending():
            return True
        p = select.poll()
        p.register(self.sock, select.POLLIN)
        return bool(p.poll(max(timeout, 0) * 1000))

    def pump(self, timeout=0.0):
        """Read and process what arrives within `timeout` (and whatever is
        already there); False once the connection is closed."""
        if self.closed:
            return False
        first = True
        while first or self._readable(0):
            if not self._readable(timeout if first else 0):
                return True
            first = False
            if not self._recv_once(1 << 18):
                return False
        return True

    def read_some(self, n, timeout=5.0):
        """Read and process one piece of at most `n` bytes (waiting up to
        `timeout` for it), as a client that reads as it goes; False once
        the connection is closed."""
        if self.closed or not self._readable(timeout):
            return not self.closed
        return self._recv_once(n)

    def _recv_once(self, n):
        """One recv() of at most n bytes, processed; False when closed."""
        try:
            chunk = self.sock.recv(n)
        except (ssl.SSLWantReadError, socket.timeout):
            return True
        except OSError:
            self._mark_closed()
            return False
        if not chunk:
            self._mark_closed()
            return False
        self.inbuf += chunk
        self._parse()
        return True

    def _parse(self):
        out = []
        buf = self.inbuf
        pos = 0
        while len(buf) - pos >= 9:
            n = (buf[pos] << 16) | (buf[pos + 1] << 8) | buf[pos + 2]
            if len(buf) - pos < 9 + n:
                break
            ftype, flags = buf[pos + 3], buf[pos + 4]
            sid = struct.unpack(">I", buf[pos + 5:pos + 9])[0] & 0x7fffffff
            payload = bytes(buf[pos + 9:pos + 9 + n])
            pos += 9 + n
            self._frame(ftype, flags, sid, payload, out)
        del buf[:pos]
        if out:
            self.send(b"".join(out))

    def _frame(self, ftype, flags, sid, payload, out):
        self.frames_in[ftype] = self.frames_in.get(ftype, 0) + 1
        self.frame_order.append((ftype, sid))
        if ftype == SETTINGS and not flags & ACK:
            self.server_settings.append(
                [struct.unpack(">HI", payload[i:i + 6]) for i in range(0, len(payload), 6)])
            if self.ack_settings:
                out.append(settings_frame(ack=True))
        elif ftype == PING and flags & ACK:
            self.ping_acks += 1
        elif ftype == PING:
            self.pings.append(payload)     # answered by the test, if at all
        elif ftype == WINDOW_UPDATE:
            inc = struct.unpack(">I", payload[:4])[0] & 0x7fffffff
            self.window_updates[sid] = self.window_updates.get(sid, 0) + inc
        elif ftype == GOAWAY:
            last, code = struct.unpack(">II", payload[:8])
            self.goaways.append((last & 0x7fffffff, code, payload[8:]))
        elif ftype == RST_STREAM:
            code = struct.unpack(">I", payload[:4])[0]
            self.rst[sid] = code
            self.rst_codes.append(code)
        elif ftype in (HEADERS, CONTINUATION, PUSH_PROMISE):
            promised = None
            if ftype in (HEADERS, PUSH_PROMISE):
                if flags & PADDED:
                    payload = payload[1:len(payload) - payload[0]]
                if ftype == PUSH_PROMISE:
                    promised = struct.unpack(">I", payload[:4])[0] & 0x7fffffff
                    payload = payload[4:]
                elif flags & PRIORITY_FLAG:
                    payload = payload[5:]
                self._hblock = (sid, bytearray(), flags & END_STREAM, promised)
            self._hblock[1].extend(payload)
            if flags & END_HEADERS:
                hsid, block, es, promised = self._hblock
                self._hblock = None
                # decoded in any case: HPACK's table is the connection's
                hdrs = [(k.decode("latin-1"), v.decode("latin-1"))
                        for k, v in self.decoder.decode(bytes(block), raw=True)]
                if promised is not None:
                    self.promises.append((hsid, promised, hdrs))
                else:
                    self.headers.setdefault(hsid, []).append(hdrs)
                if es:
                    self.ended.add(hsid)
        elif ftype == DATA:
            if flags & PADDED:
                body = payload[1:len(payload) - payload[0]]
            else:
                body = payload
            buf = self.data.get(sid)
            if not isinstance(buf, bytearray):
                # a test may have reset it to bytes to keep memory flat
                buf = self.data[sid] = bytearray(buf or b"")
            buf.extend(body)
            self.data_order.append(sid)
            if flags & END_STREAM:
                self.ended.add(sid)
            if self.auto_window and payload:
                out.append(window_update_frame(0, len(payload)))
                if not flags & END_STREAM:
                    out.append(window_update_frame(sid, len(payload)))

    # -- conveniences
    def status(self, sid):
        for hl in self.headers.get(sid, []):
            d = dict(hl)
            if ":status" in d and not d[":status"].startswith("1"):
                return int(d[":status"])
        return None

    def stream_done(self, sid):
        return sid in self.ended or sid in self.rst

    @property
    def goaway(self):
        return self.goaways[-1] if self.goaways else None

    @property
    def goaway_code(self):
        return self.goaways[-1][1] if self.goaways else None

    def wait(self, predicate, timeout):
        """Pump until predicate() or the connection closed or `timeout`;
        returns predicate()."""
        deadline = time.monotonic() + timeout
        while not predicate():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if not self.pump(min(left, 0.1)):
                return predicate()
        return True

    def wait_goaway_or_close(self, timeout):
        return self.wait(lambda: self.goaways or self.closed, timeout)

    def wait_answer(self, timeout):
        """Wait for GOAWAY or close; after a GOAWAY also for the close."""
        deadline = time.monotonic() + timeout
        self.wait_goaway_or_close(timeout)
        if self.goaways:
            self.wait_closed(max(0.0, deadline - time.monotonic()))
        return self.goaways or self.closed

    def wait_closed(self, timeout):
        return self.wait(lambda: self.closed, timeout)

    def answer(self):
        """What the server said to this connection, for the report."""
        parts = []
        for last, code, debug in self.goaways:
            parts.append("GOAWAY %s last=%d %r" % (err_name(code), last,
                                                  debug.decode("latin-1")[:60]))
        if self.rst_codes:
            counts = {}
            for c in self.rst_codes:
                counts[err_name(c)] = counts.get(err_name(c), 0) + 1
            parts.append("RST_STREAM " + ",".join("%s x%d" % kv for kv in sorted(counts.items())))
        if self.closed:
            parts.append("closed")
        return "; ".join(parts) or "nothing"

    def check_codes(self):
        """Item 9: every code is an RFC 9113 error code, debug data is text."""
        for last, code, debug in self.goaways:
            assert 0 <= code <= 0xd, "GOAWAY with unknown error code 0x%x" % code
            text = debug.decode("utf-8")   # raises on binary junk
            assert all(ch.isprintable() for ch in text), "GOAWAY debug data %r" % debug
        for code in self.rst_codes:
            assert 0 <= code <= 0xd, "RST_STREAM with unknown error code 0x%x" % code


# ------------------------------------------------------------- server cost
def _read(path):
    with open(path) as f:
        return f.read()


def httpd_children(env):
    """Pids of the sandbox httpd's child processes (parent from the pid file)."""
    return env.sandbox.child_pids()


def _status_kib(pids, field):
    """The sum of a /proc/PID/status field (in kB) over pids, in bytes."""
    total = 0
    for pid in pids:
        try:
            for line in _read("/proc/%d/status" % pid).splitlines():
                if line.startswith(field + ":"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def rss_bytes(pids):
    return _status_kib(pids, "VmRSS")


def anon_bytes(pids):
    """Anonymous memory (RssAnon) of pids: what the processes allocated,
    without the file pages they map (a static file's mapping is the page
    cache, shared)."""
    return _status_kib(pids, "RssAnon")


def cpu_seconds(pids):
    """utime+stime per pid (dict), in seconds."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for pid in pids:
        try:
            stat = _read("/proc/%d/stat" % pid)
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        out[pid] = (int(fields[11]) + int(fields[12])) / tick
    return out


class Prober(threading.Thread):
    """A normal client on its own h2c connection, fetching /1k.txt in a
    loop while an attack runs; records each request's latency."""

    def __init__(self, env, path="/1k.txt", pause=0.05):
        super().__init__(daemon=True)
        self.env = env
        self.path = path
        self.pause = pause
        self.expected = env.docroot_file(path.lstrip("/"))
        self.latencies = []
        self.failures = []
        self._halt = threading.Event()

    def run(self):
        c = None
        while not self._halt.is_set():
            start = time.monotonic()
            try:
                if c is None:
                    c = H2Client.connect(self.env, "h2c", timeout=10)
                r = c.get(self.path, timeout=10)
                assert r.status == 200 and r.body == self.expected, r
                if c.goaway is not None or c.closed:
                    c.close()
                    c = None
            except Exception as e:   # noqa: BLE001 - recorded, asserted by the test
                self.failures.append("%.1fs: %r" % (time.monotonic() - start, e))
                if c is not None:
                    c.close()
                c = None
            self.latencies.append(time.monotonic() - start)
            self._halt.wait(self.pause)
        if c is not None:
            c.close()

    def stop(self):
        self._halt.set()
        self.join(30)

    @property
    def max_latency(self):
        return max(self.latencies) if self.latencies else None


class Watch:
    """Measures one attack: httpd children's RSS (start, peak, end; a child
    started meanwhile counts only what it holds beyond a child's share at
    the start) and CPU time, and a Prober's latencies during it.

        with Watch(env, "rapid reset h2c") as w:
            ... attack ...
            w.answer = c.answer()
        w.check()
    """

    def __init__(self, env, name, probe=True):
        self.env = env
        self.name = name
        self.probe = probe
        self.answer = "?"
        self.extra = ""
        self._halt = threading.Event()

    def __enter__(self):
        pids0 = httpd_children(self.env)
        self.rss0 = rss_bytes(pids0)
        self.cpu0 = cpu_seconds(pids0)
        self.peak = self.rss0
        # children the MPM starts meanwhile (more connections than its
        # threads on a busy machine) are charged what one child held at the
        # start, not counted as the server's growth
        self.pids0 = set(pids0)
        self.child_rss0 = self.rss0 // max(1, len(pids0))
        self.t0 = time.monotonic()
        self.sampler = threading.Thread(target=self._sample, daemon=True)
        self.sampler.start()
        self.prober = Prober(self.env) if self.probe else None
        if self.prober:
            self.prober.start()
        return self

    def _rss_less_new_children(self):
        pids = httpd_children(self.env)
        new = len(set(pids) - self.pids0)
        return rss_bytes(pids) - new * self.child_rss0

    def _sample(self):
        while not self._halt.wait(0.1):
            self.peak = max(self.peak, self._rss_less_new_children())

    def __exit__(self, *exc):
        self.duration = time.monotonic() - self.t0
        if self.prober:
            self.prober.stop()
        self._halt.set()
        self.sampler.join(5)
        pids = httpd_children(self.env)
        self.rss1 = self._rss_less_new_children()
        self.peak = max(self.peak, self.rss1)
        cpu1 = cpu_seconds(pids)
        # processes that went away took their counters with them
        self.cpu = sum(v - self.cpu0.get(p, 0.0) for p, v in cpu1.items())
        self.growth = self.rss1 - self.rss0
        self.peak_growth = self.peak - self.rss0
        from conftest import report
        lat = self.prober.max_latency if self.prober else None
        report("attack %-34s answer: %s | RSS %+.1f MiB (peak %+.1f) | CPU %.2fs in %.1fs"
               " | normal client max %s over %d reqs%s%s"
               % (self.name, self.answer, self.growth / 2 ** 20, self.peak_growth / 2 ** 20,
                  self.cpu, self.duration,
                  "%.0fms" % (lat * 1000) if lat is not None else "-",
                  len(self.prober.latencies) if self.prober else 0,
                  ", %d failed" % len(self.prober.failures)
                  if self.prober and self.prober.failures else "",
                  " | " + self.extra if self.extra else ""))
        return False

    def check(self, max_growth=64 << 20, max_latency=3.0, min_probes=1,
              rss_under_sanitizer=True):
        """rss_under_sanitizer=False: no RSS bound under ASan/valgrind, for
        attacks that churn through so many allocations across all children
        that their quarantines and free lists, not the server, decide it."""
        sanitize = getattr(self.env, "sanitize", "")
        if (sanitize and not rss_under_sanitizer) or sanitize == "tsan":
            # TSan: every page httpd touches gets shadow and metadata pages
            # (several times its size) that stay mapped: its RSS says
            # nothing about the server's memory (which test-asan bounds)
            max_growth = 1 << 62
        elif sanitize == "asan":
            # ASan's redzones double small allocations, and what is freed
            # stays in its quarantine (ASAN_QUARANTINE_MB per process)
            max_growth = 2 * max_growth + 2 * (ASAN_QUARANTINE_MB << 20)
        elif sanitize == "valgrind":
            max_growth = 4 * max_growth
        max_latency *= getattr(self.env, "slow", 1)
        assert self.peak_growth < max_growth, "httpd RSS grew by %.1f MiB" % (
            self.peak_growth / 2 ** 20)
        if self.prober:
            assert not self.prober.failures, self.prober.failures[:3]
            assert len(self.prober.latencies) >= min_probes
            assert self.prober.max_latency < max_latency, self.prober.latencies
        # and a normal client is served after the attack, too
        with H2Client.connect(self.env, "h2c") as c:
            r = c.get("/1k.txt", timeout=10)
            assert r.status == 200 and r.body == self.env.docroot_file("1k.txt")
