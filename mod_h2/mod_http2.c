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
/* mod_h2: HTTP/2 for Apache httpd. Hooks into httpd's connection and
 * protocol phases; everything else lives in the h2_* files. */

#include <apr_strings.h>
#include <httpd.h>
#include <http_config.h>
#include <http_connection.h>
#include <http_core.h>
#include <http_log.h>
#include <http_protocol.h>
#include <ap_mpm.h>
#include <mpm_common.h>
#include <nghttp2/nghttp2.h>

#include "h2.h"
#include "h2_config.h"
#include "h2_c1.h"
#include "h2_c1_idle.h"
#include "h2_c1_io.h"
#include "h2_c1_wait.h"
#include "h2_fmap.h"
#include "h2_c2.h"
#include "h2_handoff.h"
#include "h2_protocol.h"
#include "h2_status.h"
#include "h2_stream.h"
#include "h2_workers.h"
#include "h2_util.h"
#include "h2_read_timeout_conftree.h"
#include "h2_request.h"
#include "h2_vars.h"

static int h2_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                          apr_pool_t *ptemp, server_rec *s)
{
    nghttp2_info *ngh = nghttp2_version(0);

    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG) {
        return OK;
    }
    h2_read_timeout_post_config(pconf, s);
    h2_status_post_config(pconf, s);
    ap_log_error(APLOG_MARK, APLOG_INFO, 0, s, APLOGNO(21060)
                 "mod_h2 %s (nghttp2 %s), mpm %s, %s",
                 MOD_H2_VERSION, ngh->version_str, ap_show_mpm(),
                 h2_config_check_workers(s, ptemp));
    return OK;
}

/* The child went quiet after work (h2_workers_on_quiet): what its caches
 * keep for busy times goes back. A burst of thousands of streams (clients
 * that do not read) or an upload's chunks otherwise left tens of MB kept
 * for good. 1 while streams still hold the stream allocator. */
static int h2_child_quiet(void)
{
    h2_c2_child_quiet();
    h2_hspare_child_quiet();
    return h2_stream_child_quiet();
}

/* Spare body chunks a child keeps: MaxMemFree for each MPM thread, as the
 * stream allocator, at most H2_HSPARE_MAX. */
static int hspare_max(void)
{
    int threads = 1, n = h2_util_cache_max(H2_HSPARE_MAX, H2_HCHUNK_SIZE);

    if (ap_mpm_query(AP_MPMQ_MAX_THREADS, &threads) != APR_SUCCESS || threads < 1) {
        threads = 1;
    }
    return (n >= H2_HSPARE_MAX / threads)? H2_HSPARE_MAX : n * threads;
}

static void h2_child_init(apr_pool_t *pchild, server_rec *s)
{
    /* first: its cleanup then runs after the workers have stopped */
    apr_status_t rv = h2_fmap_child_init(pchild);

    h2_c1_wait_child_init(pchild);
    h2_status_child_init(pchild);
    h2_request_child_init();
    if (rv == APR_SUCCESS) {
        rv = h2_c2_child_init(pchild, s);
    }
    if (rv == APR_SUCCESS) {
        rv = h2_c1_idle_child_init(pchild, s);
    }
    if (rv == APR_SUCCESS) {
        rv = h2_c1_io_child_init(pchild);
    }
    if (rv == APR_SUCCESS) {
        rv = h2_stream_child_init(pchild);
    }
    if (rv == APR_SUCCESS) {
        rv = h2_hspare_child_init(pchild, hspare_max());
    }
    if (rv == APR_SUCCESS) {
        h2_workers_on_quiet(h2_child_quiet);
    }
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, APLOGNO(21061)
                     "mod_h2: child init failed, HTTP/2 will not work");
    }
}

static void h2_register_hooks(apr_pool_t *p)
{
    ap_hook_post_config(h2_post_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_child_init(h2_child_init, NULL, NULL, APR_HOOK_MIDDLE);
    /* before httpd's HTTP/1.1 connection handler */
    ap_hook_process_connection(h2_c1_process_connection, NULL, NULL,
                               APR_HOOK_FIRST);
    ap_hook_pre_close_connection(h2_c1_pre_close, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_child_stopping(h2_c1_idle_child_stopping, NULL, NULL, APR_HOOK_MIDDLE);
    h2_protocol_register_hooks();
    h2_c2_register_hooks();
    h2_vars_register_hooks();
    h2_status_register_hooks();
}

AP_DECLARE_MODULE(http2) = {
    STANDARD20_MODULE_STUFF,
    h2_config_create_dir,
    h2_config_merge,
    h2_config_create_srv,
    h2_config_merge,
    h2_cmds,
    h2_register_hooks,
#if defined(AP_MODULE_FLAG_ALWAYS_MERGE)
    AP_MODULE_FLAG_ALWAYS_MERGE
#endif
};
