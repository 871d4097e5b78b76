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
/* TLS record sizing: warm-up with records of one TCP segment, then full
 * ones, back to small after the cool-down. */
#include <apr_general.h>

#include "h2_tls_sizing.h"
#include "unit.h"

static void test_warmup_starts_small_then_goes_large(void)
{
    h2_tls_sizing s;
    apr_time_t t = apr_time_from_sec(100);
    apr_off_t sent = 0;

    h2_tls_sizing_init(&s, 10000, apr_time_from_sec(1));
    CHECK(h2_tls_sizing_next(&s, t) == H2_TLS_SMALL_RECORD);
    while (sent < 10000) {
        apr_size_t n = h2_tls_sizing_next(&s, t);
        CHECK(n == H2_TLS_SMALL_RECORD);
        h2_tls_sizing_written(&s, n, t);
        sent += n;
    }
    CHECK(h2_tls_sizing_next(&s, t) == H2_TLS_LARGE_RECORD);
}

static void test_cooldown_returns_to_small_records(void)
{
    h2_tls_sizing s;
    apr_time_t t = apr_time_from_sec(100);

    h2_tls_sizing_init(&s, 1000, apr_time_from_sec(1));
    h2_tls_sizing_written(&s, 5000, t);
    CHECK(h2_tls_sizing_next(&s, t + apr_time_from_msec(500)) == H2_TLS_LARGE_RECORD);
    CHECK(h2_tls_sizing_next(&s, t + apr_time_from_msec(1500)) == H2_TLS_SMALL_RECORD);
}

static void test_zero_warmup_always_writes_full_records(void)
{
    h2_tls_sizing s;
    h2_tls_sizing_init(&s, 0, apr_time_from_sec(1));
    CHECK(h2_tls_sizing_next(&s, apr_time_from_sec(1)) == H2_TLS_LARGE_RECORD);
    h2_tls_sizing_written(&s, 100, apr_time_from_sec(1));
    CHECK(h2_tls_sizing_next(&s, apr_time_from_sec(50)) == H2_TLS_LARGE_RECORD);
}

static void test_zero_cooldown_never_warms_up_again(void)
{
    h2_tls_sizing s;
    h2_tls_sizing_init(&s, 100, 0);
    h2_tls_sizing_written(&s, 200, apr_time_from_sec(1));
    CHECK(h2_tls_sizing_next(&s, apr_time_from_sec(100)) == H2_TLS_LARGE_RECORD);
}

static void test_unknown_segment_keeps_the_1300_byte_default(void)
{
    h2_tls_sizing s;
    h2_tls_sizing_init(&s, 10000, apr_time_from_sec(1));
    CHECK(h2_tls_sizing_next(&s, apr_time_from_sec(1)) == 1300);
    CHECK(h2_tls_sizing_for_segment(0) == 1300);
    /* 1300 bytes plus TLS overhead stay under a 1460 byte TCP segment */
    CHECK(H2_TLS_SMALL_RECORD + H2_TLS_RECORD_OVERHEAD <= 1460);
}

static void test_warmup_records_fill_one_segment_less_tls_overhead(void)
{
    /* Linux's TCP_MAXSEG on a 1500 byte MTU path: 1460, or 1448 with
     * timestamps; IPv6: 1440/1428; the IPv6 minimum MTU 1280: 1220 */
    CHECK(h2_tls_sizing_for_segment(1460) == 1431);
    CHECK(h2_tls_sizing_for_segment(1448) == 1419);
    CHECK(h2_tls_sizing_for_segment(1428) == 1399);
    CHECK(h2_tls_sizing_for_segment(1220) == 1191);
    CHECK(H2_TLS_RECORD_OVERHEAD == 29);
}

static void test_large_segments_give_full_records(void)
{
    /* loopback (MTU 65536): 65483 */
    CHECK(h2_tls_sizing_for_segment(65483) == 16384);
    CHECK(h2_tls_sizing_for_segment(16384 + 29) == 16384);
    CHECK(h2_tls_sizing_for_segment(16384 + 28) == 16383);
    CHECK(H2_TLS_LARGE_RECORD == 16384);
}

static void test_tiny_segments_give_512_byte_records(void)
{
    CHECK(h2_tls_sizing_for_segment(512 + 29) == 512);
    CHECK(h2_tls_sizing_for_segment(536) == 512);
    CHECK(h2_tls_sizing_for_segment(88) == 512);
    CHECK(h2_tls_sizing_for_segment(1) == 512);
}

static void test_segment_size_sets_the_warmup_record(void)
{
    h2_tls_sizing s;
    apr_time_t t = apr_time_from_sec(100);

    h2_tls_sizing_init(&s, 5000, apr_time_from_sec(1));
    h2_tls_sizing_set_segment(&s, 1448);
    CHECK(h2_tls_sizing_next(&s, t) == 1419);
    h2_tls_sizing_written(&s, 5000, t);
    CHECK(h2_tls_sizing_next(&s, t) == H2_TLS_LARGE_RECORD);
    /* the path changed while idle: the next warm-up uses the new size */
    h2_tls_sizing_set_segment(&s, 65483);
    CHECK(h2_tls_sizing_next(&s, t + apr_time_from_sec(2)) == H2_TLS_LARGE_RECORD);
    h2_tls_sizing_set_segment(&s, 1220);
    CHECK(h2_tls_sizing_next(&s, t + apr_time_from_sec(2)) == 1191);
}

static void test_warmup_is_due_at_the_first_write_and_after_cool_down(void)
{
    h2_tls_sizing s;
    apr_time_t t = apr_time_from_sec(100);

    h2_tls_sizing_init(&s, 1000, apr_time_from_sec(1));
    CHECK(h2_tls_sizing_warmup_due(&s, t));
    h2_tls_sizing_written(&s, 100, t);
    CHECK(!h2_tls_sizing_warmup_due(&s, t));
    CHECK(!h2_tls_sizing_warmup_due(&s, t + apr_time_from_msec(1000)));
    CHECK(h2_tls_sizing_warmup_due(&s, t + apr_time_from_msec(1001)));
}

static void test_warmup_is_never_due_without_warmup_or_cool_down(void)
{
    h2_tls_sizing s;

    h2_tls_sizing_init(&s, 0, apr_time_from_sec(1));
    CHECK(!h2_tls_sizing_warmup_due(&s, apr_time_from_sec(1)));
    h2_tls_sizing_init(&s, 1000, 0);
    CHECK(h2_tls_sizing_warmup_due(&s, apr_time_from_sec(1)));
    h2_tls_sizing_written(&s, 100, apr_time_from_sec(1));
    CHECK(!h2_tls_sizing_warmup_due(&s, apr_time_from_sec(100)));
}

int main(void)
{
    apr_initialize();
    test_warmup_starts_small_then_goes_large();
    test_cooldown_returns_to_small_records();
    test_zero_warmup_always_writes_full_records();
    test_zero_cooldown_never_warms_up_again();
    test_unknown_segment_keeps_the_1300_byte_default();
    test_warmup_records_fill_one_segment_less_tls_overhead();
    test_large_segments_give_full_records();
    test_tiny_segments_give_512_byte_records();
    test_segment_size_sets_the_warmup_record();
    test_warmup_is_due_at_the_first_write_and_after_cool_down();
    test_warmup_is_never_due_without_warmup_or_cool_down();
    apr_terminate();
    return unit_done("test_tls_sizing");
}
