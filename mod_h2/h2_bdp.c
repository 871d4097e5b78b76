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
/* Receive windows sized to the bandwidth-delay product (pure logic). */
#include "h2_bdp.h"

void h2_bdp_init(h2_bdp *b, apr_int32_t window)
{
    b->window = window;
    b->since = 0;
    b->bytes = 0;
    b->arrived = 0;
}

static void sample_start(h2_bdp *b, apr_time_t now)
{
    b->since = now;
    b->bytes = 0;
    b->arrived = 0;
}

void h2_bdp_arrived(h2_bdp *b, apr_int64_t n, apr_time_t now)
{
    if (!b->since) {
        sample_start(b, now);
    }
    b->arrived += n;
}

apr_int32_t h2_bdp_consumed(h2_bdp *b, apr_int64_t n, apr_time_t now,
                            apr_interval_time_t rtt, apr_int32_t max)
{
    apr_interval_time_t elapsed;
    apr_int64_t per_rtt, seen;

    if (!b->since) {
        sample_start(b, now);
    }
    b->bytes += n;
    /* A handler that reads what it held (mod_dav_fs after a disk write)
     * reads megabytes within a round trip of 0.3 ms on loopback: no sign
     * of the client, and it took windows to 12 MB there. What arrived in
     * the sample bounds what counts. */
    seen = (b->bytes < b->arrived)? b->bytes : b->arrived;
    elapsed = now - b->since;
    if (rtt <= 0 || elapsed < rtt) {
        /* A sample spans a round trip, unless more than half the window
         * was used within less: that much per round trip at least, and the
         * window grows an upload's round trip sooner (the bytes still in
         * flight from before are a 64th of the new window, they do not
         * make it grow again). No round trip measured yet means within
         * the connection's first one (the SETTINGS ack measures it): an
         * upload that fills its first window at once grows before its
         * first round trip ends. */
        if (2 * seen <= b->window) {
            return b->window;
        }
        per_rtt = seen;
    }
    else {
        per_rtt = seen * rtt / elapsed;
    }
    sample_start(b, now);
    if (8 * per_rtt > 3 * b->window && b->window < max) {
        /* About half the window per round trip or more (three eighths: a
         * sample's edges cut what arrived from what was read): the window,
         * not the link, held the client back (WINDOW_UPDATEs go out at half
         * the window, so a client held back by it sends between half and
         * all of it; at 20 ms, a 16 MB window carried 8 MB per round trip
         * and, judged by "more than half", stayed at 16 MB half the time).
         * Small windows go to H2_BDP_FAST_UPTO in one step (64 KB to 4 MB,
         * a step taking about two round trips: the client's use of a new
         * window shows one round trip after it went out); larger
         * ones to what the measured bandwidth-delay product needs with
         * headroom, since a window is what its stream holds when its
         * handler stops reading: a round trip measured long on a busy
         * machine (a PING answered late) then costs a few times the
         * window, not 64 times. A client still held back shows it again
         * in the next sample: at +20 ms, 1 GB/s takes 4, 16, 64 MB. */
        apr_int64_t w = (apr_int64_t)H2_BDP_HEADROOM * per_rtt;
        apr_int64_t lo = 2 * (apr_int64_t)b->window;
        apr_int64_t hi = (apr_int64_t)H2_BDP_STEP * b->window;

        if (b->window < H2_BDP_FAST_UPTO && lo < H2_BDP_FAST_UPTO) {
            lo = H2_BDP_FAST_UPTO;
        }
        w = (w < lo)? lo : w;
        w = (w > hi)? hi : w;
        b->window = (w > max)? max : (apr_int32_t)w;
    }
    return b->window;
}
