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
 * (SetHandler h2-optfn-test). Built with apxs by the test. */

#include <httpd.h>
#include <http_config.h>
#include <http_protocol.h>
#include <apr_optional.h>
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

static void register_hooks(apr_pool_t *p)
{
    ap_hook_handler(optfn_handler, NULL, NULL, APR_HOOK_MIDDLE);
}

AP_DECLARE_MODULE(h2_optfn_test) = {
    STANDARD20_MODULE_STUFF, NULL, NULL, NULL, NULL, NULL, register_hooks
};
