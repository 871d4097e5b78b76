#!/usr/bin/env python3
"""Write seed inputs for fuzz_session (see fuzz_session.c for the format)
into corpus-session/: client frame sequences made with the h2 library for
the usual requests and the abuse cases the session must answer, plus any
captures given on the command line (raw client bytes, e.g. recorded from
h2spec or nghttp by capture_client.py), with several handler/limit bytes.

    python3 make_session_corpus.py [capture ...]     (OUT=dir to write elsewhere)

corpus-session/ was made so: the scenarios below plus captures of h2spec
(145 cases), nghttp and h2load against the sandbox (capture_client.py),
all written to a temporary dir and merged with `fuzz_session -merge=1`,
which keeps the inputs that add coverage."""

import os
import sys

import h2.config
import h2.connection
import h2.events
import h2.settings

OUT = os.environ.get("OUT") or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                            "corpus-session")
MAGIC = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
GET = [(":method", "GET"), (":scheme", "http"), (":authority", "localhost"), (":path", "/")]


def client():
    c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True,
                                                             header_encoding="utf-8"))
    c.initiate_connection()
    return c


def body_of(c):
    data = c.data_to_send()
    return data[len(MAGIC):] if data.startswith(MAGIC) else data


def scenarios():
    c = client()
    c.send_headers(1, GET, end_stream=True)
    yield "get", body_of(c)

    c = client()
    for sid in range(1, 40, 2):
        c.send_headers(sid, GET, end_stream=True)
    yield "get-many", body_of(c)

    c = client()
    c.send_headers(1, [(":method", "POST"), (":scheme", "http"), (":authority", "localhost"),
                       (":path", "/up"), ("content-length", "3000")])
    c.send_data(1, b"x" * 1000)
    c.send_data(1, b"y" * 2000, end_stream=True)
    yield "post", body_of(c)

    c = client()
    c.send_headers(1, [(":method", "POST"), (":scheme", "http"), (":authority", "localhost"),
                       (":path", "/t"), ("te", "trailers")])
    c.send_data(1, b"abc")
    c.send_headers(1, [("x-checksum", "1")], end_stream=True)
    yield "trailers", body_of(c)

    c = client()
    c.send_headers(1, GET, end_stream=True)
    c.reset_stream(1)
    c.send_headers(3, GET, end_stream=True)
    c.increment_flow_control_window(100000)
    c.increment_flow_control_window(100000, stream_id=3)
    c.ping(b"12345678")
    yield "reset-window-ping", body_of(c)

    c = client()
    for sid in range(1, 400, 2):
        c.send_headers(sid, GET, end_stream=True)
        c.reset_stream(sid)
    yield "rapid-reset", body_of(c)

    c = client()
    c.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1,
                       h2.settings.SettingCodes.MAX_FRAME_SIZE: 16384})
    c.send_headers(1, GET, end_stream=True)
    for _ in range(50):
        c.increment_flow_control_window(1, stream_id=1)
    yield "tiny-windows", body_of(c)

    c = client()
    c.send_headers(1, GET + [("cookie", "a=" + "b" * 4000)] * 3, end_stream=True)
    yield "fat-cookies", body_of(c)

    c = client()
    c.send_headers(1, GET, end_stream=True)
    c.close_connection()
    yield "goaway", body_of(c)

    # frames h2 will not make: a HEADERS split into CONTINUATIONs, a
    # lower stream id, PRIORITY, an unknown frame type
    hb = bytes.fromhex("82868441") + bytes([9]) + b"localhost"
    raw = (frame(1, 0, 3, hb[:3]) + frame(9, 0, 3, hb[3:8]) + frame(9, 5, 3, hb[8:])
           + frame(2, 0, 3, b"\x00\x00\x00\x00\x10") + frame(0xfa, 0, 0, b"xyz")
           + frame(1, 5, 1, hb))
    yield "continuation-lower-id", frame(4, 0, 0, b"") + raw


def frame(ftype, flags, sid, payload):
    return (len(payload).to_bytes(3, "big") + bytes([ftype, flags])
            + sid.to_bytes(4, "big") + payload)


def main(argv):
    os.makedirs(OUT, exist_ok=True)
    items = list(scenarios())
    for path in argv:
        data = open(path, "rb").read()
        items.append(("cap-" + os.path.basename(path),
                      data[len(MAGIC):] if data.startswith(MAGIC) else data))
    n = 0
    for name, data in items:
        # handler (low bits) and limits, piece size: a few combinations each
        combos = ((0, 0), (1, 3), (2, 0), (4, 16), (0x0b, 0), (0x53, 1))
        if name.startswith("cap-"):
            combos = ((0, 0), (0x5a, 2))
        for opts, piece in combos:
            with open(os.path.join(OUT, "%s-%02x-%d" % (name, opts, piece)), "wb") as f:
                f.write(bytes([opts, piece]) + data)
            n += 1
    print("%d inputs in %s" % (n, OUT))


if __name__ == "__main__":
    main(sys.argv[1:])
