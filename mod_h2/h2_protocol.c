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
/* Protocol negotiation: ALPN, the h2c Upgrade, httpd's protocol hooks. */

#include <apr_strings.h>
#include <httpd.h>
#include <http_core.h>
#include <http_config.h>
#include <http_log.h>
#include <http_protocol.h>
#include <http_ssl.h>

#include "h2.h"
#include "h2_config.h"
#include "h2_c1.h"
#include "h2_protocol.h"
#include "h2_upgrade.h"

APLOG_USE_MODULE(http2);

static int offered(const apr_array_header_t *offers, const char *proto)
{
    int i;
    for (i = 0; offers && i < offers->nelts; ++i) {
        if (!strcmp(APR_ARRAY_IDX(offers, i, const char *), proto)) {
            return 1;
        }
    }
    return 0;
}

/* The body of an upgrading request is read before the 101 goes out: the
 * client sends it before it switches (RFC 7540 3.2) and some stop
 * uploading once they see the 101. A client waiting for "100 Continue"
 * would only send it after an HTTP/1.1 answer we can no longer give, a
 * body without a length might not fit, and one over H2_UPGRADE_BODY_MAX
 * would have to be held in memory: such requests stay HTTP/1.1. */
static int upgrade_body_ok(request_rec *r)
{
    const char *expect = apr_table_get(r->headers_in, "Expect");
    const char *cl = apr_table_get(r->headers_in, "Content-Length");
    apr_off_t len;
    h2_upgrade_body *body;
    apr_bucket_brigade *bb;
    apr_status_t rv;

    if (apr_pool_userdata_get((void **)&body, H2_UPGRADE_BODY_KEY, r->pool) == APR_SUCCESS
        && body) {
        return 1;   /* read on an earlier proposal */
    }
    if ((expect && *expect) || apr_table_get(r->headers_in, "Transfer-Encoding")) {
        return 0;
    }
    len = cl? apr_atoi64(cl) : 0;
    if (len < 0 || len > H2_UPGRADE_BODY_MAX) {
        return 0;
    }
    body = apr_pcalloc(r->pool, sizeof(*body));
    if (len > 0) {
        char *buf = apr_palloc(r->pool, (apr_size_t)len);
        int eos = 0;
        bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
        while (!eos && (apr_off_t)body->len < len) {
            apr_size_t n = (apr_size_t)len - body->len;
            rv = ap_get_brigade(r->input_filters, bb, AP_MODE_READBYTES,
                                APR_BLOCK_READ, (apr_off_t)n);
            if (rv == APR_SUCCESS) {
                eos = !APR_BRIGADE_EMPTY(bb) && APR_BUCKET_IS_EOS(APR_BRIGADE_LAST(bb));
                rv = apr_brigade_flatten(bb, buf + body->len, &n);
                body->len += n;
            }
            apr_brigade_cleanup(bb);
            if (rv != APR_SUCCESS) {
                break;
            }
        }
        apr_brigade_destroy(bb);
        body->data = buf;
        if ((apr_off_t)body->len != len) {
            /* a broken upload: let HTTP/1.1 processing answer it */
            ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, APLOGNO(21041)
                          "h2: upgrade request body ended after %" APR_SIZE_T_FMT
                          " of %" APR_OFF_T_FMT " bytes", body->len, len);
            return 0;
        }
    }
    apr_pool_userdata_setn(body, H2_UPGRADE_BODY_KEY, NULL, r->pool);
    return 1;
}

static int h2_protocol_propose(conn_rec *c, request_rec *r, server_rec *s,
                               const apr_array_header_t *offers,
                               apr_array_header_t *proposals)
{
    int tls;

    if (c->master) {
        return DECLINED;   /* secondary connections stay what they are */
    }
    tls = ap_ssl_conn_is_ssl(c);
    if (r) {
        apr_int64_t upgrade = h2_config_rget(r, H2_CONF_UPGRADE);
        /* Upgrade: h2c is cleartext only (RFC 7540 3.2) and needs the
         * client's settings */
        if (tls || !offered(offers, H2_PROTO_CLEAR)
            || upgrade == 0 || !apr_table_get(r->headers_in, "HTTP2-Settings")) {
            return DECLINED;
        }
        if (!upgrade_body_ok(r)) {
            return DECLINED;
        }
        APR_ARRAY_PUSH(proposals, const char *) = H2_PROTO_CLEAR;
        return OK;
    }
    if (tls && offered(offers, H2_PROTO_TLS)) {
        int ok;
        /* ALPN runs after SNI picked the vhost: its settings govern the
         * session, the base server of the port does not */
        h2_c1_ctx_get(c, 1)->server = s;
        ok = h2_c1_tls_ok(c, s);
        if (ok == 0) {
            ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, c, APLOGNO(21040)
                          "h2: not proposing h2, TLS is not modern enough "
                          "(H2ModernTLSOnly)");
            return DECLINED;
        }
        APR_ARRAY_PUSH(proposals, const char *) = H2_PROTO_TLS;
        return OK;
    }
    return DECLINED;
}

static int h2_protocol_switch(conn_rec *c, request_rec *r, server_rec *s,
                              const char *protocol)
{
    h2_c1_ctx *ctx;

    if (c->master || (strcmp(protocol, H2_PROTO_TLS)
                      && strcmp(protocol, H2_PROTO_CLEAR))) {
        return DECLINED;
    }
    ctx = h2_c1_ctx_get(c, 1);
    if (ctx->protocol) {
        return DECLINED;
    }
    ctx->protocol = (!strcmp(protocol, H2_PROTO_TLS))? H2_PROTO_TLS : H2_PROTO_CLEAR;
    if (!r) {
        /* ALPN during the handshake: the connection processing that
         * triggered it finds the protocol and runs the session */
        return OK;
    }
    h2_c1_run_upgraded(c, r);
    return OK;
}

static const char *h2_protocol_get(const conn_rec *c)
{
    h2_c1_ctx *ctx;
    if (c->master) {
        c = c->master;
    }
    ctx = h2_c1_ctx_get((conn_rec *)c, 0);
    return ctx? ctx->protocol : NULL;
}

void h2_protocol_register_hooks(void)
{
    ap_hook_protocol_propose(h2_protocol_propose, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_protocol_switch(h2_protocol_switch, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_protocol_get(h2_protocol_get, NULL, NULL, APR_HOOK_MIDDLE);
}
