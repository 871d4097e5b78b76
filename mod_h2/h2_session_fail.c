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
/* The one way out: how a session answers what went wrong, with RST_STREAM or GOAWAY. */

#include <apr_strings.h>
#include <apr_base64.h>
#include <apr_portable.h>
#include <httpd.h>
#include <http_core.h>
#include <http_config.h>
#include <http_log.h>
#include <http_protocol.h>
#include <ap_mpm.h>
#include <http_ssl.h>
#include <assert.h>

#include "h2.h"
#include "h2_config.h"
#include "h2_session_int.h"
#include "h2_util.h"

APLOG_USE_MODULE(http2);

/* Codes that say the client broke the protocol on a stream: counted
 * toward H2MaxStreamErrors, whoever noticed (see on_frame_send()). */
int h2_session_is_fault(uint32_t code)
{
    switch (code) {
    case H2_ERR_PROTOCOL_ERROR:
    case H2_ERR_REFUSED_STREAM:
    case H2_ERR_FLOW_CONTROL_ERROR:
    case H2_ERR_STREAM_CLOSED:
    case H2_ERR_FRAME_SIZE_ERROR:
        return 1;
    default:
        return 0;
    }
}

const char *h2_stop_phase_str(h2_stop_phase phase)
{
    static const char *names[] = { "NONE", "NOTICE", "GOAWAY", "CLOSE", "CLOSED" };
    return (unsigned)phase < sizeof(names) / sizeof(names[0])? names[phase] : "?";
}

void h2_session_stopping(h2_session *s, h2_stop_phase phase)
{
    /* phases only go forward: a GOAWAY going out after the one for an
     * error was decided leaves the connection closing */
    if (phase > s->stop) {
        if (APLOGctrace1(s->c1)) {
            ap_log_cerror(APLOG_MARK, APLOG_TRACE1, 0, s->c1,
                          "h2_session(%ld): stopping %s -> %s", s->id,
                          h2_stop_phase_str(s->stop), h2_stop_phase_str(phase));
        }
        s->stop = phase;
    }
}

/* Count a stream error the client caused (sent or provoked); too many
 * close the connection (H2MaxStreamErrors). */
static void count_stream_error(h2_session *s)
{
    if (!h2_abuse_stream_error(&s->abuse)) {
        h2_session_fail(s, 0, H2_ERR_ENHANCE_YOUR_CALM, "too many stream errors");
    }
}

/* Count the client's fault on stream id once, as soon as it is known. */
void h2_session_count_fault(h2_session *s, int32_t id)
{
    h2_stream *stream = id? nghttp2_session_get_stream_user_data(s->ngh, id) : NULL;
    if (stream) {
        if (stream->fault_counted) {
            return;
        }
        stream->fault_counted = 1;
    }
    count_stream_error(s);
}

int h2_session_goaway(h2_session *s, int32_t last_id, uint32_t code, const char *why)
{
    int rv = nghttp2_submit_goaway(s->ngh, NGHTTP2_FLAG_NONE, last_id, code,
                                   (const uint8_t *)why, strlen(why));
    if (rv != 0) {
        ap_log_cerror(APLOG_MARK, APLOG_WARNING, 0, s->c1, APLOGNO(21093)
                      "h2_session(%ld): cannot send GOAWAY %s (%s): %s", s->id,
                      h2_util_error_str(code), why, nghttp2_strerror(rv));
        return rv;
    }
    h2_session_stopping(s, H2_STOP_GOAWAY);
    return 0;
}

/* Write a GOAWAY frame directly, for when nghttp2 can no longer send
 * (its queue is full of what a flood asked for). */
static void goaway_raw(h2_session *s, uint32_t code, const char *why)
{
    unsigned char f[H2_FRAME_HDR_LEN + 8];
    size_t dlen = strlen(why), plen = 8 + dlen;
    int32_t last = nghttp2_session_get_last_proc_stream_id(s->ngh);

    if (s->c1->aborted) {
        return;
    }
    f[0] = (unsigned char)(plen >> 16); f[1] = (unsigned char)(plen >> 8);
    f[2] = (unsigned char)plen;
    f[3] = NGHTTP2_GOAWAY; f[4] = 0;
    f[5] = f[6] = f[7] = f[8] = 0;                     /* stream 0 */
    f[9] = (unsigned char)((last >> 24) & 0x7f); f[10] = (unsigned char)(last >> 16);
    f[11] = (unsigned char)(last >> 8); f[12] = (unsigned char)last;
    f[13] = (unsigned char)(code >> 24); f[14] = (unsigned char)(code >> 16);
    f[15] = (unsigned char)(code >> 8); f[16] = (unsigned char)code;
    /* drop what nghttp2 queued: the flood's acks are what we refuse */
    apr_brigade_cleanup(s->io.bb_out);
    s->io.buf_len = s->io.seg_start = 0;
    h2_c1_io_append(&s->io, (const char *)f, sizeof(f));
    h2_c1_io_append(&s->io, why, dlen);
    h2_c1_io_flush(&s->io);
    h2_session_stopping(s, H2_STOP_CLOSED);
}

int h2_session_fail(h2_session *s, int32_t stream_id, uint32_t code, const char *why)
{
    int rv;

    if (stream_id > 0) {
        ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21010)
                      "h2_session(%ld-%d): resetting stream, %s: %s",
                      s->id, stream_id, h2_util_error_str(code), why);
        if (h2_session_is_fault(code)
            && nghttp2_session_get_stream_user_data(s->ngh, stream_id)) {
            /* known now: the stream must not start */
            h2_session_count_fault(s, stream_id);
        }
        rv = nghttp2_submit_rst_stream(s->ngh, NGHTTP2_FLAG_NONE, stream_id, code);
        if (rv != 0) {
            ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21094)
                          "h2_session(%ld-%d): cannot reset the stream: %s",
                          s->id, stream_id, nghttp2_strerror(rv));
        }
        return rv;
    }
    if (s->stop >= H2_STOP_CLOSE) {
        return 0;   /* the connection is on its way out already */
    }
    /* RFC 9113 5.4.1: GOAWAY with the error, then close; streams in
     * progress do not get to finish */
    ap_log_cerror(APLOG_MARK, APLOG_INFO, 0, s->c1, APLOGNO(21012)
                  "h2_session(%ld): %s, closing the connection (GOAWAY %s)",
                  s->id, why, h2_util_error_str(code));
    if (s->ngh_flooded) {
        goaway_raw(s, code, why);
        return 0;
    }
    rv = h2_session_goaway(s, nghttp2_session_get_last_proc_stream_id(s->ngh),
                           code, why);
    h2_session_stopping(s, H2_STOP_CLOSE);
    h2_session_transit(s, H2_SEV_SHUTDOWN);
    return rv;
}

int h2_session_ngcheck(h2_session *s, int32_t stream_id, const char *what, int rv)
{
    if (rv != 0) {
        ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21095)
                      "h2_session(%ld-%d): nghttp2 refused to %s: %s",
                      s->id, stream_id, what, nghttp2_strerror(rv));
    }
    return rv;
}

/* Frames that cost work and carry nothing are budgeted per second. */
int h2_session_flood_ok(h2_session *s, h2_flood_kind kind)
{
    if (!h2_abuse_flood(&s->abuse, kind, apr_time_now())) {
        h2_session_fail(s, 0, H2_ERR_ENHANCE_YOUR_CALM, h2_abuse_flood_str(kind));
        return 0;
    }
    return 1;
}

/* A client that resets streams faster than the budget allows gets
 * GOAWAY ENHANCE_YOUR_CALM. Returns 0 then. */
int h2_session_reset_ok(h2_session *s)
{
    if (!h2_abuse_reset(&s->abuse, apr_time_now())) {
        h2_session_fail(s, 0, H2_ERR_ENHANCE_YOUR_CALM,
                        "rapid reset: too many streams reset by the client");
        return 0;
    }
    return 1;
}
