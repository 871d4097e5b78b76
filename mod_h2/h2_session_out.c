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
/* Responses: streams to the workers, their output into frames, flow control. */

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

void h2_session_send_wait_set(h2_session *s, h2_stream *stream)
{
    if (!stream->window_deferred) {
        stream->window_deferred = 1;
        s->window_waiters++;
    }
}

void h2_session_send_wait_clear(h2_session *s, h2_stream *stream)
{
    if (stream->window_deferred) {
        stream->window_deferred = 0;
        s->window_waiters--;
    }
}

/* stream waited for its window: let nghttp2 ask data_read() again */
static void resume_window_wait(h2_session *s, h2_stream *stream)
{
    h2_session_send_wait_clear(s, stream);
    if (nghttp2_session_resume_data(s->ngh, stream->id) != 0) {
        ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21083)
                      "h2_session(%ld-%d): cannot resume the response",
                      s->id, stream->id);
    }
}

/* Streams that wait for their window because the bucket of small frames
 * was empty get another try once it has refilled: a client that opens
 * its window only after the last bytes of it came would wait forever. */
void h2_session_retry_windows(h2_session *s)
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
void h2_session_resume_windows(h2_session *s, int32_t stream_id, int32_t increment)
{
    h2_stream *stream, *one;
    int still_tiny = 0;

    if (s->window_waiters == 0) {
        return;    /* the usual case: an update for a stream sending */
    }
    one = stream_id? h2_session_stream(s, stream_id) : NULL;
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
        h2_session_flood_ok(s, H2_FLOOD_TINY_WINDOWS);
    }
}

void h2_session_preface_in(h2_session *s)
{
    h2_stream *stream;

    if (!s->preface_due) {
        return;
    }
    s->preface_due = 0;
    stream = h2_session_stream(s, 1);
    if (stream && stream->data_deferred) {
        stream->data_deferred = 0;
        h2_session_ngcheck(s, 1, "resume the upgrade's response",
                           nghttp2_session_resume_data(s->ngh, 1));
    }
}

/* What of length a DATA frame's data may take: nghttp2 pads a frame only
 * up to the length it offered (the frame size or window), so H2Padding's
 * most is left free. */
static size_t data_room(h2_session *s, size_t length)
{
    if (s->padding_bits > 0 && length > ((size_t)1 << s->padding_bits)) {
        length -= (size_t)1 << s->padding_bits;
    }
    return length;
}

/* The answer to an h2c upgrade sends no DATA before the client's preface
 * (the client starts sending once it has the 101): what comes after the
 * 101 before that, a client reads with the 101, and Debian 12's curl
 * (7.88) fails a transfer when that is over 32 KB. A 64 KB window of DATA
 * came right behind the 101 when the server was quick. SETTINGS and the
 * HEADERS still go out; h2_session_preface_in() resumes the DATA. */
static int preface_wait(h2_session *s, h2_stream *stream)
{
    if (s->preface_due && stream->id == 1) {
        stream->data_deferred = 1;
        return 1;
    }
    return 0;
}

static ssize_t data_read(nghttp2_session *ngh, int32_t stream_id, uint8_t *buf,
                         size_t length, uint32_t *data_flags,
                         nghttp2_data_source *source, void *ud)
{
    h2_session *s = ud;
    h2_stream *stream = source->ptr;
    h2_hchunk *c;
    size_t n = 0;

    if (preface_wait(s, stream)) {
        return NGHTTP2_ERR_DEFERRED;
    }
    length = data_room(s, length);
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
            h2_session_send_wait_set(s, stream);
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
            h2_session_ngcheck(s, stream_id, "send trailers",
                               nghttp2_submit_trailer(ngh, stream_id, nv, nvlen));
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
        if (h2_session_fail(s, stream_id, (uint32_t)c->status,
                            "the response broke after its head") != 0) {
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

int h2_session_send_data(nghttp2_session *ngh, nghttp2_frame *frame,
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

void h2_session_answer(h2_session *s, h2_stream *stream, int status)
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
    h2_session_ngcheck(s, stream->id, "answer the stream",
                       nghttp2_submit_response(s->ngh, stream->id, nv, 2, NULL));
}

/* Whether stream's response waits for window its client withholds: data
 * is queued and neither its window nor the connection's lets any out. */
static int starved(h2_session *s, h2_stream *stream)
{
    const h2_hchunk *c = h2_x_c1_out(stream->x)->first;
    int32_t w;

    if (!stream->response_submitted || stream->state >= H2_SS_CLOSED || !c
        || (c->type != H2_HC_DATA && c->type != H2_HC_FILE)) {
        return 0;
    }
    if (stream->window_deferred) {
        return 1;
    }
    w = nghttp2_session_get_stream_remote_window_size(s->ngh, stream->id);
    return w <= 0 || nghttp2_session_get_remote_window_size(s->ngh) <= 0;
}

/* Which streams wait for window (h2_x_c1_starved(): past the worker
 * share, a parked one's log goes early). Only with more streams open than
 * that share can it matter, and a look every H2_STARVED_EVERY is enough:
 * it asks nghttp2 for the windows of every stream with data queued. */
#define H2_STARVED_EVERY apr_time_from_msec(100)

static void note_starved(h2_session *s)
{
    h2_stream *stream;
    apr_time_t now;

    if (s->open_streams <= s->xset.max_processing) {
        return;
    }
    now = apr_time_now();
    if (now - s->starved_at < H2_STARVED_EVERY) {
        return;
    }
    s->starved_at = now;
    for (stream = s->streams; stream; stream = stream->next_all) {
        if (stream->x && !stream->on_new) {
            h2_x_c1_starved(stream->x, starved(s, stream));
        }
    }
}

void h2_session_dispatch(h2_session *s)
{
    h2_x *batch[64];
    int n = 0;
    h2_stream *prev = NULL, *stream = s->new_first, *next;
    int tunnels_full = 0;

    note_starved(s);
    for (; stream; stream = next) {
        int gone = (stream->state >= H2_SS_CLOSED), ok = 1;
        next = stream->next_new;
        if (!gone && !stream->fault_counted) {
            /* once a WebSocket waits, those after it wait too: a worker
             * finishing meanwhile must not let a later one pass it */
            ok = (tunnels_full && stream->req.websocket)? -1 : h2_x_c1_admit(stream->x);
        }
        tunnels_full |= (ok < 0);
        if (ok == 0) {
            break;   /* at the connection's share of workers: wait */
        }
        if (ok < 0) {
            prev = stream;  /* a WebSocket waits; requests after it go on */
            continue;
        }
        /* admitted, or closed, or nghttp2 resets it with the next frames
         * we send (e.g. its DATA outran its content-length in this very
         * read): then its request must not start */
        if (prev) prev->next_new = next;
        else s->new_first = next;
        if (s->new_last == stream) s->new_last = prev;
        stream->next_new = NULL;
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
        h2_session_fail(s, stream->id, H2_ERR_INTERNAL_ERROR,
                        "response fields cannot be sent");
        return;
    }
    if (c->type == H2_HC_INTERIM) {
        rv = nghttp2_submit_headers(s->ngh, NGHTTP2_FLAG_NONE, stream->id, NULL,
                                    nv, nvlen, NULL);
    }
    else {
        prd.source.ptr = stream;
        prd.read_callback = data_read;
        if (stream->state == H2_SS_RESERVED_LOCAL) {
            h2_stream_transit(stream, H2_SSEV_HEADERS_OUT);
            h2_session_push_prioritize(s, stream, c);
        }
        rv = nghttp2_submit_response(s->ngh, stream->id, nv, nvlen,
                                     with_body? &prd : NULL);
        stream->response_submitted = 1;
        if (rv == 0) {
            h2_session_prio_response(s, stream, nv, nvlen);
        }
    }
    if (rv != 0) {
        ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21016)
                      "h2_session(%ld-%d): submit response: %s",
                      s->id, stream->id, nghttp2_strerror(rv));
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
        case H2_HC_PUSH:
            h2_session_push(s, stream, c);
            h2_x_c1_sent_chunk(s->xc, h2_hqueue_pop(h2_x_c1_out(stream->x)));
            continue;
        case H2_HC_RESET:
            h2_session_fail(s, stream->id, (uint32_t)c->status,
                            "the response broke or never came");
            while ((c = h2_hqueue_pop(h2_x_c1_out(stream->x))) != NULL) {
                h2_x_c1_sent_chunk(s->xc, c);
            }
            return;
        default:
            if (!stream->response_submitted) {
                /* body without a response: the handler side broke */
                h2_session_fail(s, stream->id, H2_ERR_INTERNAL_ERROR,
                                "a body without a response");
                while ((c = h2_hqueue_pop(h2_x_c1_out(stream->x))) != NULL) {
                    h2_x_c1_sent_chunk(s->xc, c);
                }
                return;
            }
            if (stream->data_deferred) {
                stream->data_deferred = 0;
                h2_session_ngcheck(s, stream->id, "resume the response",
                                   nghttp2_session_resume_data(s->ngh, stream->id));
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
            h2_session_purge_later(s, stream);
        }
        return;
    }
    if (consumed) {
        h2_session_recv_window_consumed(s, stream, consumed);
    }
    process_output(s, stream);
    /* a client that opens no window starves its streams from their first
     * byte: known before their workers park them (h2_x_c1_starved) */
    if (stream->x) {
        h2_x_c1_starved(stream->x, starved(s, stream));
    }
}

/* Take over what the workers produced since the last round. Returns the
 * number of streams that had news. */
int h2_session_collect(h2_session *s)
{
    return h2_x_c1_collect(s->xc, on_collected, s);
}
