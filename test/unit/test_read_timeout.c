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
/* Read timeouts for slow clients: RequestReadTimeout's syntax and
 * deadlines (h2_read_timeout.c), and where a client stands in its frames
 * (h2_frame_clock.c). */
#include <string.h>
#include <apr_general.h>
#include <apr_strings.h>

#include "h2_read_timeout.h"
#include "h2_frame_clock.h"
#include "unit.h"

static apr_pool_t *pool;

#define SEC(n) apr_time_from_sec(n)

static void test_defaults_are_mod_reqtimeouts(void)
{
    h2_read_timeouts rt;
    h2_read_timeouts_default(&rt);
    CHECK(rt.header.min == SEC(20) && rt.header.max == SEC(40) && rt.header.rate == 500);
    CHECK(rt.body.min == SEC(20) && rt.body.max == 0 && rt.body.rate == 500);
}

static void test_parse_stages(void)
{
    h2_read_timeouts rt;
    h2_read_timeouts_default(&rt);
    CHECK(h2_read_timeouts_parse(&rt, pool, "header=3-5,MinRate=100") == NULL);
    CHECK(rt.header.min == SEC(3) && rt.header.max == SEC(5) && rt.header.rate == 100);
    CHECK(h2_read_timeouts_parse(&rt, pool, "body=7") == NULL);
    CHECK(rt.body.min == SEC(7) && rt.body.max == 0 && rt.body.rate == 0);
    CHECK(h2_read_timeouts_parse(&rt, pool, "handshake=5") == NULL);   /* not ours */
    CHECK(h2_read_timeouts_parse(&rt, pool, "header=0") == NULL);
    CHECK(rt.header.min == 0 && rt.header.rate == 0);
    CHECK(h2_read_timeouts_parse(&rt, pool, "HEADER=10,minrate=1") == NULL);
    CHECK(rt.header.min == SEC(10) && rt.header.rate == 1);
}

static void test_parse_rejects_what_mod_reqtimeout_would(void)
{
    h2_read_timeouts rt;
    h2_read_timeouts_default(&rt);
    CHECK(h2_read_timeouts_parse(&rt, pool, "header") != NULL);
    CHECK(h2_read_timeouts_parse(&rt, pool, "trailer=5") != NULL);
    CHECK(h2_read_timeouts_parse(&rt, pool, "header=x") != NULL);
    CHECK(h2_read_timeouts_parse(&rt, pool, "header=10-5") != NULL);
    CHECK(h2_read_timeouts_parse(&rt, pool, "header=10,MinRate=0") != NULL);
    CHECK(h2_read_timeouts_parse(&rt, pool, "header=10,Rate=5") != NULL);
    CHECK(h2_read_timeouts_parse(&rt, pool, "header=10s") != NULL);
    /* nothing changed by the refused ones */
    CHECK(rt.header.min == SEC(20) && rt.header.max == SEC(40));
}

static void test_deadline_grows_with_rate_up_to_max(void)
{
    h2_read_limit lim = { SEC(20), SEC(40), 500 }, off = { 0, 0, 0 },
                  nomax = { SEC(20), 0, 500 };
    apr_time_t t = SEC(1000);
    CHECK(h2_read_deadline(&lim, t, 0) == t + SEC(20));
    CHECK(h2_read_deadline(&lim, t, 500) == t + SEC(21));
    CHECK(h2_read_deadline(&lim, t, 250) == t + SEC(20) + apr_time_from_msec(500));
    CHECK(h2_read_deadline(&lim, t, 500 * 100) == t + SEC(40));
    CHECK(h2_read_deadline(&nomax, t, 500 * 100) == t + SEC(120));
    CHECK(h2_read_deadline(&off, t, 5) == 0);
}

static const unsigned char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

static void feed_bytes(h2_frame_clock *fc, const unsigned char *d, apr_size_t n,
                       apr_time_t now)
{
    h2_frame_clock_feed(fc, d, n, now);
}

static void test_clock_owes_nothing_at_boundaries(void)
{
    h2_frame_clock fc;
    apr_time_t since;
    apr_off_t bytes;
    /* SETTINGS (empty), then PING (8 bytes) */
    unsigned char frames[9 + 9 + 8] = { 0, 0, 0, 4, 0, 0, 0, 0, 0,
                                        0, 0, 8, 6, 0, 0, 0, 0, 0 };

    h2_frame_clock_init(&fc, 1);
    CHECK(!h2_frame_clock_owed(&fc, &since, &bytes));   /* silent: not owed */
    feed_bytes(&fc, preface, 10, SEC(1));
    CHECK(h2_frame_clock_owed(&fc, &since, &bytes) && since == SEC(1) && bytes == 10);
    feed_bytes(&fc, preface + 10, 14, SEC(2));
    CHECK(!h2_frame_clock_owed(&fc, &since, &bytes));
    feed_bytes(&fc, frames, sizeof(frames), SEC(3));
    CHECK(!h2_frame_clock_owed(&fc, &since, &bytes));
}

static void test_clock_restarts_with_every_frame(void)
{
    h2_frame_clock fc;
    apr_time_t since;
    apr_off_t bytes;
    unsigned char data[9 + 100] = { 0, 0, 100, 0, 0, 0, 0, 0, 1 };
    int i;

    h2_frame_clock_init(&fc, 0);
    /* one byte at a time: owed since the frame's first byte */
    for (i = 0; i < 50; ++i) {
        feed_bytes(&fc, data + i, 1, SEC(10 + i));
    }
    CHECK(h2_frame_clock_owed(&fc, &since, &bytes) && since == SEC(10) && bytes == 50);
    feed_bytes(&fc, data + 50, sizeof(data) - 50, SEC(70));
    CHECK(!h2_frame_clock_owed(&fc, &since, &bytes));
    /* a fast upload whose reads end mid-frame: the debt is the last frame's */
    feed_bytes(&fc, data, sizeof(data), SEC(80));
    feed_bytes(&fc, data, 20, SEC(81));
    CHECK(h2_frame_clock_owed(&fc, &since, &bytes) && since == SEC(81) && bytes == 20);
}

static void test_clock_holds_a_header_block_across_continuations(void)
{
    h2_frame_clock fc;
    apr_time_t since;
    apr_off_t bytes;
    /* HEADERS without END_HEADERS (2 bytes), CONTINUATION (2), then one
     * with END_HEADERS (2) */
    unsigned char h[11] = { 0, 0, 2, 1, 0x1, 0, 0, 0, 1, 0x82, 0x86 };
    unsigned char c[11] = { 0, 0, 2, 9, 0, 0, 0, 0, 1, 0x84, 0x41 };
    unsigned char e[11] = { 0, 0, 2, 9, 0x4, 0, 0, 0, 1, 0x82, 0x86 };

    h2_frame_clock_init(&fc, 0);
    feed_bytes(&fc, h, sizeof(h), SEC(5));
    CHECK(h2_frame_clock_owed(&fc, &since, &bytes) && since == SEC(5) && bytes == 11);
    feed_bytes(&fc, c, sizeof(c), SEC(9));
    CHECK(h2_frame_clock_owed(&fc, &since, &bytes) && since == SEC(5) && bytes == 22);
    feed_bytes(&fc, e, sizeof(e), SEC(12));
    CHECK(!h2_frame_clock_owed(&fc, &since, &bytes));
}

static void test_a_pause_of_the_server_is_not_the_clients_time(void)
{
    h2_frame_clock fc;
    apr_time_t since;
    apr_off_t bytes;
    unsigned char data[9 + 100] = { 0, 0, 100, 0, 0, 0, 0, 0, 1 };

    h2_frame_clock_init(&fc, 0);
    feed_bytes(&fc, data, 30, SEC(20));
    /* the server stopped reading for 7 s: owed as if since 27 s */
    h2_frame_clock_pause(&fc, SEC(7));
    CHECK(h2_frame_clock_owed(&fc, &since, &bytes) && since == SEC(27) && bytes == 30);
    /* at a boundary, a pause changes nothing */
    feed_bytes(&fc, data + 30, sizeof(data) - 30, SEC(28));
    h2_frame_clock_pause(&fc, SEC(3));
    CHECK(!h2_frame_clock_owed(&fc, &since, &bytes));
    feed_bytes(&fc, data, 5, SEC(40));
    CHECK(h2_frame_clock_owed(&fc, &since, &bytes) && since == SEC(40) && bytes == 5);
}

int main(void)
{
    apr_initialize();
    apr_pool_create(&pool, NULL);
    test_defaults_are_mod_reqtimeouts();
    test_parse_stages();
    test_parse_rejects_what_mod_reqtimeout_would();
    test_deadline_grows_with_rate_up_to_max();
    test_clock_owes_nothing_at_boundaries();
    test_clock_restarts_with_every_frame();
    test_clock_holds_a_header_block_across_continuations();
    test_a_pause_of_the_server_is_not_the_clients_time();
    apr_pool_destroy(pool);
    apr_terminate();
    return unit_done("test_read_timeout");
}
