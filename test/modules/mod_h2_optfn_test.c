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

/* A test module for test_optional_functions.py: it looks up mod_http2's
 * optional functions by name, as other modules (mod_proxy_http2, mod_ssl)
 * do, and reports what they answer for the request it handles
 * (SetHandler h2-optfn-test). SetHandler h2-pollfd-test polls the
 * request body through the descriptor http2_get_pollfd_from_conn and
 * core's ap_get_pollfd_from_conn give, and writes down what it saw.
 * SetHandler h2-fail-test starts a response and then fails the way the
 * query says: "return" (the handler returns 500), "bucket" (an error
 * bucket, as mod_proxy_http passes when its backend breaks), "abort" (it
 * marks the connection aborted).
 * Built with apxs by the test. */

#include <httpd.h>
#include <http_config.h>
#include <http_protocol.h>
#include <apr_optional.h>
#include <apr_strings.h>
#include <apr_poll.h>
#include <http_core.h>
#include <util_filter.h>
#include <http_request.h>
#include <mod_http2.h>

static int optfn_handler(request_rec *r)
{
    APR_OPTIONAL_FN_TYPE(http2_is_h2) *is_h2;
    APR_OPTIONAL_FN_TYPE(http2_var_lookup) *var_lookup;
    APR_OPTIONAL_FN_TYPE(http2_get_num_workers) *num_workers;
    int minw = -1, maxw = -1;
    char *v;

    if (!r->handler || strcmp(r->handler, "h2-optfn-test")) {
        return DECLINED;
    }
    is_h2 = APR_RETRIEVE_OPTIONAL_FN(http2_is_h2);
    var_lookup = APR_RETRIEVE_OPTIONAL_FN(http2_var_lookup);
    num_workers = APR_RETRIEVE_OPTIONAL_FN(http2_get_num_workers);
    ap_set_content_type(r, "text/plain");
    ap_rprintf(r, "registered=%d,%d,%d\n", is_h2 != NULL, var_lookup != NULL,
               num_workers != NULL);
    if (is_h2) {
        ap_rprintf(r, "is_h2=%d\n", is_h2(r->connection));
    }
    if (var_lookup) {
        v = var_lookup(r->pool, r->server, r->connection, r, "HTTP2");
        ap_rprintf(r, "HTTP2=%s\n", v? v : "(null)");
        v = var_lookup(r->pool, r->server, r->connection, r, "H2_STREAM_ID");
        ap_rprintf(r, "H2_STREAM_ID=%s\n", v? v : "(null)");
    }
    if (num_workers) {
        num_workers(r->server, &minw, &maxw);
        ap_rprintf(r, "workers=%d,%d\n", minw, maxw);
    }
    return OK;
}

/* Poll, then read what is there without blocking, until the body ends
 * (at most 40 rounds of 300 ms). */
static void poll_body(request_rec *r, apr_pollfd_t *pfd)
{
    apr_bucket_brigade *bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    int i, eos = 0;

    for (i = 0; i < 40 && !eos; ++i) {
        apr_int32_t n = 0;
        char buf[256];
        apr_size_t len = sizeof(buf) - 1;
        apr_status_t rv = apr_poll(pfd, 1, &n, apr_time_from_msec(300));
        if (APR_STATUS_IS_TIMEUP(rv)) {
            ap_rputs("poll=timeout\n", r);
            continue;
        }
        rv = ap_get_brigade(r->input_filters, bb, AP_MODE_READBYTES,
                            APR_NONBLOCK_READ, sizeof(buf) - 1);
        if (APR_STATUS_IS_EAGAIN(rv)) {
            ap_rputs("read=nothing\n", r);
            continue;
        }
        if (rv != APR_SUCCESS) {
            ap_rprintf(r, "read=error %d\n", rv);
            return;
        }
        eos = !APR_BRIGADE_EMPTY(bb) && APR_BUCKET_IS_EOS(APR_BRIGADE_LAST(bb));
        apr_brigade_flatten(bb, buf, &len);
        buf[len] = 0;
        ap_rprintf(r, "read=%s%s\n", buf, eos? " eos" : "");
        apr_brigade_cleanup(bb);
    }
}

static int pollfd_handler(request_rec *r)
{
    APR_OPTIONAL_FN_TYPE(http2_get_pollfd_from_conn) *get_pollfd;
    apr_pollfd_t pfd, pfd2;
    apr_interval_time_t timeout = -1;
    apr_status_t rv, rv2;

    if (!r->handler || strcmp(r->handler, "h2-pollfd-test")) {
        return DECLINED;
    }
    memset(&pfd, 0, sizeof(pfd));
    memset(&pfd2, 0, sizeof(pfd2));
    get_pollfd = APR_RETRIEVE_OPTIONAL_FN(http2_get_pollfd_from_conn);
    ap_set_content_type(r, "text/plain");
    ap_rprintf(r, "registered=%d\n", get_pollfd != NULL);
    if (!get_pollfd) {
        return OK;
    }
    rv = get_pollfd(r->connection, &pfd, &timeout);
    rv2 = ap_get_pollfd_from_conn(r->connection, &pfd2, NULL);
    ap_rprintf(r, "optfn=%s\n", rv == APR_SUCCESS? "ok" : APR_STATUS_IS_ENOTIMPL(rv)?
               "notimpl" : "error");
    ap_rprintf(r, "core=%s\n", rv2 != APR_SUCCESS? "error" : pfd2.desc_type
               == APR_POLL_SOCKET? "socket" : pfd2.desc.f == pfd.desc.f? "same" : "other");
    if (rv == APR_SUCCESS) {
        ap_rprintf(r, "timeout=%ld\n", (long)apr_time_sec(timeout));
        poll_body(r, &pfd);
    }
    return OK;
}

static int fail_handler(request_rec *r)
{
    apr_bucket_brigade *bb;
    char part[1000];

    if (!r->handler || strcmp(r->handler, "h2-fail-test")) {
        return DECLINED;
    }
    ap_set_content_type(r, "text/plain");
    memset(part, 'p', sizeof(part));
    ap_rwrite(part, sizeof(part), r);
    ap_rflush(r);
    if (r->args && !strcmp(r->args, "bucket")) {
        bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
        APR_BRIGADE_INSERT_TAIL(bb, ap_bucket_error_create(HTTP_BAD_GATEWAY, NULL,
                                                           r->pool, bb->bucket_alloc));
        ap_pass_brigade(r->output_filters, bb);
        return OK;
    }
    if (r->args && !strcmp(r->args, "abort")) {
        r->connection->aborted = 1;
        return OK;
    }
    return HTTP_INTERNAL_SERVER_ERROR;
}

/* Read r's request body readbytes at a time until its end, calling piece
 * for every piece of data and brigade_done after each read; 0 at the end
 * of the body, -1 when a read failed. */
typedef void body_piece_fn(request_rec *r, const char *data, apr_size_t len, void *ctx);
static int body_each(request_rec *r, apr_off_t readbytes, body_piece_fn *piece,
                     void (*brigade_done)(request_rec *r), void *ctx)
{
    apr_bucket_brigade *bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    apr_bucket *b;
    int eos = 0;

    while (!eos) {
        if (ap_get_brigade(r->input_filters, bb, AP_MODE_READBYTES, APR_BLOCK_READ,
                           readbytes) != APR_SUCCESS) {
            return -1;
        }
        for (b = APR_BRIGADE_FIRST(bb); b != APR_BRIGADE_SENTINEL(bb);
             b = APR_BUCKET_NEXT(b)) {
            const char *data;
            apr_size_t len;
            if (APR_BUCKET_IS_EOS(b)) {
                eos = 1;
                break;
            }
            if (!APR_BUCKET_IS_METADATA(b)
                && apr_bucket_read(b, &data, &len, APR_BLOCK_READ) == APR_SUCCESS && len) {
                piece(r, data, len, ctx);
            }
        }
        apr_brigade_cleanup(bb);
        if (brigade_done) brigade_done(r);
    }
    return 0;
}

static void echo_piece(request_rec *r, const char *data, apr_size_t len, void *ctx)
{
    ap_rwrite(data, len, r);
}

static void echo_flush(request_rec *r)
{
    ap_rflush(r);
}

/* "h2-echo-stream": gRPC-style bidirectional streaming. Every piece of
 * request body that arrives goes back at once, flushed, while the request
 * still streams in. With ?quiet=N the first N bytes are read and not
 * echoed: the answer starts only after them. */
module AP_MODULE_DECLARE_DATA h2_optfn_test_module;

static void echo_quiet_piece(request_rec *r, const char *data, apr_size_t len, void *ctx)
{
    apr_off_t *quiet = ctx;
    if (*quiet >= (apr_off_t)len) {
        *quiet -= (apr_off_t)len;
        return;
    }
    data += *quiet;
    len -= (apr_size_t)*quiet;
    *quiet = 0;
    ap_rwrite(data, len, r);
}

static void echo_quiet_flush(request_rec *r)
{
    apr_off_t *quiet = ap_get_module_config(r->request_config, &h2_optfn_test_module);
    if (!quiet || !*quiet) ap_rflush(r);
}

static int echo_stream_handler(request_rec *r)
{
    long quiet = 0;
    apr_off_t *left;

    if (!r->handler || strcmp(r->handler, "h2-echo-stream")) {
        return DECLINED;
    }
    ap_set_content_type(r, "application/octet-stream");
    if (r->args && sscanf(r->args, "quiet=%ld", &quiet) == 1 && quiet > 0) {
        left = apr_palloc(r->pool, sizeof(*left));
        *left = quiet;
        ap_set_module_config(r->request_config, &h2_optfn_test_module, left);
        body_each(r, 8192, echo_quiet_piece, echo_quiet_flush, left);
        return OK;
    }
    body_each(r, 8192, echo_piece, echo_flush, NULL);
    return OK;
}

/* "h2-discard": reads the request body and throws it away; answers with
 * the bytes read and, for every 100 MB, the microseconds since the first
 * byte came (the upload benchmark's slices), and leaves the same in the
 * request's note "h2-discard" for a log, as "BYTES US SLICE, SLICE..."
 * (h2load does not show bodies). With ?stall_after=N&stall_ms=M
 * it stops reading for M ms once it has read N bytes (a handler busy with
 * something else while the body comes in); with ?rate=N it reads at most
 * N bytes a second, in pieces of 16 KB (a consumer slower than its
 * client). */
#define SLICE (100 * 1000 * 1000)
typedef struct {
    apr_off_t total, next;
    apr_time_t start;
    long stall_after, stall_ms;
    long rate;                      /* bytes a second at most, or 0 */
    const char *slices;             /* the answer's list so far, "a, b" */
} discard_ctx;

static void discard_piece(request_rec *r, const char *data, apr_size_t len, void *ctx)
{
    discard_ctx *d = ctx;
    if (!d->start) d->start = apr_time_now();
    d->total += (apr_off_t)len;
    if (d->stall_ms > 0 && d->total >= d->stall_after) {
        apr_sleep(apr_time_from_msec(d->stall_ms));
        d->stall_ms = 0;
    }
    if (d->rate > 0) {
        apr_interval_time_t ahead = (apr_interval_time_t)(d->total * APR_USEC_PER_SEC / d->rate)
                                    - (apr_time_now() - d->start);
        if (ahead > 0) apr_sleep(ahead);
    }
    while (d->total >= d->next) {
        const char *one = apr_psprintf(r->pool, "%s%ld", d->next == SLICE? "" : ", ",
                                       (long)(apr_time_now() - d->start));
        ap_rputs(one, r);
        d->slices = apr_pstrcat(r->pool, d->slices, one, NULL);
        d->next += SLICE;
    }
}

static int discard_handler(request_rec *r)
{
    discard_ctx d = { 0, SLICE, 0, 0, 0, 0, "" };
    long us;

    if (!r->handler || strcmp(r->handler, "h2-discard")) {
        return DECLINED;
    }
    if (r->args && sscanf(r->args, "stall_after=%ld&stall_ms=%ld", &d.stall_after,
                          &d.stall_ms) != 2) {
        d.stall_ms = 0;
    }
    if (r->args && sscanf(r->args, "rate=%ld", &d.rate) != 1) {
        d.rate = 0;
    }
    ap_set_content_type(r, "application/json");
    ap_rputs("{\"slices_us\": [", r);
    body_each(r, d.rate > 0? 16384 : 1 << 20, discard_piece, NULL, &d);
    us = (long)(d.start? apr_time_now() - d.start : 0);
    ap_rprintf(r, "], \"bytes\": %" APR_OFF_T_FMT ", \"us\": %ld}\n", d.total, us);
    apr_table_setn(r->notes, "h2-discard",
                   apr_psprintf(r->pool, "%" APR_OFF_T_FMT " %ld %s", d.total, us,
                                d.slices[0]? d.slices : "-"));
    return OK;
}

static void register_hooks(apr_pool_t *p)
{
    ap_hook_handler(discard_handler, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_handler(echo_stream_handler, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_handler(fail_handler, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_handler(optfn_handler, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_handler(pollfd_handler, NULL, NULL, APR_HOOK_MIDDLE);
}

AP_DECLARE_MODULE(h2_optfn_test) = {
    STANDARD20_MODULE_STUFF, NULL, NULL, NULL, NULL, NULL, register_hooks
};
