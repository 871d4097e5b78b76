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
#ifndef H2_C2_INT_H
#define H2_C2_INT_H

/* What the files of a secondary connection share (h2_c2.c, h2_c2_out.c):
 * its context and the hand-over of its output. Worker side: every
 * function here runs in the worker that serves the connection's stream. */

#include <apr_optional.h>
#include <httpd.h>
#include <ap_mpm.h>
#include <http_config.h>
#include <http_log.h>
#include <util_filter.h>
#include <mod_http2.h>

#include "h2_workers.h"
#include "h2_x_worker.h"

/* File ranges below this are copied; a dup()/close() pair costs more. */
#define H2_FILE_DUP_MIN (16 * 1024)
/* Items gathered from a brigade before they go to the stream in one lock. */
#define H2_OUT_BATCH 32

struct c2_shell;

typedef struct h2_c2_ctx {
    conn_rec *c2;
    struct c2_shell *shell;
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
    /* a suspended request's timed callback (c2_timed_callback()) */
    ap_mpm_callback_fn_t *timer_cb;
    void *timer_baton;
    apr_time_t timer_at;
} h2_c2_ctx;

/* A piece of output as it crosses to the connection thread. */
typedef h2_x_item h2_c2_item;

/* mod_logio's counter of bytes out (%O, %S), if it is loaded: the output
 * side's (h2_c2_out.c), looked up at child init (h2_c2.c). */
extern APR_OPTIONAL_FN_TYPE(ap_logio_add_bytes_out) *h2_c2_logio_out;

/* The context of secondary connection c. Here, not in h2_c2.c, which
 * sets it: the output side reads it without depending on that file. */
extern module AP_MODULE_DECLARE_DATA http2_module;
static APR_INLINE h2_c2_ctx *h2_c2_ctx_get(const conn_rec *c)
{
    return ap_get_module_config(c->conn_config, &http2_module);
}

/* --- h2_c2_out.c --- */

/* An item of type with status, all else empty. */
void h2_c2_item_init(h2_c2_item *it, h2_hchunk_type type, int status);

/* Hand n items over to the connection (flush: wake it); what was taken
 * counts for mod_logio. Every response byte of a stream goes this way. */
apr_status_t h2_c2_deliver(h2_c2_ctx *ctx, const h2_c2_item *items, int n, int flush);

/* The stream ends with RST_STREAM code instead of its response. */
void h2_c2_deliver_reset(h2_c2_ctx *ctx, int code);

/* 1 once the stream's response is out or the stream was aborted (the
 * request may be logged then); counts what went out for mod_logio. */
int h2_c2_log_ready(h2_c2_ctx *ctx, conn_rec *c2);

/* 1 for a WebSocket or CONNECT stream: its directions end apart. */
int h2_c2_is_tunnel(const h2_c2_ctx *ctx);

/* The secondary connection's output filter: buckets to hand-off items. */
apr_status_t h2_c2_out_filter(ap_filter_t *f, apr_bucket_brigade *bb);

#endif
