#!/usr/bin/env python3
"""SCGI and uwsgi backends and a FastCGI authorizer for the module matrix
(mod_proxy_scgi, mod_proxy_uwsgi, mod_authnz_fcgi):
`modmatrix_gateways.py SCGI_PORT UWSGI_PORT FCGI_PORT` serves them on
127.0.0.1 until it is stopped. The backends answer what they got: the
method, the path, the query and the request body."""

import socketserver
import struct
import sys
import threading


def answer_text(env, body):
    return ("gateway %s: method=%s path=%s query=%s body=%s\n" % (
        env.get("GATEWAY", "?"), env.get("REQUEST_METHOD", ""), env.get("PATH_INFO", ""),
        env.get("QUERY_STRING", ""), body.decode("utf-8", "replace"))).encode()


def read_exact(f, n):
    data = b""
    while len(data) < n:
        chunk = f.read(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


class Scgi(socketserver.StreamRequestHandler):
    """SCGI: a netstring of NUL-separated names and values, then the body;
    the answer is a CGI response."""

    def handle(self):
        size = b""
        while not size.endswith(b":"):
            size += self.rfile.read(1)
        raw = read_exact(self.rfile, int(size[:-1]))
        self.rfile.read(1)                      # the netstring's comma
        items = raw.split(b"\0")
        env = {items[i].decode(): items[i + 1].decode() for i in range(0, len(items) - 1, 2)}
        env["GATEWAY"] = "scgi"
        body = read_exact(self.rfile, int(env.get("CONTENT_LENGTH") or 0))
        out = answer_text(env, body)
        self.wfile.write(b"Status: 200 OK\r\nContent-Type: text/plain\r\nX-Gateway: scgi\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(out), out))


class Uwsgi(socketserver.StreamRequestHandler):
    """uwsgi: a 4-byte header (modifier, size, modifier), the variables as
    length-prefixed pairs, then the body; the answer is an HTTP response."""

    def handle(self):
        _, size, _ = struct.unpack("<BHB", read_exact(self.rfile, 4))
        raw = read_exact(self.rfile, size)
        env, pos = {}, 0
        while pos < len(raw):
            (kl,) = struct.unpack_from("<H", raw, pos)
            k = raw[pos + 2:pos + 2 + kl].decode()
            pos += 2 + kl
            (vl,) = struct.unpack_from("<H", raw, pos)
            env[k] = raw[pos + 2:pos + 2 + vl].decode()
            pos += 2 + vl
        env["GATEWAY"] = "uwsgi"
        body = read_exact(self.rfile, int(env.get("CONTENT_LENGTH") or 0))
        out = answer_text(env, body)
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Gateway: uwsgi\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(out), out))


def fcgi_pairs(raw):
    """FastCGI name-value pairs (lengths of 1 or 4 bytes)."""
    env, pos = {}, 0

    def length():
        nonlocal pos
        if raw[pos] < 128:
            pos += 1
            return raw[pos - 1]
        pos += 4
        return struct.unpack_from(">I", raw, pos - 4)[0] & 0x7fffffff
    while pos < len(raw):
        kl = length()
        vl = length()
        env[raw[pos:pos + kl].decode()] = raw[pos + kl:pos + kl + vl].decode()
        pos += kl + vl
    return env


class FcgiAuthorizer(socketserver.StreamRequestHandler):
    """A FastCGI authorizer for mod_authnz_fcgi: the user "alice" with the
    password "alice-pw" is let in (Status 200), everyone else not (401)."""

    def handle(self):
        params = b""
        while True:
            head = read_exact(self.rfile, 8)
            if len(head) < 8:
                return
            _, rtype, rid, clen, plen = struct.unpack(">BBHHBx", head)
            content = read_exact(self.rfile, clen)
            read_exact(self.rfile, plen)
            if rtype == 4 and clen:             # FCGI_PARAMS
                params += content
            elif rtype == 4:                    # the end of the params
                break
        env = fcgi_pairs(params)
        ok = env.get("REMOTE_USER") == "alice" and env.get("REMOTE_PASSWD") == "alice-pw"
        out = b"Status: 200\r\nVariable-MATRIX_FCGI: yes\r\n\r\n" if ok else (
            b"Status: 401\r\nContent-Type: text/plain\r\n\r\nno\n")
        rec = struct.pack(">BBHHBx", 1, 6, rid, len(out), 0) + out      # FCGI_STDOUT
        rec += struct.pack(">BBHHBx", 1, 6, rid, 0, 0)
        rec += struct.pack(">BBHHBx", 1, 3, rid, 8, 0) + b"\0" * 8      # FCGI_END_REQUEST
        self.wfile.write(rec)


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def main():
    scgi = Server(("127.0.0.1", int(sys.argv[1])), Scgi)
    uwsgi = Server(("127.0.0.1", int(sys.argv[2])), Uwsgi)
    fcgi = Server(("127.0.0.1", int(sys.argv[3])), FcgiAuthorizer)
    threading.Thread(target=scgi.serve_forever, daemon=True).start()
    threading.Thread(target=fcgi.serve_forever, daemon=True).start()
    uwsgi.serve_forever()


if __name__ == "__main__":
    main()
