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
#ifndef H2_READ_TIMEOUT_H
#define H2_READ_TIMEOUT_H

#include <apr_pools.h>
#include <apr_time.h>

/* How long a client may take to send a request head or body: the values
 * of mod_reqtimeout's RequestReadTimeout (header=, body=), read with our
 * own parser, so HTTP/2 connections get the protection HTTP/1.1 ones have.
 * Depends on APR only, so unit tests link it alone. */

typedef struct h2_read_limit {
    apr_interval_time_t min;    /* first timeout, 0: no limit */
    apr_interval_time_t max;    /* the most MinRate may extend it to */
    apr_size_t rate;            /* bytes a second that extend it, 0: none */
} h2_read_limit;

typedef struct h2_read_timeouts {
    h2_read_limit header;
    h2_read_limit body;
} h2_read_timeouts;

/* mod_reqtimeout's defaults (httpd 2.4.39 and later, Debian's too):
 * header=20-40,MinRate=500 body=20,MinRate=500. */
void h2_read_timeouts_default(h2_read_timeouts *rt);

/* Apply one RequestReadTimeout argument ("header=20-40,MinRate=500",
 * "body=0", "handshake=5"; the last is not ours and is ignored). Returns
 * NULL, or what is wrong with it. */
const char *h2_read_timeouts_parse(h2_read_timeouts *rt, apr_pool_t *p,
                                   const char *arg);

/* When the client, which started sending at start and has sent bytes
 * since, runs out of time under lim; 0 when lim sets no limit. */
apr_time_t h2_read_deadline(const h2_read_limit *lim, apr_time_t start,
                            apr_off_t bytes);

#endif
