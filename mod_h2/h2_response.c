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
/* The response head on a worker: httpd's response to HTTP/2 fields. */
#include <apr_strings.h>
#include <apr_lib.h>
#include <httpd.h>
#include <http_core.h>
#include <http_log.h>
#include <http_protocol.h>
#include <http_request.h>
#include <util_time.h>

#include "h2.h"
#include "h2_headers_check.h"
#include "h2_response.h"
#include "h2_config.h"
#include "h2_push.h"

APLOG_USE_MODULE(http2);

ap_filter_rec_t *h2_response_filter_handle;

static apr_status_t resp_read(apr_bucket *b, const char **str, apr_size_t *len,
                              apr_read_type_e block)
{
    *str = NULL;
    *len = 0;
    return APR_SUCCESS;
}

static void resp_destroy(void *data)
{
    apr_bucket_free(data);
}

const apr_bucket_type_t h2_bucket_type_resp = {
    "H2_RESPONSE", 5, APR_BUCKET_METADATA,
    resp_destroy,
    resp_read,
    apr_bucket_setaside_noop,
    apr_bucket_split_notimpl,
    apr_bucket_simple_copy
};

apr_bucket *h2_bucket_resp_create(apr_bucket_alloc_t *list, h2_hchunk_type type,
                                  int status, apr_table_t *fields,
                                  const h2_hfields *hf)
{
    apr_bucket *b = apr_bucket_alloc(sizeof(*b), list);
    h2_resp_meta *m = apr_bucket_alloc(sizeof(*m), list);

    APR_BUCKET_INIT(b);
    m->type = type;
    m->status = status;
    m->fields = fields;
    if (hf) {
        m->hf = *hf;
    }
    else {
        memset(&m->hf, 0, sizeof(m->hf));
    }
    b->free = apr_bucket_free;
    b->list = list;
    b->type = &h2_bucket_type_resp;
    b->length = 0;
    b->start = 0;
    b->data = m;
    return b;
}

typedef struct {
    request_rec *r;          /* the request this state is for */
    h2_resp_stream st;       /* its stream's, the same across redirects */
    int head_sent;
    int body_allowed;
    int trailers_done;
    int fields_failed;       /* a field could not go out: 500 was made */
} resp_ctx;

typedef struct {
    request_rec *r;
    const char *what;        /* "response" or "trailer" */
} bad_field_ctx;

static void log_bad_field(void *ctx, const char *name)
{
    bad_field_ctx *b = ctx;
    request_rec *r = b->r;

    ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, APLOGNO(21082)
                  "h2_stream(%ld-%s): %s field '%s' holds characters "
                  "HTTP does not allow, not sent", r->connection->master?
                  r->connection->master->id : r->connection->id,
                  apr_table_get(r->subprocess_env, "H2_STREAM_ID"), b->what,
                  ap_escape_logitem(r->pool, name));
}

/* The fields of t as they go out, into hf; the ones HTTP cannot carry as
 * they are (CR, LF, NUL, other controls: a handler or a backend passing on
 * what it should not) are logged and left out, as HTTP/1.1 refuses them.
 * Returns how many. */
static int build_fields(request_rec *r, const apr_table_t *t, h2_hfields *hf,
                        const char *what)
{
    bad_field_ctx b;
    b.r = r;
    b.what = what;
    return h2_hfields_build(r->pool, t, hf, log_bad_field, &b);
}

/* Adds each comma-separated item of value to items that is not there yet
 * (compared without case); the first spelling stays, or all are made
 * lowercase (HTTP/1.1 does so for Content-Language, not for Vary). */
static void add_items(apr_pool_t *p, apr_array_header_t *items, const char *value,
                      int lower)
{
    char *copy = apr_pstrdup(p, value), *last, *tok;
    int i;

    if (lower) {
        ap_str_tolower(copy);
    }
    for (tok = apr_strtok(copy, ", \t", &last); tok;
         tok = apr_strtok(NULL, ", \t", &last)) {
        for (i = 0; i < items->nelts; ++i) {
            if (!ap_cstr_casecmp(tok, APR_ARRAY_IDX(items, i, const char *))) {
                break;
            }
        }
        if (i == items->nelts) {
            APR_ARRAY_PUSH(items, const char *) = tok;
        }
    }
}

static int vary_item(void *items, const char *key, const char *value)
{
    add_items(((apr_array_header_t *)items)->pool, items, value, 0);
    return 1;
}

/* Vary as HTTP/1.1 sends it: modules add their Vary fields on their own
 * (mod_deflate, mod_negotiation, a backend), HTTP/1.1 sends each item
 * once in one field; a client marked force-no-vary (BrowserMatch) gets
 * none, as it may not cope with it. */
static void vary_field(request_rec *r, apr_table_t *h)
{
    apr_array_header_t *items;

    if (apr_table_get(r->subprocess_env, "force-no-vary")) {
        apr_table_unset(h, "Vary");
        return;
    }
    if (!apr_table_get(h, "Vary")) {
        return;
    }
    items = apr_array_make(r->pool, 4, sizeof(const char *));
    apr_table_do(vary_item, items, h, "Vary", NULL);
    apr_table_setn(h, "Vary", apr_array_pstrcat(r->pool, items, ','));
}

/* Content-Type, -Encoding and -Language from what httpd keeps in the
 * request (not in headers_out), as HTTP/1.1 makes them; a response that
 * has no content (204, 304) describes none. */
static void content_fields(request_rec *r, apr_table_t *h)
{
    const char *ctype;

    if (r->status == HTTP_NOT_MODIFIED || r->status == HTTP_NO_CONTENT) {
        apr_table_unset(h, "Content-Length");
        r->content_type = r->content_encoding = NULL;
        r->content_languages = NULL;
    }
    if (r->status == HTTP_NOT_MODIFIED) {
        apr_table_unset(h, "Content-Type");
        apr_table_unset(h, "Content-Encoding");
    }
    ctype = r->content_type? ap_make_content_type(r, r->content_type) : NULL;
    if (ctype) {
        apr_table_setn(h, "Content-Type", ctype);
    }
    if (r->content_encoding) {
        apr_table_setn(h, "Content-Encoding", r->content_encoding);
    }
    if (r->content_languages && r->content_languages->nelts > 0) {
        /* the languages a module put into the field join httpd's own */
        apr_array_header_t *langs = apr_array_copy(r->pool, r->content_languages);
        const char *field = apr_table_get(h, "Content-Language");
        if (field) {
            add_items(r->pool, langs, field, 1);
        }
        apr_table_setn(h, "Content-Language", apr_array_pstrcat(r->pool, langs, ','));
    }
}

/* A HEAD whose handler sent no body (it returned early, as mod_autoindex,
 * error pages, PHP or a CGI do) went through httpd's content length
 * filter as an empty body: its Content-Length 0 says nothing about the
 * GET and is not sent, as HTTP/1.1 does not. A length a handler or a
 * backend gave stays (the filter keeps it for a HEAD). The WebSocket's
 * 502 (not_a_websocket) keeps its 0: its request is no HEAD. */
static void head_length(request_rec *r, apr_table_t *h)
{
    const char *cl;

    if (r->header_only && r->method_number != M_CONNECT
        && (cl = apr_table_get(h, "Content-Length")) && !strcmp(cl, "0")) {
        apr_table_unset(h, "Content-Length");
    }
}

/* What httpd's HTTP_HEADER filter puts into an HTTP/1.1 head, as HTTP/2
 * fields: the same fields, less what only HTTP/1.1 framing needs. */
static apr_table_t *response_fields(request_rec *r)
{
    apr_table_t *h;
    char *date;

    if (!apr_is_empty_table(r->err_headers_out)) {
        r->headers_out = apr_table_overlay(r->pool, r->err_headers_out,
                                           r->headers_out);
        apr_table_clear(r->err_headers_out);
    }
    h = r->headers_out;
    vary_field(r, h);
    if (apr_table_get(r->notes, "no-etag")) {
        apr_table_unset(h, "ETag");
    }
    content_fields(r, h);
    if (r->no_cache && !apr_table_get(h, "Expires")) {
        /* a response httpd marked uncacheable expires at once */
        date = apr_palloc(r->pool, APR_RFC822_DATE_LEN);
        ap_recent_rfc822_date(date, r->request_time);
        apr_table_addn(h, "Expires", date);
    }
    head_length(r, h);
    /* a proxied response keeps the origin's Date and Server */
    if (r->proxyreq == PROXYREQ_NONE || !apr_table_get(h, "Date")) {
        date = apr_palloc(r->pool, APR_RFC822_DATE_LEN);
        ap_recent_rfc822_date(date, r->request_time);
        apr_table_setn(h, "Date", date);
    }
    if (r->proxyreq == PROXYREQ_NONE || !apr_table_get(h, "Server")) {
        const char *banner = ap_get_server_banner();
        if (banner && *banner) {
            apr_table_setn(h, "Server", banner);
        }
    }
    /* HTTP/2 has its own framing and connection management */
    apr_table_unset(h, "Connection");
    apr_table_unset(h, "Keep-Alive");
    apr_table_unset(h, "Proxy-Connection");
    apr_table_unset(h, "Transfer-Encoding");
    apr_table_unset(h, "Upgrade");
    return h;
}

typedef struct {
    apr_pool_t *p;
    const char *scheme, *authority;
    apr_array_header_t *paths;
} link_ctx;

static int link_field(void *ctx, const char *key, const char *value)
{
    link_ctx *lc = ctx;
    h2_push_links(lc->p, value, lc->scheme, lc->authority, lc->paths);
    return 1;
}

/* The client's accept-push-policy (the draft stock implements): 0 for
 * "none" (no promises), else 1; *name is the policy to announce in the
 * response's push-policy field ("head": promised requests are HEADs;
 * "fast-load", "default", and anything else as "default"), NULL when the
 * client did not ask. */
static int push_policy(request_rec *r, const char **name)
{
    const char *v = apr_table_get(r->headers_in, "accept-push-policy");

    *name = NULL;
    if (!v) {
        return 1;
    }
    if (!strcasecmp(v, "none")) {
        return 0;
    }
    *name = !strcasecmp(v, "head")? "head" : !strcasecmp(v, "fast-load")? "fast-load"
                                   : "default";
    return 1;
}

apr_table_t *h2_response_push_fields(request_rec *r, const apr_array_header_t *paths,
                                     apr_table_t *announce)
{
    apr_table_t *t;
    const char *policy;
    int i;

    if (!paths || paths->nelts == 0 || !push_policy(r, &policy)) {
        return NULL;
    }
    t = apr_table_make(r->pool, paths->nelts);
    for (i = 0; i < paths->nelts; ++i) {
        const char *path = APR_ARRAY_IDX(paths, i, const char *);
        /* H2PushResource ... critical: to be sent ahead of this response */
        apr_table_addn(t, path[0] == '!'? "critical" : "path", path + (path[0] == '!'));
    }
    if (policy && announce) {
        apr_table_setn(announce, "push-policy", policy);
    }
    return t;
}

apr_array_header_t *h2_response_config_pushes(request_rec *r, const char *scheme,
                                              const char *authority)
{
    apr_array_header_t *res = h2_config_push_resources(r);
    apr_array_header_t *hints = h2_config_early_hints(r), *paths;
    int i;

    if (!hints && !res) {
        return NULL;
    }
    paths = res? apr_array_copy(r->pool, res)
               : apr_array_make(r->pool, 4, sizeof(const char *));
    for (i = 0; hints && i + 1 < hints->nelts; i += 2) {
        if (!strcasecmp(APR_ARRAY_IDX(hints, i, const char *), "Link")) {
            h2_push_links(r->pool, APR_ARRAY_IDX(hints, i + 1, const char *),
                          scheme, authority, paths);
        }
    }
    return paths->nelts? paths : NULL;
}

apr_table_t *h2_response_hint_fields(request_rec *r)
{
    apr_array_header_t *res = h2_config_push_resources(r);
    apr_array_header_t *hints = h2_config_early_hints(r);
    apr_table_t *t;
    int i;

    if ((!res || !res->nelts) && (!hints || hints->nelts < 2)) {
        return NULL;
    }
    t = apr_table_make(r->pool, 4);
    for (i = 0; res && i < res->nelts; ++i) {
        const char *path = APR_ARRAY_IDX(res, i, const char *);
        apr_table_merge(t, "Link", path[0] == '!'?
                        apr_psprintf(r->pool, "<%s>; rel=preload; critical", path + 1)
                        : apr_psprintf(r->pool, "<%s>; rel=preload", path));
    }
    for (i = 0; hints && i + 1 < hints->nelts; i += 2) {
        apr_table_merge(t, APR_ARRAY_IDX(hints, i, const char *),
                        APR_ARRAY_IDX(hints, i + 1, const char *));
    }
    return t;
}

/* Server push: the paths a 2xx response's preload links and its
 * location's own (unless its 103 promised those already) name go to the
 * connection thread ahead of the head, which promises those the client
 * has not been pushed. Returns the PUSH item's fields or NULL; the
 * response's own fields get push-policy. */
static apr_table_t *push_paths(const h2_resp_stream *st, request_rec *r,
                               apr_table_t *fields)
{
    apr_array_header_t *res = NULL;
    link_ctx lc;

    if (!st->push_scheme || h2_config_rget(r, H2_CONF_PUSH) != 1) {
        return NULL;
    }
    lc.scheme = st->push_scheme;
    lc.authority = st->push_authority;
    if (!apr_table_get(r->notes, H2_NOTE_PUSHED_EARLY)) {
        res = h2_response_config_pushes(r, st->push_scheme, st->push_authority);
    }
    if (!res && !apr_table_get(fields, "Link")) {
        return NULL;
    }
    lc.p = r->pool;
    lc.paths = apr_array_make(r->pool, 4, sizeof(const char *));
    if (res) {
        apr_array_cat(lc.paths, res);
    }
    apr_table_do(link_field, &lc, fields, "Link", NULL);
    return h2_response_push_fields(r, lc.paths, fields);
}

/* A handler served a WebSocket's GET as a plain GET (a file, a page):
 * a 2xx would tell the client its WebSocket is open (RFC 8441 5), and
 * the body would be taken for its frames. 502 without a body, as stock. */
static int not_a_websocket(request_rec *r)
{
    ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, APLOGNO(21102)
                  "h2: WebSocket to %s answered %d without taking it over, "
                  "sending 502", r->uri, r->status);
    apr_table_clear(r->headers_out);
    apr_table_setn(r->headers_out, "Content-Length", "0");
    r->content_type = NULL;
    r->header_only = 1;
    return r->status = HTTP_BAD_GATEWAY;
}

/* mod_ssl needs a renegotiation HTTP/2 forbids: tell the client to retry
 * over HTTP/1.1 (RFC 9113 8.1.1) instead of the 403. */
static apr_status_t http11_required(ap_filter_t *f, apr_bucket_brigade *bb,
                                    resp_ctx *ctx)
{
    ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, f->r, APLOGNO(21034)
                  "h2: request needs TLS renegotiation, answering HTTP_1_1_REQUIRED");
    apr_brigade_cleanup(bb);
    APR_BRIGADE_INSERT_TAIL(bb, h2_bucket_resp_create(
        f->c->bucket_alloc, H2_HC_RESET, H2_ERR_HTTP_1_1_REQUIRED, NULL, NULL));
    ctx->head_sent = 1;
    ctx->body_allowed = 0;
    return ap_pass_brigade(f->next, bb);
}

/* 1 when mod_ssl refused r (or the request whose error r answers, an
 * ErrorDocument's) for a renegotiation HTTP/2 forbids: the client is told
 * to retry over HTTP/1.1 whatever the error page would say, as by stock. */
static int renegotiation_refused(const request_rec *r)
{
    for (; r; r = r->prev) {
        if (apr_table_get(r->notes, "ssl-renegotiate-forbidden")) {
            return 1;
        }
    }
    return 0;
}

/* The status sent for a final head of status < 200. */
static int final_status(const h2_resp_stream *st, request_rec *r, int status)
{
    if (status == HTTP_SWITCHING_PROTOCOLS && st->websocket) {
        /* the handler took the WebSocket: the stream carries it */
        h2_response_ws_accepted(r->headers_out);
        return HTTP_OK;
    }
    ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, APLOGNO(21030)
                  "h2: final response with status %d, sending 500", status);
    return r->status = HTTP_INTERNAL_SERVER_ERROR;
}

void h2_response_add_filter(request_rec *r, const h2_resp_stream *st)
{
    resp_ctx *ctx = apr_pcalloc(r->pool, sizeof(*ctx));

    ctx->r = r;
    ctx->st = *st;
    ap_add_output_filter_handle(h2_response_filter_handle, ctx, r, r->connection);
}

apr_status_t h2_response_filter(ap_filter_t *f, apr_bucket_brigade *bb)
{
    request_rec *r = f->r;
    resp_ctx *ctx = f->ctx;
    apr_bucket *b, *next;
    h2_hfields hf;

    if (!ctx || ctx->r != r) {
        /* internal redirects hand this filter to a new request; added by
         * its name, not by h2_response_add_filter(), it knows no stream */
        resp_ctx *prev = ctx;
        ctx = f->ctx = apr_pcalloc(r->pool, sizeof(*ctx));
        ctx->r = r;
        if (prev) {
            ctx->st = prev->st;
        }
    }
    if (!ctx->head_sent) {
        ap_bucket_error *eb = NULL;
        apr_table_t *fields, *push;
        int status;

        for (b = APR_BRIGADE_FIRST(bb); b != APR_BRIGADE_SENTINEL(bb);
             b = APR_BUCKET_NEXT(b)) {
            if (AP_BUCKET_IS_ERROR(b) && !eb) {
                eb = b->data;
            }
        }
        if (eb) {
            /* an error before any output: answer with its error page */
            status = eb->status;
            apr_brigade_cleanup(bb);
            /* what was dropped must not count toward the error page's
             * Content-Length (the content length filter sums bytes_sent) */
            r->bytes_sent = 0;
            ap_die(status, r);
            return AP_FILTER_ERROR;
        }
        status = r->status;
        if (status == HTTP_FORBIDDEN && renegotiation_refused(r)) {
            return http11_required(f, bb, ctx);
        }
        if (status < 200) {
            status = final_status(&ctx->st, r, status);
        }
        else if (status < 300 && ctx->st.websocket) {
            status = not_a_websocket(r);
        }
        fields = response_fields(r);
        push = (status >= 200 && status < 300)? push_paths(&ctx->st, r, fields) : NULL;
        if (build_fields(r, fields, &hf, "response") && !ctx->fields_failed) {
            /* nothing went out yet: answer 500 instead, as HTTP/1.1 does */
            ctx->fields_failed = 1;
            apr_brigade_cleanup(bb);
            r->bytes_sent = 0;
            ap_die(HTTP_INTERNAL_SERVER_ERROR, r);
            return AP_FILTER_ERROR;
        }
        b = h2_bucket_resp_create(f->c->bucket_alloc, H2_HC_HEADERS, status, fields, &hf);
        APR_BRIGADE_INSERT_HEAD(bb, b);
        if (push) {
            APR_BRIGADE_INSERT_HEAD(bb, h2_bucket_resp_create(f->c->bucket_alloc, H2_HC_PUSH,
                                                              0, push, NULL));
        }
        ctx->head_sent = 1;
        r->sent_bodyct = 1;
        r->connection->keepalive = AP_CONN_CLOSE;  /* see c2_handler_starts() */
        ctx->body_allowed = !r->header_only && status != HTTP_NO_CONTENT
                            && status != HTTP_NOT_MODIFIED;
    }
    for (b = APR_BRIGADE_FIRST(bb); b != APR_BRIGADE_SENTINEL(bb); b = next) {
        next = APR_BUCKET_NEXT(b);
        if (APR_BUCKET_IS_EOS(b)) {
            if (!ctx->trailers_done && r->trailers_out
                && !apr_is_empty_table(r->trailers_out)) {
                /* the body went out: a trailer that cannot fails the stream */
                int bad = build_fields(r, r->trailers_out, &hf, "trailer");
                APR_BUCKET_INSERT_BEFORE(b, h2_bucket_resp_create(
                    f->c->bucket_alloc, bad? H2_HC_RESET : H2_HC_TRAILERS,
                    bad? H2_ERR_INTERNAL_ERROR : 0, bad? NULL : r->trailers_out,
                    bad? NULL : &hf));
            }
            ctx->trailers_done = 1;
        }
        else if (!ctx->body_allowed && !APR_BUCKET_IS_METADATA(b)) {
            apr_bucket_delete(b);
        }
    }
    return ap_pass_brigade(f->next, bb);
}

void h2_response_ws_accepted(apr_table_t *fields)
{
    static const char *drop[] = { "Upgrade", "Connection", "Sec-WebSocket-Accept",
        "Keep-Alive", "Transfer-Encoding", "Content-Length", "Proxy-Connection" };
    apr_size_t i;

    for (i = 0; i < sizeof(drop) / sizeof(drop[0]); ++i) {
        apr_table_unset(fields, drop[i]);
    }
}

int h2_response_parse_interim(apr_pool_t *p, const char *text, apr_size_t len,
                              int *pstatus, apr_table_t **pfields)
{
    const char *end = text + len, *line, *eol, *sp;
    apr_table_t *fields = apr_table_make(p, 5);
    int status;

    eol = memchr(text, '\n', len);
    sp = memchr(text, ' ', len);
    if (!eol || !sp || sp > eol || strncmp(text, "HTTP/", 5)) {
        return 0;
    }
    status = atoi(sp + 1);
    if (status < 100 || status > 299) {
        return 0;
    }
    for (line = eol + 1; line < end; line = eol + 1) {
        const char *colon, *v, *ve;
        eol = memchr(line, '\n', (apr_size_t)(end - line));
        if (!eol) {
            eol = end;
        }
        ve = eol;
        if (ve > line && ve[-1] == '\r') --ve;
        if (ve == line) {
            break;     /* the blank line ends the head */
        }
        colon = memchr(line, ':', (apr_size_t)(ve - line));
        if (!colon) {
            continue;
        }
        for (v = colon + 1; v < ve && (*v == ' ' || *v == '\t'); ++v)
            ;
        apr_table_addn(fields, apr_pstrmemdup(p, line, (apr_size_t)(colon - line)),
                       apr_pstrmemdup(p, v, (apr_size_t)(ve - v)));
    }
    *pstatus = status;
    *pfields = fields;
    return 1;
}
