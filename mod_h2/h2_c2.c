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
#include <mpm_common.h>
#include <scoreboard.h>
#include <apr_optional.h>
#include <mod_http2.h>

#include "h2.h"
#include "h2_config.h"
#include "h2_c2.h"
#include "h2_c2_int.h"
#include "h2_handoff.h"
#include "h2_request.h"
#include "h2_response.h"
#include "h2_util.h"
#include "h2_workers.h"
#include "h2_x_worker.h"

APLOG_USE_MODULE(http2);
extern module AP_MODULE_DECLARE_DATA http2_module;

/* Memory a secondary connection's allocator keeps between requests. */
#define H2_C2_MAX_FREE (64 * 1024)
/* Idle secondary connection shells kept per child, and what one holds at
 * least: its cleared pool keeps its first block. */
#define H2_SHELLS_MAX 128
#define H2_SHELL_SIZE (8 * 1024)

/* A pool with its own allocator, recycled across secondary connections
 * so that setting one up costs no system calls. */
typedef struct c2_shell {
    apr_allocator_t *allocator;
    apr_pool_t *pool;
    struct c2_shell *next;
} c2_shell;

static apr_uint32_t c2_ids;
static apr_socket_t *dummy_socket;
static apr_thread_mutex_t *shells_mutex;
static c2_shell *shells;
static int nshells, shells_keep;
/* The parent of every shell's pool, a child of the process's pool: a
 * request's pools descend from the child's process pool as over HTTP/1.1,
 * so that code walking up to the root (apr-util's driver loader keeps
 * its mutex and table there) finds the same root as httpd's. Shells are
 * created and destroyed rarely (they are recycled), so the lock that
 * linking takes is off the hot path. NULL once it is gone (child exit). */
static apr_pool_t *shells_root;
static module *mpm_module;
static ap_filter_rec_t *c2_in_handle, *c2_out_handle, *ws_no_body_handle;
/* mod_logio's counter of bytes in (%I), if it is loaded; the one of bytes
 * out is the output's (h2_c2_out.c), looked up here too */
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
static __thread h2_c2_ctx *running_ctx;   /* the worker's stream */

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
        if (apr_pool_create_ex(&sh->pool, shells_root, NULL, sh->allocator)
            != APR_SUCCESS) {
            abort();
        }
        apr_allocator_owner_set(sh->allocator, sh->pool);
        apr_pool_tag(sh->pool, "h2_c2");
    }
    sh->next = NULL;
    return sh;
}

static void shell_put(c2_shell *sh)
{
    if (!shells_root) {
        /* the child is exiting and its pools are gone, this one with them */
        return;
    }
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
     * keep it alive nor read leftover request bodies to do so (but see
     * c2_handler_starts()) */
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
    h2_c2_ctx *ctx = h2_c2_ctx_get(r->connection);

    /* as httpd counts an HTTP/1.1 request: with ExtendedStatus */
    if (ap_extended_status && ctx && ctx->x) {
        h2_x_worker_count(ctx->x, r);
    }
    return APR_SUCCESS;
}

/* Worker: request r (its request line and headers set) begins: its head
 * counts for mod_logio (%I), and once it is logged it is counted in
 * mod_status as an access of the client connection with its bytes. */
static void c2_request_begins(request_rec *r)
{
    /* Not by giving the secondary connection the client connection's
     * scoreboard handle: httpd would then also set that slot's status
     * from this worker, and the slot may belong to another MPM thread by
     * now (the connection yields its thread while its streams run), which
     * the MPM would count as busy. */
    /* a plain cleanup registered now runs after the one of the request's
     * EOR bucket (cleanups run last in, first out), which logs it */
    apr_pool_cleanup_register(r->pool, r, count_request, apr_pool_cleanup_null);
    if (logio_add_bytes_in && h2_c2_ctx_get(r->connection)->req) {
        /* %I: the head as it came, its frames (the body passes mod_logio's
         * input filter) */
        logio_add_bytes_in(r->connection, h2_c2_ctx_get(r->connection)->req->head_in);
    }
}

/* 1 when the stream c2 serves may push (H2Push on for its connection,
 * a client that takes pushes, not itself pushed); then *scheme and
 * *authority are its request's. */
static int c2_may_push(conn_rec *c2, const char **scheme, const char **authority)
{
    h2_c2_ctx *ctx = c2->master? h2_c2_ctx_get(c2) : NULL;
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

/* Give a secondary connection back to the process's cache; either thread
 * (the exchange calls it from a connection's), when no stream uses it. */
static void c2_discard(conn_rec *c2)
{
    shell_put(h2_c2_ctx_get(c2)->shell);
}

/* --- input: the request body --- */

static apr_status_t send_100_continue(h2_c2_ctx *ctx)
{
    h2_c2_item it;
    h2_c2_item_init(&it, H2_HC_INTERIM, 100);
    ctx->sent_100 = 1;
    return h2_c2_deliver(ctx, &it, 1, 1);
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
    h2_c2_ctx *ctx = h2_c2_ctx_get(c2);
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
        ctx->in_eof = h2_c2_is_tunnel(ctx) && !APR_BRIGADE_EMPTY(bb)
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
    h2_c2_log_ready(ctx, c2);
    apr_bucket_destroy(eor);
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

/* Set up request r of a WebSocket stream: its GET has no body. */
static void c2_ws_request(request_rec *r)
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

/* What h2_request.c does for the stream ctx serves and tells its response
 * filter (ctx->req set). */
static void c2_request_env(h2_c2_ctx *ctx, h2_request_env *env)
{
    memset(env, 0, sizeof(*env));
    env->resp.websocket = ctx->req->head->websocket;
    c2_may_push(ctx->c2, &env->resp.push_scheme, &env->resp.push_authority);
    env->begins = c2_request_begins;
    env->websocket = c2_ws_request;
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
/* A handler that suspends its request (returns SUSPENDED) asks the MPM
 * to call it back later: mod_dialup paces a file so. The event MPM would
 * run the callback on a thread of its own, for the client connection it
 * knows, long after the worker finished the stream and cleared its pool:
 * the callback met freed memory and the child crashed (stock too). On a
 * worker the callback belongs to the stream: the worker waits for it and
 * runs it (c2_run_timers()), until the request completes. */
static apr_status_t c2_timed_callback(apr_time_t t, ap_mpm_callback_fn_t *cbfn,
                                      void *baton)
{
    h2_c2_ctx *ctx = running_ctx;

    if (!in_worker || !ctx || ctx->timer_cb) {
        return APR_ENOTIMPL;
    }
    ctx->timer_at = apr_time_now() + t;
    ctx->timer_cb = cbfn;
    ctx->timer_baton = baton;
    return APR_SUCCESS;
}

static void c2_run_timers(h2_c2_ctx *ctx)
{
    while (ctx->timer_cb) {
        ap_mpm_callback_fn_t *cb = ctx->timer_cb;
        apr_interval_time_t wait = ctx->timer_at - apr_time_now();

        ctx->timer_cb = NULL;
        if (wait > 0) {
            apr_sleep(wait);
        }
        cb(ctx->timer_baton);
    }
}

static int c2_run(h2_c2_ctx *ctx, conn_rec *c2, h2_x *x, const h2_x_req *req,
                  h2_worker *wk)
{
    h2_request_env env;

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

    c2_request_env(ctx, &env);
    running_ctx = ctx;
    h2_request_run(c2, req, &env, &ctx->r);
    c2_run_timers(ctx);
    running_ctx = NULL;

    if (!ctx->seen_eos) {
        /* the request ended without completing its response */
        h2_c2_deliver_reset(ctx, c2->aborted? H2_ERR_CANCEL : H2_ERR_INTERNAL_ERROR);
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

/* The connection thread writes a parked log (h2_x_c1_run_logs): as over
 * HTTP/1.1, the thread that wrote the response logs it. */
static void c2_log_on_c1(conn_rec *c2)
{
    h2_c2_ctx *ctx = h2_c2_ctx_get(c2);

    ctx->worker = NULL;
    c2->current_thread = c2->master->current_thread;
    log_parked(ctx, c2);
    c2_unbind(ctx, c2);
}

static void c2_process(h2_worker *wk, h2_wtask *task)
{
    h2_x *x = h2_x_worker_of(task);
    conn_rec *c2 = NULL;
    const h2_x_req *req;
    h2_c2_ctx *ctx;

    in_worker = 1;
    req = h2_x_worker_take(x, wk, &c2);
    if (req && c2 && h2_c2_ctx_get(c2)->parked_eor) {
        /* a parked log, handed back once the response went out */
        ctx = h2_c2_ctx_get(c2);
        ctx->worker = wk;
        c2->current_thread = wk->thread;
        log_parked(ctx, c2);
        c2_unbind(ctx, c2);
    }
    else if (req) {
        if (!c2) {
            c2 = c2_create(req->set->c1, wk);
        }
        if (c2_run(h2_c2_ctx_get(c2), c2, x, req, wk)) {
            return;
        }
    }
    c2 = h2_x_worker_done(x, c2);
    if (c2) {
        c2_discard(c2);
    }
}

/* Before the root's children go: the idle shells' pools with their
 * records; the ones in use go with the root (their workers were joined
 * before, as the workers' pool is younger and goes first). */
static apr_status_t shells_cleanup(void *data)
{
    c2_shell *sh;

    apr_thread_mutex_lock(shells_mutex);
    while ((sh = shells) != NULL) {
        shells = sh->next;
        apr_pool_destroy(sh->pool);
        free(sh);
    }
    nshells = 0;
    shells_root = NULL;
    apr_thread_mutex_unlock(shells_mutex);
    return APR_SUCCESS;
}

void h2_c2_child_quiet(void)
{
    c2_shell *sh;

    /* the idle shells go with what their allocators kept */
    apr_thread_mutex_lock(shells_mutex);
    while (shells_root && (sh = shells) != NULL) {
        shells = sh->next;
        apr_pool_destroy(sh->pool);
        free(sh);
    }
    nshells = 0;
    apr_thread_mutex_unlock(shells_mutex);
}

static apr_status_t shells_root_create(apr_pool_t *pchild)
{
    apr_allocator_t *allocator;
    apr_thread_mutex_t *mutex;
    apr_status_t rv;

    /* its own allocator, with a mutex: shells are linked into it from any
     * worker, and pchild's allocator may have none */
    if ((rv = apr_allocator_create(&allocator)) != APR_SUCCESS) {
        return rv;
    }
    if ((rv = apr_pool_create_ex(&shells_root, pchild, NULL, allocator)) != APR_SUCCESS) {
        apr_allocator_destroy(allocator);
        return rv;
    }
    apr_allocator_owner_set(allocator, shells_root);
    if ((rv = apr_thread_mutex_create(&mutex, APR_THREAD_MUTEX_DEFAULT,
                                      shells_root)) != APR_SUCCESS) {
        return rv;
    }
    apr_allocator_mutex_set(allocator, mutex);
    apr_pool_tag(shells_root, "h2_c2_shells");
    apr_pool_pre_cleanup_register(shells_root, NULL, shells_cleanup);
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
    /* before the workers' pool: pchild's children go youngest first, so
     * the workers are joined before the shells they may still use go */
    if ((rv = shells_root_create(pchild)) != APR_SUCCESS) {
        return rv;
    }
    /* a child process never unloads us; glibc drops the handler with the
     * module should it ever be unloaded */
    pthread_atfork(NULL, NULL, c2_after_fork_in_child);
    h2_workers_create(s, pchild, minw, maxw, idle, c2_process);
    /* the exchange keeps secondaries for a connection's next streams (their
     * shells are ours to take back), and the connection thread writes
     * their parked logs through us */
    h2_x_child_init(c2_discard, c2_log_on_c1);
    h2_c2_logio_out = APR_RETRIEVE_OPTIONAL_FN(ap_logio_add_bytes_out);
    logio_add_bytes_in = APR_RETRIEVE_OPTIONAL_FN(ap_logio_add_bytes_in);
    return APR_SUCCESS;
}

/* The request's directory is known: H2StreamTimeout and H2CopyFiles may
 * be set there (the manual allows both per directory). */
static int c2_directory_settings(request_rec *r)
{
    h2_c2_ctx *ctx;

    if (r->main || !r->connection->master || !(ctx = h2_c2_ctx_get(r->connection))
        || !ctx->x) {
        return DECLINED;
    }
    h2_x_worker_timeout(ctx->x, h2_config_rget(r, H2_CONF_STREAM_TIMEOUT));
    ctx->copy_files = (int)h2_config_rget(r, H2_CONF_COPY_FILES);
    return DECLINED;
}

/* While a handler runs, the connection is open as an HTTP/1.1 one is
 * during its request: to httpd, AP_CONN_CLOSE there means the client's
 * input broke, and handlers that echo or forward the body skip reading
 * it (mod_reflector answered an empty 200). So the handler of a request
 * with a body sees an open connection, and reads, or discards as over
 * HTTP/1.1, what it did not want; once the response head passes
 * (h2_response_filter()) it is AP_CONN_CLOSE again, and what is left of
 * the body is dropped with the stream instead of read. A request without
 * a body keeps AP_CONN_CLOSE: there is nothing to read, and a handler
 * reading anyway after its client reset the stream (mod_cgid under a
 * HEADERS+RST_STREAM storm) met the reset and logged it as an error. */
static int c2_handler_starts(request_rec *r)
{
    h2_c2_ctx *ctx;

    if (r->connection->master && (ctx = h2_c2_ctx_get(r->connection))
        && ctx->x && ctx->req->has_body && !ctx->seen_head
        && !ctx->req->head->websocket) {
        r->connection->keepalive = AP_CONN_UNKNOWN;
    }
    return DECLINED;
}

/* The promises of r's location's paths (H2PushResource, H2EarlyHint
 * preload links), when it may push, into it; 1 if there are any. They go
 * before the 103 that links to them (RFC 9113 8.4: a client must not ask
 * for them itself first), and the 103 says push-policy, as stock's does. */
static int early_push(h2_c2_ctx *ctx, request_rec *r, apr_table_t *hint_fields,
                      h2_c2_item *it)
{
    const char *scheme, *authority;
    apr_table_t *t;

    if (!c2_may_push(ctx->c2, &scheme, &authority)
        || h2_config_rget(r, H2_CONF_PUSH) != 1
        || !(t = h2_response_push_fields(r, h2_response_config_pushes(r, scheme, authority),
                                         hint_fields))) {
        return 0;
    }
    if (!apr_table_get(hint_fields, "push-policy")) {
        apr_table_setn(hint_fields, "push-policy", "default");
    }
    h2_c2_item_init(it, H2_HC_PUSH, 0);
    it->fields = t;
    apr_table_setn(r->notes, H2_NOTE_PUSHED_EARLY, "1");
    return 1;
}

/* H2EarlyHint fields and a preload Link for each H2PushResource go out as
 * a 103 before the handler runs, so that a browser can start fetching
 * while the response is being made; the paths pushed are promised before
 * it. */
static int c2_early_hints(request_rec *r)
{
    h2_c2_ctx *ctx;
    apr_table_t *fields;
    h2_c2_item it[2];
    int n;

    if (r->main || r->prev || !r->connection->master
        || !(ctx = h2_c2_ctx_get(r->connection)) || !ctx->x || ctx->seen_head
        || h2_config_rget(r, H2_CONF_EARLY_HINTS) != 1
        || !(fields = h2_response_hint_fields(r))) {
        return DECLINED;
    }
    n = early_push(ctx, r, fields, &it[0]);
    h2_c2_item_init(&it[n], H2_HC_INTERIM, HTTP_EARLY_HINTS);
    it[n].fields = fields;
    h2_c2_deliver(ctx, it, n + 1, 1);
    return DECLINED;
}

/* Worker: a descriptor for polling the request body of the stream c
 * carries (a secondary connection), for mod_proxy's tunnels and other
 * modules that poll a connection's input: core's get_pollfd_from_conn
 * hook and, under the same signature, stock's optional function. */
static apr_status_t http2_get_pollfd_from_conn(conn_rec *c, apr_pollfd_t *pfd,
                                               apr_interval_time_t *ptimeout)
{
    h2_c2_ctx *ctx = c->master? h2_c2_ctx_get(c) : NULL;

    if (!ctx || !ctx->x) {
        return APR_ENOTIMPL;
    }
    return h2_x_worker_pollfd(ctx->x, c->pool, pfd, ptimeout);
}

void h2_c2_register_hooks(void)
{
    ap_hook_get_pollfd_from_conn(http2_get_pollfd_from_conn, NULL, NULL,
                                 APR_HOOK_MIDDLE);
    APR_REGISTER_OPTIONAL_FN(http2_get_pollfd_from_conn);
    ap_hook_fixups(c2_directory_settings, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_fixups(c2_early_hints, NULL, NULL, APR_HOOK_LAST);
    ap_hook_handler(c2_handler_starts, NULL, NULL, APR_HOOK_REALLY_FIRST);
    ap_hook_mpm_register_timed_callback(c2_timed_callback, NULL, NULL,
                                        APR_HOOK_REALLY_FIRST);
    c2_in_handle = ap_register_input_filter("H2_C2_IN", c2_in_filter, NULL,
                                            AP_FTYPE_NETWORK);
    c2_out_handle = ap_register_output_filter("H2_C2_OUT", h2_c2_out_filter, NULL,
                                              AP_FTYPE_NETWORK);
    ws_no_body_handle = ap_register_input_filter("H2_WS_NO_BODY", ws_no_body_filter,
                                                 NULL, AP_FTYPE_PROTOCOL);
    h2_response_filter_handle = ap_register_output_filter(
        "H2_RESPONSE", h2_response_filter, NULL, AP_FTYPE_PROTOCOL);
}
