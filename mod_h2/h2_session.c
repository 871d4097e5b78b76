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

#include "h2.h"
#include "h2_abuse.h"
#include "h2_config.h"
#include "h2_c1_io.h"
#include "h2_c1_idle.h"
#include "h2_c2.h"
#include "h2_handoff.h"
#include "h2_c1_wait.h"
#include "h2_protocol.h"
#include "h2_session.h"
#include "h2_stream.h"
#include "h2_util.h"
#include "h2_workers.h"
#include "h2_frame_clock.h"

APLOG_USE_MODULE(h2);

/* How often a connection thread that waits on workers looks at the MPM,
 * so that a graceful stop is noticed. */
#define H2_WAIT_SLICE apr_time_from_msec(500)
/* How long a shutdown notice waits for the client's PING answer: several
 * round trips of any real network. */
#define H2_STOP_NOTICE_WAIT apr_time_from_msec(1000)
#define H2_STOP_PING "h2-stop!"   /* 8 bytes of PING payload */
#define H2_MAX_STREAM_ID 0x7fffffff

/* A connection with streams in flight keeps its MPM thread while it waits
 * for them; under a steady load it never goes idle. After this long it
 * hands the thread back (the MPM queues it again at once), so that
 * connections waiting for a thread get their turn: without it, more busy
 * connections than MPM threads starve the rest until they time out. */
#define H2_C1_TURN apr_time_from_msec(100)

/* What a connection's request heads may hold together, per stream it may
 * have open (at least two full header blocks, see h2_session_create). */
#define H2_CONN_HEAD_SHARE (32 * 1024)

/* The one place session states change, as the table in h2_lifecycle.c
 * says. */
static void transit(h2_session *s, h2_session_event ev)
{
    h2_session_state old = s->state;
    int n = h2_session_next(old, ev);

    if (n < 0) {
        ap_log_cerror(APLOG_MARK, APLOG_WARNING, 0, s->c1, APLOGNO(21092)
                      "h2_session(%ld): invalid transition %s -[%s]->",
                      s->c1->id, h2_session_state_str(old), h2_session_event_str(ev));
        return;
    }
    if (n != (int)old) {
        s->state = (h2_session_state)n;
        if (APLOGctrace1(s->c1)) {   /* runs several times per request */
            ap_log_cerror(APLOG_MARK, APLOG_TRACE1, 0, s->c1,
                          "h2_session(%ld): %s -[%s]-> %s (%d open, %d in workers)",
                          s->c1->id, h2_session_state_str(old), h2_session_event_str(ev),
                          h2_session_state_str(s->state), s->open_streams,
                          h2_x_c1_processing(s->xc));
        }
    }
}

static void link_stream(h2_session *s, h2_stream *stream)
{
    stream->next_all = s->streams;
    if (s->streams) s->streams->prev_all = stream;
    s->streams = stream;
}

static void unlink_stream(h2_session *s, h2_stream *stream)
{
    if (stream->prev_all) stream->prev_all->next_all = stream->next_all;
    else s->streams = stream->next_all;
    if (stream->next_all) stream->next_all->prev_all = stream->prev_all;
    stream->prev_all = stream->next_all = NULL;
}

static h2_stream *get_stream(h2_session *s, int32_t id)
{
    return nghttp2_session_get_stream_user_data(s->ngh, id);
}

/* The connection abuses us: GOAWAY ENHANCE_YOUR_CALM with why as debug
 * data, and close once it is out; an abuser does not get to finish its
 * streams (RFC 9113 5.4.1). */
static void goaway_calm(h2_session *s, const char *why)
{
    ap_log_cerror(APLOG_MARK, APLOG_INFO, 0, s->c1, APLOGNO(21012)
                  "h2_session(%ld): %s, closing the connection", s->c1->id, why);
    nghttp2_submit_goaway(s->ngh, NGHTTP2_FLAG_NONE,
                          nghttp2_session_get_last_proc_stream_id(s->ngh),
                          H2_ERR_ENHANCE_YOUR_CALM,
                          (const uint8_t *)why, strlen(why));
    s->goaway_sent = 1;
    s->close_after_send = 1;
    transit(s, H2_SEV_SHUTDOWN);
}

/* Count a stream error the client caused (sent or provoked); too many
 * close the connection (H2MaxStreamErrors). */
static void count_stream_error(h2_session *s)
{
    if (!h2_abuse_stream_error(&s->abuse) && !s->goaway_sent) {
        goaway_calm(s, "too many stream errors");
    }
}

/* Count the client's fault on stream id once, as soon as it is known. */
static void count_stream_fault(h2_session *s, int32_t id)
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

static void stream_error(h2_session *s, int32_t id, uint32_t code, const char *why)
{
    ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21010)
                  "h2_session(%ld-%d): resetting stream, %s: %s",
                  s->c1->id, id, h2_util_error_str(code), why);
    count_stream_fault(s, id);
    nghttp2_submit_rst_stream(s->ngh, NGHTTP2_FLAG_NONE, id, code);
}

/* Frames that cost work and carry nothing are budgeted per second. */
static int abuse_check(h2_session *s, h2_flood_kind kind)
{
    if (!h2_abuse_flood(&s->abuse, kind, apr_time_now()) && !s->goaway_sent) {
        goaway_calm(s, h2_abuse_flood_str(kind));
        return 0;
    }
    return 1;
}

/* A client that resets streams faster than the budget allows gets
 * GOAWAY ENHANCE_YOUR_CALM. Returns 0 then. */
static int check_client_reset(h2_session *s)
{
    if (!h2_abuse_reset(&s->abuse, apr_time_now())) {
        if (!s->goaway_sent) {
            goaway_calm(s, "rapid reset: too many streams reset by the client");
        }
        return 0;
    }
    return 1;
}

/* --- nghttp2 callbacks, all in the connection thread --- */

/* RFC 9113 5.1.2 makes a stream over the advertised concurrency limit a
 * stream error, so the other streams go on; nghttp2 treats it as a
 * connection error once the limit is acknowledged. So nghttp2 gets a
 * higher limit and the client sees ours in our first SETTINGS frame,
 * patched here on its way out; on_begin_headers() enforces ours with
 * REFUSED_STREAM. */
#define H2_NGH_STREAMS(max) ((max) > 0x3fffffff? 0x7fffffff : 2 * (max) + 10)

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

static int recently_closed(h2_session *s, int32_t id)
{
    int i;
    for (i = 0; i < H2_CLOSED_RING; ++i) {
        if (s->closed_ring[i] == id) return 1;
    }
    return 0;
}

/* RFC 9113 5.1.1: a new stream's id must be larger than any the client
 * used before. nghttp2 ignores a smaller one, since it may be trailers on
 * a stream it already forgot; a stream we never saw is no such case. */
static int on_begin_frame(nghttp2_session *ngh, const nghttp2_frame_hd *hd,
                          void *ud)
{
    h2_session *s = ud;

    if (hd->type != NGHTTP2_HEADERS || !(hd->stream_id & 1)) {
        return 0;
    }
    if (hd->stream_id > s->max_client_stream) {
        s->max_client_stream = hd->stream_id;
    }
    else if (!nghttp2_session_find_stream(ngh, hd->stream_id)
             && !recently_closed(s, hd->stream_id) && !s->goaway_sent) {
        ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21024)
                      "h2_session(%ld): client opened stream %d after %d",
                      s->c1->id, hd->stream_id, s->max_client_stream);
        nghttp2_session_terminate_session(ngh, H2_ERR_PROTOCOL_ERROR);
        s->goaway_sent = 1;
    }
    return 0;
}

/* 1 when what the connection's streams hold (request heads, bodies and
 * responses buffered) leaves room for another stream. Over it, new
 * streams are refused until the client reads or the streams end: memory
 * per connection is bounded whatever the client sends. */
static int mem_admits(h2_session *s)
{
    apr_size_t held;

    held = h2_x_c1_mem_held(s->xc);
    if (held <= s->mem_max && s->hdr_budget.used < s->hdr_budget.max) {
        return 1;
    }
    ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21080)
                  "h2_session(%ld): refusing a stream, the connection holds "
                  "%" APR_SIZE_T_FMT " bytes of bodies and responses (budget %"
                  APR_SIZE_T_FMT ") and %" APR_SIZE_T_FMT " of request heads "
                  "(budget %" APR_SIZE_T_FMT ")", s->c1->id, held, s->mem_max,
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
        int over_streams = s->open_streams >= s->max_streams;
        if (over_streams || !mem_admits(s)) {
            /* RFC 9113 5.1.2: only this stream fails, with REFUSED_STREAM,
             * so the client may retry it; the others go on. A client that
             * opens more streams than allowed is at fault (counted when
             * the reset goes out); one whose streams wait for it to read
             * may just be slow, and is not. */
            if (!over_streams) {
                s->refusals_not_faults++;
            }
            if (nghttp2_submit_rst_stream(ngh, NGHTTP2_FLAG_NONE,
                                          frame->hd.stream_id,
                                          H2_ERR_REFUSED_STREAM) != 0) {
                return NGHTTP2_ERR_CALLBACK_FAILURE;
            }
            return 0;
        }
        stream = h2_stream_create(s, frame->hd.stream_id, s->pool);
        link_stream(s, stream);
        s->open_streams++;
        nghttp2_session_set_stream_user_data(ngh, frame->hd.stream_id, stream);
    }
    else if ((stream = get_stream(s, frame->hd.stream_id)) != NULL
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
    h2_stream *stream = get_stream(s, frame->hd.stream_id);
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

static void answer_directly(h2_session *s, h2_stream *stream, int status)
{
    nghttp2_nv nv[2];
    char sbuf[8];
    apr_snprintf(sbuf, sizeof(sbuf), "%d", status);
    nv[0] = (nghttp2_nv){ (uint8_t *)":status", (uint8_t *)sbuf, 7, strlen(sbuf),
                          NGHTTP2_NV_FLAG_NONE };
    nv[1] = (nghttp2_nv){ (uint8_t *)"content-length", (uint8_t *)"0", 14, 1,
                          NGHTTP2_NV_FLAG_NONE };
    stream->answer_status = status;
    stream->response_submitted = 1;
    nghttp2_submit_response(s->ngh, stream->id, nv, 2, NULL);
}

static void schedule_later(h2_session *s, h2_stream *stream)
{
    h2_x_req *xr = h2_x_c1_req(stream->x);

    /* all a worker will know of the stream, fixed from here on */
    xr->created = stream->created;
    xr->head = &stream->req;
    xr->has_body = stream->has_body_in;
    xr->refuse_status = stream->refuse_status;
    h2_x_c1_pend(stream->x);
    stream->on_new = 1;
    stream->next_new = NULL;
    if (s->new_last) s->new_last->next_new = stream;
    else s->new_first = stream;
    s->new_last = stream;
}

static void input_eos(h2_session *s, h2_stream *stream)
{
    h2_x_c1_body_end(stream->x, stream->trailers_in);
    h2_stream_transit(stream, H2_SSEV_EOS_IN);
}

/* RFC 9113 8.1.1: a request whose DATA does not add up to its
 * content-length is malformed. With END_STREAM (eos) it must match
 * exactly, before it must not exceed. Returns 0 when the stream was reset. */
static int body_length_ok(h2_session *s, h2_stream *stream, int eos)
{
    apr_off_t cl = stream->req.content_length;
    if (cl < 0 || stream->fault_counted) {
        return !stream->fault_counted;
    }
    if (stream->in_received > cl || (eos && stream->in_received != cl)) {
        stream_error(s, stream->id, H2_ERR_PROTOCOL_ERROR,
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
        what = apr_psprintf(stream->pool, "the request line exceeds "
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
                  "h2_session(%ld-%d): %s, answering %d", s->c1->id, stream->id,
                  what, status);
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
        stream_error(s, stream->id, H2_ERR_REFUSED_STREAM,
                     apr_psprintf(stream->pool, "%s (%" APR_SIZE_T_FMT " of %"
                                  APR_SIZE_T_FMT " bytes held)", h2_hdr_result_str(res),
                                  s->hdr_budget.used, s->hdr_budget.max));
        return;
    }
    if (res != H2_HDR_OK) {
        if (!h2_hdr_result_as_status(res, &status)) {
            stream_error(s, stream->id, H2_ERR_PROTOCOL_ERROR,
                         h2_hdr_result_str(res));
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
             && !body_length_ok(s, stream, 1)) {
        return;
    }
    if (s->goaway_sent && stream->id > s->last_stream_started) {
        return;
    }
    s->last_stream_started = stream->id;
    schedule_later(s, stream);
}

static void resume_windows(h2_session *s, int32_t stream_id, int32_t increment);

static int on_frame_recv(nghttp2_session *ngh, const nghttp2_frame *frame,
                         void *ud)
{
    h2_session *s = ud;
    h2_stream *stream;

    switch (frame->hd.type) {
    case NGHTTP2_HEADERS:
        if (frame->hd.length == 0 && !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM)
            && !abuse_check(s, H2_FLOOD_EMPTY_FRAMES)) {
            break;
        }
        stream = get_stream(s, frame->hd.stream_id);
        if (!stream) {
            break;
        }
        if (frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
            on_request_headers(s, stream, frame);
        }
        else if (stream->trailers_in) {
            h2_hdr_result res = h2_req_head_end(&stream->trailer_head);
            if (res != H2_HDR_OK) {
                stream_error(s, stream->id, H2_ERR_PROTOCOL_ERROR,
                             h2_hdr_result_str(res));
            }
            else if (!(frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
                /* RFC 9113 8.1: trailers end the stream */
                stream_error(s, stream->id, H2_ERR_PROTOCOL_ERROR,
                             "trailers without END_STREAM");
            }
            else if (body_length_ok(s, stream, 1)) {
                input_eos(s, stream);
            }
        }
        break;
    case NGHTTP2_DATA:
        if (frame->hd.length == 0 && !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
            abuse_check(s, H2_FLOOD_EMPTY_FRAMES);
        }
        if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM)
            && (stream = get_stream(s, frame->hd.stream_id)) != NULL
            && body_length_ok(s, stream, 1)) {
            input_eos(s, stream);
        }
        break;
    case NGHTTP2_PRIORITY:
        abuse_check(s, H2_FLOOD_PRIORITY);
        break;
    case NGHTTP2_WINDOW_UPDATE:
        resume_windows(s, frame->hd.stream_id,
                       frame->window_update.window_size_increment);
        break;
    case NGHTTP2_SETTINGS:
        if (!(frame->hd.flags & NGHTTP2_FLAG_ACK)) {
            /* the initial window may have grown */
            resume_windows(s, 0, NGHTTP2_MAX_WINDOW_SIZE);
        }
        break;
    case NGHTTP2_RST_STREAM:
        check_client_reset(s);
        break;
    case NGHTTP2_GOAWAY:
        transit(s, H2_SEV_CLIENT_GOAWAY);
        break;
    case NGHTTP2_PING:
        if ((frame->hd.flags & NGHTTP2_FLAG_ACK)
            && !memcmp(frame->ping.opaque_data, H2_STOP_PING, 8)) {
            s->stop_ping_acked = 1;
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
    h2_stream *stream = get_stream(s, stream_id);
    int drop = 1;

    if (stream) {
        stream->in_received += (apr_off_t)len;
    }
    if (stream && body_length_ok(s, stream, 0)) {
        drop = !h2_x_c1_body_in(stream->x, (const char *)data, len);
    }
    if (drop) {
        /* nobody will read it: keep the windows open regardless */
        nghttp2_session_consume(ngh, stream_id, len);
        if (stream && stream->state == H2_SS_CLOSED_LOCAL
            && (stream->in_dropped += len) > (apr_off_t)s->window_size) {
            /* The response is complete and the client still uploads more
             * than a window's worth nobody reads: RFC 9113 8.1 lets us
             * stop it. Smaller rests are read, so that a malformed
             * request still gets its PROTOCOL_ERROR. */
            nghttp2_submit_rst_stream(ngh, NGHTTP2_FLAG_NONE, stream_id,
                                      H2_ERR_NO_ERROR);
        }
    }
    return 0;
}

static void purge_later(h2_session *s, h2_stream *stream);

static int on_stream_close(nghttp2_session *ngh, int32_t stream_id,
                           uint32_t error_code, void *ud)
{
    h2_session *s = ud;
    h2_stream *stream = get_stream(s, stream_id);
    int in_workers;

    if (!stream) {
        return 0;
    }
    nghttp2_session_set_stream_user_data(ngh, stream_id, NULL);
    s->closed_ring[s->closed_ring_next++ % H2_CLOSED_RING] = stream_id;
    s->open_streams--;
    if (error_code) {
        h2_stream_transit(stream, H2_SSEV_RESET);
    }
    else {
        h2_stream_transit(stream, H2_SSEV_CLOSED);
    }
    in_workers = h2_x_c1_abort(stream->x);
    if (!in_workers) {
        purge_later(s, stream);
    }
    if (s->open_streams == 0) {
        transit(s, H2_SEV_NO_STREAMS);
    }
    return 0;
}

static int on_frame_send(nghttp2_session *ngh, const nghttp2_frame *frame,
                         void *ud)
{
    h2_session *s = ud;
    h2_stream *stream;

    switch (frame->hd.type) {
    case NGHTTP2_GOAWAY:
        /* a shutdown notice (the highest stream id) leaves streams open */
        if (frame->goaway.last_stream_id != H2_MAX_STREAM_ID) {
            s->goaway_sent = 1;
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
            count_stream_fault(s, frame->hd.stream_id);
            break;
        case H2_ERR_PROTOCOL_ERROR:
        case H2_ERR_FLOW_CONTROL_ERROR:
        case H2_ERR_STREAM_CLOSED:
        case H2_ERR_FRAME_SIZE_ERROR:
            count_stream_fault(s, frame->hd.stream_id);
            break;
        default:
            break;
        }
        break;
    case NGHTTP2_HEADERS:
    case NGHTTP2_DATA:
        if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM)
            && (stream = get_stream(s, frame->hd.stream_id)) != NULL) {
            h2_stream_transit(stream, H2_SSEV_EOS_OUT);
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
                  s->c1->id, frame->hd.stream_id, frame->hd.type,
                  nghttp2_strerror(lib_error));
    /* counted now, not when the reset goes out: a burst of bad frames
     * must meet H2MaxStreamErrors before it meets anything else */
    if (frame->hd.stream_id) {
        count_stream_fault(s, frame->hd.stream_id);
    }
    return 0;
}

static int on_error(nghttp2_session *ngh, int lib_error, const char *msg,
                    size_t len, void *ud)
{
    h2_session *s = ud;
    ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21015)
                  "h2_session(%ld): nghttp2: %.*s", s->c1->id, (int)len, msg);
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
    if (s->padding_bits > 0) {
        /* leave room for the pad length byte and the most padding
         * select_padding may add, or full frames could never be padded */
        len -= (ssize_t)1 << s->padding_bits;
        if (len < 1) len = 1;
    }
    else if (s->io.is_tls) {
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

/* --- response data --- */

/* The least window worth a DATA frame while more data waits. */
static int32_t min_data_window(h2_session *s)
{
    uint32_t initial = nghttp2_session_get_remote_settings(
        s->ngh, NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE);
    return (initial > 0 && initial < H2_MIN_DATA_FRAME)? (int32_t)initial
                                                        : H2_MIN_DATA_FRAME;
}

/* 1 when the client's windows (not the frame size or a TLS record's room)
 * leave less than a worthwhile frame for stream_id. */
static int tiny_window(h2_session *s, int32_t stream_id)
{
    int32_t w = nghttp2_session_get_stream_remote_window_size(s->ngh, stream_id);
    int32_t cw = nghttp2_session_get_remote_window_size(s->ngh);
    if (cw < w) w = cw;
    return w < min_data_window(s);
}

/* 1 when a frame smaller than min_data_window() may go out now. */
static int take_tiny_frame(h2_session *s)
{
    return h2_abuse_tiny_frame(&s->abuse, apr_time_now());
}

/* stream waited for its window: let nghttp2 ask data_read() again */
static void resume_window_wait(h2_session *s, h2_stream *stream)
{
    stream->window_deferred = 0;
    s->window_waiters--;
    if (nghttp2_session_resume_data(s->ngh, stream->id) != 0) {
        ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21083)
                      "h2_session(%ld-%d): cannot resume the response",
                      s->c1->id, stream->id);
    }
}

/* Streams that wait for their window because the bucket of small frames
 * was empty get another try once it has refilled: a client that opens
 * its window only after the last bytes of it came would wait forever. */
static void retry_windows(h2_session *s)
{
    h2_stream *stream;

    if (!s->window_waiters
        || !h2_abuse_tiny_frame_ready(&s->abuse, apr_time_now())) {
        return;
    }
    for (stream = s->streams; stream; stream = stream->next_all) {
        if (stream->window_deferred && stream->state < H2_SS_CLOSED) {
            resume_window_wait(s, stream);
        }
    }
}

/* Streams that wait for their window get another look once a
 * WINDOW_UPDATE (on stream_id, or 0: the connection) or SETTINGS may have
 * opened it. An update by less than a worthwhile frame (increment) that
 * leaves a waiting stream's window still too small counts toward
 * H2_ABUSE_TINY_WINDOWS_PER_SEC; larger ones are a client reading, even
 * while the other window still holds the stream back. */
static void resume_windows(h2_session *s, int32_t stream_id, int32_t increment)
{
    h2_stream *stream, *one;
    int still_tiny = 0;

    if (s->window_waiters == 0) {
        return;    /* the usual case: an update for a stream sending */
    }
    one = stream_id? get_stream(s, stream_id) : NULL;
    if (stream_id && !one) {
        return;
    }
    for (stream = one? one : s->streams; stream;
         stream = one? NULL : stream->next_all) {
        if (!stream->window_deferred || stream->state >= H2_SS_CLOSED) {
            continue;
        }
        if (tiny_window(s, stream->id)) {
            still_tiny = 1;
            continue;
        }
        resume_window_wait(s, stream);
    }
    if (still_tiny && increment < min_data_window(s)) {
        abuse_check(s, H2_FLOOD_TINY_WINDOWS);
    }
}

static ssize_t data_read(nghttp2_session *ngh, int32_t stream_id, uint8_t *buf,
                         size_t length, uint32_t *data_flags,
                         nghttp2_data_source *source, void *ud)
{
    h2_session *s = ud;
    h2_stream *stream = source->ptr;
    h2_hchunk *c;
    size_t n = 0;

    /* n: the data this frame may take, c: what follows that data */
    for (c = h2_x_c1_out(stream->x)->first; c; c = c->next) {
        if (c->type == H2_HC_DATA) {
            n += c->end - c->start;
            if (n > length) {
                break;
            }
        }
        else {
            if (c->type == H2_HC_FILE && n == 0) {
                /* a file range travels alone in its frame: one file bucket */
                n = c->flen;
                c = c->next;
            }
            break;
        }
    }
    if (n > length) {
        if (length < H2_MIN_DATA_FRAME && tiny_window(s, stream_id)
            && !take_tiny_frame(s)) {
            if (!stream->window_deferred) {
                stream->window_deferred = 1;
                s->window_waiters++;
            }
            return NGHTTP2_ERR_DEFERRED;
        }
        *data_flags |= NGHTTP2_DATA_FLAG_NO_COPY;
        return (ssize_t)length;
    }
    /* n covers all data queued before c */
    if (c && c->type == H2_HC_EOS) {
        *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    }
    else if (c && c->type == H2_HC_TRAILERS) {
        nghttp2_nv *nv;
        size_t nvlen;
        if (h2_util_chunk_to_nv(c, stream->pool, &nv, &nvlen, 0, 0) == APR_SUCCESS
            && nvlen > 0) {
            *data_flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
            nghttp2_submit_trailer(ngh, stream_id, nv, nvlen);
        }
        else {
            *data_flags |= NGHTTP2_DATA_FLAG_EOF;
        }
        c->type = H2_HC_EOS;  /* consumed like an EOS once the data is out */
    }
    else if (c && c->type == H2_HC_RESET && n == 0) {
        /* The response broke after the data before it went out. Nobody
         * looks at this stream again (its worker may be long done): reset
         * it here, not when a timeout comes. */
        h2_hchunk *rest;
        if (nghttp2_submit_rst_stream(ngh, NGHTTP2_FLAG_NONE, stream_id,
                                      (uint32_t)c->status) != 0) {
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        }
        while ((rest = h2_hqueue_pop(h2_x_c1_out(stream->x))) != NULL) {
            h2_x_c1_sent_chunk(s->xc, rest);
        }
        return NGHTTP2_ERR_DEFERRED;
    }
    else if (n == 0) {
        stream->data_deferred = 1;
        return NGHTTP2_ERR_DEFERRED;
    }
    if (n > 0) {
        *data_flags |= NGHTTP2_DATA_FLAG_NO_COPY;
    }
    else {
        /* nothing but the end: pop it now, no send_data call follows */
        h2_x_c1_sent_chunk(s->xc, h2_hqueue_pop(h2_x_c1_out(stream->x)));
    }
    return (ssize_t)n;
}

static int send_data(nghttp2_session *ngh, nghttp2_frame *frame,
                     const uint8_t *framehd, size_t length,
                     nghttp2_data_source *source, void *ud)
{
    h2_session *s = ud;
    h2_stream *stream = source->ptr;
    h2_hqueue *q = h2_x_c1_out(stream->x);
    size_t padlen = frame->data.padlen, remain = length;
    apr_status_t rv = APR_SUCCESS;

    h2_c1_io_append(&s->io, (const char *)framehd, H2_FRAME_HDR_LEN);
    if (padlen > 0) {
        unsigned char pl = (unsigned char)(padlen - 1);
        h2_c1_io_append(&s->io, (const char *)&pl, 1);
    }
    while (remain > 0 && rv == APR_SUCCESS) {
        h2_hchunk *c = q->first;
        size_t k;
        if (!c) {
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        }
        if (c->type == H2_HC_DATA) {
            k = c->end - c->start;
            if (k > remain) k = remain;
            rv = h2_c1_io_append(&s->io, c->data + c->start, k);
            c->start += k;
            q->mem -= k;
            if (c->start == c->end) {
                h2_x_c1_sent_chunk(s->xc, h2_hqueue_pop(q));
            }
        }
        else if (c->type == H2_HC_FILE) {
            k = c->flen;
            if (k > remain) k = remain;
            if (!c->file) {
                apr_file_t *f = NULL;
                apr_os_file_t fd = c->fd;
                apr_os_file_put(&f, &fd, APR_FOPEN_READ
                                | (c->fd_sendfile? APR_FOPEN_SENDFILE_ENABLED : 0),
                                stream->pool);
                c->file = f;
            }
            /* with sendfile allowed and mmap not, the core sendfiles each
             * frame; otherwise frames are slices of one mapped window and
             * go out in few writev calls, equally without copies (small
             * ranges without sendfile are copied, see h2_c1_io) */
            rv = h2_c1_io_append_file(&s->io, c->file, c->foff, k,
                                      (apr_off_t)c->flen, c->fd_mmap,
                                      stream->pool, &c->mm, &c->mm_off);
            c->foff += k;
            c->flen -= k;
            if (c->flen == 0) {
                /* a file range counts a fixed cost, see h2_hchunk_cost() */
                h2_x_c1_sent(stream->x, H2_HCHUNK_FILE_COST);
                h2_x_c1_sent_chunk(s->xc, h2_hqueue_pop(q));
            }
            remain -= k;
            continue;
        }
        else {
            return NGHTTP2_ERR_CALLBACK_FAILURE;
        }
        remain -= k;
        h2_x_c1_sent(stream->x, k);
    }
    if (rv != APR_SUCCESS) {
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    if (padlen > 1) {
        static const char zeros[256];
        h2_c1_io_append(&s->io, zeros, padlen - 1);
    }
    if (q->first && q->first->type == H2_HC_EOS) {
        /* data_read flagged the end (or trailers) with this frame */
        h2_x_c1_sent_chunk(s->xc, h2_hqueue_pop(q));
    }
    if (h2_c1_io_needs_flush(&s->io) && h2_c1_io_flush(&s->io) != APR_SUCCESS) {
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    return 0;
}

/* --- moving work between the connection and the workers --- */

static void purge_later(h2_session *s, h2_stream *stream)
{
    /* streams are freed between rounds, never inside nghttp2 callbacks;
     * purge_streams() takes them out of the lists in one pass per list,
     * as unlinking each one alone walks lists as long as the open
     * streams (quadratic at -m 100) */
    h2_stream_transit(stream, H2_SSEV_PURGE);
    h2_x_c1_forget(stream->x);
    unlink_stream(s, stream);
    stream->next_all = s->purge;
    s->purge = stream;
}

/* Drop the purged streams from a list linked through the
 * member at offset link; returns the new last element. */
static h2_stream *unlist_purged(h2_stream **head, apr_size_t link)
{
    h2_stream **pp = head, *last = NULL;
#define H2_NEXT(st) (*(h2_stream **)((char *)(st) + link))
    while (*pp) {
        if ((*pp)->state == H2_SS_PURGED) {
            *pp = H2_NEXT(*pp);
        }
        else {
            last = *pp;
            pp = &H2_NEXT(*pp);
        }
    }
#undef H2_NEXT
    return last;
}

static void purge_streams(h2_session *s)
{
    h2_stream *stream;
    int on_new = 0;

    for (stream = s->purge; stream; stream = stream->next_all) {
        on_new |= stream->on_new;
    }
    if (on_new) {
        s->new_last = unlist_purged(&s->new_first, APR_OFFSETOF(h2_stream, next_new));
    }
    if (s->purge) {
        h2_x_c1_purge(s->xc);
    }
    while (s->purge) {
        stream = s->purge;
        s->purge = stream->next_all;
        if (stream->window_deferred) {
            s->window_waiters--;
        }
        h2_stream_destroy(stream);
    }
}

static void dispatch(h2_session *s)
{
    h2_x *batch[64];
    int n = 0;

    while (s->new_first) {
        h2_stream *stream = s->new_first;
        int gone = (stream->state >= H2_SS_CLOSED);
        if (!gone && !stream->fault_counted && !h2_x_c1_admit(stream->x)) {
            break;   /* at the connection's share of workers: wait */
        }
        /* admitted, or closed, or nghttp2 resets it with the next frames
         * we send (e.g. its DATA outran its content-length in this very
         * read): then its request must not start */
        s->new_first = stream->next_new;
        if (!s->new_first) s->new_last = NULL;
        stream->on_new = 0;
        if (gone || stream->fault_counted) {
            continue;
        }
        batch[n++] = stream->x;
        if (n == (int)(sizeof(batch)/sizeof(batch[0]))) {
            h2_x_c1_schedule(batch, n);
            n = 0;
        }
    }
    if (n > 0) {
        h2_x_c1_schedule(batch, n);
    }
}

static void submit_response(h2_session *s, h2_stream *stream, h2_hchunk *c,
                            int with_body)
{
    nghttp2_nv *nv;
    size_t nvlen;
    nghttp2_data_provider prd;
    int rv;

    /* nghttp2 points into the chunk rather than copying it: the chunk
     * stays with the stream (held) until the stream is gone */
    if (h2_util_chunk_to_nv(c, stream->pool, &nv, &nvlen, 1, 1) != APR_SUCCESS) {
        nghttp2_submit_rst_stream(s->ngh, NGHTTP2_FLAG_NONE, stream->id,
                                  H2_ERR_INTERNAL_ERROR);
        return;
    }
    if (c->type == H2_HC_INTERIM) {
        rv = nghttp2_submit_headers(s->ngh, NGHTTP2_FLAG_NONE, stream->id, NULL,
                                    nv, nvlen, NULL);
    }
    else {
        prd.source.ptr = stream;
        prd.read_callback = data_read;
        rv = nghttp2_submit_response(s->ngh, stream->id, nv, nvlen,
                                     with_body? &prd : NULL);
        stream->response_submitted = 1;
    }
    if (rv != 0) {
        ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21016)
                      "h2_session(%ld-%d): submit response: %s",
                      s->c1->id, stream->id, nghttp2_strerror(rv));
    }
}

/* Act on what a worker produced for stream, in order. */
static void process_output(h2_session *s, h2_stream *stream)
{
    h2_hchunk *c;

    while ((c = h2_x_c1_out(stream->x)->first) != NULL) {
        switch (c->type) {
        case H2_HC_INTERIM:
            if (!stream->response_submitted) {
                submit_response(s, stream, c, 0);
            }
            h2_x_c1_hold(stream->x, h2_hqueue_pop(h2_x_c1_out(stream->x)));
            continue;
        case H2_HC_HEADERS: {
            int body = !(c->next && c->next->type == H2_HC_EOS);
            if (!stream->response_submitted) {
                submit_response(s, stream, c, body);
            }
            h2_x_c1_hold(stream->x, h2_hqueue_pop(h2_x_c1_out(stream->x)));
            if (!body) {
                h2_x_c1_sent_chunk(s->xc, h2_hqueue_pop(h2_x_c1_out(stream->x)));
            }
            continue;
        }
        case H2_HC_RESET:
            nghttp2_submit_rst_stream(s->ngh, NGHTTP2_FLAG_NONE, stream->id,
                                      (uint32_t)c->status);
            while ((c = h2_hqueue_pop(h2_x_c1_out(stream->x))) != NULL) {
                h2_x_c1_sent_chunk(s->xc, c);
            }
            return;
        default:
            if (!stream->response_submitted) {
                /* body without a response: the handler side broke */
                nghttp2_submit_rst_stream(s->ngh, NGHTTP2_FLAG_NONE, stream->id,
                                          H2_ERR_INTERNAL_ERROR);
                while ((c = h2_hqueue_pop(h2_x_c1_out(stream->x))) != NULL) {
                    h2_x_c1_sent_chunk(s->xc, c);
                }
                return;
            }
            if (stream->data_deferred) {
                stream->data_deferred = 0;
                nghttp2_session_resume_data(s->ngh, stream->id);
            }
            return;
        }
    }
}

/* A stream a worker made ready, its output taken over (h2_x_c1_collect). */
static void on_collected(void *ctx, void *owner, apr_size_t consumed, int done)
{
    h2_session *s = ctx;
    h2_stream *stream = owner;

    if (stream->state >= H2_SS_CLOSED) {
        if (done && stream->state == H2_SS_CLOSED) {
            purge_later(s, stream);
        }
        return;
    }
    if (consumed) {
        nghttp2_session_consume(s->ngh, stream->id, consumed);
    }
    process_output(s, stream);
}

/* Take over what the workers produced since the last round. Returns the
 * number of streams that had news. */
static int collect(h2_session *s)
{
    return h2_x_c1_collect(s->xc, on_collected, s);
}

/* --- the connection loop --- */

/* Write a GOAWAY frame directly, for when nghttp2 can no longer send. */
static void goaway_raw(h2_session *s, uint32_t code, const char *why)
{
    unsigned char f[H2_FRAME_HDR_LEN + 8];
    size_t dlen = strlen(why), plen = 8 + dlen;
    int32_t last = nghttp2_session_get_last_proc_stream_id(s->ngh);

    if (s->goaway_sent || s->c1->aborted) {
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
    s->goaway_sent = 1;
    s->output_closed = 1;
    ap_log_cerror(APLOG_MARK, APLOG_INFO, 0, s->c1, APLOGNO(21025)
                  "h2_session(%ld): %s, GOAWAY %s", s->c1->id, why,
                  h2_util_error_str(code));
}

static apr_status_t feed(void *ctx, const char *data, apr_size_t len)
{
    h2_session *s = ctx;
    ssize_t n;

    h2_frame_clock_feed(&s->clock, (const unsigned char *)data, len, apr_time_now());
    n = nghttp2_session_mem_recv(s->ngh, (const uint8_t *)data, len);
    if (n < 0) {
        ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21017)
                      "h2_session(%ld): input: %s", s->c1->id,
                      nghttp2_strerror((int)n));
        if (n == NGHTTP2_ERR_BAD_CLIENT_MAGIC) {
            /* not HTTP/2 at all: nothing more to say in HTTP/2 */
            return APR_EGENERAL;
        }
        if (n == NGHTTP2_ERR_FLOODED) {
            /* nghttp2's queue is full of the acks the flood asked for:
             * say goodbye ourselves, before all of them */
            goaway_raw(s, H2_ERR_ENHANCE_YOUR_CALM, "flood of SETTINGS/PING");
            return APR_EGENERAL;
        }
        if (!s->goaway_sent && n != NGHTTP2_ERR_FLOODED) {
            nghttp2_submit_goaway(s->ngh, NGHTTP2_FLAG_NONE,
                                  nghttp2_session_get_last_proc_stream_id(s->ngh),
                                  (n == NGHTTP2_ERR_CALLBACK_FAILURE)?
                                  H2_ERR_INTERNAL_ERROR : H2_ERR_PROTOCOL_ERROR,
                                  (const uint8_t *)nghttp2_strerror((int)n),
                                  strlen(nghttp2_strerror((int)n)));
            s->goaway_sent = 1;
        }
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

static apr_status_t read_input(h2_session *s, apr_read_type_e block)
{
    apr_status_t rv = h2_c1_io_read(&s->io, block, feed, s);
    if (rv == APR_SUCCESS) {
        s->last_client_io = apr_time_now();
    }
    return rv;
}

static apr_status_t send_output(h2_session *s, int *progress)
{
    int rv;

    if (s->output_closed) {
        return APR_SUCCESS;
    }
    if (nghttp2_session_want_write(s->ngh)) {
        rv = nghttp2_session_send(s->ngh);
        if (rv != 0) {
            ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21018)
                          "h2_session(%ld): send: %s", s->c1->id,
                          nghttp2_strerror(rv));
            return APR_EGENERAL;
        }
    }
    if (h2_c1_io_has_output(&s->io)) {
        *progress = 1;
        return h2_c1_io_flush(&s->io);
    }
    return APR_SUCCESS;
}

/* Sleep until the client sends something or a worker has news. */
static void wait_for_io(h2_session *s, apr_interval_time_t timeout)
{
    h2_x_c1_wait(s->xc, ap_get_conn_socket(s->c1), timeout);
}

static void shutdown_graceful(h2_session *s, const char *why)
{
    if (s->goaway_sent) {
        return;
    }
    ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21019)
                  "h2_session(%ld): GOAWAY after stream %d: %s", s->c1->id,
                  nghttp2_session_get_last_proc_stream_id(s->ngh), why);
    nghttp2_submit_goaway(s->ngh, NGHTTP2_FLAG_NONE,
                          nghttp2_session_get_last_proc_stream_id(s->ngh),
                          H2_ERR_NO_ERROR, (const uint8_t *)why, strlen(why));
    s->goaway_sent = 1;
    transit(s, H2_SEV_SHUTDOWN);
}

/* RFC 9113 6.8: a server that stops first says so with a GOAWAY naming the
 * highest possible stream, and a PING. Requests the client sent before it
 * saw the notice are still served; once the PING comes back (or after
 * H2_STOP_NOTICE_WAIT for a client that never answers), the final GOAWAY
 * names the last stream taken, and nothing the client sent is lost. */
static void stop_softly(h2_session *s)
{
    if (s->goaway_sent) {
        return;
    }
    if (!s->stop_notice_at) {
        if (nghttp2_submit_shutdown_notice(s->ngh) == 0
            && nghttp2_submit_ping(s->ngh, NGHTTP2_FLAG_NONE,
                                   (const uint8_t *)H2_STOP_PING) == 0) {
            s->stop_notice_at = apr_time_now();
            ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21074)
                          "h2_session(%ld): server stopping, shutdown notice "
                          "sent; final GOAWAY once the client answers the PING",
                          s->c1->id);
            return;
        }
    }
    else if (!s->stop_ping_acked
             && apr_time_now() - s->stop_notice_at < H2_STOP_NOTICE_WAIT) {
        return;
    }
    shutdown_graceful(s, "server shutting down");
}

/* 1 while a shutdown notice waits for the client's PING answer. */
static int stop_pending(h2_session *s)
{
    return s->stop_notice_at && !s->goaway_sent;
}

static int mpm_stopping(void)
{
    int state = AP_MPMQ_RUNNING;
    ap_mpm_query(AP_MPMQ_MPM_STATE, &state);
    return state == AP_MPMQ_STOPPING;
}

static int workers_busy(h2_session *s)
{
    return h2_x_c1_processing(s->xc) > 0 || s->new_first;
}

static int output_stalled(h2_session *s)
{
    h2_stream *stream;
    for (stream = s->streams; stream; stream = stream->next_all) {
        if (h2_x_c1_out(stream->x)->first && stream->state < H2_SS_CLOSED) {
            return 1;
        }
    }
    return 0;
}

/* When the client runs out of time for the frame or header block it
 * started (RequestReadTimeout's header stage), or 0 when it owes none. */
static apr_time_t owed_deadline(h2_session *s)
{
    apr_time_t since;
    apr_off_t bytes;
    if (!h2_frame_clock_owed(&s->clock, &since, &bytes)) {
        return 0;
    }
    return h2_read_deadline(&s->read_timeouts->header, since, bytes);
}

/* The client started a frame or header block and did not finish it in
 * time: a slow client holding the connection, as a request head trickled
 * over HTTP/1.1 would; mod_reqtimeout's header limit ends both. */
static void too_slow(h2_session *s)
{
    const h2_read_limit *lim = &s->read_timeouts->header;
    goaway_calm(s, apr_psprintf(s->pool, "frame or header block not completed "
                                "within the header read timeout (%d-%ds, "
                                "MinRate %" APR_SIZE_T_FMT ")",
                                (int)apr_time_sec(lim->min),
                                (int)apr_time_sec(lim->max? lim->max : lim->min),
                                lim->rate));
}

/* How long a wait may last: at most timeout, and not past deadline (if
 * any); at least 1 ms. */
static apr_interval_time_t wait_until(apr_interval_time_t timeout, apr_time_t deadline)
{
    if (deadline) {
        apr_interval_time_t left = deadline - apr_time_now();
        if (left < timeout) timeout = left;
    }
    return timeout < apr_time_from_msec(1)? apr_time_from_msec(1) : timeout;
}

/* An idle session (no streams) waits for the client. Returns 1 when it
 * may park in the MPM instead: not while a shutdown notice waits for its
 * answer, nor while the client owes the rest of a frame (the MPM's
 * keep-alive wait would start anew with every byte). */
static int wait_idle(h2_session *s, int how)
{
    apr_time_t deadline = owed_deadline(s);
    apr_status_t rv;

    if ((how & H2_RUN_MAY_PARK) && !stop_pending(s) && !deadline) {
        return 1;
    }
    /* with a shutdown notice out, wait for the PING answer only */
    apr_socket_timeout_set(ap_get_conn_socket(s->c1), wait_until(
        stop_pending(s)? H2_STOP_NOTICE_WAIT : s->keepalive_timeout, deadline));
    rv = read_input(s, APR_BLOCK_READ);
    apr_socket_timeout_set(ap_get_conn_socket(s->c1), s->timeout);
    if (rv == APR_SUCCESS) {
        transit(s, H2_SEV_IO);
    }
    else if (deadline && apr_time_now() >= deadline
             && (APR_STATUS_IS_TIMEUP(rv) || APR_STATUS_IS_EAGAIN(rv))) {
        too_slow(s);
    }
    else if (APR_STATUS_IS_TIMEUP(rv) || APR_STATUS_IS_EAGAIN(rv)) {
        shutdown_graceful(s, stop_pending(s)? "server shutting down"
                                            : "idle timeout");
        transit(s, H2_SEV_TIMEOUT);
    }
    else {
        transit(s, APR_STATUS_IS_EOF(rv)? H2_SEV_EOF : H2_SEV_ERROR);
    }
    return 0;
}

static int turn_over(h2_session *s)
{
    return apr_time_now() - s->turn_start >= H2_C1_TURN;
}

/* How long a wait may last before the turn is over (at least 1ms). */
static apr_interval_time_t turn_left(h2_session *s)
{
    apr_interval_time_t left = s->turn_start + H2_C1_TURN - apr_time_now();
    return left < apr_time_from_msec(1)? apr_time_from_msec(1) : left;
}

apr_status_t h2_session_process(h2_session *s, int how)
{
    apr_status_t rv;

    s->turn_start = apr_time_now();
    if (s->state == H2_SESS_INIT || s->state == H2_SESS_IDLE) {
        /* after a yield, the client's silence goes on counting */
        s->last_client_io = s->turn_start;
        transit(s, s->state == H2_SESS_INIT? H2_SEV_START : H2_SEV_IO);
    }

    while (s->state != H2_SESS_DONE) {
        int progress = 0;

        purge_streams(s);
        if (stop_pending(s) || mpm_stopping()) {
            stop_softly(s);
        }

        rv = read_input(s, APR_NONBLOCK_READ);
        if (rv == APR_SUCCESS) {
            progress = 1;
        }
        else if (!APR_STATUS_IS_EAGAIN(rv)) {
            transit(s, APR_STATUS_IS_EOF(rv)? H2_SEV_EOF : H2_SEV_ERROR);
            if (!APR_STATUS_IS_EOF(rv) && !s->c1->aborted) {
                /* a protocol error leaves a GOAWAY to be written */
                int p = 0;
                send_output(s, &p);
            }
            break;
        }
        dispatch(s);
        if (collect(s) > 0) {
            progress = 1;
        }
        retry_windows(s);
        if (send_output(s, &progress) != APR_SUCCESS) {
            transit(s, H2_SEV_ERROR);
            break;
        }
        if (s->close_after_send
            || (!nghttp2_session_want_read(s->ngh)
                && !nghttp2_session_want_write(s->ngh))) {
            transit(s, H2_SEV_EOF);
            break;
        }
        if ((how & H2_RUN_MAY_YIELD) && turn_over(s)) {
            ap_log_cerror(APLOG_MARK, APLOG_TRACE1, 0, s->c1,
                          "h2_session(%ld): turn over, %d streams in workers: "
                          "the MPM thread goes back", s->c1->id, h2_x_c1_processing(s->xc));
            return APR_INCOMPLETE;
        }
        if (progress) {
            transit(s, H2_SEV_IO);
            continue;
        }

        transit(s, (s->open_streams > 0 || h2_x_c1_processing(s->xc) > 0)?
                   H2_SEV_WAIT : H2_SEV_NO_IO);
        if (s->state == H2_SESS_IDLE) {
            h2_x_c1_idle(s->xc, 0);
            h2_ngmem_trim(&s->ngmem);
            h2_c1_io_idle(&s->io);
            if (wait_idle(s, how)) {
                return APR_EAGAIN;
            }
        }
        else if (s->state == H2_SESS_WAIT || s->state == H2_SESS_DRAIN) {
            apr_time_t now = apr_time_now(), deadline = owed_deadline(s);
            if (deadline && now >= deadline) {
                too_slow(s);
                continue;
            }
            if (now - s->last_client_io > s->timeout
                && (output_stalled(s) || !workers_busy(s))) {
                /* the client does not read what it asked for, or we wait
                 * for nothing but the client (e.g. the rest of a frame) */
                ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21020)
                              "h2_session(%ld): client stalled for Timeout, "
                              "closing", s->c1->id);
                shutdown_graceful(s, "timeout");
                transit(s, H2_SEV_TIMEOUT);
                break;
            }
            wait_for_io(s, wait_until(s->window_waiters? H2_TINY_FRAME_RETRY
                                      : (how & H2_RUN_MAY_YIELD)? turn_left(s)
                                      : H2_WAIT_SLICE, deadline));
        }
    }

    /* final frames, e.g. a GOAWAY, then let httpd close */
    if (!s->c1->aborted) {
        int p = 0;
        send_output(s, &p);
    }
    return APR_EOF;
}

void h2_session_refuse(h2_session *s, int code, const char *why)
{
    int p = 0;
    nghttp2_submit_goaway(s->ngh, NGHTTP2_FLAG_NONE, 0, (uint32_t)code,
                          (const uint8_t *)why, strlen(why));
    s->goaway_sent = 1;
    transit(s, H2_SEV_ERROR);
    send_output(s, &p);
}

void h2_session_goodbye(h2_session *s, const char *why)
{
    if (!s->goaway_sent && !s->c1->aborted) {
        int p = 0;
        shutdown_graceful(s, why);
        send_output(s, &p);
    }
}

/* --- creation and teardown --- */

static apr_status_t session_teardown(void *data)
{
    h2_session *s = data;
    h2_stream *stream;
    apr_size_t held;

    h2_c1_idle_unpark(s);

    h2_x_c1_teardown(s->xc);
    purge_streams(s);
    while ((stream = s->streams) != NULL) {
        unlink_stream(s, stream);
        h2_stream_destroy(stream);
    }
    if ((held = h2_x_c1_mem_held(s->xc)) != 0 || s->hdr_budget.used) {
        /* every stream gave back what it held: anything left is a bug in
         * the accounting that bounds a connection's memory */
        ap_log_cerror(APLOG_MARK, APLOG_ERR, 0, s->c1, APLOGNO(21086)
                      "h2_session(%ld): memory budget off at the end: %"
                      APR_SIZE_T_FMT " body and response, %"
                      APR_SIZE_T_FMT " head bytes still counted", s->c1->id,
                      held, s->hdr_budget.used);
    }
    h2_x_c1_idle(s->xc, 1);
    if (s->ngh) {
        nghttp2_session_del(s->ngh);
        s->ngh = NULL;
    }
    h2_ngmem_trim(&s->ngmem);
    /* whatever was not written is lost with the connection anyway */
    apr_brigade_cleanup(s->io.bb_out);
    s->io.buf_len = s->io.seg_start = 0;
    h2_c1_io_idle(&s->io);
    return APR_SUCCESS;
}

static nghttp2_session_callbacks *make_callbacks(void)
{
    nghttp2_session_callbacks *cbs;
    nghttp2_session_callbacks_new(&cbs);
    nghttp2_session_callbacks_set_send_callback(cbs, on_send);
    nghttp2_session_callbacks_set_on_begin_frame_callback(cbs, on_begin_frame);
    nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data_chunk_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
    nghttp2_session_callbacks_set_on_frame_send_callback(cbs, on_frame_send);
    nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(cbs, on_invalid_frame_recv);
    nghttp2_session_callbacks_set_error_callback2(cbs, on_error);
    nghttp2_session_callbacks_set_select_padding_callback(cbs, select_padding);
    nghttp2_session_callbacks_set_send_data_callback(cbs, send_data);
    nghttp2_session_callbacks_set_data_source_read_length_callback(cbs, read_length);
    return cbs;
}

/* Stream 1 of an h2c upgrade is the HTTP/1.1 request that asked for it. */
static apr_status_t upgrade_stream(h2_session *s, request_rec *r)
{
    const char *b64 = apr_table_get(r->headers_in, "HTTP2-Settings");
    h2_stream *stream;
    char *settings, *std;
    int len, rv, i;
    const apr_array_header_t *hdrs;
    const apr_table_entry_t *e;
    h2_upgrade_body *body = NULL;

    if (!b64) {
        return APR_EINVAL;
    }
    /* HTTP2-Settings is base64url without padding */
    std = apr_pstrdup(r->pool, b64);
    for (i = 0; std[i]; ++i) {
        if (std[i] == '-') std[i] = '+';
        else if (std[i] == '_') std[i] = '/';
    }
    settings = apr_palloc(r->pool, apr_base64_decode_len(std) + 1);
    len = apr_base64_decode(settings, std);
    rv = nghttp2_session_upgrade2(s->ngh, (const uint8_t *)settings, (size_t)len,
                                  r->header_only, NULL);
    if (rv != 0) {
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, APLOGNO(21021)
                      "h2_session(%ld): upgrade settings: %s", s->c1->id,
                      nghttp2_strerror(rv));
        return APR_EINVAL;
    }
    stream = h2_stream_create(s, 1, s->pool);
    link_stream(s, stream);
    s->open_streams++;
    nghttp2_session_set_stream_user_data(s->ngh, 1, stream);

    h2_req_head_add(&stream->req, ":method", 7, r->method, strlen(r->method));
    h2_req_head_add(&stream->req, ":scheme", 7, "http", 4);
    h2_req_head_add(&stream->req, ":path", 5, r->unparsed_uri, strlen(r->unparsed_uri));
    if (r->hostname) {
        const char *host = apr_table_get(r->headers_in, "Host");
        if (!host) host = r->hostname;
        h2_req_head_add(&stream->req, ":authority", 10, host, strlen(host));
    }
    hdrs = apr_table_elts(r->headers_in);
    e = (const apr_table_entry_t *)hdrs->elts;
    for (i = 0; i < hdrs->nelts; ++i) {
        char *name;
        if (!e[i].key || !e[i].val) continue;
        name = apr_pstrdup(stream->pool, e[i].key);
        ap_str_tolower(name);
        if (!strcmp(name, "host") || !strcmp(name, "http2-settings")
            || !strcmp(name, "content-length")
            || h2_hdr_is_connection_specific(name, strlen(name))
            || (!strcmp(name, "te") && strcasecmp(e[i].val, "trailers"))) {
            continue;
        }
        h2_req_head_add(&stream->req, name, strlen(name), e[i].val, strlen(e[i].val));
    }
    h2_stream_transit(stream, H2_SSEV_HEADERS_IN);

    /* the body came before the preface, the propose hook read it */
    if (apr_pool_userdata_get((void **)&body, H2_UPGRADE_BODY_KEY, r->pool) != APR_SUCCESS
        || (body && body->len == 0)) {
        body = NULL;
    }
    if (body) {
        char *cl = apr_off_t_toa(stream->pool, (apr_off_t)body->len);
        h2_req_head_add(&stream->req, "content-length", 14, cl, strlen(cl));
    }
    h2_stream_transit(stream, H2_SSEV_EOS_IN);
    if (h2_req_head_end(&stream->req) != H2_HDR_OK) {
        stream->answer_status = HTTP_BAD_REQUEST;
    }
    if (stream->answer_status) {
        answer_directly(s, stream, stream->answer_status);
    }
    else {
        s->last_stream_started = 1;
        schedule_later(s, stream);
        if (body) {
            h2_x_c1_body_in(stream->x, body->data, body->len);
        }
    }
    h2_x_c1_body_end(stream->x, NULL);
    return APR_SUCCESS;
}

apr_status_t h2_session_create(h2_session **psession, conn_rec *c,
                               request_rec *r, server_rec *server)
{
    apr_pool_t *pool;
    h2_session *s;
    nghttp2_session_callbacks *cbs;
    nghttp2_option *opt;
    nghttp2_settings_entry settings[2];
    apr_int64_t conn_win;
    int rv;

    h2_c2_note_conn_thread();
    /* The session lives in the connection's pool: a pool of its own would
     * cost an 8 KB node per connection for a few hundred bytes. Nothing
     * grows in it per stream; streams have pools of their own. */
    pool = c->pool;
    s = apr_pcalloc(pool, sizeof(*s));
    s->c1 = c;
    s->s = r? r->server : (server? server : c->base_server);
    s->pool = pool;
    s->state = H2_SESS_INIT;
    s->is_tls = ap_ssl_conn_is_ssl(c);

    s->max_streams = (int)h2_config_sget(s->s, H2_CONF_MAX_STREAMS);
    s->window_size = (int)h2_config_sget(s->s, H2_CONF_WIN_SIZE);
    s->stream_max_mem = (apr_size_t)h2_config_sget(s->s, H2_CONF_STREAM_MAX_MEM);
    s->stream_timeout = h2_config_sget(s->s, H2_CONF_STREAM_TIMEOUT);
    s->max_data_frame_len = (int)h2_config_sget(s->s, H2_CONF_MAX_DATA_FRAME_LEN);
    s->padding_bits = (int)h2_config_sget(s->s, H2_CONF_PADDING);
    s->output_buffering = (int)h2_config_sget(s->s, H2_CONF_OUTPUT_BUFFERING);
    s->copy_files = (int)h2_config_sget(s->s, H2_CONF_COPY_FILES);
    s->max_stream_errors = (int)h2_config_sget(s->s, H2_CONF_MAX_STREAM_ERRORS);
    s->timeout = s->s->timeout;
    {
        /* with several connections per child, one gets at most half of
         * its workers; a prefork child serves only this one */
        int minw, maxw, idle_secs, threaded = 0;
        h2_config_workers(s->s, &minw, &maxw, &idle_secs);
        ap_mpm_query(AP_MPMQ_IS_THREADED, &threaded);
        s->xset.max_processing = (threaded == AP_MPMQ_NOT_SUPPORTED)? maxw
                                 : (maxw / 2 > 1? maxw / 2 : 1);
        s->xset.threaded = (threaded != AP_MPMQ_NOT_SUPPORTED);
    }
    s->keepalive_timeout = s->s->keep_alive_timeout;
    /* the same limits httpd applies to HTTP/1.1 request heads */
    s->hdr_limits.max_field_len = (apr_size_t)s->s->limit_req_fieldsize;
    s->hdr_limits.max_fields = s->s->limit_req_fields;
    s->hdr_limits.max_line_len = (apr_size_t)s->s->limit_req_line;
    s->hdr_limits.max_block_len = (apr_size_t)h2_config_sget(s->s, H2_CONF_MAX_HEADER_BLOCK);
    if (!s->hdr_limits.max_block_len) {
        s->hdr_limits.max_block_len = (s->hdr_limits.max_fields? (apr_size_t)s->hdr_limits.max_fields : 100)
            * (s->hdr_limits.max_field_len + 32) + s->hdr_limits.max_line_len;
    }
    /* Per connection: two blocks of the largest size allowed, or a share
     * per stream, whichever is more; request bodies and responses up to
     * H2StreamMaxMemSize for every stream it may have open. */
    s->hdr_budget.max = 2 * s->hdr_limits.max_block_len;
    if (s->hdr_budget.max < (apr_size_t)s->max_streams * H2_CONN_HEAD_SHARE) {
        s->hdr_budget.max = (apr_size_t)s->max_streams * H2_CONN_HEAD_SHARE;
    }
    s->hdr_limits.budget = &s->hdr_budget;
    s->mem_max = (apr_size_t)s->max_streams * s->stream_max_mem;

    h2_abuse_init(&s->abuse, s->max_stream_errors, apr_time_now());
    h2_c1_io_init(&s->io, c, s->s, s->is_tls);
    s->read_timeouts = h2_config_read_timeouts(s->s);
    s->xset.c1 = c;
    s->xset.stream_max_mem = s->stream_max_mem;
    s->xset.stream_timeout = s->stream_timeout;
    s->xset.output_buffering = s->output_buffering;
    s->xset.copy_files = s->copy_files;
    s->xset.read_timeouts = s->read_timeouts;
    if (!(s->xc = h2_x_c1_conn_create(pool, &s->xset))) {
        return APR_ENOMEM;
    }
    h2_frame_clock_init(&s->clock, 1);

    cbs = make_callbacks();
    nghttp2_option_new(&opt);
    nghttp2_option_set_no_auto_window_update(opt, 1);
    nghttp2_option_set_max_settings(opt, 32);
    nghttp2_option_set_max_outbound_ack(opt, 1000);
    nghttp2_option_set_stream_reset_rate_limit(opt, 2 * H2_RESET_BURST, H2_RESET_RATE);
    nghttp2_option_set_max_continuations(opt, 8);
    /* Requests are checked as RFC 9113 8.1-8.3 say by h2_headers_check and
     * this file (content-length, trailers); nghttp2 doing it again cost
     * 1.4k instructions per request. */
    nghttp2_option_set_no_http_messaging(opt, 1);
    /* MaxMemFree bounds this cache like the others */
    h2_ngmem_init(&s->ngmem, h2_util_cache_max(16, 4096));
    rv = nghttp2_session_server_new3(&s->ngh, cbs, s, opt, &s->ngmem.mem);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cbs);
    if (rv != 0) {
        ap_log_cerror(APLOG_MARK, APLOG_ERR, 0, c, APLOGNO(21022)
                      "h2_session(%ld): nghttp2 session: %s", c->id,
                      nghttp2_strerror(rv));
        return APR_EGENERAL;
    }
    apr_pool_pre_cleanup_register(pool, s, session_teardown);

    settings[0].settings_id = NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS;
    settings[0].value = (uint32_t)H2_NGH_STREAMS(s->max_streams);
    settings[1].settings_id = NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE;
    settings[1].value = (uint32_t)s->window_size;
    nghttp2_submit_settings(s->ngh, NGHTTP2_FLAG_NONE, settings, 2);

    /* The connection window only has to cover what all streams may have
     * in flight; stream windows do the actual bounding. */
    conn_win = (apr_int64_t)s->max_streams * s->window_size;
    if (conn_win > NGHTTP2_MAX_WINDOW_SIZE) conn_win = NGHTTP2_MAX_WINDOW_SIZE;
    if (conn_win > NGHTTP2_INITIAL_CONNECTION_WINDOW_SIZE) {
        nghttp2_session_set_local_window_size(s->ngh, NGHTTP2_FLAG_NONE, 0,
                                              (int32_t)conn_win);
    }

    if (r && upgrade_stream(s, r) != APR_SUCCESS) {
        return APR_EINVAL;   /* the teardown cleanup frees what was made */
    }
    *psession = s;
    ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, c, APLOGNO(21023)
                  "h2_session(%ld): started%s, %d max streams, window %d, "
                  "budgets: %" APR_SIZE_T_FMT " bytes of request heads, %"
                  APR_SIZE_T_FMT " of bodies and responses", c->id,
                  r? " by upgrade" : "", s->max_streams, s->window_size,
                  s->hdr_budget.max, s->mem_max);
    return APR_SUCCESS;
}
