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
/* Variables of HTTP/2 requests, for ap_expr and other modules. */
#include <apr_optional.h>
#include <apr_strings.h>
#include <httpd.h>
#include <http_config.h>
#include <ap_expr.h>
#include <mod_http2.h>

#include "h2.h"
#include "h2_c1.h"
#include "h2_config.h"
#include "h2_vars.h"

extern module AP_MODULE_DECLARE_DATA http2_module;

/* 1 when c is an HTTP/2 connection of ours: a client connection that
 * speaks it, or the secondary connection of one of its streams. */
static int conn_is_h2(conn_rec *c)
{
    h2_c1_ctx *ctx;
    if (!c) {
        return 0;
    }
    if (c->master) {
        /* our secondaries carry our state; other modules' do not */
        return ap_get_module_config(c->conn_config, &http2_module) != NULL;
    }
    ctx = h2_c1_ctx_get(c, 0);
    return ctx && ctx->protocol;
}

/* The variables, and what a request that is not on HTTP/2 sees. */
static const struct {
    const char *name;
    const char *off;
} vars[] = {
    { "HTTP2", "off" },
    { "H2PUSH", "off" },
    { "H2_PUSH", "off" },
    { "H2_PUSHED", "" },
    { "H2_PUSHED_ON", "" },
    { "H2_STREAM_ID", "" },
    { "H2_STREAM_TAG", "" },
};

static int var_index(const char *name)
{
    int i;
    for (i = 0; i < (int)(sizeof(vars) / sizeof(vars[0])); ++i) {
        if (!strcasecmp(name, vars[i].name)) {
            return i;
        }
    }
    return -1;
}

/* The value of variable i for r (or for connection c, without a request). */
static const char *var_value(int i, conn_rec *c, request_rec *r)
{
    const char *v;
    if (r) {
        c = r->connection;
    }
    if (!conn_is_h2(c)) {
        return vars[i].off;
    }
    if (i == 0) {
        return "on";
    }
    /* a stream's request has them in its environment (h2_request.c) */
    v = r? apr_table_get(r->subprocess_env, vars[i].name) : NULL;
    return v? v : vars[i].off;
}

static const char *expr_var(ap_expr_eval_ctx_t *ctx, const void *data)
{
    return var_value((int)(apr_uintptr_t)data, ctx->c, ctx->r);
}

static int h2_expr_lookup(ap_expr_lookup_parms *parms)
{
    int i;
    if (parms->type != AP_EXPR_FUNC_VAR || (i = var_index(parms->name)) < 0) {
        return DECLINED;
    }
    *parms->func = expr_var;
    *parms->data = (const void *)(apr_uintptr_t)i;
    return OK;
}

static char *http2_var_lookup(apr_pool_t *p, server_rec *s, conn_rec *c,
                              request_rec *r, char *name)
{
    int i = name? var_index(name) : -1;
    return (i < 0)? NULL : apr_pstrdup(p, var_value(i, c, r));
}

static int http2_is_h2(conn_rec *c)
{
    return conn_is_h2(c);
}

static void http2_get_num_workers(server_rec *s, int *minw, int *maxw)
{
    int idle;
    h2_config_workers(s, minw, maxw, &idle);
}

void h2_vars_register_hooks(void)
{
    ap_hook_expr_lookup(h2_expr_lookup, NULL, NULL, APR_HOOK_MIDDLE);
    APR_REGISTER_OPTIONAL_FN(http2_var_lookup);
    APR_REGISTER_OPTIONAL_FN(http2_is_h2);
    APR_REGISTER_OPTIONAL_FN(http2_get_num_workers);
}
