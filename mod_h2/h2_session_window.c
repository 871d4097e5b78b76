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
/* Request body windows on the connection thread: a stream's receive window
 * grows with the bandwidth-delay product its upload shows (h2_bdp.c), the
 * round trip measured by a PING. H2WindowSize is the floor; what a
 * connection's streams grow by together stays within its memory budget
 * (H2MaxSessionStreams x H2StreamMaxMemSize). */
#include <string.h>

#include <apr_strings.h>

#include <httpd.h>
#include <http_log.h>

#include "h2.h"
#include "h2_session_int.h"

APLOG_USE_MODULE(http2);

#define H2_RTT_PING "h2-rtt!!"              /* 8 bytes of PING payload */
#define H2_RTT_EVERY apr_time_from_sec(10)  /* measured again after */

void h2_session_window_data_in(h2_session *s, h2_stream *stream)
{
    apr_time_t now;

    if (s->rtt_ping_at || s->stop >= H2_STOP_GOAWAY) {
        return;     /* one PING out at a time */
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

void h2_session_window_settings_ack(h2_session *s)
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

int h2_session_window_ping_ack(h2_session *s, const uint8_t *opaque)
{
    apr_time_t now;

    if (!s->rtt_ping_at || memcmp(opaque, H2_RTT_PING, 8)) {
        return 0;
    }
    now = apr_time_now();
    s->rtt = (now > s->rtt_ping_at)? now - s->rtt_ping_at : 1;
    s->rtt_at = now;
    s->rtt_ping_at = 0;
    if (APLOGctrace2(s->c1)) {
        ap_log_cerror(APLOG_MARK, APLOG_TRACE2, 0, s->c1,
                      "h2_session(%ld): round trip %ld us", s->c1->id, (long)s->rtt);
    }
    return 1;
}

void h2_session_window_consumed(h2_session *s, h2_stream *stream, apr_size_t n)
{
    apr_int32_t old, w, max;
    apr_int64_t room;
    int rv;

    if (!stream->bdp.window) {
        h2_bdp_init(&stream->bdp, s->window_size);
    }
    old = stream->bdp.window;
    /* what the windows promise is not what the connection holds: reading
     * pauses past half the budget (h2_session_window_paused) */
    room = (apr_int64_t)H2_BDP_GROWTH_MAX - s->win_extra;
    max = (room > H2_BDP_WINDOW_MAX - old)? H2_BDP_WINDOW_MAX : (apr_int32_t)(old + room);
    if (stream->response_submitted && max > (apr_int64_t)(s->mem_max / 2)) {
        /* A stream that answers while it reads may wait for the client's
         * window for its answer, and reading cannot pause for it then: its
         * window stays within half the budget, so flow control holds its
         * client instead of a reset (h2_session_window_over). */
        max = (old > (apr_int32_t)(s->mem_max / 2))? old : (apr_int32_t)(s->mem_max / 2);
    }
    w = h2_bdp_consumed(&stream->bdp, (apr_int64_t)n, apr_time_now(), s->rtt, max);
    if (w <= old) {
        return;
    }
    rv = nghttp2_session_set_local_window_size(s->ngh, NGHTTP2_FLAG_NONE, stream->id, w);
    if (h2_session_ngcheck(s, stream->id, "grow the stream's window", rv) != 0) {
        stream->bdp.window = old;
        return;
    }
    s->win_extra += w - old;
    stream->win_extra += w - old;
    /* below half the window (nghttp2's WINDOW_UPDATE threshold), reports
     * of what the handler read change nothing the client sees; past the
     * budget, what was read but not reported would count as held */
    h2_x_c1_set_consume_wake(stream->x, ((apr_size_t)w < s->mem_max)? (apr_size_t)w / 4
                                                                  : s->mem_max / 8);
    if (s->conn_window < s->conn_window_base + s->win_extra) {
        s->conn_window = s->conn_window_base + s->win_extra;
        if (s->conn_window > NGHTTP2_MAX_WINDOW_SIZE) {
            s->conn_window = NGHTTP2_MAX_WINDOW_SIZE;
        }
        h2_session_ngcheck(s, 0, "grow the connection's window",
            nghttp2_session_set_local_window_size(s->ngh, NGHTTP2_FLAG_NONE, 0,
                                                  (int32_t)s->conn_window));
    }
    if (stream->trace >= APLOG_TRACE2) {
        ap_log_cerror(APLOG_MARK, APLOG_TRACE2, 0, s->c1,
                      "h2_session(%ld-%d): receive window %d -> %d (round trip %ld us)",
                      s->c1->id, stream->id, old, w, (long)s->rtt);
    }
}

void h2_session_window_closed(h2_session *s, h2_stream *stream)
{
    s->win_extra -= stream->win_extra;
    stream->win_extra = 0;
}

/* Body held by streams whose workers wait for the client's window. */
static apr_size_t body_stuck(h2_session *s)
{
    h2_stream *stream;
    apr_size_t stuck = 0;

    for (stream = s->streams; stream; stream = stream->next_all) {
        if (stream->has_body_in) {
            stuck += h2_x_c1_body_stuck(stream->x);
        }
    }
    return stuck;
}

int h2_session_window_paused(h2_session *s)
{
    apr_size_t held = 0, stuck = 0;
    int pause = 0;
    apr_time_t now;

    if (s->win_extra > 0 || s->in_paused_at) {
        h2_x_c1_mem_held(s->xc, &held);
        if (held > s->mem_max / 2) {
            stuck = body_stuck(s);
            pause = (held - stuck > s->mem_max / 2);
        }
    }
    if (pause == !!s->in_paused_at) {
        return pause;
    }
    now = apr_time_now();
    if (pause) {
        s->in_paused_at = now;
        ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21103)
                      "h2_session(%ld): reading paused: request bodies hold %"
                      APR_SIZE_T_FMT " bytes, over half the connection's budget of %"
                      APR_SIZE_T_FMT, s->c1->id, held, s->mem_max);
    }
    else {
        /* the client's time did not run while we did not read */
        h2_frame_clock_pause(&s->clock, now - s->in_paused_at);
        s->last_client_io += now - s->in_paused_at;
        ap_log_cerror(APLOG_MARK, APLOG_TRACE1, 0, s->c1,
                      "h2_session(%ld): reading resumed after %ld ms, %" APR_SIZE_T_FMT
                      " bytes of request bodies held", s->c1->id,
                      (long)apr_time_as_msec(now - s->in_paused_at), held);
        s->in_paused_at = 0;
    }
    return pause;
}

apr_size_t h2_session_window_lowat(h2_session *s)
{
    h2_stream *stream;

    /* a window grown is what tells a bulk upload from the rest */
    if (s->win_extra <= 0 || s->in_paused_at
        || nghttp2_session_get_local_window_size(s->ngh) < 2 * H2_BULK_LOWAT) {
        return 0;
    }
    for (stream = s->streams; stream; stream = stream->next_all) {
        if (stream->win_extra > 0 && stream->state == H2_SS_OPEN
            && nghttp2_session_get_stream_local_window_size(s->ngh, stream->id)
               >= 2 * H2_BULK_LOWAT) {
            return H2_BULK_LOWAT;
        }
    }
    return 0;
}

void h2_session_window_over(h2_session *s, h2_stream *stream)
{
    char why[160];

    /* on the stack: the session's pool would keep it for every reset */
    apr_snprintf(why, sizeof(why), "request body over half the connection's budget (%"
                 APR_SIZE_T_FMT " bytes) while its response waits for the client's window",
                 s->mem_max);
    h2_session_fail(s, stream->id, H2_ERR_ENHANCE_YOUR_CALM, why);
}
