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
/* TLS record sizes: small while a connection warms up, full once it is busy
 * (pure logic). */

#include "h2_tls_sizing.h"

void h2_tls_sizing_init(h2_tls_sizing *s, apr_off_t warmup_bytes,
                        apr_interval_time_t cooldown)
{
    s->warmup_bytes = warmup_bytes;
    s->cooldown = cooldown;
    s->written = 0;
    s->last_write = 0;
}

apr_size_t h2_tls_sizing_next(h2_tls_sizing *s, apr_time_t now)
{
    if (s->warmup_bytes <= 0) {
        return H2_TLS_LARGE_RECORD;
    }
    if (s->last_write && s->cooldown > 0 && now - s->last_write > s->cooldown) {
        /* idle long enough that TCP's congestion window has shrunk again */
        s->written = 0;
    }
    return (s->written < s->warmup_bytes)? H2_TLS_SMALL_RECORD : H2_TLS_LARGE_RECORD;
}

void h2_tls_sizing_written(h2_tls_sizing *s, apr_size_t n, apr_time_t now)
{
    s->written += n;
    s->last_write = now;
}
