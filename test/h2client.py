"""A small HTTP/2 client over a raw socket for tests that need to see (or
do) what curl/nghttp hide: many streams on one connection, RST_STREAM,
request bodies left open, 1xx responses, the server's SETTINGS, GOAWAY.

Built on the `h2` package (protocol state machine only; the socket and
the event loop are ours). Everything is bounded by timeouts.

    c = H2Client.connect(env, "h2c")          # or "h2" (TLS, ALPN h2)
    sid = c.request("GET", "/1k.txt")
    resp = c.wait_done(sid)
    resp.status, resp.headers, resp.body
"""

import contextlib
import hashlib
import http.server
import os
import select
import socket
import ssl
import threading
import time

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings

# the largest flow-control window: let the server send as fast as it can
MAX_WINDOW = 2 ** 31 - 1


def _keep_open_after_goaway():
    """RFC 9113 6.8: after a GOAWAY, the streams up to its last stream id
    still complete; a server shutting down gracefully sends it first and
    then answers them. The h2 library closes its state machine on a
    received GOAWAY and then rejects those streams' frames: keep it open
    (ConnectionTerminated is still reported, see H2Client.goaway)."""
    try:
        sm = h2.connection.H2ConnectionStateMachine
        key = (h2.connection.ConnectionState.CLIENT_OPEN,
               h2.connection.ConnectionInputs.RECV_GOAWAY)
        if key in sm._transitions:
            sm._transitions[key] = (None, h2.connection.ConnectionState.CLIENT_OPEN)
    except AttributeError:
        pass


_keep_open_after_goaway()


class Response:
    """What the client saw on one stream."""

    def __init__(self, stream_id):
        self.stream_id = stream_id
        self.interim = []        # 1xx header lists, in order
        self.header_list = None  # final response headers [(name, value)]
        self.trailers = None
        self.chunks = []
        self.body_len = 0
        self.ended = False       # END_STREAM seen
        self.reset_code = None   # RST_STREAM error code from the server
        self.keep_body = True
        self.hasher = None       # optional hashlib object fed with DATA
        self.data_frames = []    # (data bytes, flow-controlled length) per DATA frame

    @property
    def status(self):
        if self.header_list is None:
            return None
        return int(dict(self.header_list)[":status"])

    @property
    def headers(self):
        """Final response headers without pseudo headers; repeated joined."""
        d = {}
        for k, v in self.header_list or []:
            if k.startswith(":"):
                continue
            d[k] = d[k] + ", " + v if k in d else v
        return d

    @property
    def body(self):
        return b"".join(self.chunks)

    @property
    def done(self):
        return self.ended or self.reset_code is not None

    def __repr__(self):
        return "<Response stream=%d status=%s len=%d ended=%s reset=%s>" % (
            self.stream_id, self.status, self.body_len, self.ended, self.reset_code)


class TlsRecordTap:
    """A TLS 1.3 client socket that notes the length of every TLS record
    the server sends (`records`, ciphertext bytes; those before `first_app`
    belong to the handshake). It offers what H2Client uses of a socket."""

    def __init__(self, raw, ctx, server_hostname):
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        self.raw = raw
        self.inc = ssl.MemoryBIO()
        self.out = ssl.MemoryBIO()
        self.obj = ctx.wrap_bio(self.inc, self.out, server_hostname=server_hostname)
        self.records = []
        self._split = bytearray()
        while True:
            try:
                self.obj.do_handshake()
                break
            except ssl.SSLWantReadError:
                self._send_out()
                self._recv_raw()
        self._send_out()
        self.first_app = len(self.records)

    def _send_out(self):
        data = self.out.read()
        if data:
            self.raw.sendall(data)

    def _recv_raw(self):
        data = self.raw.recv(256 * 1024)
        if data:
            self._split += data
            pos = 0
            while len(self._split) - pos >= 5:
                n = int.from_bytes(self._split[pos + 3:pos + 5], "big")
                if len(self._split) - pos < 5 + n:
                    break
                self.records.append(n)
                pos += 5 + n
            del self._split[:pos]
            self.inc.write(data)
        return data

    def plaintext_records(self):
        """Payload bytes of each record after the handshake (TLS 1.3 AEAD
        adds a content type byte and a 16 byte tag)."""
        return [n - 17 for n in self.records[self.first_app:]]

    def selected_alpn_protocol(self):
        return self.obj.selected_alpn_protocol()

    def pending(self):
        return self.obj.pending() > 0 or self.inc.pending > 0

    def recv(self, n):
        while True:
            try:
                data = self.obj.read(n)
                self._send_out()
                return data
            except ssl.SSLWantReadError:
                if not self._recv_raw():
                    return b""
            except ssl.SSLZeroReturnError:
                return b""

    def sendall(self, data):
        self.obj.write(data)
        self._send_out()

    def fileno(self):
        return self.raw.fileno()

    def setsockopt(self, *a):
        self.raw.setsockopt(*a)

    def close(self):
        self.raw.close()


def tcp_connect(port, timeout, mss=None):
    """A loopback connection to port; with mss, announcing that MSS."""
    if mss is None:
        return socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, mss)
        s.settimeout(timeout)
        s.connect(("127.0.0.1", port))
    except OSError:
        s.close()
        raise
    return s


class H2Client:

    def __init__(self, sock, window=65535, settings=None):
        self.sock = sock
        cfg = h2.config.H2Configuration(client_side=True, header_encoding="utf-8",
                                        validate_inbound_headers=True)
        self.conn = h2.connection.H2Connection(config=cfg)
        self.responses = {}
        self.remote_settings_frames = []   # the changed_settings of each SETTINGS
        self.goaway = None                 # ConnectionTerminated event
        self.closed = False                # socket EOF / reset seen
        self.closed_at = None
        self.pings = []
        self.pushes = []            # (parent id, promised id, request fields)
        self.data_order = []        # stream id of each DATA frame, in order
        if settings:
            # in the first SETTINGS frame, where e.g. RFC 9218's must be
            initial = dict(self.conn.local_settings.items())
            initial.update(settings)
            self.conn.local_settings = h2.settings.Settings(client=True,
                                                            initial_values=initial)
        self.conn.initiate_connection()
        if window > 65535:
            self.conn.update_settings({
                h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: window})
            self.conn.increment_flow_control_window(window - 65535)
        self.flush()

    # ----------------------------------------------------------- setup
    @classmethod
    def connect(cls, env, how="h2c", timeout=10, window=65535, settings=None, mss=None):
        """how: "h2c" (prior knowledge, http port) or "h2" (TLS, ALPN);
        "h2-tap" notes the TLS records (TlsRecordTap). mss: the TCP
        segment size the client announces (e.g. 1460, as behind a 1500
        byte MTU), which the server's segments then keep to."""
        timeout *= getattr(env, "slow", 1)      # under a sanitizer
        if how == "h2c":
            sock = tcp_connect(env.http_port, timeout, mss)
        elif how in ("h2", "h2-tap"):
            raw = tcp_connect(env.https_port, timeout, mss)
            ctx = ssl.create_default_context(cafile=env.sandbox.ca_cert)
            ctx.set_alpn_protocols(["h2"])
            if how == "h2-tap":
                sock = TlsRecordTap(raw, ctx, env.domain)
            else:
                sock = ctx.wrap_socket(raw, server_hostname=env.domain)
            if sock.selected_alpn_protocol() != "h2":
                sock.close()
                raise AssertionError("server did not select h2 via ALPN")
        else:
            raise ValueError(how)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        c = cls(sock, window=window, settings=settings)
        c.host = env.domain
        tls = how != "h2c"
        c.scheme = "https" if tls else "http"
        c.authority = "%s:%d" % (env.domain, env.https_port if tls else env.http_port)
        return c

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    # ----------------------------------------------------------- I/O
    def flush(self):
        data = self.conn.data_to_send()
        if data and not self.closed:
            try:
                self.sock.sendall(data)
            except OSError:
                self._mark_closed()

    def _mark_closed(self):
        if not self.closed:
            self.closed = True
            self.closed_at = time.monotonic()

    def _readable(self, timeout):
        pending = getattr(self.sock, "pending", None)
        if pending is not None and pending():
            return True
        # poll, not select: load tests hold more than FD_SETSIZE sockets
        p = select.poll()
        p.register(self.sock, select.POLLIN)
        return bool(p.poll(max(timeout, 0) * 1000))

    def pump(self, timeout=0.1):
        """Read what arrives within `timeout` and process it; returns False
        once the connection is closed."""
        if self.closed:
            return False
        if not self._readable(timeout):
            return True
        try:
            data = self.sock.recv(256 * 1024)
        except (ssl.SSLWantReadError, socket.timeout):
            return True
        except OSError:
            self._mark_closed()
            return False
        if not data:
            self._mark_closed()
            return False
        try:
            events = self.conn.receive_data(data)
        except h2.exceptions.ProtocolError:
            self.flush()
            raise
        for ev in events:
            self._handle(ev)
        self.flush()
        return True

    def _resp(self, sid):
        r = self.responses.get(sid)
        if r is None:
            r = self.responses[sid] = Response(sid)
        return r

    def _handle(self, ev):
        if isinstance(ev, h2.events.InformationalResponseReceived):
            self._resp(ev.stream_id).interim.append(list(ev.headers))
        elif isinstance(ev, h2.events.ResponseReceived):
            self._resp(ev.stream_id).header_list = list(ev.headers)
        elif isinstance(ev, h2.events.TrailersReceived):
            self._resp(ev.stream_id).trailers = list(ev.headers)
        elif isinstance(ev, h2.events.DataReceived):
            self.data_order.append(ev.stream_id)
            r = self._resp(ev.stream_id)
            r.body_len += len(ev.data)
            r.data_frames.append((len(ev.data), ev.flow_controlled_length))
            if r.keep_body:
                r.chunks.append(ev.data)
            if r.hasher is not None:
                r.hasher.update(ev.data)
            try:
                self.conn.acknowledge_received_data(ev.flow_controlled_length,
                                                    ev.stream_id)
            except (h2.exceptions.StreamClosedError, KeyError):
                pass
        elif isinstance(ev, h2.events.StreamEnded):
            self._resp(ev.stream_id).ended = True
        elif isinstance(ev, h2.events.StreamReset):
            self._resp(ev.stream_id).reset_code = ev.error_code
        elif isinstance(ev, h2.events.RemoteSettingsChanged):
            self.remote_settings_frames.append(
                {k: v.new_value for k, v in ev.changed_settings.items()})
        elif isinstance(ev, h2.events.ConnectionTerminated):
            self.goaway = ev
        elif isinstance(ev, h2.events.PingAckReceived):
            self.pings.append(ev.ping_data)
        elif isinstance(ev, h2.events.PushedStreamReceived):
            self.pushes.append((ev.parent_stream_id, ev.pushed_stream_id,
                                dict((k.decode() if isinstance(k, bytes) else k,
                                      v.decode() if isinstance(v, bytes) else v)
                                     for k, v in ev.headers)))
            self._resp(ev.pushed_stream_id)

    def wait(self, predicate, timeout=20, what="condition"):
        deadline = time.monotonic() + timeout
        while not predicate():
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("timed out after %ss waiting for %s" % (timeout, what))
            if not self.pump(min(left, 0.2)) and not predicate():
                raise AssertionError("connection closed while waiting for %s "
                                     "(goaway=%r)" % (what, self.goaway))

    def wait_settings(self, timeout=10):
        """Wait for the server's first SETTINGS, then make sure it has seen
        our ACK of it (a PING round trip after the ACK)."""
        self.wait(lambda: self.remote_settings_frames, timeout, "server SETTINGS")
        self.ping(timeout)
        return self.remote_settings_frames[0]

    def ping(self, timeout=10):
        data = os.urandom(8)
        if self.closed or self.goaway is not None:
            raise AssertionError("connection closed before PING (goaway=%r)" % self.goaway)
        self.conn.ping(data)
        self.flush()
        self.wait(lambda: data in self.pings, timeout, "PING ACK")

    def ignore_stream_limit(self):
        """Let this client open more streams than the server allows (to see
        the server refuse them): lift h2's own client-side check."""
        import collections
        self.conn.remote_settings._settings[
            h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] = collections.deque([2 ** 31 - 1])

    # ----------------------------------------------------------- requests
    def request(self, method, path, headers=(), body=None, end_stream=True,
                keep_body=True):
        """Send a request; with end_stream=False the request body stays open
        (send more with send_body). Returns the stream id."""
        sid = self.conn.get_next_available_stream_id()
        hdrs = [(":method", method), (":scheme", self.scheme),
                (":authority", self.authority), (":path", path)] + list(headers)
        no_body = body is None and end_stream
        self.conn.send_headers(sid, hdrs, end_stream=no_body)
        r = self._resp(sid)
        r.keep_body = keep_body
        self.flush()
        if body is not None:
            self.send_body(sid, body, end_stream=end_stream)
        return sid

    def send_body(self, sid, data, end_stream=False, timeout=60):
        """Send DATA within the flow-control windows the server grants."""
        view = memoryview(data)
        deadline = time.monotonic() + timeout
        while len(view):
            win = min(self.conn.local_flow_control_window(sid),
                      self.conn.max_outbound_frame_size)
            if win <= 0:
                if time.monotonic() > deadline:
                    raise AssertionError("no flow-control window to send on stream %d" % sid)
                if not self.pump(0.2):
                    raise AssertionError("connection closed while sending body")
                if self.responses[sid].reset_code is not None:
                    raise AssertionError("stream %d reset (%s) while sending body" % (
                        sid, self.responses[sid].reset_code))
                continue
            n = min(win, len(view))
            self.conn.send_data(sid, view[:n].tobytes())
            view = view[n:]
            self.flush()
            self.pump(0)
        if end_stream:
            self.conn.end_stream(sid)
            self.flush()

    def end_stream(self, sid):
        self.conn.end_stream(sid)
        self.flush()

    def reset(self, sid, code=h2.errors.ErrorCodes.CANCEL):
        self.conn.reset_stream(sid, error_code=code)
        self.flush()

    def wait_done(self, sid, timeout=30):
        self.wait(lambda: self.responses[sid].done, timeout, "end of stream %d" % sid)
        return self.responses[sid]

    def wait_headers(self, sid, timeout=30):
        self.wait(lambda: self.responses[sid].header_list is not None
                  or self.responses[sid].done, timeout,
                  "response headers on stream %d" % sid)
        return self.responses[sid]

    def get(self, path, headers=(), timeout=30):
        return self.get_with("GET", path, headers, timeout)

    def get_with(self, method, path, headers=(), timeout=30):
        """A request with method and no body, waited for to its end."""
        return self.wait_done(self.request(method, path, headers), timeout)


# ------------------------------------------------------------- test files
def file_sha(path):
    """sha256 hex digest of a (large) file, read in 1 MB pieces."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def make_big_file(path, size):
    """Pseudo-random file of `size` bytes (created once per run dir);
    returns its sha256."""
    h = hashlib.sha256()
    if os.path.exists(path) and os.path.getsize(path) == size:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        block = os.urandom(1 << 20)
        for i in range(size >> 20):
            # vary each MB so that misplaced blocks change the hash
            chunk = i.to_bytes(8, "big") + block[8:]
            f.write(chunk)
            h.update(chunk)
    os.chmod(tmp, 0o644)
    os.rename(tmp, path)
    return h.hexdigest()


def content(tag, size):
    """size bytes that differ with tag and with the position in the file."""
    block = hashlib.shake_256(tag.encode()).digest(1 << 20)
    out = bytearray()
    i = 0
    while len(out) < size:
        out += i.to_bytes(8, "big") + block[8:]
        i += 1
    return bytes(out[:size])


def install_file(env, relpath, data, mode=0o644):
    """Put a file into the test instance's run dir (not the repo), e.g.
    install_file(env, "htdocs/errors/404.html", b"...")."""
    p = env.path(*relpath.split("/"))
    os.makedirs(os.path.dirname(p), exist_ok=True)
    for d in (os.path.dirname(p),):
        os.chmod(d, 0o755)
    if isinstance(data, str):
        data = data.encode()
    with open(p, "wb") as f:
        f.write(data)
    os.chmod(p, mode)
    return p


# A slow consumer that is not PHP: a python CGI reading its body in
# ?piece= byte pieces at ?rate= bytes a second (default 200 KB/s); answers
# the size and sha256 it read (test_app_slow_uploads.py, bench/soak.py)
CGI_SLOW_READ = """\
import hashlib, json, os, sys, time
from urllib.parse import parse_qs
q = parse_qs(os.environ.get("QUERY_STRING", ""))
rate = max(1024, int(q.get("rate", ["204800"])[0]))
piece = max(512, int(q.get("piece", ["8192"])[0]))
inp = sys.stdin.buffer
h = hashlib.sha256()
n = 0
t0 = time.monotonic()
while True:
    b = inp.read1(piece)
    if not b:
        break
    n += len(b)
    h.update(b)
    wait = t0 + n / rate - time.monotonic()
    if wait > 0:
        time.sleep(wait)
body = json.dumps({"size": n, "sha256": h.hexdigest(),
                   "secs": round(time.monotonic() - t0, 3)}) + "\\n"
sys.stdout.write("Content-Type: application/json\\r\\n\\r\\n" + body)
"""


# A stalled handler that is not PHP: a python CGI that reads nothing until
# the file ?flag= appears in FLAG_DIR (at most ?max= seconds; without a
# flag it sleeps ?sleep= seconds), then reads its whole body; answers the
# size and sha256 it read and how long it waited. Install with
# CGI_STALL % flag_dir (a directory the CGI's user can search).
CGI_STALL = """\
import hashlib, json, os, sys, time
from urllib.parse import parse_qs
FLAG_DIR = %r
q = parse_qs(os.environ.get("QUERY_STRING", ""))
flag = os.path.basename(q.get("flag", [""])[0])
limit = float(q.get("max", ["30"])[0])
t0 = time.monotonic()
if flag:
    while not os.path.exists(os.path.join(FLAG_DIR, flag)) and time.monotonic() - t0 < limit:
        time.sleep(0.02)
else:
    time.sleep(float(q.get("sleep", ["5"])[0]))
waited = time.monotonic() - t0
h = hashlib.sha256()
n = 0
try:
    while True:
        b = sys.stdin.buffer.read1(65536)
        if not b:
            break
        n += len(b)
        h.update(b)
except OSError:
    pass
body = json.dumps({"size": n, "sha256": h.hexdigest(), "waited": round(waited, 3)}) + "\\n"
sys.stdout.write("Content-Type: application/json\\r\\n\\r\\n" + body)
"""


def install_cgi(env, name, source):
    """A python CGI script in the test instance's cgi-bin/."""
    return install_file(env, "cgi-bin/" + name,
                        "#!%s\n%s" % (env.sandbox.cgi_python(), source), 0o755)


def remove_conf(env, name, where):
    d = env.path(env.sandbox.SNIPPET_DIRS[where])
    p = os.path.join(d, name + ".conf")
    if os.path.exists(p):
        os.unlink(p)


def with_conf(env, name, text, where="server", value=None):
    """For fixtures (`yield from with_conf(...)`): add a config snippet and
    reload, yield value, then take the snippet away and reload again, also
    when the first reload failed."""
    env.add_conf(name, text, where)
    try:
        env.reload()
        yield value
    finally:
        remove_conf(env, name, where)
        env.reload()


def with_prefork_workers(env, name, workers=16):
    """For fixtures: under prefork a child runs one request at a time. A
    test whose subject needs several streams of a connection at once opts
    into more workers (H2MaxWorkers), as an administrator whose modules are
    all thread-safe may; under other MPMs nothing changes."""
    if env.mpm != "prefork":
        yield
        return
    yield from with_conf(env, name, "H2MaxWorkers %d\n" % workers)


def with_vhost_conf(env, name, text):
    """For fixtures: text in both virtual hosts (h2c and TLS), reloaded;
    taken away again afterwards."""
    for where in ("http", "https"):
        env.add_conf(name, text(where) if callable(text) else text, where)
    try:
        env.reload()
        yield
    finally:
        for where in ("http", "https"):
            remove_conf(env, name, where)
        env.reload()


def module_conf(env, module_so, location, handler):
    """For fixtures: a test module (test/modules/mod_NAME.c, built as
    mod_NAME.so) loaded, a location handled by it."""
    name = os.path.basename(module_so)[len("mod_"):-len(".so")] + "_module"
    return with_conf(env, handler, """\
<IfModule !%s>
LoadModule %s %s
</IfModule>
<Location "%s">
    SetHandler %s
</Location>
""" % (name, name, module_so, location, handler))


# mod_proxy and mod_proxy_http, loaded unless they are
PROXY_MODULES_CONF = """\
<IfModule !proxy_module>
LoadModule proxy_module /usr/lib/apache2/modules/mod_proxy.so
</IfModule>
<IfModule !proxy_http_module>
LoadModule proxy_http_module /usr/lib/apache2/modules/mod_proxy_http.so
</IfModule>
"""

# mod_proxy as a forward proxy for loopback clients (with H2ProxyRequests
# on, also for HTTP/2 requests)
FORWARD_PROXY_CONF = PROXY_MODULES_CONF + """\
ProxyRequests On
<Proxy "*">
    Require ip 127.0.0.1
</Proxy>
"""


class _OriginHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        body = ("origin saw %s %s host=%s" % (self.command, self.path,
                                              self.headers.get("Host"))).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Origin", "yes")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def origin_server(port):
    """An HTTP/1.1 origin on loopback port for proxy tests: answers every
    GET with "origin saw GET <target> host=<Host>" and X-Origin: yes.
    Yields its authority."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), _OriginHandler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield "127.0.0.1:%d" % port
    finally:
        srv.shutdown()
        srv.server_close()


@contextlib.contextmanager
def tcp_echo_server(port):
    """A TCP echo server on loopback port for CONNECT tunnels: echoes what
    comes; at the client's EOF it sends "bye" and closes."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(8)

    def serve(conn):
        with conn:
            while True:
                data = conn.recv(65536)
                if not data:
                    conn.sendall(b"bye")
                    return
                conn.sendall(data)

    def accept():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        yield "127.0.0.1:%d" % port
    finally:
        # wakes the accept() (a close alone leaves it blocked, the port bound)
        srv.shutdown(socket.SHUT_RDWR)
        srv.close()
        t.join(5)


def _ws_echo(ws, stats):
    """Echo each message; "whoami" answers with what the backend saw,
    "bye" makes it close."""
    try:
        for msg in ws:
            if msg == "whoami":
                h = ws.request.headers
                ws.send("path=%s upgrade=%s version=%s key=%d" % (
                    ws.request.path, h.get("Upgrade"), h.get("Sec-WebSocket-Version"),
                    len(h.get("Sec-WebSocket-Key", ""))))
            elif msg == "bye":
                ws.close()
                return
            else:
                ws.send(msg)
    finally:
        stats["closed"] += 1


@contextlib.contextmanager
def ws_echo_server(port):
    """A WebSocket echo server (the `websockets` library) on loopback
    port. Yields its stats: {"port", "closed": connections ended}."""
    from websockets.sync.server import serve
    stats = {"port": port, "closed": 0}
    srv = serve(lambda ws: _ws_echo(ws, stats), "127.0.0.1", port)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield stats
    finally:
        srv.shutdown()
        t.join(5)
