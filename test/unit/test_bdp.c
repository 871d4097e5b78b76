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
/* Unit tests of the receive window sizing (h2_bdp.c). */
#include "h2_bdp.h"
#include "unit.h"

#define MS(n) ((apr_time_t)(n) * 1000)

/* n bytes arrive at now and a handler that keeps up reads them at once */
static apr_int32_t kept_up(h2_bdp *b, apr_int64_t n, apr_time_t now,
                           apr_interval_time_t rtt, apr_int32_t max)
{
    h2_bdp_arrived(b, n, now);
    return h2_bdp_consumed(b, n, now, rtt, max);
}

static void test_a_handler_catching_up_grows_nothing(void)
{
    /* 4 MB window, 0.3 ms round trip: the handler held 3 MB and reads it
     * within 1 ms while 200 KB arrive; what arrived is what counts */
    h2_bdp b;
    h2_bdp_init(&b, 4 << 20);
    h2_bdp_arrived(&b, 0, MS(1000));
    h2_bdp_arrived(&b, 200 * 1000, MS(1000) + 500);
    CHECK(h2_bdp_consumed(&b, 3 << 20, MS(1001), 300, 1 << 28) == (4 << 20));
    /* 3 MB arriving and read within less than a round trip: the window
     * held the client back */
    h2_bdp_arrived(&b, 3 << 20, MS(1001) + 100);
    CHECK(h2_bdp_consumed(&b, 3 << 20, MS(1001) + 250, 300, 1 << 28) > (4 << 20));
}

static void test_a_window_filled_before_the_first_round_trip_is_known_grows(void)
{
    /* no round trip measured yet: still within the connection's first */
    h2_bdp b;
    h2_bdp_init(&b, 65535);
    CHECK(kept_up(&b, 30000, MS(1000), 0, 1 << 24) == 65535);
    CHECK(kept_up(&b, 35535, MS(1002), 0, 1 << 24) == H2_BDP_STEP * 65535);
}

static void test_a_small_body_before_the_first_round_trip_grows_nothing(void)
{
    h2_bdp b;
    h2_bdp_init(&b, 65535);
    CHECK(kept_up(&b, 20000, MS(1000), 0, 1 << 24) == 65535);
    CHECK(kept_up(&b, 12000, MS(2000), 0, 1 << 24) == 65535);
}

static void test_window_limited_upload_grows_a_step_each_round_trip(void)
{
    /* 20 ms round trip; the client sends a full window per round trip:
     * 64 KB to 4 MB at once, then four times what went through */
    h2_bdp b;
    apr_time_t t = MS(1000);
    int i;
    h2_bdp_init(&b, 65535);
    CHECK(kept_up(&b, 0, t, MS(20), 1 << 26) == 65535);
    t += MS(20);
    CHECK(kept_up(&b, 65535, t, MS(20), 1 << 26) == H2_BDP_STEP * 65535);
    for (i = 0; i < 2; ++i) {
        apr_int32_t before = b.window;
        t += MS(20);
        CHECK(kept_up(&b, before, t, MS(20), 1 << 26)
              == H2_BDP_HEADROOM * before);
    }
    t += MS(20);
    CHECK(kept_up(&b, b.window, t, MS(20), 1 << 26) == (1 << 26));
    t += MS(20);                    /* and no further */
    CHECK(kept_up(&b, 1 << 26, t, MS(20), 1 << 26) == (1 << 26));
}

static void test_a_large_window_grows_to_what_a_round_trip_carries_not_64_times(void)
{
    /* a busy machine's late PING answer: 30 ms measured on loopback while
     * the handler reads 150 MB/s, 4.5 MB per measured round trip: 18 MB
     * of window, not 256 */
    h2_bdp b;
    h2_bdp_init(&b, 4 << 20);
    kept_up(&b, 0, MS(1000), MS(30), 1 << 28);
    CHECK(kept_up(&b, 4500 * 1000, MS(1030), MS(30), 1 << 28) == 18 * 1000 * 1000);
    /* what went through stays below half of it: no further */
    CHECK(kept_up(&b, 4500 * 1000, MS(1060), MS(30), 1 << 28) == 18 * 1000 * 1000);
}

static void test_a_small_configured_window_grows_to_4mb_at_once(void)
{
    /* H2WindowSize 1 MB, filled within a round trip: 4 MB, not 64 MB */
    h2_bdp b;
    h2_bdp_init(&b, 1 << 20);
    kept_up(&b, 0, MS(1000), MS(20), 1 << 28);
    CHECK(kept_up(&b, 1 << 20, MS(1020), MS(20), 1 << 28) == H2_BDP_FAST_UPTO);
}

static void test_link_limited_upload_keeps_its_window(void)
{
    /* 1 MB window, the link carries 10 MB/s at 20 ms: 200 KB per trip */
    h2_bdp b;
    apr_time_t t = MS(1000);
    int i;
    h2_bdp_init(&b, 1 << 20);
    kept_up(&b, 0, t, MS(20), 1 << 24);
    for (i = 0; i < 50; ++i) {
        t += MS(20);
        CHECK(kept_up(&b, 200 * 1000, t, MS(20), 1 << 24) == (1 << 20));
    }
}

static void test_samples_span_a_round_trip(void)
{
    /* consumption in pieces within one round trip counts together */
    h2_bdp b;
    h2_bdp_init(&b, 65535);
    kept_up(&b, 0, MS(1000), MS(20), 1 << 24);
    CHECK(kept_up(&b, 20000, MS(1005), MS(20), 1 << 24) == 65535);
    CHECK(kept_up(&b, 10000, MS(1010), MS(20), 1 << 24) == 65535);
    CHECK(kept_up(&b, 10000, MS(1020), MS(20), 1 << 24) == H2_BDP_STEP * 65535);
}

static void test_half_a_window_used_within_a_round_trip_grows_at_once(void)
{
    /* 60 KB of a 64 KB window 10 ms into a 20 ms round trip: at least that
     * much per round trip; what was in flight before (a 64th of the
     * new window) does not grow it again */
    h2_bdp b;
    h2_bdp_init(&b, 65535);
    kept_up(&b, 0, MS(1000), MS(20), 1 << 24);
    CHECK(kept_up(&b, 30000, MS(1005), MS(20), 1 << 24) == 65535);
    CHECK(kept_up(&b, 30000, MS(1010), MS(20), 1 << 24) == H2_BDP_STEP * 65535);
    CHECK(kept_up(&b, 65535, MS(1015), MS(20), 1 << 24) == H2_BDP_STEP * 65535);
    CHECK(kept_up(&b, 0, MS(1030), MS(20), 1 << 24) == H2_BDP_STEP * 65535);
}

static void test_a_window_used_by_more_than_half_grows(void)
{
    /* 40 KB of a 64 KB window per round trip: held back by the window
     * (updates come at half of it); 20 KB: by the link */
    h2_bdp b;
    h2_bdp_init(&b, 65535);
    kept_up(&b, 0, MS(1000), MS(20), 1 << 24);
    CHECK(kept_up(&b, 20000, MS(1020), MS(20), 1 << 24) == 65535);
    CHECK(kept_up(&b, 40000, MS(1040), MS(20), 1 << 24) == H2_BDP_STEP * 65535);
}

static void test_the_cap_is_reached_not_passed(void)
{
    h2_bdp b;
    h2_bdp_init(&b, 3 * 1000 * 1000);
    kept_up(&b, 0, MS(1000), MS(10), 4 * 1000 * 1000);
    CHECK(kept_up(&b, 3 * 1000 * 1000, MS(1010), MS(10), 4 * 1000 * 1000)
          == 4 * 1000 * 1000);
}

int main(void)
{
    test_a_window_filled_before_the_first_round_trip_is_known_grows();
    test_a_small_body_before_the_first_round_trip_grows_nothing();
    test_window_limited_upload_grows_a_step_each_round_trip();
    test_a_handler_catching_up_grows_nothing();
    test_a_large_window_grows_to_what_a_round_trip_carries_not_64_times();
    test_a_small_configured_window_grows_to_4mb_at_once();
    test_a_window_used_by_more_than_half_grows();
    test_link_limited_upload_keeps_its_window();
    test_samples_span_a_round_trip();
    test_half_a_window_used_within_a_round_trip_grows_at_once();
    test_the_cap_is_reached_not_passed();
    return unit_done("test_bdp");
}
