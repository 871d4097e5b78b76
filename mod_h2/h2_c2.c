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
/* Secondary connections (workers): a stream as an httpd connection, its
 * filters and its run. */

#include <unistd.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <apr_strings.h>
#include <apr_portable.h>
#include <apr_atomic.h>
#include <httpd.h>
#include <http_core.h>
#include <http_config.h>
#include <http_connection.h>
#include <http_log.h>
#include <http_protocol.h>
#include <http_request.h>
#include <util_filter.h>
#include <ap_mpm.h>
#include <scoreboard.h>
#include <apr_optional.h>
#include <mod_http2.h>

#include "h2.h"
#include "h2_config.h"
#include "h2_c2.h"
#include "h2_handoff.h"
#include "h2_request.h"
#include "h2_response.h"
#include "h2_util.h"
#include "h2_workers.h"
#include "h2_x.h"

APLOG_USE_MODULE(http2);
extern module AP_MODULE_DECLARE_DATA http2_module;

/* File ranges below this are copied; a dup()/close() pair costs more. */
#define H2_FILE_DUP_MIN (16 * 1024)
/* Memory a secondary connection's allocator keeps between requests. */
#define H2_C2_MAX_FREE (64 * 1024)
/* Idle secondary connection shells kept per child, and what one holds at
 * least: its cleared pool keeps its first block. */
#define H2_SHELLS_MAX 128
#define H2_SHELL_SIZE (8 * 1024)
/* Items gathered from a brigade before they go to the stream in one lock. */
#define H2_OUT_BATCH 32

/* A pool with its own allocator, recycled across secondary connections
 * so that setting one up costs no system calls. */
typedef struct c2_shell {
    apr_allocator_t *allocator;
    apr_pool_t *pool;
    struct c2_shell *next;
} c2_shell;

typedef struct h2_c2_ctx {
    conn_rec *c2;
    c2_shell *shell;
    h2_x *x;                    /* the stream served now, NULL between */
    const h2_x_req *req;        /* its request */
    h2_worker *worker;
    request_rec *r;             /* the request while it exists */
    apr_off_t body_read;
    apr_time_t body_start;      /* the handler began reading the body */
    int no_dup;                 /* descriptors ran out: copy file data */
    int copy_files;             /* H2CopyFiles of the request's directory */
    int sent_100;
    int in_eof;                 /* a tunnel's input ended and was read */
    int seen_head;              /* final response head passed */
    int seen_eos;
    apr_bucket *parked_eor;     /* the request's end, kept until its
                                 * response is out (see log_ready()) */
    char *interim;              /* interim response text being gathered */
    apr_size_t interim_len;
} h2_c2_ctx;

static apr_uint32_t c2_ids;
static apr_socket_t *dummy_socket;
static apr_thread_mutex_t *shells_mutex;
static c2_shell *shells;
static int nshells, shells_keep;
static module *mpm_module;
static ap_filter_rec_t *c2_in_handle, *c2_out_handle, *ws_no_body_handle;
/* mod_logio's counters (%I, %O, %S and mod_status's bytes), if it is loaded */
static APR_OPTIONAL_FN_TYPE(ap_logio_add_bytes_out) *logio_add_bytes_out;
static APR_OPTIONAL_FN_TYPE(ap_logio_add_bytes_in) *logio_add_bytes_in;

/* The signal mask of the MPM's connection threads, for the processes our
 * workers start. A worker thread keeps (nearly) all signals blocked: under
 * prefork it was started from child_init, while the MPM had them blocked,
 * and it must not take the child's SIGTERM away from the main thread. A
 * CGI forked from a worker would keep that mask across exec: then the
 * SIGTERM with which a request's cleanup ends its script does nothing, APR
 * waits 3 s before it sends SIGKILL, and a prefork child being stopped
 * waits for that and more (AH00045, AH00046). Over HTTP/1.1 the script
 * gets the connection thread's mask; it gets the same one over HTTP/2. */
static sigset_t conn_sigmask;
static apr_uint32_t conn_sigmask_state;   /* 0 unknown, 1 being set, 2 set */
static __thread int in_worker;

static void c2_after_fork_in_child(void)
{
    /* only async-signal-safe calls here: this runs between fork and exec */
    if (in_worker && conn_sigmask_state == 2) {
        pthread_sigmask(SIG_SETMASK, &conn_sigmask, NULL);
    }
}

void h2_c2_note_conn_thread(void)
{
    if (apr_atomic_read32(&conn_sigmask_state) == 0
        && apr_atomic_cas32(&conn_sigmask_state, 1, 0) == 0) {
        pthread_sigmask(SIG_BLOCK, NULL, &conn_sigmask);
        apr_atomic_set32(&conn_sigmask_state, 2);
    }
}

static h2_c2_ctx *c2_ctx(const conn_rec *c)
{
    return ap_get_module_config(c->conn_config, &http2_module);
}

static c2_shell *shell_get(void)
{
    c2_shell *sh = NULL;

    apr_thread_mutex_lock(shells_mutex);
    if (shells) {
        sh = shells;
        shells = sh->next;
        nshells--;
    }
    apr_thread_mutex_unlock(shells_mutex);
    if (!sh) {
        sh = calloc(1, sizeof(*sh));
        if (!sh) abort();
        apr_allocator_create(&sh->allocator);
        apr_allocator_max_free_set(sh->allocator, h2_util_max_free(H2_C2_MAX_FREE));
        apr_pool_create_unmanaged_ex(&sh->pool, NULL, sh->allocator);
        apr_allocator_owner_set(sh->allocator, sh->pool);
        apr_pool_tag(sh->pool, "h2_c2");
    }
    sh->next = NULL;
    return sh;
}

static void shell_put(c2_shell *sh)
{
    apr_pool_clear(sh->pool);
    apr_thread_mutex_lock(shells_mutex);
    if (nshells < shells_keep) {
        sh->next = shells;
        shells = sh;
        nshells++;
        sh = NULL;
    }
    apr_thread_mutex_unlock(shells_mutex);
    if (sh) {
        apr_pool_destroy(sh->pool);   /* destroys its allocator too */
        free(sh);
    }
}

static conn_rec *c2_create(conn_rec *c1, h2_worker *wk)
{
    c2_shell *sh = shell_get();
    apr_pool_t *p = sh->pool;
    conn_rec *c2;
    h2_c2_ctx *ctx;

    c2 = apr_pcalloc(p, sizeof(*c2));
    c2->pool = p;
    c2->base_server = c1->base_server;
    c2->vhost_lookup_data = c1->vhost_lookup_data;
    c2->local_addr = c1->local_addr;
    c2->client_addr = c1->client_addr;
    c2->client_ip = c1->client_ip;
    c2->remote_host = c1->remote_host;
    c2->remote_logname = c1->remote_logname;
    c2->local_ip = c1->local_ip;
    c2->local_host = c1->local_host;
    /* Modules key per-connection state by id: mod_cgid's daemon finds a
     * request's script by it, and kills it on cleanup. Concurrent streams
     * must not share one, so each secondary gets an id of its own. */
    c2->id = (long)(((unsigned long)apr_atomic_inc32(&c2_ids) + 1) << 24)
             ^ c1->id;
    c2->conn_config = ap_create_conn_config(p);
    c2->notes = apr_table_make(p, 5);
    c2->bucket_alloc = apr_bucket_alloc_create(p);
    /* the connection's life is HTTP/2's business: httpd must neither
     * keep it alive nor read leftover request bodies to do so */
    c2->keepalive = AP_CONN_CLOSE;
    c2->clogging_input_filters = 1;
    c2->double_reverse = c1->double_reverse;
    c2->log = c1->log;
    c2->master = c1;
    c2->current_thread = wk->thread;

    ctx = apr_pcalloc(p, sizeof(*ctx));
    ctx->c2 = c2;
    ctx->shell = sh;
    ap_set_module_config(c2->conn_config, &http2_module, ctx);
    /* modules that look at the socket get a harmless one of their own */
    ap_set_core_module_config(c2->conn_config, dummy_socket);
    if (mpm_module) {
        ap_set_module_config(c2->conn_config, mpm_module,
                             ap_get_module_config(c1->conn_config, mpm_module));
    }
    ap_run_pre_connection(c2, dummy_socket);
    /* whatever else pre_connection set up, I/O is ours */
    ap_remove_input_filter_byhandle(c2->input_filters, "CORE_IN");
    ap_remove_output_filter_byhandle(c2->output_filters, "CORE");
    ap_add_input_filter_handle(c2_in_handle, NULL, NULL, c2);
    ap_add_output_filter_handle(c2_out_handle, NULL, NULL, c2);
    ap_log_cerror(APLOG_MARK, APLOG_TRACE2, 0, c1,
                  "h2_c2(%ld): secondary connection created", c1->id);
    return c2;
}

/* Runs when the request's pool goes, after the access log was written
 * (and mod_logio has the request's bytes). */
static apr_status_t count_request(void *data)
{
    request_rec *r = data;
    h2_c2_ctx *ctx = c2_ctx(r->connection);

    /* as httpd counts an HTTP/1.1 request: with ExtendedStatus */
    if (ap_extended_status && ctx && ctx->x) {
        h2_x_worker_count(ctx->x, r);
    }
    return APR_SUCCESS;
}

void h2_c2_request_begins(request_rec *r)
{
    /* Not by giving the secondary connection the client connection's
     * scoreboard handle: httpd would then also set that slot's status
     * from this worker, and the slot may belong to another MPM thread by
     * now (the connection yields its thread while its streams run), which
     * the MPM would count as busy. */
    /* a plain cleanup registered now runs after the one of the request's
     * EOR bucket (cleanups run last in, first out), which logs it */
    apr_pool_cleanup_register(r->pool, r, count_request, apr_pool_cleanup_null);
    if (logio_add_bytes_in && c2_ctx(r->connection)->req) {
        /* %I: the head as it came, its frames (the body passes mod_logio's
         * input filter) */
        logio_add_bytes_in(r->connection, c2_ctx(r->connection)->req->head_in);
    }
}

int h2_c2_is_websocket(conn_rec *c2)
{
    h2_c2_ctx *ctx = c2->master? c2_ctx(c2) : NULL;
    return ctx && ctx->req && ctx->req->head->websocket;
}

int h2_c2_may_push(conn_rec *c2, const char **scheme, const char **authority)
{
    h2_c2_ctx *ctx = c2->master? c2_ctx(c2) : NULL;
    const char *m;

    /* only a GET without a body loads a page whose resources its client
     * asks for next (a POST to the same page, a HEAD of it: none), as
     * with stock */
    if (!ctx || !ctx->req || !ctx->req->push_enabled || ctx->req->pushed_on
        || !ctx->req->head->scheme || !ctx->req->head->authority
        || ctx->req->has_body || !(m = ctx->req->head->method) || strcmp(m, "GET")) {
        return 0;
    }
    *scheme = ctx->req->head->scheme;
    *authority = ctx->req->head->authority;
    return 1;
}

void h2_c2_discard(conn_rec *c2)
{
    shell_put(c2_ctx(c2)->shell);
}

/* --- output: buckets to handoff chunks --- */

typedef h2_x_item out_item;

static void item_init(out_item *it, h2_hchunk_type type, int status)
{
    memset(it, 0, sizeof(*it));
    it->type = type;
    it->status = status;
}

/* Hand n items over to the connection. Every response byte of a stream
 * goes this way; mod_logio counts them as frames once they are written
 * (settle()). */
static apr_status_t deliver(h2_c2_ctx *ctx, const out_item *items, int n, int flush)
{
    return h2_x_worker_out(ctx->x, items, n, flush);
}

/* Whether the EOR may go, and with it the request into the access log:
 * only once the response is out, so that %O is what was written for it
 * (its frames, heads as HPACK made them), %D/%T how long that took, and
 * %X says X for a stream that was reset or lost its connection before
 * the end. If so, what went out is counted for mod_logio. */
static int log_ready(h2_c2_ctx *ctx, conn_rec *c2)
{
    apr_off_t wire = 0;
    int complete;

    if (!h2_x_worker_settled(ctx->x, &wire, &complete)) {
        return 0;
    }
    if (!complete) {
        c2->aborted = 1;
    }
    if (logio_add_bytes_out && wire > 0) {
        logio_add_bytes_out(c2, wire);
    }
    return 1;
}

/* The EOR b of a response handed over whole: 1 when it is kept (parked)
 * until the response is out, 0 when it may go now. */
static int park_eor(h2_c2_ctx *ctx, conn_rec *c2, apr_bucket *b)
{
    if (!ctx->seen_eos || log_ready(ctx, c2)) {
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
static int file_item(h2_c2_ctx *ctx, apr_bucket *b, out_item *it)
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
    item_init(it, H2_HC_FILE, 0);
    it->fd = nfd;
    it->off = b->start;
    it->len = b->length;
    it->sendfile = (apr_file_flags_get(fb->fd) & APR_SENDFILE_ENABLED) != 0;
    it->mmap = fb->can_mmap;
    return 1;
}

/* End the stream with RST_STREAM code: its response broke or never came. */
static void deliver_reset(h2_c2_ctx *ctx, int code)
{
    out_item it;
    item_init(&it, H2_HC_RESET, code);
    ctx->seen_head = ctx->seen_eos = 1;
    deliver(ctx, &it, 1, 1);
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
static int is_tunnel(const h2_c2_ctx *ctx)
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
                               apr_size_t len, out_item *it, int *n)
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
            item_init(it, H2_HC_HEADERS, ctx->req->head->websocket? HTTP_OK : status);
            it->fields = fields;
            ctx->seen_head = 1;
            ++*n;
        }
        else if (status < 200 && (status != HTTP_EARLY_HINTS
                                  || h2_config_rget(ctx->r, H2_CONF_EARLY_HINTS) == 1)) {
            item_init(it, H2_HC_INTERIM, status);
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
static int meta_item(h2_c2_ctx *ctx, apr_bucket *b, int aborted, out_item *it,
                     int *flush, int *eor)
{
    if (H2_BUCKET_IS_RESP(b)) {
        h2_resp_meta *m = b->data;
        item_init(it, m->type, m->status);
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
            item_init(it, aborted? H2_HC_RESET : H2_HC_EOS, aborted? H2_ERR_CANCEL : 0);
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
            item_init(it, H2_HC_RESET, H2_ERR_INTERNAL_ERROR);
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
                              out_item *items, int *n)
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
        rv = deliver(ctx, items, *n, 1);
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
            if ((rv = deliver(ctx, items, *n, 0)) != APR_SUCCESS) {
                return rv;
            }
            *n = 0;
        }
        item_init(&items[*n], H2_HC_DATA, 0);
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
    return ctx->seen_head && !ctx->seen_eos && is_tunnel(ctx);
}

/* Hand one batch of bb's buckets over (up to H2_OUT_BATCH items, or to an
 * EOR), gathered without the lock: bucket memory stays valid until the
 * buckets are deleted after delivery. */
static apr_status_t out_batch(h2_c2_ctx *ctx, conn_rec *c2, apr_bucket_brigade *bb)
{
    out_item items[H2_OUT_BATCH];
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
        rv = deliver(ctx, items, n, flush || eor || tunnel_open(ctx));
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

static apr_status_t c2_out_filter(ap_filter_t *f, apr_bucket_brigade *bb)
{
    conn_rec *c2 = f->c;
    h2_c2_ctx *ctx = c2_ctx(c2);
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
                deliver_reset(ctx, H2_ERR_INTERNAL_ERROR);
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

/* --- input: the request body --- */

static apr_status_t send_100_continue(h2_c2_ctx *ctx)
{
    out_item it;
    item_init(&it, H2_HC_INTERIM, 100);
    ctx->sent_100 = 1;
    return deliver(ctx, &it, 1, 1);
}

/* When the handler's wait for more body ends (RequestReadTimeout's body
 * stage, its MinRate extending it as the body comes), or 0: no limit.
 * Only a handler waiting for the body asks: the client is then the one
 * late, not our window. */
static apr_time_t body_deadline(h2_c2_ctx *ctx)
{
    const h2_read_timeouts *rt = ctx->r? h2_config_read_timeouts(ctx->r->server)
                                      : ctx->req->set->read_timeouts;
    return h2_read_deadline(&rt->body, ctx->body_start, ctx->body_read);
}

static apr_status_t c2_in_filter(ap_filter_t *f, apr_bucket_brigade *bb,
                                 ap_input_mode_t mode, apr_read_type_e block,
                                 apr_off_t readbytes)
{
    conn_rec *c2 = f->c;
    h2_c2_ctx *ctx = c2_ctx(c2);
    apr_status_t rv = APR_SUCCESS;
    apr_off_t n = 0, limit;
    apr_time_t deadline;
    int spec = (mode == AP_MODE_SPECULATIVE);

    if (!ctx->x) {
        return APR_EOF;
    }
    if (mode == AP_MODE_INIT) {
        return APR_SUCCESS;
    }
    if (mode != AP_MODE_READBYTES && mode != AP_MODE_SPECULATIVE
        && mode != AP_MODE_GETLINE && mode != AP_MODE_EXHAUSTIVE) {
        return APR_ENOTIMPL;
    }
    if (ctx->r && ctx->r->expecting_100 && !ctx->sent_100) {
        /* the client waits for our go before it sends the body */
        request_rec *rr;
        for (rr = ctx->r; rr; rr = rr->main) rr->expecting_100 = 0;
        if ((rv = send_100_continue(ctx)) != APR_SUCCESS) {
            return rv;
        }
    }
    if (mode == AP_MODE_EXHAUSTIVE || readbytes <= 0) {
        readbytes = APR_INT32_MAX;
    }

    if (ctx->in_eof) {
        /* a tunnel (WebSocket, CONNECT) reads on after the end: as a closed
         * socket answers HTTP/1.1's, so that it stops */
        return APR_EOF;
    }
    if (!ctx->body_start) {
        ctx->body_start = apr_time_now();
    }
    /* a WebSocket is quiet as long as its parties like */
    deadline = ctx->req->head->websocket? 0 : body_deadline(ctx);
    rv = h2_x_worker_body(ctx->x, bb, mode == AP_MODE_GETLINE, spec, block,
                          readbytes, deadline,
                          ctx->r? ctx->r->trailers_in : NULL, &n);
    if (APR_STATUS_IS_TIMEUP(rv)) {
        ap_log_cerror(APLOG_MARK, APLOG_INFO, rv, c2, APLOGNO(21032)
                      "h2_c2(%ld-%d): request body timed out after %"
                      APR_OFF_T_FMT " bytes (%s)", c2->master->id, ctx->req->id,
                      ctx->body_read, (deadline && apr_time_now() >= deadline)?
                      "RequestReadTimeout body" : "H2StreamTimeout");
        return rv;
    }
    if (APR_STATUS_IS_ECONNABORTED(rv)) {
        c2->aborted = 1;
        return rv;
    }
    if (rv != APR_SUCCESS) {
        return rv;
    }
    if (!spec) {
        ctx->in_eof = is_tunnel(ctx) && !APR_BRIGADE_EMPTY(bb)
                      && APR_BUCKET_IS_EOS(APR_BRIGADE_LAST(bb));
        ctx->body_read += n;   /* mod_logio's input filter counts it */
        limit = ctx->r? (apr_off_t)ap_get_limit_req_body(ctx->r) : 0;
        if (limit > 0 && ctx->body_read > limit) {
            ap_log_cerror(APLOG_MARK, APLOG_INFO, 0, c2, APLOGNO(21033)
                          "h2_c2(%ld-%d): request body over LimitRequestBody %"
                          APR_OFF_T_FMT, c2->master->id, ctx->req->id, limit);
            apr_brigade_cleanup(bb);
            return APR_ENOSPC;
        }
    }
    return APR_SUCCESS;
}

/* --- running streams --- */

/* The parked EOR goes now that the response is out: the request is logged
 * (and counted). */
static void log_parked(h2_c2_ctx *ctx, conn_rec *c2)
{
    apr_bucket *eor = ctx->parked_eor;

    ctx->parked_eor = NULL;
    log_ready(ctx, c2);
    apr_bucket_destroy(eor);
}

/* The secondary connection is done with its stream. */
static void c2_unbind(h2_c2_ctx *ctx, conn_rec *c2)
{
    ctx->x = NULL;
    ctx->req = NULL;
    ctx->worker = NULL;
    apr_table_clear(c2->notes);
}

/* Run req on c2 (set up for it). Returns 1 when its log was parked: c2
 * then stays with the stream and the worker is free. */
static int c2_run(h2_c2_ctx *ctx, conn_rec *c2, h2_x *x, const h2_x_req *req,
                  h2_worker *wk)
{
    ctx->x = x;
    ctx->req = req;
    ctx->worker = wk;
    ctx->r = NULL;
    ctx->body_read = 0;
    ctx->body_start = 0;
    ctx->no_dup = 0;
    ctx->copy_files = req->set->copy_files;
    ctx->sent_100 = ctx->seen_head = ctx->seen_eos = ctx->in_eof = 0;
    ctx->interim = NULL;
    ctx->interim_len = 0;
    c2->aborted = 0;
    c2->current_thread = wk->thread;

    h2_request_run(c2, req, &ctx->r);

    if (!ctx->seen_eos) {
        /* the request ended without completing its response */
        deliver_reset(ctx, c2->aborted? H2_ERR_CANCEL : H2_ERR_INTERNAL_ERROR);
    }
    if (ctx->parked_eor) {
        ctx->worker = NULL;
        if (h2_x_worker_park(x, c2)) {
            return 1;
        }
        log_parked(ctx, c2);    /* the response went out meanwhile */
    }
    c2_unbind(ctx, c2);
    return 0;
}

static void c2_process(h2_worker *wk, h2_wtask *task)
{
    h2_x *x = h2_x_worker_of(task);
    conn_rec *c2 = NULL;
    const h2_x_req *req;
    h2_c2_ctx *ctx;

    in_worker = 1;
    req = h2_x_worker_take(x, wk, &c2);
    if (req && c2 && c2_ctx(c2)->parked_eor) {
        /* a parked log, handed back once the response went out */
        ctx = c2_ctx(c2);
        ctx->worker = wk;
        c2->current_thread = wk->thread;
        log_parked(ctx, c2);
        c2_unbind(ctx, c2);
    }
    else if (req) {
        if (!c2) {
            c2 = c2_create(req->set->c1, wk);
        }
        if (c2_run(c2_ctx(c2), c2, x, req, wk)) {
            return;
        }
    }
    c2 = h2_x_worker_done(x, c2);
    if (c2) {
        h2_c2_discard(c2);
    }
}

static apr_status_t shells_cleanup(void *data)
{
    c2_shell *sh;
    while ((sh = shells) != NULL) {
        shells = sh->next;
        apr_pool_destroy(sh->pool);
        free(sh);
    }
    nshells = 0;
    return APR_SUCCESS;
}

apr_status_t h2_c2_child_init(apr_pool_t *pchild, server_rec *s)
{
    int minw, maxw, idle;
    apr_status_t rv;

    rv = apr_thread_mutex_create(&shells_mutex, APR_THREAD_MUTEX_DEFAULT, pchild);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    shells_keep = h2_util_cache_max(H2_SHELLS_MAX, H2_SHELL_SIZE);
    rv = apr_socket_create(&dummy_socket, APR_INET, SOCK_STREAM, APR_PROTO_TCP,
                           pchild);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    /* modules ask the MPM about connections; secondaries answer as their
     * primary does */
    mpm_module = ap_find_linked_module(apr_pstrcat(pchild, ap_show_mpm(), ".c", NULL));
    h2_config_workers(s, &minw, &maxw, &idle);
    apr_pool_cleanup_register(pchild, NULL, shells_cleanup, apr_pool_cleanup_null);
    /* a child process never unloads us; glibc drops the handler with the
     * module should it ever be unloaded */
    pthread_atfork(NULL, NULL, c2_after_fork_in_child);
    h2_workers_create(s, pchild, minw, maxw, idle, c2_process);
    logio_add_bytes_out = APR_RETRIEVE_OPTIONAL_FN(ap_logio_add_bytes_out);
    logio_add_bytes_in = APR_RETRIEVE_OPTIONAL_FN(ap_logio_add_bytes_in);
    return APR_SUCCESS;
}

/* The request's directory is known: H2StreamTimeout and H2CopyFiles may
 * be set there (the manual allows both per directory). */
static int c2_directory_settings(request_rec *r)
{
    h2_c2_ctx *ctx;

    if (r->main || !r->connection->master || !(ctx = c2_ctx(r->connection))
        || !ctx->x) {
        return DECLINED;
    }
    h2_x_worker_timeout(ctx->x, h2_config_rget(r, H2_CONF_STREAM_TIMEOUT));
    ctx->copy_files = (int)h2_config_rget(r, H2_CONF_COPY_FILES);
    return DECLINED;
}

/* The promises of r's H2PushResource paths, when it may push, into it;
 * 1 if there are any. They go before the 103 that links to them (RFC
 * 9113 8.4: a client must not ask for them itself first). */
static int early_push(h2_c2_ctx *ctx, request_rec *r, apr_table_t *hint_fields,
                      out_item *it)
{
    const char *scheme, *authority;
    apr_table_t *t;

    if (!h2_c2_may_push(ctx->c2, &scheme, &authority)
        || h2_config_rget(r, H2_CONF_PUSH) != 1
        || !(t = h2_response_push_fields(r, h2_config_push_resources(r), hint_fields))) {
        return 0;
    }
    item_init(it, H2_HC_PUSH, 0);
    it->fields = t;
    apr_table_setn(r->notes, H2_NOTE_PUSHED_EARLY, "1");
    return 1;
}

/* H2EarlyHint fields go out as a 103 before the handler runs, so that a
 * browser can start fetching while the response is being made; the
 * location's H2PushResource paths are promised before it. */
static int c2_early_hints(request_rec *r)
{
    h2_c2_ctx *ctx;
    apr_array_header_t *hints;
    apr_table_t *fields;
    out_item it[2];
    int i, n;

    if (r->main || r->prev || !r->connection->master
        || !(ctx = c2_ctx(r->connection)) || !ctx->x || ctx->seen_head
        || h2_config_rget(r, H2_CONF_EARLY_HINTS) != 1
        || !(hints = h2_config_early_hints(r)) || hints->nelts < 2) {
        return DECLINED;
    }
    fields = apr_table_make(r->pool, hints->nelts / 2);
    for (i = 0; i + 1 < hints->nelts; i += 2) {
        apr_table_add(fields, APR_ARRAY_IDX(hints, i, const char *),
                      APR_ARRAY_IDX(hints, i + 1, const char *));
    }
    n = early_push(ctx, r, fields, &it[0]);
    item_init(&it[n], H2_HC_INTERIM, HTTP_EARLY_HINTS);
    it[n].fields = fields;
    deliver(ctx, it, n + 1, 1);
    return DECLINED;
}

/* Worker: a descriptor for polling the request body of the stream c
 * carries (a secondary connection), for mod_proxy's tunnels and other
 * modules that poll a connection's input: core's get_pollfd_from_conn
 * hook and, under the same signature, stock's optional function. */
static apr_status_t http2_get_pollfd_from_conn(conn_rec *c, apr_pollfd_t *pfd,
                                               apr_interval_time_t *ptimeout)
{
    h2_c2_ctx *ctx = c->master? c2_ctx(c) : NULL;

    if (!ctx || !ctx->x) {
        return APR_ENOTIMPL;
    }
    return h2_x_worker_pollfd(ctx->x, c->pool, pfd, ptimeout);
}

/* A WebSocket's GET has no body for httpd: the stream's DATA belongs to
 * the tunnel, which the handler reads from the connection once it took
 * the upgrade. Without this, a handler that reads the body first
 * (mod_proxy_http prefetches it) would wait for the client's frames. */
static apr_status_t ws_no_body_filter(ap_filter_t *f, apr_bucket_brigade *bb,
                                      ap_input_mode_t mode, apr_read_type_e block,
                                      apr_off_t readbytes)
{
    if (mode != AP_MODE_INIT) {
        APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(bb->bucket_alloc));
    }
    return APR_SUCCESS;
}

void h2_c2_ws_request(request_rec *r)
{
    /* Not "proxy-nohalfclose": each side's end is a half-close, as over
     * HTTP/1.1. The client's END_STREAM (our EOF) shuts the backend's
     * write side down, and what the backend still sends, its answer to
     * the client's CLOSE, reaches the client. The backend's close ends
     * only the tunnel's way to the client (mod_proxy's shutdown of our
     * poll descriptor does nothing): the stream ends when the client
     * ended its side too, or at the tunnel's timeout. An END_STREAM on
     * the DATA frame with the backend's CLOSE, sent before the client
     * answered, made Chromium report the close as unclean (1006). */
    ap_add_input_filter_handle(ws_no_body_handle, NULL, r, r->connection);
}

void h2_c2_register_hooks(void)
{
    ap_hook_get_pollfd_from_conn(http2_get_pollfd_from_conn, NULL, NULL,
                                 APR_HOOK_MIDDLE);
    APR_REGISTER_OPTIONAL_FN(http2_get_pollfd_from_conn);
    ap_hook_fixups(c2_directory_settings, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_fixups(c2_early_hints, NULL, NULL, APR_HOOK_LAST);
    c2_in_handle = ap_register_input_filter("H2_C2_IN", c2_in_filter, NULL,
                                            AP_FTYPE_NETWORK);
    c2_out_handle = ap_register_output_filter("H2_C2_OUT", c2_out_filter, NULL,
                                              AP_FTYPE_NETWORK);
    ws_no_body_handle = ap_register_input_filter("H2_WS_NO_BODY", ws_no_body_filter,
                                                 NULL, AP_FTYPE_PROTOCOL);
    h2_response_filter_handle = ap_register_output_filter(
        "H2_RESPONSE", h2_response_filter, NULL, AP_FTYPE_PROTOCOL);
}
