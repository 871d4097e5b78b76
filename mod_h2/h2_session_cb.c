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
/* The nghttp2 callbacks: what the session does with the client's frames. */

#include <string.h>
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
#include "h2_status.h"
#include "h2_util.h"

APLOG_USE_MODULE(http2);

static void patch_settings(h2_session *s, uint8_t *frame, size_t len)
{
    size_t plen, i;

    if (len < H2_FRAME_HDR_LEN || frame[3] != NGHTTP2_SETTINGS
        || (frame[4] & NGHTTP2_FLAG_ACK)) {
        return;
    }
    plen = ((size_t)frame[0] << 16) | ((size_t)frame[1] << 8) | frame[2];
    for (i = H2_FRAME_HDR_LEN; i + 6 <= H2_FRAME_HDR_LEN + plen && i + 6 <= len; i += 6) {
        if (frame[i] == 0 && frame[i+1] == NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS) {
            uint32_t v = (uint32_t)s->max_streams;
            frame[i+2] = (uint8_t)(v >> 24);
            frame[i+3] = (uint8_t)(v >> 16);
            frame[i+4] = (uint8_t)(v >> 8);
            frame[i+5] = (uint8_t)v;
        }
    }
    s->settings_patched = 1;
}

static ssize_t on_send(nghttp2_session *ngh, const uint8_t *data, size_t len,
                       int flags, void *ud)
{
    h2_session *s = ud;
    if (!s->settings_patched && len <= 9 + 6 * 8) {
        uint8_t frame[9 + 6 * 8];
        memcpy(frame, data, len);
        patch_settings(s, frame, len);
        h2_c1_io_append(&s->io, (const char *)frame, len);
    }
    else {
        h2_c1_io_append(&s->io, (const char *)data, len);
    }
    if (h2_c1_io_needs_flush(&s->io) && h2_c1_io_flush(&s->io) != APR_SUCCESS) {
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    return (ssize_t)len;
}

/* What nghttp2 no longer knows of a client stream: it keeps no closed
 * streams once RFC 9218 priorities are announced. */
typedef enum {
    H2_KNOWN,           /* open, or a new id, or not the client's */
    H2_CLOSED,          /* closed recently, both sides done or the client reset it */
    H2_RESET_BY_US,     /* we reset it recently: frames in flight are ignored */
    H2_LONG_GONE,       /* older than the ring remembers, or never opened */
} h2_forgotten;

static h2_forgotten forgotten(h2_session *s, int32_t id)
{
    int i;

    if (!(id & 1) || id > s->max_client_stream
        || nghttp2_session_find_stream(s->ngh, id)) {
        return H2_KNOWN;
    }
    for (i = 0; s->closed_ring && i < H2_CLOSED_RING; ++i) {
        if (s->closed_ring[i] == id) return H2_CLOSED;
        if (s->closed_ring[i] == -id) return H2_RESET_BY_US;
    }
    return H2_LONG_GONE;
}

/* RFC 9113 5.1: DATA or HEADERS on a stream that closed when both sides
 * ended it or the client reset it is a connection error STREAM_CLOSED. */
static int closed_stream_frame(h2_session *s)
{
    h2_session_fail(s, 0, H2_ERR_STREAM_CLOSED, "frame on a closed stream");
    return NGHTTP2_ERR_CALLBACK_FAILURE;
}

int h2_session_data_may_begin(h2_session *s, int32_t id)
{
    if (s->stop < H2_STOP_GOAWAY && forgotten(s, id) == H2_CLOSED) {
        return closed_stream_frame(s) == 0;
    }
    return 1;
}

/* RFC 9113 5.1.1: a new stream's id must be larger than any the client
 * used before. nghttp2 ignores a smaller one, since it may be trailers on
 * a stream it already forgot; a stream we never saw is no such case. */
static int on_begin_frame(nghttp2_session *ngh, const nghttp2_frame_hd *hd,
                          void *ud)
{
    h2_session *s = ud;
    h2_forgotten f;

    if (hd->type == NGHTTP2_PRIORITY_UPDATE) {
        return h2_session_prio_frame_begins(s, hd);
    }
    if (hd->type != NGHTTP2_HEADERS || !(hd->stream_id & 1)) {
        return 0;
    }
    if (hd->stream_id > s->max_client_stream) {
        s->max_client_stream = hd->stream_id;
        return 0;
    }
    f = forgotten(s, hd->stream_id);
    if (s->stop >= H2_STOP_GOAWAY || (f != H2_CLOSED && f != H2_LONG_GONE)) {
        return 0;
    }
    if (f == H2_CLOSED) {
        return closed_stream_frame(s);
    }
    ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21024)
                  "h2_session(%ld): client opened stream %d after %d",
                  s->id, hd->stream_id, s->max_client_stream);
    h2_session_fail(s, 0, H2_ERR_PROTOCOL_ERROR, "stream id lower than one used before");
    /* nothing after this frame is read */
    return NGHTTP2_ERR_CALLBACK_FAILURE;
}

/* 1 when what the connection's streams hold (request heads, bodies and
 * responses buffered) leaves room for another stream. Over it, new
 * streams are refused until the client reads or the streams end: memory
 * per connection is bounded whatever the client sends. What grown windows
 * hold is not counted: the growth budget granted it (h2_session_recv_window.c),
 * and a slow upload must not cost a GET beside it its stream. */
static int mem_admits(h2_session *s)
{
    apr_size_t held, body;

    held = h2_x_c1_mem_held(s->xc, &body);
    held -= (body < (apr_size_t)s->win_charged)? body : (apr_size_t)s->win_charged;
    if (held <= s->mem_max && s->hdr_budget.used < s->hdr_budget.max) {
        return 1;
    }
    ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21080)
                  "h2_session(%ld): refusing a stream, the connection holds "
                  "%" APR_SIZE_T_FMT " bytes of bodies and responses (budget %"
                  APR_SIZE_T_FMT ") and %" APR_SIZE_T_FMT " of request heads "
                  "(budget %" APR_SIZE_T_FMT ")", s->id, held, s->mem_max,
                  s->hdr_budget.used, s->hdr_budget.max);
    return 0;
}

static int on_begin_headers(nghttp2_session *ngh, const nghttp2_frame *frame,
                            void *ud)
{
    h2_session *s = ud;
    h2_stream *stream;

    if (frame->hd.type != NGHTTP2_HEADERS) {
        return 0;
    }
    if (frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
        /* pushed streams count against the client's limit, not ours */
        int over_streams = s->open_streams - s->pushed_open >= s->max_streams;
        if (over_streams || !mem_admits(s)) {
            /* RFC 9113 5.1.2: only this stream fails, with REFUSED_STREAM,
             * so the client may retry it; the others go on. A client that
             * opens more streams than allowed is at fault (counted when
             * the reset goes out); one whose streams wait for it to read
             * may just be slow, and is not. */
            if (!over_streams) {
                s->refusals_not_faults++;
            }
            if (h2_session_fail(s, frame->hd.stream_id, H2_ERR_REFUSED_STREAM,
                                over_streams? "over H2MaxSessionStreams"
                                : "over the connection's memory budget") != 0) {
                return NGHTTP2_ERR_CALLBACK_FAILURE;
            }
            return 0;
        }
        h2_session_stream_open(s, frame->hd.stream_id, H2_ORIGIN_CLIENT);
    }
    else if ((stream = h2_session_stream(s, frame->hd.stream_id)) != NULL
             && !stream->trailers_in) {
        stream->trailers_in = apr_table_make(stream->pool, 5);
        h2_req_head_init_trailer(&stream->trailer_head, stream->pool,
                                 &s->hdr_limits, stream->trailers_in);
    }
    return 0;
}

static int on_header(nghttp2_session *ngh, const nghttp2_frame *frame,
                     const uint8_t *name, size_t nlen,
                     const uint8_t *value, size_t vlen,
                     uint8_t flags, void *ud)
{
    h2_session *s = ud;
    h2_stream *stream = h2_session_stream(s, frame->hd.stream_id);
    h2_req_head *h;

    if (!stream) {
        return 0;
    }
    h = (frame->headers.cat == NGHTTP2_HCAT_REQUEST)? &stream->req
                                                     : &stream->trailer_head;
    /* errors are kept in h and answered when the block ends */
    h2_req_head_add(h, (const char *)name, nlen, (const char *)value, vlen);
    return 0;
}

static void input_eos(h2_session *s, h2_stream *stream)
{
    h2_x_c1_body_end(stream->x, stream->trailers_in);
    h2_stream_transit(stream, H2_SSEV_EOS_IN);
    h2_session_recv_window_input_end(s, stream);
}

/* RFC 9113 8.1.1: a request whose DATA does not add up to its
 * content-length is malformed. With END_STREAM (eos) it must match
 * exactly, before it must not exceed (counting len bytes arriving now).
 * Returns 0 when the stream was reset. */
static int body_length_ok(h2_session *s, h2_stream *stream, int eos, apr_off_t len)
{
    apr_off_t cl = stream->req.content_length;
    apr_off_t got = stream->in_received + len;
    if (cl < 0 || stream->fault_counted) {
        return !stream->fault_counted;
    }
    if (got > cl || (eos && got != cl)) {
        h2_session_fail(s, stream->id, H2_ERR_PROTOCOL_ERROR,
                     "request body length differs from content-length");
        return 0;
    }
    return 1;
}

/* The error-log line HTTP/1.1 would write for a request head over one
 * of httpd's limits, naming the limit. */
static void log_over_limit(h2_session *s, h2_stream *stream, h2_hdr_result res,
                           int status)
{
    const h2_req_head *h = &stream->req;
    const char *what;

    switch (res) {
    case H2_HDR_ERR_FIELD_TOO_LARGE:
        what = apr_psprintf(stream->pool, "a request header exceeds "
                            "LimitRequestFieldSize (%" APR_SIZE_T_FMT ")%s: %s",
                            h->limits.max_field_len,
                            h->error_merged? " after merging" : "",
                            h->error_field? h->error_field : "?");
        break;
    case H2_HDR_ERR_TOO_MANY:
        what = apr_psprintf(stream->pool, "the number of request headers "
                            "exceeds LimitRequestFields (%d)", h->limits.max_fields);
        break;
    case H2_HDR_ERR_LINE_TOO_LONG:
        what = apr_psprintf(stream->pool, "a pseudo-header exceeds "
                            "LimitRequestLine (%" APR_SIZE_T_FMT ")",
                            h->limits.max_line_len);
        break;
    default:
        what = apr_psprintf(stream->pool, "the request header block exceeds "
                            "%" APR_SIZE_T_FMT " bytes (H2MaxHeaderBlockLen)",
                            h->limits.max_block_len);
        break;
    }
    ap_log_cerror(APLOG_MARK, APLOG_INFO, 0, s->c1, APLOGNO(21081)
                  "h2_session(%ld-%d): %s, answering %d", s->id, stream->id,
                  what, status);
}

/* The reset for a head that is refused without an answer: malformed
 * (RFC 9113 8.1.1), or so far beyond httpd's limits that stock resets
 * it (INTERNAL_ERROR; ENHANCE_YOUR_CALM for a flood of fields). */
static void refuse_head(h2_session *s, h2_stream *stream, h2_hdr_result res)
{
    uint32_t code = H2_ERR_PROTOCOL_ERROR;

    switch (res) {
    case H2_HDR_ERR_METHOD_TOO_LONG:
    case H2_HDR_ERR_REFUSED_MANY:
        code = H2_ERR_INTERNAL_ERROR;
        break;
    case H2_HDR_ERR_FIELDS_FLOOD:
        code = H2_ERR_ENHANCE_YOUR_CALM;
        break;
    default:
        break;
    }
    if (code != H2_ERR_PROTOCOL_ERROR) {
        ap_log_cerror(APLOG_MARK, APLOG_INFO, 0, s->c1, APLOGNO(21320)
                      "h2_session(%ld-%d): %s, resetting the stream", s->id,
                      stream->id, h2_hdr_result_str(res));
        /* the client's doing, as a malformed head is */
        h2_session_count_fault(s, stream->id);
    }
    h2_session_fail(s, stream->id, code, h2_hdr_result_str(res));
}

static void on_request_headers(h2_session *s, h2_stream *stream,
                               const nghttp2_frame *frame)
{
    h2_hdr_result res = h2_req_head_end(&stream->req);
    int status;

    h2_stream_transit(stream, H2_SSEV_HEADERS_IN);
    if (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) {
        h2_x_c1_body_end(stream->x, NULL);
        h2_stream_transit(stream, H2_SSEV_EOS_IN);
    }
    else {
        stream->has_body_in = 1;
    }
    if (res == H2_HDR_ERR_CONN_BUDGET) {
        h2_session_fail(s, stream->id, H2_ERR_REFUSED_STREAM,
                     apr_psprintf(stream->pool, "%s (%" APR_SIZE_T_FMT " of %"
                                  APR_SIZE_T_FMT " bytes held)", h2_hdr_result_str(res),
                                  s->hdr_budget.used, s->hdr_budget.max));
        return;
    }
    if (res != H2_HDR_OK) {
        if (!h2_hdr_result_as_status(res, &status)) {
            refuse_head(s, stream, res);
            return;
        }
        /* beyond httpd's limits: answered as HTTP/1.1 answers it, by
         * httpd (error page, ErrorDocument, access log) */
        log_over_limit(s, stream, res, status);
        stream->refuse_status = status;
        if (!stream->req.method || (!stream->req.path && !stream->req.authority)) {
            /* the head broke a limit before its request line was
             * complete: the error page is the server root's */
            stream->req.method = stream->req.method? stream->req.method : "GET";
            stream->req.path = "/";
        }
    }
    else if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM)
             && !body_length_ok(s, stream, 1, 0)) {
        return;
    }
    if (s->stop >= H2_STOP_GOAWAY && stream->id > s->last_stream_started) {
        return;
    }
    s->last_stream_started = stream->id;
    h2_session_prio_request(s, stream);
    h2_session_schedule_later(s, stream);
}

/* A client's RST_STREAM, seen before nghttp2 closes the stream. Rapid
 * reset (CVE-2023-44487) is a client opening streams and cancelling them
 * before their responses are complete: we started work for nothing, and
 * that has its budget. A stream we already closed, reset or answered in
 * full costs nothing more: a client that cancelled a download with a
 * large window answers each DATA frame still in flight with another
 * RST_STREAM (python-h2 does, hundreds of them), and a pushed stream is
 * ours, not one the client opened. Those only count as a flood. */
static void client_reset(h2_session *s, int32_t id)
{
    h2_stream *stream = h2_session_stream(s, id);

    if (stream && (id & 1) && !stream->reset_sent
        && (stream->state == H2_SS_OPEN || stream->state == H2_SS_CLOSED_REMOTE)) {
        h2_session_reset_ok(s);
    }
    else {
        h2_session_flood_ok(s, H2_FLOOD_CLOSED_RESETS);
    }
}

static int on_frame_recv(nghttp2_session *ngh, const nghttp2_frame *frame,
                         void *ud)
{
    h2_session *s = ud;
    h2_stream *stream;

    switch (frame->hd.type) {
    case NGHTTP2_HEADERS:
        if (frame->hd.length == 0 && !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM)
            && !h2_session_flood_ok(s, H2_FLOOD_EMPTY_FRAMES)) {
            break;
        }
        stream = h2_session_stream(s, frame->hd.stream_id);
        if (!stream) {
            break;
        }
        if (frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
            /* nghttp2 adds the CONTINUATIONs' lengths to the HEADERS' */
            stream->head_in = H2_FRAME_HDR_LEN + (apr_off_t)frame->hd.length;
            on_request_headers(s, stream, frame);
        }
        else if (stream->trailers_in) {
            h2_hdr_result res = h2_req_head_end(&stream->trailer_head);
            if (res != H2_HDR_OK) {
                h2_session_fail(s, stream->id, H2_ERR_PROTOCOL_ERROR,
                             h2_hdr_result_str(res));
            }
            else if (!(frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
                /* RFC 9113 8.1: trailers end the stream */
                h2_session_fail(s, stream->id, H2_ERR_PROTOCOL_ERROR,
                             "trailers without END_STREAM");
            }
            else if (body_length_ok(s, stream, 1, 0)) {
                input_eos(s, stream);
            }
        }
        break;
    case NGHTTP2_DATA:
        if (frame->hd.length == 0 && !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
            h2_session_flood_ok(s, H2_FLOOD_EMPTY_FRAMES);
        }
        if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM)
            && (stream = h2_session_stream(s, frame->hd.stream_id)) != NULL
            && body_length_ok(s, stream, 1, 0)) {
            input_eos(s, stream);
        }
        break;
    case NGHTTP2_PRIORITY:
        h2_session_flood_ok(s, H2_FLOOD_PRIORITY);
        break;
    case NGHTTP2_WINDOW_UPDATE:
        h2_session_resume_windows(s, frame->hd.stream_id,
                       frame->window_update.window_size_increment);
        break;
    case NGHTTP2_SETTINGS:
        if (!(frame->hd.flags & NGHTTP2_FLAG_ACK)) {
            /* the initial window may have grown; after an upgrade, the
             * client's preface is in */
            h2_session_preface_in(s);
            h2_session_resume_windows(s, 0, NGHTTP2_MAX_WINDOW_SIZE);
        }
        else {
            h2_session_recv_window_settings_ack(s);
        }
        break;
    case NGHTTP2_RST_STREAM:
        client_reset(s, frame->hd.stream_id);
        break;
    case NGHTTP2_GOAWAY:
        h2_session_transit(s, H2_SEV_CLIENT_GOAWAY);
        break;
    case NGHTTP2_PING:
        if (frame->hd.flags & NGHTTP2_FLAG_ACK) {
            h2_session_recv_window_rtt_acked(s, frame->ping.opaque_data);
        }
        break;
    default:
        break;
    }
    return 0;
}

static int on_data_chunk_recv(nghttp2_session *ngh, uint8_t flags,
                              int32_t stream_id, const uint8_t *data,
                              size_t len, void *ud)
{
    h2_session *s = ud;
    h2_stream *stream = h2_session_stream(s, stream_id);
    int kept = 0;

    /* The connection's window never holds a stream back: what each
     * stream may send is bounded by its own window (h2_session_recv_window.c),
     * so the connection's is opened again as the bytes arrive. */
    h2_session_ngcheck(s, stream_id, "open the connection's window",
                       nghttp2_session_consume_connection(ngh, len));
    if (!stream) {
        return 0;
    }
    if (body_length_ok(s, stream, 0, (apr_off_t)len)) {
        kept = (h2_x_c1_body_in(stream->x, (const char *)data, len) > 0);
    }
    h2_session_recv_window_received(s, stream, len, kept);
    return 0;
}

static int on_stream_close(nghttp2_session *ngh, int32_t stream_id,
                           uint32_t error_code, void *ud)
{
    h2_session *s = ud;
    h2_stream *stream = h2_session_stream(s, stream_id);
    int in_workers;

    if (!stream) {
        return 0;
    }
    h2_session_ngcheck(s, stream_id, "detach the stream",
                       nghttp2_session_set_stream_user_data(ngh, stream_id, NULL));
    /* negative: we reset it, and frames the client had in flight are
     * ignored (RFC 9113 5.1, "closed") */
    if (!s->closed_ring) {
        s->closed_ring = apr_pcalloc(s->pool, H2_CLOSED_RING * sizeof(int32_t));
    }
    s->closed_ring[s->closed_ring_next++ % H2_CLOSED_RING] =
        stream->reset_sent? -stream_id : stream_id;
    s->open_streams--;
    s->pushed_open -= (stream->id % 2 == 0);
    h2_session_recv_window_closed(s, stream);
    if (stream->status_counted) {
        h2_status_c1_stream_done(s->srow);
    }
    if (error_code) {
        h2_stream_transit(stream, H2_SSEV_RESET);
    }
    else {
        h2_stream_transit(stream, H2_SSEV_CLOSED);
    }
    in_workers = h2_x_c1_abort(stream->x);
    if (!in_workers) {
        h2_session_purge_later(s, stream);
    }
    if (s->open_streams == 0) {
        h2_session_transit(s, H2_SEV_NO_STREAMS);
    }
    return 0;
}

/* A stream's frames as they are written count for its request's %O, as
 * over HTTP/1.1 the bytes written do; with its last one, its worker may
 * log it. */
static void frame_sent(h2_session *s, const nghttp2_frame *frame)
{
    h2_stream *stream = h2_session_stream(s, frame->hd.stream_id);
    int last;

    if (!stream) {
        return;
    }
    switch (frame->hd.type) {
    case NGHTTP2_HEADERS:
    case NGHTTP2_DATA:
    case NGHTTP2_PUSH_PROMISE:
        last = (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
        break;
    case NGHTTP2_RST_STREAM:
        last = 1;
        break;
    default:
        return;
    }
    h2_x_c1_wire(stream->x, H2_FRAME_HDR_LEN + frame->hd.length);
    if (last && !stream->settled) {
        stream->settled = 1;
        h2_x_c1_settle(stream->x);
    }
}

static int on_frame_send(nghttp2_session *ngh, const nghttp2_frame *frame,
                         void *ud)
{
    h2_session *s = ud;
    h2_stream *stream;

    if (frame->hd.stream_id > 0) {
        frame_sent(s, frame);
    }
    switch (frame->hd.type) {
    case NGHTTP2_GOAWAY:
        /* a shutdown notice (the highest stream id) leaves streams open */
        if (frame->goaway.last_stream_id != H2_MAX_STREAM_ID) {
            h2_session_stopping(s, H2_STOP_GOAWAY);
        }
        break;
    case NGHTTP2_RST_STREAM:
        /* Resets for client faults count, whether we or nghttp2 sent them
         * and whether the client sent or provoked the fault (malformed
         * requests, content-length lies, window overflows: the
         * "MadeYouReset" pattern); those counted when decided are not
         * counted again. */
        switch (frame->rst_stream.error_code) {
        case H2_ERR_REFUSED_STREAM:
            if (s->refusals_not_faults > 0) {
                s->refusals_not_faults--;   /* see on_begin_headers() */
                break;
            }
            h2_session_count_fault(s, frame->hd.stream_id);
            break;
        case H2_ERR_PROTOCOL_ERROR:
        case H2_ERR_FLOW_CONTROL_ERROR:
        case H2_ERR_STREAM_CLOSED:
        case H2_ERR_FRAME_SIZE_ERROR:
            h2_session_count_fault(s, frame->hd.stream_id);
            break;
        default:
            break;
        }
        if ((stream = h2_session_stream(s, frame->hd.stream_id)) != NULL) {
            stream->reset_sent = 1;
        }
        break;
    case NGHTTP2_HEADERS:
    case NGHTTP2_DATA:
        if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM)
            && (stream = h2_session_stream(s, frame->hd.stream_id)) != NULL) {
            h2_stream_transit(stream, H2_SSEV_EOS_OUT);
            /* Tunnels (CONNECT, WebSocket) too: their END_STREAM goes out
             * only when the handler is done with both directions, i.e.
             * after the client's own end, or at the tunnel's timeout,
             * when nobody reads what the client still sends. */
            if (stream->state == H2_SS_CLOSED_LOCAL) {
                h2_session_recv_window_answered(s, stream);
            }
        }
        break;
    default:
        break;
    }
    return 0;
}

static int on_invalid_frame_recv(nghttp2_session *ngh, const nghttp2_frame *frame,
                                 int lib_error, void *ud)
{
    h2_session *s = ud;
    ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21014)
                  "h2_session(%ld-%d): invalid frame type %d: %s",
                  s->id, frame->hd.stream_id, frame->hd.type,
                  nghttp2_strerror(lib_error));
    /* counted now, not when the reset goes out: a burst of bad frames
     * must meet H2MaxStreamErrors before it meets anything else */
    if (frame->hd.stream_id) {
        h2_session_count_fault(s, frame->hd.stream_id);
    }
    return 0;
}

static int on_error(nghttp2_session *ngh, int lib_error, const char *msg,
                    size_t len, void *ud)
{
    h2_session *s = ud;
    ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21015)
                  "h2_session(%ld): nghttp2: %.*s", s->id, (int)len, msg);
    return 0;
}

static ssize_t select_padding(nghttp2_session *ngh, const nghttp2_frame *frame,
                              size_t max_payloadlen, void *ud)
{
    h2_session *s = ud;
    size_t pad = 0, len = frame->hd.length;
    if (s->padding_bits > 0) {
        unsigned char r;
        ap_random_insecure_bytes(&r, 1);
        pad = r & ((1u << s->padding_bits) - 1);
    }
    return (ssize_t)((len + pad > max_payloadlen)? max_payloadlen : len + pad);
}

static ssize_t read_length(nghttp2_session *ngh, uint8_t frame_type,
                           int32_t stream_id, int32_t session_window,
                           int32_t stream_window, uint32_t remote_max_frame,
                           void *ud)
{
    h2_session *s = ud;
    ssize_t len = remote_max_frame;
    if (len > session_window) len = session_window;
    if (len > stream_window) len = stream_window;
    if (s->max_data_frame_len > 0 && len > s->max_data_frame_len) {
        len = s->max_data_frame_len;
    }
    if (s->padding_bits == 0 && s->io.is_tls) {
        /* A frame that ends with its record lets the client hand each
         * decrypted record to its parser whole: one DATA chunk per record
         * instead of the two a straddling frame makes. */
        apr_size_t fit = h2_c1_io_record_fit(&s->io);
        if (fit > H2_FRAME_HDR_LEN && (ssize_t)(fit - H2_FRAME_HDR_LEN) < len) {
            len = (ssize_t)(fit - H2_FRAME_HDR_LEN);
        }
    }
    return len;
}

/* nghttp2 did not send a frame that was queued. A response head (or
 * trailers) over the header block limit fails its stream, not the
 * connection; anything else (a stream the client closed meanwhile) has
 * been dealt with where it happened. */
static int on_frame_not_send(nghttp2_session *ngh, const nghttp2_frame *frame,
                             int lib_error, void *ud)
{
    h2_session *s = ud;

    if (frame->hd.type == NGHTTP2_HEADERS && lib_error == NGHTTP2_ERR_FRAME_SIZE_ERROR) {
        ap_log_cerror(APLOG_MARK, APLOG_ERR, 0, s->c1, APLOGNO(21099)
                      "h2_session(%ld-%d): response header block over %"
                      APR_SIZE_T_FMT " bytes (H2MaxHeaderBlockLen), resetting "
                      "the stream", s->id, frame->hd.stream_id,
                      s->send_block_max? s->send_block_max : (apr_size_t)H2_NGHTTP2_HEADERS_MAX);
        h2_session_fail(s, frame->hd.stream_id, NGHTTP2_INTERNAL_ERROR,
                        "response header block too large");
    }
    else if (APLOGctrace1(s->c1)) {
        ap_log_cerror(APLOG_MARK, APLOG_TRACE1, 0, s->c1,
                      "h2_session(%ld-%d): frame type %d not sent: %s", s->id,
                      frame->hd.stream_id, frame->hd.type, nghttp2_strerror(lib_error));
    }
    return 0;
}

nghttp2_session_callbacks *h2_session_callbacks(void)
{
    nghttp2_session_callbacks *cbs;
    if (nghttp2_session_callbacks_new(&cbs) != 0) {
        return NULL;
    }
    nghttp2_session_callbacks_set_send_callback(cbs, on_send);
    nghttp2_session_callbacks_set_on_begin_frame_callback(cbs, on_begin_frame);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data_chunk_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
    nghttp2_session_callbacks_set_on_frame_send_callback(cbs, on_frame_send);
    nghttp2_session_callbacks_set_on_frame_not_send_callback(cbs, on_frame_not_send);
    nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cbs, on_invalid_frame_recv);
    nghttp2_session_callbacks_set_error_callback2(cbs, on_error);
    nghttp2_session_callbacks_set_select_padding_callback(cbs, select_padding);
    nghttp2_session_callbacks_set_send_data_callback(cbs, h2_session_send_data);
    nghttp2_session_callbacks_set_data_source_read_length_callback(cbs, read_length);
    h2_session_prio_callbacks(cbs);
    return cbs;
}
