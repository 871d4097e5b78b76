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
/* Receive windows sized to the bandwidth-delay product: the decision, pure
 * logic (unit tested); h2_session_recv_window.c applies it. Either thread. */
#ifndef H2_BDP_H
#define H2_BDP_H

#include <apr_time.h>

/* The largest receive window one stream grows to. nghttp2 sends a
 * WINDOW_UPDATE once half the window is read, so a window carries about
 * half its size per round trip plus the update's turnaround: 64 MB held
 * uploads at 20 ms to some 1.1 GB/s (h2) and 0.8 GB/s (over TLS) on the
 * benchmark machine, 34 MB of credit arriving every 30 ms.
 * A grown window is what its stream may hold should its handler stop
 * reading, so what windows grow by is charged at grant time to the
 * connection (H2_BDP_GROWTH_MAX) and to its child process, all its
 * connections together (H2_BDP_GROWTH_CHILD); past them, windows stop
 * growing (h2_session_recv_window.c). */
#define H2_BDP_WINDOW_MAX (256 * 1024 * 1024)      /* a stream's window */
#define H2_BDP_GROWTH_MAX (512 * 1024 * 1024)     /* what all of a connection's
                                                   * stream windows grow by */
#define H2_BDP_GROWTH_CHILD (1024LL * 1024 * 1024) /* ... a child's connections */
#define H2_BDP_STEP 64                            /* a window grows at most
                                                   * this many times at once */
#define H2_BDP_FAST_UPTO (4 * 1024 * 1024)         /* below it, a step goes
                                                   * straight here */
#define H2_BDP_HEADROOM 4                          /* above it, a step makes the
                                                   * window this many times what
                                                   * went through per round trip */

typedef struct h2_bdp {
    apr_int32_t window;             /* the stream's receive window now */
    apr_time_t since;               /* the current sample began */
    apr_int64_t bytes;              /*   and saw this much consumed */
    apr_int64_t arrived;            /*   and this much arrive */
} h2_bdp;

/* Start with the configured window (H2WindowSize, the floor). */
void h2_bdp_init(h2_bdp *b, apr_int32_t window);

/* n bytes of the stream arrived at now (counted toward the sample that
 * h2_bdp_consumed() judges). */
void h2_bdp_arrived(h2_bdp *b, apr_int64_t n, apr_time_t now);

/* The handler consumed n bytes at now; rtt is the connection's round trip
 * (0: not measured yet, so still within the connection's first). Returns
 * the window the stream should have: when, over the last round trip or
 * more (or within less), the client sent about half a window per round
 * trip or more (the window, not the link, held it back; counted is what
 * the handler read of what arrived in the sample, as a handler catching
 * up reads more), a larger one: up to H2_BDP_FAST_UPTO at once, past it
 * H2_BDP_HEADROOM times what went through per round trip, at least twice
 * and at most H2_BDP_STEP times the current one, and at most max; else
 * the current one. */
apr_int32_t h2_bdp_consumed(h2_bdp *b, apr_int64_t n, apr_time_t now,
                            apr_interval_time_t rtt, apr_int32_t max);

#endif
