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
/* A secondary connection's output (workers): httpd's buckets made the
 * items that cross to the connection thread, the response head, interim
 * responses, tunnels, and the request's end parked until its response is
 * out. */

#include <unistd.h>
#include <errno.h>
#include <apr_strings.h>
#include <httpd.h>
#include <http_core.h>
#include <http_log.h>
#include <http_protocol.h>
#include <http_request.h>
#include <util_filter.h>

#include "h2.h"
#include "h2_config.h"
#include "h2_c2_int.h"
#include "h2_handoff.h"
#include "h2_response.h"
#include "h2_util.h"

APLOG_USE_MODULE(http2);

APR_OPTIONAL_FN_TYPE(ap_logio_add_bytes_out) *h2_c2_logio_out;

void h2_c2_item_init(h2_c2_item *it, h2_hchunk_type type, int status)
{
    memset(it, 0, sizeof(*it));
    it->type = type;
    it->status = status;
}

/* Hand n items over to the connection. Every response byte of a stream
 * goes this way; mod_logio counts them as frames once they are written
 * (settle()). */
apr_status_t h2_c2_deliver(h2_c2_ctx *ctx, const h2_c2_item *items, int n, int flush)
{
    return h2_x_worker_out(ctx->x, items, n, flush);
}

/* Whether the EOR may go, and with it the request into the access log:
 * only once the response is out, so that %O is what was written for it
 * (its frames, heads as HPACK made them), %D/%T how long that took, and
 * %X says X for a stream that was reset or lost its connection before
 * the end. If so, what went out is counted for mod_logio. */
int h2_c2_log_ready(h2_c2_ctx *ctx, conn_rec *c2)
{
    apr_off_t wire = 0;
    int complete;

    if (!h2_x_worker_settled(ctx->x, &wire, &complete)) {
        return 0;
    }
    if (!complete) {
        c2->aborted = 1;
    }
    if (h2_c2_logio_out && wire > 0) {
        h2_c2_logio_out(c2, wire);
    }
    return 1;
}

/* The EOR b of a response handed over whole: 1 when it is kept (parked)
 * until the response is out, 0 when it may go now. */
static int park_eor(h2_c2_ctx *ctx, conn_rec *c2, apr_bucket *b)
{
    if (!ctx->seen_eos || h2_c2_log_ready(ctx, c2)) {
        return 0;
    }
    APR_BUCKET_REMOVE(b);
    ctx->parked_eor = b;
    return 1;
}

/* A small file is cheaper to read than to hand over: make it a heap bucket
 * with one pread, without the mmap/munmap a plain bucket read would do. */
static apr_status_t file_to_heap(apr_bucket *b)
{
    apr_bucket_file *fb = b->data;
    apr_os_file_t fd;
    char *buf;
    apr_size_t len = b->length, got = 0;

    apr_os_file_get(&fd, fb->fd);
    buf = apr_bucket_alloc(len? len : 1, b->list);
    while (got < len) {
        ssize_t n = pread(fd, buf + got, len - got, b->start + (apr_off_t)got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            apr_bucket_free(buf);
            return n < 0? APR_FROM_OS_ERROR(errno) : APR_EOF;
        }
        got += (apr_size_t)n;
    }
    apr_bucket_file_make(b, NULL, 0, 0, NULL);  /* drop the file reference */
    apr_bucket_heap_make(b, buf, len, apr_bucket_free);
    return APR_SUCCESS;
}

/* Hand the file range of bucket b over as a descriptor of its own (the
 * bucket's goes with the request). 0 when no descriptor is left: then the
 * data is read and copied instead, for the rest of the request, which
 * answers it as HTTP/1.1 would, only at the cost of a copy. */
static int file_item(h2_c2_ctx *ctx, apr_bucket *b, h2_c2_item *it)
{
    apr_bucket_file *fb = b->data;
    apr_os_file_t fd;
    int nfd;

    apr_os_file_get(&fd, fb->fd);
    nfd = dup(fd);
    if (nfd < 0) {
        ap_log_cerror(APLOG_MARK, APLOG_WARNING, APR_FROM_OS_ERROR(errno),
                      ctx->req->set->c1, APLOGNO(21085)
                      "h2_c2(%ld-%d): cannot hand the response's file over "
                      "as a descriptor, copying it instead",
                      ctx->req->set->conn_id, ctx->req->id);
        ctx->no_dup = 1;
        return 0;
    }
    h2_c2_item_init(it, H2_HC_FILE, 0);
    it->fd = nfd;
    it->off = b->start;
    it->len = b->length;
    it->sendfile = (apr_file_flags_get(fb->fd) & APR_SENDFILE_ENABLED) != 0;
    it->mmap = fb->can_mmap;
    return 1;
}

/* End the stream with RST_STREAM code: its response broke or never came. */
void h2_c2_deliver_reset(h2_c2_ctx *ctx, int code)
{
    h2_c2_item it;
    h2_c2_item_init(&it, H2_HC_RESET, code);
    ctx->seen_head = ctx->seen_eos = 1;
    h2_c2_deliver(ctx, &it, 1, 1);
}

/* Where the head in text[0..len) ends (after its blank line), or 0. */
static apr_size_t head_end(const char *text, apr_size_t len)
{
    apr_size_t i;
    for (i = 1; i < len; ++i) {
        if (text[i] == '\n' && (text[i - 1] == '\n'
                                || (i >= 2 && text[i - 1] == '\r' && text[i - 2] == '\n'))) {
            return i + 1;
        }
    }
    return 0;
}

/* A plain CONNECT (RFC 9113 8.5), not an extended one. */
static int is_connect(const h2_c2_ctx *ctx)
{
    return ctx->req->head->method && !strcmp(ctx->req->head->method, "CONNECT");
}

/* The stream is a tunnel's (a WebSocket, a CONNECT), once its handler
 * opens one: both directions go on apart. */
int h2_c2_is_tunnel(const h2_c2_ctx *ctx)
{
    return ctx->req->head->websocket || is_connect(ctx);
}

/* Raw response text before the final head: an interim response as
 * ap_send_interim_response() writes it, or the 101 with which a handler
 * (mod_proxy_wstunnel, mod_proxy_http) accepts a WebSocket, or the 2xx
 * with which mod_proxy_connect opens a CONNECT tunnel; those become the
 * stream's head. Returns how many bytes of data belong to the text; the
 * rest, following that head, is the tunnel's. */
static apr_size_t interim_text(h2_c2_ctx *ctx, conn_rec *c2, const char *data,
                               apr_size_t len, h2_c2_item *it, int *n)
{
    char *nbuf;
    int status;
    apr_table_t *fields;
    apr_size_t end, used;

    nbuf = apr_palloc(c2->pool, ctx->interim_len + len + 1);
    if (ctx->interim_len) memcpy(nbuf, ctx->interim, ctx->interim_len);
    memcpy(nbuf + ctx->interim_len, data, len);
    nbuf[ctx->interim_len + len] = 0;
    end = head_end(nbuf, ctx->interim_len + len);
    if (!end) {
        ctx->interim = nbuf;
        ctx->interim_len += len;
        return len;
    }
    used = end - ctx->interim_len;
    if (ctx->r && h2_response_parse_interim(ctx->r->pool, nbuf, end, &status, &fields)) {
        if ((status == HTTP_SWITCHING_PROTOCOLS && ctx->req->head->websocket)
            || (status >= 200 && status < 300 && is_connect(ctx))) {
            /* the tunnel is open; a CONNECT's (mod_proxy_connect's "200
             * Connection Established") is its final head (RFC 9113 8.5) */
            h2_response_ws_accepted(fields);
            h2_c2_item_init(it, H2_HC_HEADERS, ctx->req->head->websocket? HTTP_OK : status);
            it->fields = fields;
            ctx->seen_head = 1;
            ++*n;
        }
        else if (status < 200 && (status != HTTP_EARLY_HINTS
                                  || h2_config_rget(ctx->r, H2_CONF_EARLY_HINTS) == 1)) {
            h2_c2_item_init(it, H2_HC_INTERIM, status);
            it->fields = fields;
            ++*n;
        }
    }
    ctx->interim = NULL;
    ctx->interim_len = 0;
    return used;
}

/* A metadata bucket b: 1 when it adds item it to the batch; sets *flush
 * or *eor for those buckets. aborted: c2 was marked aborted. */
static int meta_item(h2_c2_ctx *ctx, apr_bucket *b, int aborted, h2_c2_item *it,
                     int *flush, int *eor)
{
    if (H2_BUCKET_IS_RESP(b)) {
        h2_resp_meta *m = b->data;
        h2_c2_item_init(it, m->type, m->status);
        it->fields = m->fields;
        it->hf = m->hf;
        if (m->type == H2_HC_HEADERS) ctx->seen_head = 1;
        if (m->type == H2_HC_RESET) ctx->seen_head = ctx->seen_eos = 1;
        return 1;
    }
    if (APR_BUCKET_IS_EOS(b)) {
        if (!ctx->seen_eos && ctx->seen_head) {
            /* a handler that marked its connection aborted ended the
             * response short: HTTP/1.1 closes without the last chunk,
             * a stream must not end as if complete */
            h2_c2_item_init(it, aborted? H2_HC_RESET : H2_HC_EOS, aborted? H2_ERR_CANCEL : 0);
            ctx->seen_eos = 1;
            return 1;
        }
    }
    else if (APR_BUCKET_IS_FLUSH(b)) {
        *flush = 1;
    }
    else if (AP_BUCKET_IS_ERROR(b)) {
        if (ctx->seen_head && !ctx->seen_eos) {
            /* the response broke after its head went out */
            h2_c2_item_init(it, H2_HC_RESET, H2_ERR_INTERNAL_ERROR);
            ctx->seen_eos = 1;
            return 1;
        }
    }
    else if (AP_BUCKET_IS_EOR(b)) {
        /* deleting it ends the request: deliver everything first */
        *eor = 1;
    }
    return 0;
}

/* A data bucket b: add what it holds to items[*n] (a file range handed
 * over, or bytes); a bucket that must be waited for (CGI, proxy) delivers
 * the batch gathered so far first. */
static apr_status_t data_item(h2_c2_ctx *ctx, conn_rec *c2, apr_bucket *b,
                              h2_c2_item *items, int *n)
{
    const char *data;
    apr_size_t len;
    apr_status_t rv;

    if (APR_BUCKET_IS_FILE(b) && ctx->seen_head
        && b->length >= H2_FILE_DUP_MIN && !ctx->copy_files
        && !ctx->no_dup && file_item(ctx, b, &items[*n])) {
        ++*n;
        return APR_SUCCESS;
    }
    if (APR_BUCKET_IS_FILE(b) && b->length <= H2_FILE_DUP_MIN * 4
        && (rv = file_to_heap(b)) != APR_SUCCESS) {
        return rv;
    }
    rv = apr_bucket_read(b, &data, &len, APR_NONBLOCK_READ);
    if (APR_STATUS_IS_EAGAIN(rv)) {
        /* a slow producer: pass on what we have, then wait for it */
        rv = h2_c2_deliver(ctx, items, *n, 1);
        *n = 0;
        if (rv == APR_SUCCESS) {
            rv = apr_bucket_read(b, &data, &len, APR_BLOCK_READ);
        }
    }
    if (rv != APR_SUCCESS) {
        return rv;
    }
    if (!ctx->seen_head) {
        apr_size_t used = interim_text(ctx, c2, data, len, &items[*n], n);
        data += used;
        len -= used;
    }
    if (ctx->seen_head && len > 0) {
        if (*n == H2_OUT_BATCH) {
            /* the head took the last slot: it goes first */
            if ((rv = h2_c2_deliver(ctx, items, *n, 0)) != APR_SUCCESS) {
                return rv;
            }
            *n = 0;
        }
        h2_c2_item_init(&items[*n], H2_HC_DATA, 0);
        items[*n].data = data;
        items[*n].len = len;
        ++*n;
    }
    return APR_SUCCESS;
}

/* A tunnel (a WebSocket, a CONNECT) is open: its head went out. Each of
 * its writes is a message that waits for its answer: mod_proxy's tunnel
 * passes what it read from the backend without a flush, as the socket of
 * an HTTP/1.1 connection writes it at once, so a PONG or a short message
 * held back for more (up to a chunk) would wait for the connection's next
 * wakeup, which on worker and prefork may not come before the client's
 * next frame. */
static int tunnel_open(const h2_c2_ctx *ctx)
{
    return ctx->seen_head && !ctx->seen_eos && h2_c2_is_tunnel(ctx);
}

/* Hand one batch of bb's buckets over (up to H2_OUT_BATCH items, or to an
 * EOR), gathered without the lock: bucket memory stays valid until the
 * buckets are deleted after delivery. */
static apr_status_t out_batch(h2_c2_ctx *ctx, conn_rec *c2, apr_bucket_brigade *bb)
{
    h2_c2_item items[H2_OUT_BATCH];
    apr_bucket *b, *last = NULL;
    int i, n = 0, flush = 0, eor = 0;
    apr_status_t rv = APR_SUCCESS;

    for (b = APR_BRIGADE_FIRST(bb);
         b != APR_BRIGADE_SENTINEL(bb) && n < H2_OUT_BATCH && !eor && rv == APR_SUCCESS;
         b = APR_BUCKET_NEXT(b)) {
        last = b;
        if (APR_BUCKET_IS_METADATA(b)) {
            n += meta_item(ctx, b, c2->aborted, &items[n], &flush, &eor);
        }
        else if (!ctx->seen_eos && b->length > 0) {
            rv = data_item(ctx, c2, b, items, &n);
        }
    }
    if (rv != APR_SUCCESS) {
        for (i = 0; i < n; ++i) {
            if (items[i].type == H2_HC_FILE) close(items[i].fd);
        }
        return rv;
    }
    if (n > 0 || !ctx->seen_eos) {
        rv = h2_c2_deliver(ctx, items, n, flush || eor || tunnel_open(ctx));
    }
    /* else: the response is complete and handed over; the flush and EOR
     * httpd sends after it have nothing to push, and a wakeup of the
     * connection for them would cost a context switch per request */
    if (rv == APR_SUCCESS) {
        /* delete what was delivered, the EOR (and with it the request) last */
        while (!APR_BRIGADE_EMPTY(bb)) {
            b = APR_BRIGADE_FIRST(bb);
            if (AP_BUCKET_IS_EOR(b)) {
                ctx->r = NULL;
                if (park_eor(ctx, c2, b)) {
                    if (b == last) break;
                    continue;
                }
            }
            apr_bucket_delete(b);
            if (b == last) break;
        }
    }
    return rv;
}

/* The EOR in bb, if any. */
static apr_bucket *eor_of(apr_bucket_brigade *bb)
{
    apr_bucket *b;
    for (b = APR_BRIGADE_FIRST(bb); b != APR_BRIGADE_SENTINEL(bb); b = APR_BUCKET_NEXT(b)) {
        if (AP_BUCKET_IS_EOR(b)) return b;
    }
    return NULL;
}

apr_status_t h2_c2_out_filter(ap_filter_t *f, apr_bucket_brigade *bb)
{
    conn_rec *c2 = f->c;
    h2_c2_ctx *ctx = h2_c2_ctx_get(c2);
    apr_status_t rv = APR_SUCCESS;
    apr_bucket *b;

    if (!ctx->x) {
        apr_brigade_cleanup(bb);
        return APR_SUCCESS;
    }
    while (!APR_BRIGADE_EMPTY(bb)) {
        if ((rv = out_batch(ctx, c2, bb)) != APR_SUCCESS) {
            c2->aborted = 1;
            if (ctx->seen_head && !ctx->seen_eos) {
                /* The response broke (e.g. a CGI timed out). Whatever ends
                 * the request later must not look like a complete
                 * response: reset the stream now. */
                h2_c2_deliver_reset(ctx, H2_ERR_INTERNAL_ERROR);
            }
            if ((b = eor_of(bb)) != NULL) {
                ctx->r = NULL;
                park_eor(ctx, c2, b);   /* the log still tells what went out */
            }
            apr_brigade_cleanup(bb);
            return rv;
        }
    }
    return rv;
}

