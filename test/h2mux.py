"""Non-blocking HTTP/2 clients in one poll loop, for tests that time what
happens on several streams and connections at once (uploads next to GETs,
many uploads over a few connections).

H2Client (h2client.py) sends with a blocking sendall: when the server
stops reading, the whole client stops, and what the test measures is the
client. Here nothing blocks: each connection has an output buffer that is
written when the socket takes it (TLS through memory BIOs, so the socket
itself stays non-blocking), request bodies go out as the server's windows
allow and only while that buffer is short (a GET queued behind an upload
waits for at most OUT_HIGH bytes of it), and every stream notes when its
answer began and ended.

    loop = Loop()
    c = loop.add(MuxConn(env, "h2c"))
    up = c.request("POST", "/fpm/upload.php", body=data)
    get = c.request("GET", "/1k.txt")
    loop.run(lambda: up.done and get.done, timeout=30)
    up.status, up.json(), get.latency
"""

import hashlib
import http.client
import json
import select
import socket
import ssl
import time

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings

OUT_HIGH = 64 * 1024          # bytes of body queued ahead of a new request, at most
RECV_WINDOW = 1 << 30         # what the server may send us: answers never wait on us


class Stream:
    """One request and what came back on it."""

    def __init__(self, conn, sid, method, path, body, keep_body):
        self.conn = conn
        self.sid = sid
        self.method = method
        self.path = path
        self.body = memoryview(body) if body is not None else None
        self.sent = 0
        self.body_done = body is None
        self.t_start = time.monotonic()
        self.t_headers = None
        self.t_first_data = None
        self.t_end = None
        self.header_list = None
        self.interim = []
        self.keep_body = keep_body
        self.chunks = []
        self.body_len = 0
        self.data_times = []          # (monotonic time, bytes) of each DATA frame
        self.hasher = hashlib.sha256()
        self.ended = False
        self.reset_code = None

    @property
    def status(self):
        if self.header_list is None:
            return None
        return int(dict(self.header_list)[":status"])

    @property
    def headers(self):
        d = {}
        for k, v in self.header_list or []:
            if not k.startswith(":"):
                d[k] = d[k] + ", " + v if k in d else v
        return d

    @property
    def data(self):
        return b"".join(self.chunks)

    def json(self):
        return json.loads(self.data.decode())

    @property
    def sha256(self):
        return self.hasher.hexdigest()

    @property
    def done(self):
        return self.ended or self.reset_code is not None

    @property
    def latency(self):
        return None if self.t_end is None else self.t_end - self.t_start

    def __repr__(self):
        return "<Stream %d %s %s status=%s sent=%d/%s got=%d ended=%s reset=%s>" % (
            self.sid, self.method, self.path, self.status, self.sent,
            len(self.body) if self.body is not None else "-", self.body_len,
            self.ended, self.reset_code)


class MuxConn:
    """One HTTP/2 connection, "h2" (TLS, ALPN) or "h2c" (prior knowledge)."""

    def __init__(self, env, how="h2c", timeout=10):
        self.how = how
        tls = how == "h2"
        port = env.https_port if tls else env.http_port
        raw = socket.create_connection(("127.0.0.1", port), timeout=timeout * env.slow)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.raw = raw
        self.tls = None
        if tls:
            ctx = ssl.create_default_context(cafile=env.sandbox.ca_cert)
            ctx.set_alpn_protocols(["h2"])
            self.inc, self.outbio = ssl.MemoryBIO(), ssl.MemoryBIO()
            self.tls = ctx.wrap_bio(self.inc, self.outbio, server_hostname=env.domain)
            while True:
                try:
                    self.tls.do_handshake()
                    break
                except ssl.SSLWantReadError:
                    pending = self.outbio.read()
                    if pending:
                        raw.sendall(pending)
                    data = raw.recv(65536)
                    if not data:
                        raise AssertionError("server closed during the TLS handshake")
                    self.inc.write(data)
            if self.tls.selected_alpn_protocol() != "h2":
                raise AssertionError("server did not select h2 via ALPN")
        raw.setblocking(False)
        self.scheme = "https" if tls else "http"
        self.authority = "%s:%d" % (env.domain, port)
        self.out = bytearray()
        if self.tls is not None:
            self.out += self.outbio.read()
        cfg = h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        self.conn = h2.connection.H2Connection(config=cfg)
        initial = dict(self.conn.local_settings.items())
        initial[h2.settings.SettingCodes.INITIAL_WINDOW_SIZE] = RECV_WINDOW
        self.conn.local_settings = h2.settings.Settings(client=True, initial_values=initial)
        self.conn.initiate_connection()
        self.conn.increment_flow_control_window(RECV_WINDOW - 65535)
        self.streams = {}
        self.order = []               # streams with body to send, in request order
        self.goaway = None            # (error code, last stream id)
        self.closed = False
        self._queue()

    # ---------------------------------------------------------------- requests
    def request(self, method, path, headers=(), body=None, keep_body=True):
        """Send a request's HEADERS now (ahead of any body still to go);
        the body (with its content-length) follows as windows allow."""
        sid = self.conn.get_next_available_stream_id()
        hdrs = [(":method", method), (":scheme", self.scheme),
                (":authority", self.authority), (":path", path)]
        if body is not None:
            hdrs.append(("content-length", str(len(body))))
        hdrs += list(headers)
        self.conn.send_headers(sid, hdrs, end_stream=body is None)
        st = Stream(self, sid, method, path, body, keep_body)
        self.streams[sid] = st
        if body is not None:
            self.order.append(st)
        self._queue()
        return st

    def _queue(self):
        """Move what the h2 state machine has to send into the output
        buffer (behind the body bytes already there: at most OUT_HIGH)."""
        data = self.conn.data_to_send()
        if not data:
            return
        if self.tls is not None:
            self.tls.write(data)
            data = self.outbio.read()
        self.out += data

    def feed(self):
        """Put request body bytes into the output buffer as the windows
        and OUT_HIGH allow, one frame per stream in turn."""
        progress = True
        while progress and len(self.out) < OUT_HIGH and not self.closed:
            progress = False
            for st in list(self.order):
                if st.body_done:
                    self.order.remove(st)
                    continue
                left = len(st.body) - st.sent
                try:
                    win = min(self.conn.local_flow_control_window(st.sid),
                              self.conn.max_outbound_frame_size, left)
                except (h2.exceptions.StreamClosedError, KeyError):
                    st.body_done = True
                    continue
                if win <= 0 and left > 0:
                    continue
                try:
                    if win > 0:
                        self.conn.send_data(st.sid, st.body[st.sent:st.sent + win].tobytes())
                        st.sent += win
                    if st.sent == len(st.body):
                        self.conn.end_stream(st.sid)
                        st.body_done = True
                except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
                    st.body_done = True
                    continue
                progress = True
                self._queue()
                if len(self.out) >= OUT_HIGH:
                    break

    # ---------------------------------------------------------------- I/O
    def fileno(self):
        return self.raw.fileno()

    def on_writable(self):
        if not self.out or self.closed:
            return
        try:
            n = self.raw.send(self.out[:1 << 20])
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self.closed = True
            return
        del self.out[:n]

    def on_readable(self):
        for _ in range(16):
            try:
                data = self.raw.recv(1 << 18)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self.closed = True
                return
            if not data:
                self.closed = True
                return
            if self.tls is not None:
                self.inc.write(data)
                plain = []
                while True:
                    try:
                        chunk = self.tls.read(1 << 18)
                    except ssl.SSLWantReadError:
                        break
                    except ssl.SSLZeroReturnError:
                        self.closed = True
                        break
                    if not chunk:
                        break
                    plain.append(chunk)
                more = self.outbio.read()
                if more:
                    self.out += more
                data = b"".join(plain)
            if data:
                for ev in self.conn.receive_data(data):
                    self._event(ev)
                self._queue()

    def _event(self, ev):
        now = time.monotonic()
        st = self.streams.get(getattr(ev, "stream_id", None))
        if isinstance(ev, h2.events.ResponseReceived):
            st.header_list = list(ev.headers)
            st.t_headers = now
        elif isinstance(ev, h2.events.InformationalResponseReceived):
            st.interim.append(list(ev.headers))
        elif isinstance(ev, h2.events.DataReceived):
            if st is not None:
                if st.t_first_data is None:
                    st.t_first_data = now
                st.body_len += len(ev.data)
                st.data_times.append((now, len(ev.data)))
                st.hasher.update(ev.data)
                if st.keep_body:
                    st.chunks.append(ev.data)
            try:
                self.conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            except (h2.exceptions.StreamClosedError, KeyError):
                pass
        elif isinstance(ev, h2.events.StreamEnded):
            if st is not None:
                st.ended = True
                st.t_end = now
                if not st.body_done:
                    # answered before its body was all sent: stop sending it
                    st.body_done = True
                    try:
                        self.conn.reset_stream(st.sid, h2.errors.ErrorCodes.CANCEL)
                    except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError):
                        pass
        elif isinstance(ev, h2.events.StreamReset):
            if st is not None:
                st.reset_code = ev.error_code
                st.body_done = True
                if st.t_end is None:
                    st.t_end = now
        elif isinstance(ev, h2.events.ConnectionTerminated):
            self.goaway = (ev.error_code, ev.last_stream_id)

    def close(self):
        try:
            self.raw.close()
        except OSError:
            pass
        self.closed = True


class Loop:
    """Drives MuxConns: poll, read, write, feed bodies; `tick` runs between
    rounds (at least every `step` seconds) to start requests on time."""

    def __init__(self, step=0.01):
        self.conns = []
        self.step = step

    def add(self, conn):
        self.conns.append(conn)
        return conn

    def run(self, until, timeout, tick=None, what="condition"):
        """Until until() is true; returns False when timeout passed first
        (the caller asserts with what it knows)."""
        deadline = time.monotonic() + timeout
        while True:
            if tick is not None:
                tick()
            if until():
                return True
            if time.monotonic() >= deadline:
                return False
            for c in self.conns:
                c.feed()
            p = select.poll()
            live = [c for c in self.conns if not c.closed]
            if not live:
                return until()
            for c in live:
                p.register(c.fileno(), select.POLLIN | (select.POLLOUT if c.out else 0))
            by_fd = {c.fileno(): c for c in live}
            for fd, ev in p.poll(self.step * 1000):
                c = by_fd[fd]
                if ev & (select.POLLIN | select.POLLHUP | select.POLLERR):
                    c.on_readable()
                if ev & select.POLLOUT:
                    c.on_writable()
            for c in live:
                # a read may have queued frames (WINDOW_UPDATE, SETTINGS ACK)
                if c.out and not c.closed:
                    c.on_writable()

    def close(self):
        for c in self.conns:
            c.close()


def percentile(values, p):
    """The p-th percentile (nearest rank) of values."""
    if not values:
        return None
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


def latency_line(latencies):
    """p50/p99/max in ms, for report lines."""
    if not latencies:
        return "no samples"
    return "p50 %.0f ms, p99 %.0f ms, max %.0f ms over %d" % (
        percentile(latencies, 50) * 1000, percentile(latencies, 99) * 1000,
        max(latencies) * 1000, len(latencies))


class _H1(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.create_connection(("127.0.0.1", self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _H1S(http.client.HTTPSConnection):
    def connect(self):
        raw = socket.create_connection(("127.0.0.1", self.port), self.timeout)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = self._context.wrap_socket(raw, server_hostname=self.host)


def h1_connection(env, tls, timeout=30):
    """An HTTP/1.1 keep-alive connection (http.client) to the test server
    by address, Host and certificate name env.domain."""
    if tls:
        ctx = ssl.create_default_context(cafile=env.sandbox.ca_cert)
        ctx.set_alpn_protocols(["http/1.1"])
        return _H1S(env.domain, env.https_port, timeout=timeout * env.slow, context=ctx)
    return _H1(env.domain, env.http_port, timeout=timeout * env.slow)
