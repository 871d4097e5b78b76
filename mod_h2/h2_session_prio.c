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
/* RFC 9218 priorities on the connection thread: the request's Priority
 * field, PRIORITY_UPDATE frames (for open streams and, bounded, for ones
 * not yet opened), a response's Priority field and pushed streams; they
 * order the DATA nghttp2 sends and the streams waiting for a worker. */
#include <string.h>

#include <apr_strings.h>
#include <httpd.h>
#include <http_log.h>

#include "h2.h"
#include "h2_config.h"
#include "h2_session_int.h"

APLOG_USE_MODULE(http2);

/* What of a PRIORITY_UPDATE is kept: the stream id and a value we read
 * (a longer one is ignored). The buffer is made for the connection's first
 * such frame: most clients send none, and a connection's first pool block
 * (8 KB, the MPM's and the modules' per-connection memory beside the
 * session's) is full with a few hundred bytes more. */
#define H2_PRIO_BUF_SIZE (4 + H2_PRIO_UPDATE_MAX)

/* A priority a PRIORITY_UPDATE gave a stream the client has not opened. */
typedef struct h2_prio_idle {
    int32_t id;
    h2_prio prio;
} h2_prio_idle;

void h2_session_prio_options(nghttp2_option *opt)
{
    /* PRIORITY_UPDATE frames come to us whole (unpack_update below) */
    nghttp2_option_set_user_recv_extension_type(opt, NGHTTP2_PRIORITY_UPDATE);
    /* clients that do not announce SETTINGS_NO_RFC7540_PRIORITIES keep the
     * RFC 7540 tree their PRIORITY frames build (RFC 9218 2.1) */
    nghttp2_option_set_server_fallback_rfc7540_priorities(opt, 1);
}

int h2_session_prio_is_extensible(h2_session *s)
{
    return nghttp2_session_get_remote_settings(
        s->ngh, NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES) == 1;
}

/* Tell nghttp2 what stream's DATA is to go first from now on. */
static void apply(h2_session *s, h2_stream *stream)
{
    nghttp2_extpri ep;

    ep.urgency = stream->prio.urgency;
    ep.inc = stream->prio.incremental;
    /* Not for clients on RFC 7540 priorities: their streams are in the
     * tree, and nghttp2 (1.52) would take one with data waiting out of the
     * urgency queues it is not in, and abort on an assertion. */
    if (h2_session_prio_is_extensible(s)) {
        h2_session_ngcheck(s, stream->id, "change the stream's priority",
            nghttp2_session_change_extpri_stream_priority(s->ngh, stream->id, &ep, 0));
    }
    if (stream->trace >= APLOG_TRACE2) {
        ap_log_cerror(APLOG_MARK, APLOG_TRACE2, 0, s->c1,
                      "h2_session(%ld-%d): priority u=%d%s", s->id, stream->id,
                      stream->prio.urgency, stream->prio.incremental? ", i" : "");
    }
}

void h2_session_prio_request(h2_session *s, h2_stream *stream)
{
    const char *v = apr_table_get(stream->req.headers, "priority");
    int i;

    if (v) {
        /* one that does not parse is ignored (RFC 9218 4) */
        h2_prio_parse(v, strlen(v), &stream->prio);
    }
    /* a PRIORITY_UPDATE that came first wins over the field (RFC 9218 7);
     * those for lower ids are dropped: such streams can no longer open */
    for (i = 0; i < s->prio_nidle; ) {
        if (s->prio_idle[i].id == stream->id) {
            stream->prio = s->prio_idle[i].prio;
        }
        if (s->prio_idle[i].id <= stream->id) {
            s->prio_idle[i] = s->prio_idle[--s->prio_nidle];
            continue;
        }
        ++i;
    }
    if (stream->prio.urgency != H2_PRIO_URGENCY_DEFAULT || stream->prio.incremental) {
        apply(s, stream);
    }
}

void h2_session_prio_response(h2_session *s, h2_stream *stream,
                              const nghttp2_nv *nv, size_t nvlen)
{
    size_t k;
    for (k = 0; k < nvlen; ++k) {
        if (nv[k].namelen == 8 && !memcmp(nv[k].name, "priority", 8)) {
            /* the handler's word on what it sends (RFC 9218 8): the
             * parameters it names replace the client's */
            if (h2_prio_parse((const char *)nv[k].value, nv[k].valuelen, &stream->prio)) {
                apply(s, stream);
            }
            return;
        }
    }
}

void h2_session_prio_push(h2_session *s, h2_stream *ps, h2_stream *page, h2_push_dep dep)
{
    int u = page->prio.urgency;

    switch (dep) {
    case H2_PUSH_BEFORE:
        /* one level more urgent than the page; a page at 0 moves to 1 */
        if (u == 0) {
            page->prio.urgency = 1;
            apply(s, page);
        }
        ps->prio.urgency = (unsigned char)(u > 0? u - 1 : 0);
        ps->prio.incremental = 0;
        break;
    case H2_PUSH_INTERLEAVED:
        /* the page's level, both shared round-robin (no weights here) */
        if (!page->prio.incremental) {
            page->prio.incremental = 1;
            apply(s, page);
        }
        ps->prio.urgency = (unsigned char)u;
        ps->prio.incremental = 1;
        break;
    default:
        ps->prio.urgency = (unsigned char)(u < 7? u + 1 : 7);
        ps->prio.incremental = 0;
        break;
    }
    apply(s, ps);
}

/* A stream got a new priority from the client: output order, worker
 * order. */
static void update_stream(h2_session *s, h2_stream *stream, const h2_prio *p)
{
    int moved = (stream->prio.urgency != p->urgency);

    stream->prio = *p;
    apply(s, stream);
    if (moved) {
        h2_x_c1_set_urgency(stream->x, p->urgency);
        if (stream->on_new) {
            h2_session_requeue(s, stream);
        }
    }
}

/* Remember p for stream id, which the client has not opened yet: 1 when
 * it is kept, 0 when as many are kept as it may open streams. */
static int kept_for_idle(h2_session *s, int32_t id, const h2_prio *p)
{
    int i;

    for (i = 0; i < s->prio_nidle; ++i) {
        if (s->prio_idle[i].id == id) {
            s->prio_idle[i].prio = *p;
            return 1;
        }
    }
    /* no more than the streams it may open (RFC 9218 7.1) */
    if (s->prio_nidle >= s->max_streams) {
        return 0;
    }
    if (!s->prio_idle) {
        s->prio_idle = apr_palloc(s->pool, (apr_size_t)s->max_streams * sizeof(h2_prio_idle));
    }
    s->prio_idle[s->prio_nidle].id = id;
    s->prio_idle[s->prio_nidle++].prio = *p;
    return 1;
}

/* GOAWAY with code and why; -1 for the caller to stop reading. */
static int conn_error(h2_session *s, uint32_t code, const char *why)
{
    h2_session_fail(s, 0, code, why);
    return -1;
}

/* A whole PRIORITY_UPDATE: payload is its first bytes (all of them up to
 * H2_PRIO_UPDATE_MAX), len its length. 0, or a connection error. */
static int on_update(h2_session *s, const uint8_t *payload, size_t len)
{
    int32_t id = (int32_t)(((uint32_t)payload[0] << 24 | (uint32_t)payload[1] << 16
                            | (uint32_t)payload[2] << 8 | payload[3]) & 0x7fffffff);
    h2_prio p;
    h2_stream *stream;

    if (id == 0) {
        return conn_error(s, H2_ERR_PROTOCOL_ERROR, "PRIORITY_UPDATE for stream 0");
    }
    if (!(id & 1) && (uint32_t)id >= nghttp2_session_get_next_stream_id(s->ngh)) {
        return conn_error(s, H2_ERR_PROTOCOL_ERROR,
                          "PRIORITY_UPDATE for a push stream not promised");
    }
    h2_prio_default(&p);
    if (len - 4 > H2_PRIO_UPDATE_MAX
        || !h2_prio_parse((const char *)payload + 4, len - 4, &p)) {
        return 0;       /* a value we do not read is ignored (RFC 9218 7) */
    }
    if ((stream = h2_session_stream(s, id)) != NULL) {
        if (stream->state < H2_SS_CLOSED) {
            update_stream(s, stream, &p);
        }
        return 0;
    }
    if ((id & 1) && id > s->max_client_stream
        && !kept_for_idle(s, id, &p)) {
        return conn_error(s, H2_ERR_PROTOCOL_ERROR, "PRIORITY_UPDATE for more "
                          "idle streams than H2MaxSessionStreams");
    }
    return 0;   /* a closed stream: nothing to do */
}

int h2_session_prio_frame_begins(h2_session *s, const nghttp2_frame_hd *hd)
{
    if (!h2_session_flood_ok(s, H2_FLOOD_PRIORITY)) {
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    if (hd->stream_id != 0) {
        h2_session_fail(s, 0, H2_ERR_PROTOCOL_ERROR, "PRIORITY_UPDATE on a stream");
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    if (hd->length < 4) {
        h2_session_fail(s, 0, H2_ERR_FRAME_SIZE_ERROR, "PRIORITY_UPDATE shorter than 4 bytes");
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    if (!s->prio_buf) {
        s->prio_buf = apr_palloc(s->pool, H2_PRIO_BUF_SIZE);
    }
    s->prio_len = 0;
    return 0;
}

static int on_update_chunk(nghttp2_session *ngh, const nghttp2_frame_hd *hd,
                           const uint8_t *data, size_t len, void *ud)
{
    h2_session *s = ud;
    /* what we read of it fits in prio_buf; the rest is only counted */
    if (s->prio_len < H2_PRIO_BUF_SIZE) {
        size_t n = H2_PRIO_BUF_SIZE - s->prio_len;
        memcpy(s->prio_buf + s->prio_len, data, len < n? len : n);
    }
    s->prio_len += len;
    return 0;
}

static int unpack_update(nghttp2_session *ngh, void **payload,
                         const nghttp2_frame_hd *hd, void *ud)
{
    h2_session *s = ud;
    if (on_update(s, s->prio_buf, s->prio_len) != 0) {
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    /* handled: nghttp2 need not pass it on */
    return NGHTTP2_ERR_CANCEL;
}

void h2_session_prio_callbacks(nghttp2_session_callbacks *cbs)
{
    nghttp2_session_callbacks_set_on_extension_chunk_recv_callback(cbs, on_update_chunk);
    nghttp2_session_callbacks_set_unpack_extension_callback(cbs, unpack_update);
}
