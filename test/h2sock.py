"""A minimal HTTP/2 client on the Python `h2` package for tests that need
control curl does not give: the TLS SNI name and the :authority of each
request chosen separately, several requests on one connection, and the
raw error codes of RST_STREAM and GOAWAY frames.

    with H2Socket(env, sni="test.localhost") as c:
        r = c.get("/index.html", authority="other.test.localhost")
        r.status, r.headers, r.body, r.reset_code, c.goaway_code
"""

import socket
import ssl

import h2.config
import h2.connection
import h2.events

# RFC 9113 section 7 error codes the tests look for
INADEQUATE_SECURITY = 0xc
HTTP_1_1_REQUIRED = 0xd


class H2Response:
    def __init__(self, stream_id):
        self.stream_id = stream_id
        self.status = None
        self.headers = {}
        self.body = b""
        self.ended = False
        self.reset_code = None

    def __repr__(self):
        return "<H2Response stream=%d status=%s reset=%s body=%d bytes>" % (
            self.stream_id, self.status, self.reset_code, len(self.body))


class H2Socket:
    """One HTTP/2 connection to the sandbox, over TLS (ALPN h2) unless
    `tls` is false (prior knowledge on the http port)."""

    def __init__(self, env, sni=None, port=None, tls=True, alpn=("h2",),
                 cert=None, key=None, tls_max=None, ciphers=None, timeout=10):
        self.env = env
        self.tls = tls
        self.port = port or (env.https_port if tls else env.http_port)
        self.sni = sni or env.domain
        self.timeout = timeout = timeout * getattr(env, "slow", 1)   # sanitizers
        self.goaway_code = None
        self.closed = False
        self.alpn = None
        self.tls_version = None
        self.cipher = None
        self.responses = {}
        raw = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        if tls:
            ctx = ssl.create_default_context(cafile=env.sandbox.ca_cert)
            ctx.set_alpn_protocols(list(alpn))
            if cert:
                ctx.load_cert_chain(cert, key)
            if tls_max:
                ctx.maximum_version = tls_max
            if ciphers:
                ctx.set_ciphers(ciphers)
            self.sock = ctx.wrap_socket(raw, server_hostname=self.sni)
            self.alpn = self.sock.selected_alpn_protocol()
            self.tls_version = self.sock.version()
            self.cipher = self.sock.cipher()[0]
        else:
            self.sock = raw
        self.conn = h2.connection.H2Connection(config=h2.config.H2Configuration(
            client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        self._flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def _flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def send_request(self, path, authority=None, method="GET", headers=()):
        sid = self.conn.get_next_available_stream_id()
        hdrs = [(":method", method), (":scheme", "https" if self.tls else "http"),
                (":authority", "%s:%d" % (authority or self.sni, self.port)),
                (":path", path)] + list(headers)
        self.conn.send_headers(sid, hdrs, end_stream=True)
        self._flush()
        self.responses[sid] = H2Response(sid)
        return sid

    def _pump(self):
        """Read once from the socket and process the events; False when the
        connection is gone."""
        try:
            data = self.sock.recv(65536)
        except (ssl.SSLError, ConnectionError):
            data = b""
        if not data:
            self.closed = True
            return False
        for ev in self.conn.receive_data(data):
            r = self.responses.get(getattr(ev, "stream_id", None))
            if isinstance(ev, h2.events.ResponseReceived) and r:
                r.headers = dict(ev.headers)
                r.status = int(r.headers[":status"])
            elif isinstance(ev, h2.events.DataReceived) and r:
                r.body += ev.data
                self.conn.acknowledge_received_data(
                    ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded) and r:
                r.ended = True
            elif isinstance(ev, h2.events.StreamReset) and r:
                r.reset_code = int(ev.error_code)
            elif isinstance(ev, h2.events.ConnectionTerminated):
                self.goaway_code = int(ev.error_code)
        try:
            self._flush()
        except OSError:
            self.closed = True
            return False
        return True

    def wait(self, sid):
        """Wait until stream `sid` ended, was reset, or the connection went
        away (GOAWAY or close); returns its H2Response."""
        r = self.responses[sid]
        while not (r.ended or r.reset_code is not None or self.closed
                   or self.goaway_code is not None):
            if not self._pump():
                break
        return r

    def get(self, path, authority=None, headers=()):
        return self.wait(self.send_request(path, authority, headers=headers))

    def wait_goaway_or_close(self):
        """Read until the server sends GOAWAY or closes; returns the GOAWAY
        error code (None if it just closed)."""
        while self.goaway_code is None and not self.closed:
            if not self._pump():
                break
        return self.goaway_code
