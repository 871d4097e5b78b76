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
/* Client connections: whether one speaks HTTP/2, and running its session in
 * the MPM's thread. */

#include <apr_strings.h>
#include <httpd.h>
#include <http_core.h>
#include <http_config.h>
#include <http_connection.h>
#include <http_log.h>
#include <http_protocol.h>
#include <http_ssl.h>
#include <util_filter.h>
#include <ap_mpm.h>

#include "h2.h"
#include "h2_config.h"
#include "h2_c1.h"
#include "h2_c1_idle.h"
#include "h2_session.h"
#include "h2_tls_policy.h"

APLOG_USE_MODULE(http2);
extern module AP_MODULE_DECLARE_DATA http2_module;

int h2_c1_tls_ok(conn_rec *c, server_rec *s)
{
    const char *proto, *cipher;

    if (!ap_ssl_conn_is_ssl(c) || !h2_config_sget(s, H2_CONF_MODERN_TLS_ONLY)) {
        return 1;
    }
    proto = ap_ssl_var_lookup(c->pool, s, c, NULL, "SSL_PROTOCOL");
    cipher = ap_ssl_var_lookup(c->pool, s, c, NULL, "SSL_CIPHER");
    if (!proto || !*proto || !cipher || !*cipher) {
        /* not negotiated yet: checked again when the session starts */
        return -1;
    }
    return h2_tls_policy_acceptable(proto, cipher);
}

h2_c1_ctx *h2_c1_ctx_get(conn_rec *c, int create)
{
    h2_c1_ctx *ctx = ap_get_module_config(c->conn_config, &http2_module);
    if (!ctx && create) {
        ctx = apr_pcalloc(c->pool, sizeof(*ctx));
        ap_set_module_config(c->conn_config, &http2_module, ctx);
    }
    return ctx;
}

/* H2Direct: on by default for cleartext, off for TLS (ALPN decides). */
static int direct_allowed(conn_rec *c, int tls)
{
    apr_int64_t direct = h2_config_sget(c->base_server, H2_CONF_DIRECT);
    if (direct == H2_CONF_UNSET) {
        direct = !tls;
    }
    return direct && ap_is_allowed_protocol(c, NULL, NULL,
                                            tls? H2_PROTO_TLS : H2_PROTO_CLEAR);
}

typedef enum {
    H2_START_OTHER,     /* HTTP/1.x (or not yet known) */
    H2_START_PREFACE,   /* the HTTP/2 client preface */
    H2_START_INVALID,   /* neither: no HTTP/1.x request line either */
} h2_start;

/* RFC 9113 3.4: where a client may start with the preface, a start that
 * is neither the preface nor an HTTP/1.x request line is a failed
 * preface, and the connection closes without an HTTP/1.1 answer. */
static h2_start classify_start(const char *buf, apr_size_t len)
{
    const char *eol, *sp1, *sp2;

    if (len >= H2_PREFACE_LEN && !memcmp(buf, H2_PREFACE, H2_PREFACE_LEN)) {
        return H2_START_PREFACE;
    }
    eol = memchr(buf, '\n', len);
    if (!eol) {
        return H2_START_OTHER;
    }
    sp1 = memchr(buf, ' ', (apr_size_t)(eol - buf));
    sp2 = sp1? memchr(sp1 + 1, ' ', (apr_size_t)(eol - sp1 - 1)) : NULL;
    if (sp2 && strncmp(sp2 + 1, "HTTP/", 5)) {
        return H2_START_INVALID;   /* three words, the last not HTTP/x.y */
    }
    return H2_START_OTHER;
}

/* Look at the first bytes without consuming them. On TLS this also runs
 * the handshake, during which ALPN may select h2. */
static h2_start peek_start(conn_rec *c, apr_size_t want)
{
    apr_bucket_brigade *bb = apr_brigade_create(c->pool, c->bucket_alloc);
    char buf[256];
    apr_size_t len = sizeof(buf);
    apr_status_t rv;
    h2_start start = H2_START_OTHER;

    rv = ap_get_brigade(c->input_filters, bb, AP_MODE_SPECULATIVE,
                        APR_BLOCK_READ, (apr_off_t)want);
    if (rv == APR_SUCCESS && want > 1
        && apr_brigade_flatten(bb, buf, &len) == APR_SUCCESS) {
        start = classify_start(buf, len);
    }
    apr_brigade_destroy(bb);
    return start;
}

static int mpm_can_waitio(void)
{
    int can_waitio = 0;
    ap_mpm_query(AP_MPMQ_CAN_WAITIO, &can_waitio);
    return can_waitio;
}

/* The idle connection waits in the MPM; where the MPM can, in its I/O
 * queue, which (unlike keep-alive) it does not cut short when busy, so a
 * client's next request on an idle connection is never lost. */
static void wait_in_mpm(conn_rec *c)
{
    c->keepalive = AP_CONN_KEEPALIVE;
    if (mpm_can_waitio()) {
        c->cs->state = CONN_STATE_ASYNC_WAITIO;
        c->cs->sense = CONN_SENSE_WANT_READ;
    }
    else {
        c->cs->state = CONN_STATE_WRITE_COMPLETION;
    }
}

/* 0 when the socket was closed under us: a stopping event MPM closes the
 * sockets of the connections its workers hold (close_worker_sockets), and
 * a connection handed back to wait for I/O then fails (AH10503). */
static int socket_open(conn_rec *c)
{
    apr_socket_t *sock = ap_get_conn_socket(c);
    apr_os_sock_t fd = -1;
    return sock && apr_os_sock_get(&fd, sock) == APR_SUCCESS && fd >= 0;
}

/* The busy connection had its turn: it waits in the MPM until its socket
 * is writable, which it is at once, i.e. it queues up behind the
 * connections already waiting for a thread. */
static void yield_to_mpm(conn_rec *c)
{
    c->keepalive = AP_CONN_KEEPALIVE;
    c->cs->state = CONN_STATE_ASYNC_WAITIO;
    c->cs->sense = CONN_SENSE_WANT_WRITE;
}

static int run_session(conn_rec *c, h2_c1_ctx *ctx, request_rec *r)
{
    apr_status_t rv;
    int async = 0, how = H2_RUN_BLOCK;

    if (!ctx->session) {
        int tls_ok = h2_c1_tls_ok(c, ctx->server? ctx->server : c->base_server);
        /* HTTP/2 has its own timeouts: the HTTP/1.1 header read timer of
         * mod_reqtimeout would cut long sessions short */
        ap_remove_input_filter_byhandle(c->input_filters, "reqtimeout");
        if (h2_session_create(&ctx->session, c, r, ctx->server) != APR_SUCCESS) {
            c->keepalive = AP_CONN_CLOSE;
            return DONE;
        }
        if (tls_ok == 0) {
            ap_log_cerror(APLOG_MARK, APLOG_INFO, 0, c, APLOGNO(21050)
                          "h2_c1(%ld): TLS protocol or cipher not allowed for "
                          "HTTP/2 (H2ModernTLSOnly), GOAWAY", c->id);
            h2_session_refuse(ctx->session, H2_ERR_INADEQUATE_SECURITY,
                              "TLS protocol or cipher not acceptable for HTTP/2");
            c->keepalive = AP_CONN_CLOSE;
            if (c->cs) c->cs->state = CONN_STATE_LINGER;
            return DONE;
        }
    }
    if (c->cs && !r) {
        ap_mpm_query(AP_MPMQ_IS_ASYNC, &async);
        c->cs->state = CONN_STATE_PROCESSING;
        if (async) {
            how = H2_RUN_MAY_PARK | (mpm_can_waitio()? H2_RUN_MAY_YIELD : 0);
        }
    }
    rv = h2_session_process(ctx->session, how);
    if ((APR_STATUS_IS_EAGAIN(rv) || rv == APR_INCOMPLETE) && !socket_open(c)) {
        rv = APR_EOF;
    }
    if (APR_STATUS_IS_EAGAIN(rv) && c->cs) {
        h2_c1_idle_park(h2_session_idler(ctx->session));
        wait_in_mpm(c);
        return OK;
    }
    if (rv == APR_INCOMPLETE && c->cs) {
        yield_to_mpm(c);
        return OK;
    }
    if (r || !h2_config_mpm_threaded()) {
        /* Streams may still run (the client went away): what httpd does
         * next in this thread (the upgrade request's logging, the
         * connection's close hooks) must not overlap them, as a prefork
         * child runs one request at a time. */
        h2_session_end_streams(ctx->session);
    }
    c->keepalive = AP_CONN_CLOSE;
    if (c->cs) {
        c->cs->state = CONN_STATE_LINGER;
    }
    return DONE;
}

int h2_c1_process_connection(conn_rec *c)
{
    h2_c1_ctx *ctx;
    h2_start start;
    int tls, direct;

    if (c->master) {
        return DECLINED;
    }
    ctx = h2_c1_ctx_get(c, 0);
    if (ctx && ctx->session) {
        /* resumed by the MPM */
        int woken = h2_c1_idle_unpark(h2_session_idler(ctx->session));
        if (woken) {
            h2_session_goodbye(ctx->session, woken == H2_IDLE_STOPPING?
                               "server shutting down" : "idle timeout");
            c->keepalive = AP_CONN_CLOSE;
            if (c->cs) c->cs->state = CONN_STATE_LINGER;
            return DONE;
        }
        return run_session(c, ctx, NULL);
    }
    if (ctx && ctx->checked) {
        return DECLINED;                    /* HTTP/1.1 keep-alive */
    }
    tls = ap_ssl_conn_is_ssl(c);
    /* Over TLS the vhost SNI selects decides (ALPN, during the handshake
     * the peek below completes), not the first vhost of the port */
    if (!tls && !ap_is_allowed_protocol(c, NULL, NULL, H2_PROTO_CLEAR)) {
        return DECLINED;
    }
    ctx = h2_c1_ctx_get(c, 1);
    ctx->checked = 1;
    direct = direct_allowed(c, tls);
    start = peek_start(c, direct? 256 : 1);
    if (!ctx->protocol) {
        if (!direct || start == H2_START_OTHER) {
            return DECLINED;
        }
        if (start == H2_START_INVALID) {
            ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, c, APLOGNO(21051)
                          "h2_c1(%ld): neither HTTP/2 preface nor HTTP/1.x "
                          "request, closing", c->id);
            c->keepalive = AP_CONN_CLOSE;
            c->aborted = 1;
            return DONE;
        }
        ctx->protocol = tls? H2_PROTO_TLS : H2_PROTO_CLEAR;
    }
    ap_log_cerror(APLOG_MARK, APLOG_TRACE1, 0, c, "h2_c1(%ld): speaking %s",
                  c->id, ctx->protocol);
    return run_session(c, ctx, NULL);
}

apr_status_t h2_c1_run_upgraded(conn_rec *c, request_rec *r)
{
    h2_c1_ctx *ctx = h2_c1_ctx_get(c, 1);
    ctx->checked = 1;
    run_session(c, ctx, r);
    return APR_SUCCESS;
}

int h2_c1_pre_close(conn_rec *c)
{
    h2_c1_ctx *ctx;
    if (c->master) {
        return DECLINED;
    }
    ctx = h2_c1_ctx_get(c, 0);
    if (ctx && ctx->session) {
        h2_session_goodbye(ctx->session, "connection closing");
    }
    return DECLINED;
}
