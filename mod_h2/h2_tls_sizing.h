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
 * writes records that fit one TCP segment of its path, so a browser can
 * decrypt and act on the first bytes as they arrive; once warmup bytes
 * went out, full 16 KB records keep the per-record cost low. After
 * cooldown without writes, it starts small again. */

/* Warm-up record payload when the connection's segment size is unknown:
 * fits a segment on a 1500 byte MTU path. */
#define H2_TLS_SMALL_RECORD 1300
#define H2_TLS_LARGE_RECORD 16384
/* Records smaller than this cost more in headers and tags than a
 * segment they straddle would cost in waiting. */
#define H2_TLS_MIN_RECORD 512
/* The most a record adds to its payload with the AEAD suites HTTP/2
 * allows (RFC 9113 9.2.2): TLS 1.2 AES-GCM has a 5 byte header, an 8
 * byte explicit nonce and a 16 byte tag; TLS 1.3 5 + 1 content type + 16
 * = 22; ChaCha20-Poly1305 21. */
#define H2_TLS_RECORD_OVERHEAD 29

typedef struct h2_tls_sizing {
    apr_off_t warmup_bytes;         /* 0: always large records */
    apr_interval_time_t cooldown;
    apr_size_t small;               /* warm-up record payload */
    apr_off_t written;              /* since the last warm-up start */
    apr_time_t last_write;          /* 0: nothing written yet */
} h2_tls_sizing;

/* Set up sizing with H2TLSWarmUpSize and H2TLSCoolDownSecs values. */
void h2_tls_sizing_init(h2_tls_sizing *s, apr_off_t warmup_bytes,
                        apr_interval_time_t cooldown);

/* The warm-up record payload for TCP segments of mss bytes (TCP_MAXSEG,
 * TCP options already taken off; 0: unknown). */
apr_size_t h2_tls_sizing_for_segment(apr_size_t mss);

/* Size warm-up records for segments of mss bytes (0: unknown). */
void h2_tls_sizing_set_segment(h2_tls_sizing *s, apr_size_t mss);

/* 1 when a write at now starts a warm-up (the connection's first, or the
 * first after cooldown): the time to learn the segment size again. */
int h2_tls_sizing_warmup_due(const h2_tls_sizing *s, apr_time_t now);

/* The record size to use for a write starting at time now. */
apr_size_t h2_tls_sizing_next(h2_tls_sizing *s, apr_time_t now);

/* Account n bytes written at time now. */
void h2_tls_sizing_written(h2_tls_sizing *s, apr_size_t n, apr_time_t now);

#endif
