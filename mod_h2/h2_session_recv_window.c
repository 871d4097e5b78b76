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
/* Request body windows on the connection thread: every byte a client may
 * send is credit we granted, and what a stream may hold (its body in our
 * buffers plus the credit its client still has) is charged to budgets at
 * grant time; the connection never stops reading. A stream's window grows
 * with the bandwidth-delay product its upload shows (h2_bdp.c, the round
 * trip measured by a PING) while its handler keeps up, and falls back to
 * H2WindowSize when the handler does not. */
#include <string.h>

#include <apr_atomic.h>
#include <apr_strings.h>

#include <httpd.h>
#include <http_log.h>

#include "h2.h"
#include "h2_session_int.h"

APLOG_USE_MODULE(http2);

#define H2_RTT_PING "h2-rtt!!"              /* 8 bytes of PING payload */
/* While an upload goes on, its round trip is measured again every second:
 * the least sample counts, and on a busy machine a client now and then
 * answers late (samples of 20-130 ms where the path takes 0.3), so a few
 * samples keep a window from being sized to one late answer. */
#define H2_RTT_EVERY apr_time_from_sec(1)
/* A PING's answer waits behind the DATA the client queued before it: with
 * a grown window on loopback, samples of 20-90 ms where the path takes
 * 0.1-3 ms, and the window grew to 256 MB for that queue, which it had
 * itself let build (a window sized to the queue makes the queue longer).
 * The least PING sample is the path's round trip (the first, sent when
 * an upload passes H2WindowSize, has little ahead of it); it is kept this
 * long, so a path that got longer is seen again. */
#define H2_RTT_KEEP apr_time_from_sec(30)

void h2_session_recv_window_data_in(h2_session *s, h2_stream *stream)
{
    apr_time_t now;

    if (s->rtt_ping_at || s->stop >= H2_STOP_NOTICE) {
        /* one PING out at a time, and none after a GOAWAY: python-h2
         * takes nothing but GOAWAY after one (docs/design.md, Stopping) */
        return;
    }
    now = apr_time_now();
    if (s->rtt && now - s->rtt_at < H2_RTT_EVERY) {
        return;
    }
    if (h2_session_ngcheck(s, stream->id, "measure the round trip",
            nghttp2_submit_ping(s->ngh, NGHTTP2_FLAG_NONE,
                                (const uint8_t *)H2_RTT_PING)) == 0) {
        s->rtt_ping_at = now;
    }
}

void h2_session_recv_window_settings_ack(h2_session *s)
{
    apr_time_t now = apr_time_now();

    if (s->settings_at && !s->rtt) {
        /* provisional (rtt_at stays 0): an upload's first DATA still
         * sends the PING, whose answer replaces it; meanwhile the window
         * can grow from the upload's first round trip on instead of its
         * second */
        s->rtt = (now > s->settings_at)? now - s->settings_at : 1;
    }
    s->settings_at = 0;
}

int h2_session_recv_window_rtt_acked(h2_session *s, const uint8_t *opaque)
{
    apr_time_t now;
    apr_interval_time_t sample;

    if (!s->rtt_ping_at || memcmp(opaque, H2_RTT_PING, 8)) {
        return 0;
    }
    now = apr_time_now();
    sample = (now > s->rtt_ping_at)? now - s->rtt_ping_at : 1;
    if (!s->rtt_at || sample < s->rtt || now - s->rtt_min_at >= H2_RTT_KEEP) {
        s->rtt = sample;
        s->rtt_min_at = now;
    }
    s->rtt_at = now;
    s->rtt_ping_at = 0;
    if (APLOGctrace2(s->c1)) {
        ap_log_cerror(APLOG_MARK, APLOG_TRACE2, 0, s->c1,
                      "h2_session(%ld): round trip %ld us (least %ld us)", s->id,
                      (long)sample, (long)s->rtt);
    }
    return 1;
}

/* What grown windows hold in this child, all connections together
 * (H2_BDP_GROWTH_CHILD): connection threads of a child share it. */
static volatile apr_uint64_t child_growth;

/* What stream may hold at most without another grant: its body in our
 * buffers (or read by its handler and not yet reported) and, while the
 * client may still send, the credit the client has. */
static apr_int64_t exposure(h2_session *s, h2_stream *stream)
{
    apr_int64_t e = stream->in_received - stream->in_consumed;

    if (stream->state == H2_SS_OPEN || stream->state == H2_SS_CLOSED_LOCAL) {
        int32_t credit = nghttp2_session_get_stream_local_window_size(s->ngh, stream->id);
        if (credit > 0) {
            e += credit;
        }
    }
    return e;
}

/* Charge stream's growth over H2WindowSize to the connection's and the
 * child's budgets as exposure e: 1 when it fits (or is less than before),
 * 0 when it does not (nothing changes). */
static int charge(h2_session *s, h2_stream *stream, apr_int64_t e)
{
    apr_int64_t c = (e > s->window_size)? e - s->window_size : 0;
    apr_int64_t d = c - stream->win_charge;

    if (d > 0) {
        if (s->win_charged + d > H2_BDP_GROWTH_MAX) {
            return 0;
        }
        if (apr_atomic_add64(&child_growth, (apr_uint64_t)d) + (apr_uint64_t)d
            > H2_BDP_GROWTH_CHILD) {
            apr_atomic_sub64(&child_growth, (apr_uint64_t)d);
            return 0;
        }
    }
    else if (d < 0) {
        apr_atomic_sub64(&child_growth, (apr_uint64_t)-d);
    }
    s->win_charged += d;
    stream->win_charge = c;
    return 1;
}

/* The window stream is kept at: the bandwidth-delay one, or H2WindowSize
 * with a handler that does not keep up (the grown one is kept aside for
 * when it has read what it holds). */
static void set_target(h2_session *s, h2_stream *stream, apr_int32_t w)
{
    if (stream->trace >= APLOG_TRACE2) {
        ap_log_cerror(APLOG_MARK, APLOG_TRACE2, 0, s->c1,
                      "h2_session(%ld-%d): receive window %d -> %d (round trip %ld us)",
                      s->id, stream->id, stream->bdp.window, w, (long)s->rtt);
    }
    if (w <= s->window_size) {
        if (stream->bdp.window > s->window_size) {
            stream->win_grown = stream->bdp.window;
        }
        h2_bdp_init(&stream->bdp, s->window_size);
    }
    else {
        stream->bdp.window = w;
        stream->win_grown = 0;
    }
    /* below half the window (when credit is granted again), reports of
     * what the handler read change nothing the client sees; what was read
     * and not reported counts as held, so for large windows they come
     * every H2_CONSUME_REPORT_MAX (a handler only behind by that much is
     * not taken for one that does not keep up) */
    h2_x_c1_set_consume_wake(stream->x, (w <= s->window_size)? 0
                             : ((apr_size_t)w / 4 < H2_CONSUME_REPORT_MAX)? (apr_size_t)w / 4
                             : H2_CONSUME_REPORT_MAX);
}

/* Top stream's credit up to its window once half of it is free, within
 * the budgets; the window is what is left when they do not allow it. */
static void grant(h2_session *s, h2_stream *stream)
{
    apr_int64_t e, want;
    int32_t inc;

    if (stream->state != H2_SS_OPEN || !stream->has_body_in) {
        return;         /* nothing more comes, or a response ended it */
    }
    e = exposure(s, stream);
    if (2 * e > stream->bdp.window) {
        return;
    }
    want = stream->bdp.window;
    if (!charge(s, stream, want)) {
        /* the budgets' rest, or H2WindowSize, which they always allow */
        apr_int64_t room = H2_BDP_GROWTH_MAX - s->win_charged;
        apr_int64_t croom = (apr_int64_t)H2_BDP_GROWTH_CHILD
                            - (apr_int64_t)apr_atomic_read64(&child_growth);
        want = s->window_size + stream->win_charge + (room < croom? room : croom);
        if (want <= e || !charge(s, stream, want)) {
            want = s->window_size;
        }
    }
    if (want <= e) {
        charge(s, stream, e);
        return;
    }
    inc = (int32_t)(want - e);
    if (h2_session_ngcheck(s, stream->id, "grant request body credit",
            nghttp2_submit_window_update(s->ngh, NGHTTP2_FLAG_NONE, stream->id, inc))) {
        charge(s, stream, e);
    }
}

void h2_session_recv_window_consumed(h2_session *s, h2_stream *stream, apr_size_t n)
{
    apr_int32_t max, w, before;

    stream->in_consumed += (apr_off_t)n;
    if (stream->state != H2_SS_OPEN) {
        charge(s, stream, exposure(s, stream));
        return;
    }
    if (!stream->bdp.window) {
        h2_bdp_init(&stream->bdp, s->window_size);
    }
    if (stream->win_grown
        && 2 * (stream->in_received - stream->in_consumed) <= s->window_size) {
        /* it read what it held: a handler that only fell behind for a
         * moment (a busy CPU) has its window back without the ramp */
        set_target(s, stream, stream->win_grown);
    }
    /* grow only as far as the budgets have room for now, and only where
     * the bytes drain: a handler that lets half its window wait is what
     * holds the upload back, not the window */
    max = H2_BDP_WINDOW_MAX;
    if (H2_BDP_GROWTH_MAX - s->win_charged + stream->win_charge + s->window_size < max) {
        max = (apr_int32_t)(H2_BDP_GROWTH_MAX - s->win_charged + stream->win_charge
                            + s->window_size);
    }
    if (2 * (stream->in_received - stream->in_consumed) > stream->bdp.window) {
        max = stream->bdp.window;
    }
    before = stream->bdp.window;
    w = h2_bdp_consumed(&stream->bdp, (apr_int64_t)n, apr_time_now(), s->rtt, max);
    if (w > before && stream->trace >= APLOG_TRACE2) {
        /* the reports of what the handler read stay one per read (not
         * set_target's one per quarter window, which is for a window
         * restored after a stall): the grant at half the window comes on
         * time, not up to a quarter of it late */
        ap_log_cerror(APLOG_MARK, APLOG_TRACE2, 0, s->c1,
                      "h2_session(%ld-%d): receive window %d -> %d (round trip %ld us)",
                      s->id, stream->id, before, w, (long)s->rtt);
    }
    charge(s, stream, exposure(s, stream));
    grant(s, stream);
}

/* RFC 9113 8.1: the response is complete while the client still sends
 * its body (an early 401 or 413): it may stop, without error, instead of
 * sending what nobody reads. */
static void end_early(h2_session *s, h2_stream *stream)
{
    stream->early_end_at = 0;
    s->early_ends--;
    if (stream->state == H2_SS_CLOSED_LOCAL && !stream->reset_sent) {
        h2_session_fail(s, stream->id, H2_ERR_NO_ERROR,
                        "response complete before the request body");
    }
}

void h2_session_recv_window_answered(h2_session *s, h2_stream *stream)
{
    if (!stream->early_end_at && !stream->reset_sent) {
        stream->early_end_at = apr_time_now() + H2_EARLY_END_WAIT;
        s->early_ends++;
    }
}

apr_time_t h2_session_recv_window_early_ends(h2_session *s)
{
    h2_stream *stream, *next;
    apr_time_t now, first = 0;

    if (!s->early_ends) {
        return 0;
    }
    now = apr_time_now();
    for (stream = s->streams; stream; stream = next) {
        next = stream->next_all;
        if (!stream->early_end_at) {
            continue;
        }
        if (stream->early_end_at <= now) {
            end_early(s, stream);
        }
        else if (!first || stream->early_end_at < first) {
            first = stream->early_end_at;
        }
    }
    return first;
}

void h2_session_recv_window_received(h2_session *s, h2_stream *stream,
                                     apr_size_t n, int kept)
{
    stream->in_received += (apr_off_t)n;
    if (!stream->bdp.window) {
        h2_bdp_init(&stream->bdp, s->window_size);
    }
    h2_bdp_arrived(&stream->bdp, (apr_int64_t)n, apr_time_now());
    if (!kept) {
        /* nobody reads it: it is consumed as it comes */
        h2_session_recv_window_consumed(s, stream, n);
        return;
    }
    if (stream->in_received > (apr_off_t)s->window_size) {
        h2_session_recv_window_data_in(s, stream);
    }
    if (stream->bdp.window > s->window_size
        && 2 * (stream->in_received - stream->in_consumed) > stream->bdp.window) {
        /* More than half the window waits for a handler that does not keep
         * up (slow, or waiting for a backend): no credit beyond
         * H2WindowSize for it until it has read what it holds. */
        set_target(s, stream, s->window_size);
    }
}

void h2_session_recv_window_input_end(h2_session *s, h2_stream *stream)
{
    charge(s, stream, exposure(s, stream));
}

void h2_session_recv_window_closed(h2_session *s, h2_stream *stream)
{
    if (stream->early_end_at) {
        stream->early_end_at = 0;
        s->early_ends--;
    }
    charge(s, stream, 0);
}

apr_size_t h2_session_recv_window_lowat(h2_session *s)
{
    h2_stream *stream;

    /* a window grown is what tells a bulk upload from the rest */
    if (s->win_charged <= 0) {
        return 0;
    }
    for (stream = s->streams; stream; stream = stream->next_all) {
        if (stream->win_charge > 0 && stream->state == H2_SS_OPEN
            && nghttp2_session_get_stream_local_window_size(s->ngh, stream->id)
               >= 2 * H2_BULK_LOWAT) {
            return H2_BULK_LOWAT;
        }
    }
    return 0;
}
