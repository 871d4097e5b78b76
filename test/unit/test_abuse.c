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
/* The flood and rate budgets of a client connection (h2_abuse.c): each
 * allows exactly its limit, refills as documented, and resets per second. */
#include <string.h>
#include <apr_general.h>

#include "h2_abuse.h"
#include "unit.h"

#define SEC(n) apr_time_from_sec(n)
#define MS(n)  apr_time_from_msec(n)

static void test_flood_allows_exactly_its_limit_per_second(void)
{
    h2_abuse a;
    apr_time_t t0 = SEC(1000);
    int i, ok = 1;

    h2_abuse_init(&a, 0, t0);
    for (i = 0; i < H2_ABUSE_EMPTY_FRAMES_PER_SEC; ++i) {
        ok &= h2_abuse_flood(&a, H2_FLOOD_EMPTY_FRAMES, t0 + i);
    }
    CHECK(ok);
    CHECK(!h2_abuse_flood(&a, H2_FLOOD_EMPTY_FRAMES, t0 + MS(500)));
    /* other kinds have budgets of their own */
    CHECK(h2_abuse_flood(&a, H2_FLOOD_PRIORITY, t0 + MS(500)));
    CHECK(h2_abuse_flood(&a, H2_FLOOD_TINY_WINDOWS, t0 + MS(500)));
    /* a new second starts every count anew */
    CHECK(h2_abuse_flood(&a, H2_FLOOD_EMPTY_FRAMES, t0 + SEC(1) + MS(1)));
}

static void test_flood_limits_per_kind(void)
{
    h2_abuse a;
    apr_time_t t0 = SEC(5);
    int i, n = 0;

    h2_abuse_init(&a, 0, t0);
    for (i = 0; i < 5000; ++i) {
        n += h2_abuse_flood(&a, H2_FLOOD_PRIORITY, t0);
    }
    CHECK(n == H2_ABUSE_PRIORITY_PER_SEC);
    for (i = 0, n = 0; i < 5000; ++i) {
        n += h2_abuse_flood(&a, H2_FLOOD_TINY_WINDOWS, t0);
    }
    CHECK(n == H2_ABUSE_TINY_WINDOWS_PER_SEC);
    for (i = 0, n = 0; i < 3 * H2_ABUSE_CLOSED_RESETS_PER_SEC; ++i) {
        n += h2_abuse_flood(&a, H2_FLOOD_CLOSED_RESETS, t0);
    }
    CHECK(n == H2_ABUSE_CLOSED_RESETS_PER_SEC);
    CHECK(!strcmp(h2_abuse_flood_str(H2_FLOOD_CLOSED_RESETS),
                  "flood of RST_STREAMs for closed streams"));
    CHECK(!strcmp(h2_abuse_flood_str(H2_FLOOD_PRIORITY), "flood of PRIORITY frames"));
    CHECK(!strcmp(h2_abuse_flood_str(H2_FLOOD_EMPTY_FRAMES), "flood of empty frames"));
}

static void test_resets_burst_then_refill_at_rate(void)
{
    h2_abuse a;
    apr_time_t t0 = SEC(100);
    int i, n = 0;

    h2_abuse_init(&a, 0, t0);
    for (i = 0; i < 2 * H2_RESET_BURST; ++i) {
        n += h2_abuse_reset(&a, t0);
    }
    CHECK(n == H2_RESET_BURST);
    /* one second later, H2_RESET_RATE more */
    for (i = 0, n = 0; i < 2 * H2_RESET_RATE; ++i) {
        n += h2_abuse_reset(&a, t0 + SEC(1));
    }
    CHECK(n == H2_RESET_RATE);
    /* never more than the burst, however long the pause */
    for (i = 0, n = 0; i < 2 * H2_RESET_BURST; ++i) {
        n += h2_abuse_reset(&a, t0 + SEC(3600));
    }
    CHECK(n == H2_RESET_BURST);
}

/* Resets of closed streams have a budget of their own: hundreds of them
 * (a cancelled download's late DATA frames, each answered) leave the
 * rapid reset budget whole; and nghttp2's limit, which counts both, is
 * above the two together. */
static void test_closed_resets_leave_rapid_reset_budget_alone(void)
{
    h2_abuse a;
    apr_time_t t0 = SEC(200);
    int i, ok = 1;

    h2_abuse_init(&a, 0, t0);
    for (i = 0; i < 841; ++i) {
        ok &= h2_abuse_flood(&a, H2_FLOOD_CLOSED_RESETS, t0 + MS(i % 500));
    }
    CHECK(ok);
    for (i = 0; i < H2_RESET_BURST; ++i) {
        ok &= h2_abuse_reset(&a, t0 + MS(600));
    }
    CHECK(ok);
    CHECK(H2_RESET_BACKSTOP_BURST >= H2_RESET_BURST + 2 * H2_ABUSE_CLOSED_RESETS_PER_SEC);
    CHECK(H2_RESET_BACKSTOP_RATE >= H2_RESET_RATE + H2_ABUSE_CLOSED_RESETS_PER_SEC);
}

static void test_tiny_frames_bucket(void)
{
    h2_abuse a;
    apr_time_t t0 = SEC(7);
    int i, n = 0;

    h2_abuse_init(&a, 0, t0);
    CHECK(h2_abuse_tiny_frame_ready(&a, t0));
    for (i = 0; i < 1000; ++i) {
        n += h2_abuse_tiny_frame(&a, t0);
    }
    CHECK(n == H2_TINY_FRAMES_BURST);
    CHECK(!h2_abuse_tiny_frame_ready(&a, t0));
    /* one token takes 1/rate seconds: ready just after, not just before */
    CHECK(!h2_abuse_tiny_frame_ready(&a, t0 + SEC(1) / H2_TINY_FRAMES_PER_SEC - 1));
    CHECK(h2_abuse_tiny_frame_ready(&a, t0 + SEC(1) / H2_TINY_FRAMES_PER_SEC));
    /* ready takes nothing */
    CHECK(h2_abuse_tiny_frame(&a, t0 + SEC(1) / H2_TINY_FRAMES_PER_SEC));
    CHECK(!h2_abuse_tiny_frame(&a, t0 + SEC(1) / H2_TINY_FRAMES_PER_SEC));
}

static void test_stream_errors_over_max_stream_errors(void)
{
    h2_abuse a;
    int i, ok = 1;

    h2_abuse_init(&a, 8, 0);
    for (i = 0; i < 8; ++i) {
        ok &= h2_abuse_stream_error(&a);
    }
    CHECK(ok);
    CHECK(!h2_abuse_stream_error(&a));
    /* H2MaxStreamErrors 0: no limit */
    h2_abuse_init(&a, 0, 0);
    for (i = 0, ok = 1; i < 100000; ++i) {
        ok &= h2_abuse_stream_error(&a);
    }
    CHECK(ok);
}

int main(void)
{
    apr_initialize();
    test_flood_allows_exactly_its_limit_per_second();
    test_flood_limits_per_kind();
    test_resets_burst_then_refill_at_rate();
    test_closed_resets_leave_rapid_reset_budget_alone();
    test_tiny_frames_bucket();
    test_stream_errors_over_max_stream_errors();
    apr_terminate();
    return unit_done("test_abuse");
}
