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
/* TLS record sizing: warm-up with small records, then full ones, back to
 * small after the cool-down. */
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

static void test_small_record_fits_one_segment(void)
{
    /* 1300 bytes plus TLS overhead stay under a 1460 byte TCP segment */
    CHECK(H2_TLS_SMALL_RECORD + 29 <= 1460);
    CHECK(H2_TLS_LARGE_RECORD == 16384);
}

int main(void)
{
    apr_initialize();
    test_warmup_starts_small_then_goes_large();
    test_cooldown_returns_to_small_records();
    test_zero_warmup_always_writes_full_records();
    test_zero_cooldown_never_warms_up_again();
    test_small_record_fits_one_segment();
    apr_terminate();
    return unit_done("test_tls_sizing");
}
