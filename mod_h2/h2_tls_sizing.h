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
#ifndef H2_TLS_SIZING_H
#define H2_TLS_SIZING_H

#include <apr_time.h>

/* How large the next write to TLS should be. A fresh or idle connection
 * writes records that fit one TCP segment, so a browser can decrypt and act
 * on the first bytes early; once warmup bytes went out, full 16 KB records
 * keep the per-record cost low. After cooldown without writes, it starts
 * small again. */

#define H2_TLS_SMALL_RECORD 1300
#define H2_TLS_LARGE_RECORD 16384

typedef struct h2_tls_sizing {
    apr_off_t warmup_bytes;         /* 0: always large records */
    apr_interval_time_t cooldown;
    apr_off_t written;              /* since the last warm-up start */
    apr_time_t last_write;          /* 0: nothing written yet */
} h2_tls_sizing;

/* Set up sizing with H2TLSWarmUpSize and H2TLSCoolDownSecs values. */
void h2_tls_sizing_init(h2_tls_sizing *s, apr_off_t warmup_bytes,
                        apr_interval_time_t cooldown);

/* The record size to use for a write starting at time now. */
apr_size_t h2_tls_sizing_next(h2_tls_sizing *s, apr_time_t now);

/* Account n bytes written at time now. */
void h2_tls_sizing_written(h2_tls_sizing *s, apr_size_t n, apr_time_t now);

#endif
