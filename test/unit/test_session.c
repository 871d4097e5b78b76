/* Copyright 2026 The mod_h2 authors
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */
/* The protocol core without httpd's network: frames go into a session
 * through the test seam (test/seam/) and the frames a client would get
 * come out. Each test states what the client sees; every test also ends
 * with no invalid transition, no error logged and the connection's memory
 * budget back at zero (checked by the session's teardown). */
#include <string.h>
#include <apr_general.h>

#include "h2_abuse.h"
#include "seam.h"
#include "frames.h"
#include "unit.h"

#define MAXF 4096
static h2frame fr[MAXF];

static const char *const GET1[] = { ":method", "GET", ":scheme", "http",
    ":authority", "localhost", ":path", "/", NULL };

static seam_opts opts(seam_handler h)
{
    seam_opts o;
    memset(&o, 0, sizeof(o));
    o.handler = h;
    o.max_stream_errors = -1;
    return o;
}

/* Run what b holds through t; returns the frames the server sent so far. */
static int exchange(seam *t, fbuf *b, int eof)
{
    const unsigned char *out;
    size_t len;
    seam_feed(t, b->data, b->len);
    fb_reset(b);
    if (eof) seam_eof(t);
    seam_run(t);
    out = seam_out(t, &len);
    return frames_parse(out, len, fr, MAXF);
}

static void test_get_gets_settings_then_headers_and_data(void)
{
    seam_opts o = opts(SEAM_HANDLER_HELLO);
    seam *t = seam_new(&o);
    nghttp2_hd_inflater *inf;
    h2fields hf;
    fbuf b;
    int n, h, d;

    nghttp2_hd_inflate_new(&inf);
    fb_init(&b);
    fb_preface(&b);
    fb_headers(&b, 1, NGHTTP2_FLAG_END_STREAM, GET1);
    n = exchange(t, &b, 0);
    CHECK(n >= 4);
    /* our SETTINGS first, then the ACK of the client's */
    CHECK(fr[0].type == NGHTTP2_SETTINGS && !(fr[0].flags & NGHTTP2_FLAG_ACK));
    CHECK(frames_find(fr, n, NGHTTP2_SETTINGS, 0, 1) > 0);
    h = frames_find(fr, n, NGHTTP2_HEADERS, 1, 0);
    d = frames_find(fr, n, NGHTTP2_DATA, 1, 0);
    CHECK(h > 0 && d > h);
    CHECK(h > 0 && frame_fields(inf, &fr[h], &hf)
          && fields_get(&hf, ":status") && !strcmp(fields_get(&hf, ":status"), "200"));
    CHECK(d > 0 && fr[d].len == 5 && !memcmp(fr[d].payload, "hello", 5)
          && (fr[d].flags & NGHTTP2_FLAG_END_STREAM));
    seam_free(t);
    fb_free(&b);
    nghttp2_hd_inflate_del(inf);
}

static void test_request_body_reaches_the_handler(void)
{
    static const char *const post[] = { ":method", "POST", ":scheme", "http",
        ":authority", "localhost", ":path", "/up", NULL };
    seam_opts o = opts(SEAM_HANDLER_ECHO);
    seam *t = seam_new(&o);
    nghttp2_hd_inflater *inf;
    h2fields hf;
    char body[3000];
    fbuf b;
    int n, h;

    memset(body, 'x', sizeof(body));
    nghttp2_hd_inflate_new(&inf);
    fb_init(&b);
    fb_preface(&b);
    fb_headers(&b, 1, 0, post);
    exchange(t, &b, 0);
    fb_data(&b, 1, 0, body, 1000);
    exchange(t, &b, 0);
    fb_data(&b, 1, NGHTTP2_FLAG_END_STREAM, body, 2000);
    n = exchange(t, &b, 0);
    h = frames_find(fr, n, NGHTTP2_HEADERS, 1, 0);
    CHECK(h > 0 && frame_fields(inf, &fr[h], &hf)
          && fields_get(&hf, "x-body-length")
          && !strcmp(fields_get(&hf, "x-body-length"), "3000"));
    seam_free(t);
    fb_free(&b);
    nghttp2_hd_inflate_del(inf);
}

static void test_lower_stream_id_is_a_connection_error(void)
{
    seam_opts o = opts(SEAM_HANDLER_HELLO);
    seam *t = seam_new(&o);
    fbuf b;
    int n, g;

    fb_init(&b);
    fb_preface(&b);
    fb_headers(&b, 5, NGHTTP2_FLAG_END_STREAM, GET1);
    exchange(t, &b, 0);
    fb_headers(&b, 3, NGHTTP2_FLAG_END_STREAM, GET1);
    n = exchange(t, &b, 0);
    g = frames_find(fr, n, NGHTTP2_GOAWAY, 0, 0);
    CHECK(g > 0);
    CHECK(g > 0 && frame_u32(fr[g].payload) == 5
          && frame_u32(fr[g].payload + 4) == NGHTTP2_PROTOCOL_ERROR
          && fr[g].len > 8 && !memcmp(fr[g].payload + 8, "stream id lower", 15));
    seam_free(t);
    fb_free(&b);
}

static void test_rapid_reset_gets_enhance_your_calm(void)
{
    seam_opts o = opts(SEAM_HANDLER_HELLO);
    seam *t = seam_new(&o);
    fbuf b;
    int n, g, i;

    fb_init(&b);
    fb_preface(&b);
    for (i = 0; i < 600; ++i) {
        fb_headers(&b, 2 * i + 1, NGHTTP2_FLAG_END_STREAM, GET1);
        fb_rst(&b, 2 * i + 1, NGHTTP2_CANCEL);
    }
    n = exchange(t, &b, 0);
    g = frames_find(fr, n, NGHTTP2_GOAWAY, 0, 0);
    CHECK(g > 0 && frame_u32(fr[g].payload + 4) == NGHTTP2_ENHANCE_YOUR_CALM
          && fr[g].len > 8 && !memcmp(fr[g].payload + 8, "rapid reset", 11));
    seam_free(t);
    fb_free(&b);
}

/* A client that resets a stream whose response is complete, once for
 * each DATA frame that was in flight (python-h2 after cancelling a big
 * download), did not make us start work for nothing: no rapid reset. */
static void test_resets_of_a_complete_stream_keep_the_connection(void)
{
    seam_opts o = opts(SEAM_HANDLER_HELLO);
    seam *t = seam_new(&o);
    fbuf b;
    int n, d, i;

    fb_init(&b);
    fb_preface(&b);
    fb_headers(&b, 1, NGHTTP2_FLAG_END_STREAM, GET1);
    n = exchange(t, &b, 0);
    d = frames_find(fr, n, NGHTTP2_DATA, 1, 0);
    CHECK(d > 0 && (fr[d].flags & NGHTTP2_FLAG_END_STREAM));
    for (i = 0; i < 841; ++i) {
        fb_rst(&b, 1, i? NGHTTP2_STREAM_CLOSED : NGHTTP2_CANCEL);
    }
    fb_headers(&b, 3, NGHTTP2_FLAG_END_STREAM, GET1);
    n = exchange(t, &b, 0);
    CHECK(frames_find(fr, n, NGHTTP2_GOAWAY, 0, 0) < 0);
    d = frames_find(fr, n, NGHTTP2_DATA, 3, 0);
    CHECK(d > 0 && (fr[d].flags & NGHTTP2_FLAG_END_STREAM));
    seam_free(t);
    fb_free(&b);
}

/* An endless stream of them is a flood: GOAWAY with our reason, before
 * nghttp2's own reset limit (which counts them too) says INTERNAL_ERROR. */
static void test_endless_resets_of_a_closed_stream_get_enhance_your_calm(void)
{
    seam_opts o = opts(SEAM_HANDLER_HELLO);
    seam *t = seam_new(&o);
    fbuf b;
    int n, g, i;

    fb_init(&b);
    fb_preface(&b);
    fb_headers(&b, 1, NGHTTP2_FLAG_END_STREAM, GET1);
    exchange(t, &b, 0);
    for (i = 0; i < H2_ABUSE_CLOSED_RESETS_PER_SEC + 100; ++i) {
        fb_rst(&b, 1, NGHTTP2_CANCEL);
    }
    n = exchange(t, &b, 0);
    g = frames_find(fr, n, NGHTTP2_GOAWAY, 0, 0);
    CHECK(g > 0 && frame_u32(fr[g].payload) == 1
          && frame_u32(fr[g].payload + 4) == NGHTTP2_ENHANCE_YOUR_CALM
          && fr[g].len > 8 && !memcmp(fr[g].payload + 8, "flood of RST_STREAMs", 20));
    seam_free(t);
    fb_free(&b);
}

static void test_body_shorter_than_content_length_resets_the_stream(void)
{
    static const char *const post[] = { ":method", "POST", ":scheme", "http",
        ":authority", "localhost", ":path", "/", "content-length", "10", NULL };
    seam_opts o = opts(SEAM_HANDLER_ECHO);
    seam *t = seam_new(&o);
    fbuf b;
    int n, r;

    fb_init(&b);
    fb_preface(&b);
    fb_headers(&b, 1, 0, post);
    fb_data(&b, 1, NGHTTP2_FLAG_END_STREAM, "12345", 5);
    n = exchange(t, &b, 0);
    r = frames_find(fr, n, NGHTTP2_RST_STREAM, 1, 0);
    CHECK(r > 0 && frame_u32(fr[r].payload) == NGHTTP2_PROTOCOL_ERROR);
    CHECK(frames_find(fr, n, NGHTTP2_HEADERS, 1, 0) < 0);
    seam_free(t);
    fb_free(&b);
}

static void test_broken_response_resets_after_its_data(void)
{
    seam_opts o = opts(SEAM_HANDLER_RESET);
    seam *t = seam_new(&o);
    fbuf b;
    int n, h, d, r;

    fb_init(&b);
    fb_preface(&b);
    fb_headers(&b, 1, NGHTTP2_FLAG_END_STREAM, GET1);
    n = exchange(t, &b, 0);
    h = frames_find(fr, n, NGHTTP2_HEADERS, 1, 0);
    d = frames_find(fr, n, NGHTTP2_DATA, 1, 0);
    r = frames_find(fr, n, NGHTTP2_RST_STREAM, 1, 0);
    CHECK(h > 0 && d > h && r > d);
    CHECK(d > 0 && fr[d].len == 4 && !(fr[d].flags & NGHTTP2_FLAG_END_STREAM));
    CHECK(r > 0 && frame_u32(fr[r].payload) == NGHTTP2_INTERNAL_ERROR);
    seam_free(t);
    fb_free(&b);
}

static size_t data_bytes(int n, int32_t sid, int *eos)
{
    size_t sum = 0;
    int i;
    *eos = 0;
    for (i = 0; i < n; ++i) {
        if (fr[i].type == NGHTTP2_DATA && fr[i].sid == sid) {
            sum += fr[i].len;
            if (fr[i].flags & NGHTTP2_FLAG_END_STREAM) *eos = 1;
        }
    }
    return sum;
}

static void test_response_waits_for_the_clients_window(void)
{
    seam_opts o = opts(SEAM_HANDLER_BIG);
    seam *t;
    fbuf b;
    int n, eos;

    o.big_len = 100000;
    t = seam_new(&o);
    fb_init(&b);
    fb_preface(&b);
    fb_headers(&b, 1, NGHTTP2_FLAG_END_STREAM, GET1);
    n = exchange(t, &b, 0);
    /* the default windows: 65535 bytes, and not one more */
    CHECK(data_bytes(n, 1, &eos) == 65535 && !eos);
    fb_window(&b, 0, 100000);
    fb_window(&b, 1, 100000);
    n = exchange(t, &b, 0);
    CHECK(data_bytes(n, 1, &eos) == 100000 && eos);
    seam_free(t);
    fb_free(&b);
}

static void test_client_that_does_not_read_is_closed_after_timeout(void)
{
    seam_opts o = opts(SEAM_HANDLER_BIG);
    seam *t;
    fbuf b;
    int n, g;

    o.big_len = 1000000;
    t = seam_new(&o);
    fb_init(&b);
    fb_preface(&b);
    fb_headers(&b, 1, NGHTTP2_FLAG_END_STREAM, GET1);
    exchange(t, &b, 0);
    /* nothing moves for longer than Timeout (5 s) */
    CHECK(seam_wait(t, apr_time_from_sec(6)));
    n = exchange(t, &b, 0);
    g = frames_find(fr, n, NGHTTP2_GOAWAY, 0, 0);
    CHECK(g > 0 && frame_u32(fr[g].payload + 4) == NGHTTP2_NO_ERROR
          && fr[g].len == 8 + 7 && !memcmp(fr[g].payload + 8, "timeout", 7));
    seam_free(t);
    fb_free(&b);
}

static void test_many_streams_over_the_limit_are_refused(void)
{
    seam_opts o = opts(SEAM_HANDLER_BIG);
    seam *t;
    fbuf b;
    int n, i, refused = 0;

    o.big_len = 200000;       /* streams stay open: their windows fill */
    o.max_streams = 4;
    t = seam_new(&o);
    fb_init(&b);
    fb_preface(&b);
    for (i = 0; i < 6; ++i) {
        fb_headers(&b, 2 * i + 1, NGHTTP2_FLAG_END_STREAM, GET1);
    }
    n = exchange(t, &b, 0);
    for (i = 0; i < n; ++i) {
        if (fr[i].type == NGHTTP2_RST_STREAM
            && frame_u32(fr[i].payload) == NGHTTP2_REFUSED_STREAM) {
            refused++;
            CHECK(fr[i].sid == 9 || fr[i].sid == 11);
        }
    }
    CHECK(refused == 2);
    seam_free(t);
    fb_free(&b);
}

/* argv[1], if given: run only the tests whose name contains it */
int main(int argc, char **argv)
{
#define RUN(t) do { if (argc < 2 || strstr(#t, argv[1])) t(); } while (0)
    RUN(test_get_gets_settings_then_headers_and_data);
    RUN(test_request_body_reaches_the_handler);
    RUN(test_lower_stream_id_is_a_connection_error);
    RUN(test_rapid_reset_gets_enhance_your_calm);
    RUN(test_resets_of_a_complete_stream_keep_the_connection);
    RUN(test_endless_resets_of_a_closed_stream_get_enhance_your_calm);
    RUN(test_body_shorter_than_content_length_resets_the_stream);
    RUN(test_broken_response_resets_after_its_data);
    RUN(test_response_waits_for_the_clients_window);
    RUN(test_client_that_does_not_read_is_closed_after_timeout);
    RUN(test_many_streams_over_the_limit_are_refused);
    CHECK(seam_problems() == 0);
    return unit_done("test_session");
}
