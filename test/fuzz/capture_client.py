#!/usr/bin/env python3
"""Record what HTTP/2 clients send: a loopback proxy that forwards each
connection to a server and saves the client's bytes to DIR/conn-N, for the
fuzz_session seed corpus (make_session_corpus.py). Stops after SECONDS.

    python3 capture_client.py LISTEN_PORT TARGET_PORT DIR SECONDS"""

import os
import socket
import sys
import threading
import time


def pump(src, dst, record):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if record is not None:
                record.append(data)
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def serve(conn, target, path):
    record = []
    up = socket.create_connection(("127.0.0.1", target))
    t = threading.Thread(target=pump, args=(up, conn, None), daemon=True)
    t.start()
    pump(conn, up, record)
    t.join(5)
    with open(path, "wb") as f:
        f.write(b"".join(record))


def main(port, target, out, seconds):
    os.makedirs(out, exist_ok=True)
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", int(port)))
    ls.listen(64)
    ls.settimeout(0.5)
    end, n = time.time() + float(seconds), 0
    while time.time() < end:
        try:
            conn, _ = ls.accept()
        except socket.timeout:
            continue
        n += 1
        threading.Thread(target=serve, args=(conn, int(target),
                         os.path.join(out, "conn-%d" % n)), daemon=True).start()
    ls.close()


if __name__ == "__main__":
    main(*sys.argv[1:5])
