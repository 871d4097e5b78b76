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
/* TLS record sizes: one TCP segment of the connection's path while it warms
 * up, full once it is busy (pure logic). */

#include "h2_tls_sizing.h"

void h2_tls_sizing_init(h2_tls_sizing *s, apr_off_t warmup_bytes,
                        apr_interval_time_t cooldown)
{
    s->warmup_bytes = warmup_bytes;
    s->cooldown = cooldown;
    s->small = H2_TLS_SMALL_RECORD;
    s->written = 0;
    s->last_write = 0;
}

apr_size_t h2_tls_sizing_for_segment(apr_size_t mss)
{
    if (mss == 0) {
        return H2_TLS_SMALL_RECORD;
    }
    if (mss < H2_TLS_MIN_RECORD + H2_TLS_RECORD_OVERHEAD) {
        return H2_TLS_MIN_RECORD;
    }
    if (mss - H2_TLS_RECORD_OVERHEAD > H2_TLS_LARGE_RECORD) {
        return H2_TLS_LARGE_RECORD;
    }
    return mss - H2_TLS_RECORD_OVERHEAD;
}

void h2_tls_sizing_set_segment(h2_tls_sizing *s, apr_size_t mss)
{
    s->small = h2_tls_sizing_for_segment(mss);
}

static int cooled_down(const h2_tls_sizing *s, apr_time_t now)
{
    return s->last_write && s->cooldown > 0 && now - s->last_write > s->cooldown;
}

int h2_tls_sizing_warmup_due(const h2_tls_sizing *s, apr_time_t now)
{
    return s->warmup_bytes > 0 && (!s->last_write || cooled_down(s, now));
}

apr_size_t h2_tls_sizing_next(h2_tls_sizing *s, apr_time_t now)
{
    if (s->warmup_bytes <= 0) {
        return H2_TLS_LARGE_RECORD;
    }
    if (cooled_down(s, now)) {
        /* idle long enough that TCP's congestion window has shrunk again */
        s->written = 0;
    }
    return (s->written < s->warmup_bytes)? s->small : H2_TLS_LARGE_RECORD;
}

void h2_tls_sizing_written(h2_tls_sizing *s, apr_size_t n, apr_time_t now)
{
    s->written += n;
    s->last_write = now;
}
