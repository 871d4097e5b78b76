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

/* A test module for test_pool_tree.py: from inside a request
 * (SetHandler h2-pool-tree), where its pools hang in the process's pool
 * tree. Modules walk up from r->pool to the root and keep process-wide
 * state there (apr-util's driver loader does), so over HTTP/2 the walk
 * must reach the root it reaches over HTTP/1.1, through the child's
 * process pool. With ?dbm=PATH it also opens, writes and closes an SDBM
 * file there, apr-util's DBM driver path that crashed when the root was
 * a pool of the module's. Built with apxs by the test. */

#include <httpd.h>
#include <http_config.h>
#include <http_protocol.h>
#include <apr_strings.h>
#include <apr_dbm.h>
#include <unistd.h>

static apr_pool_t *child_pool;
/* the protocol of this process's first DBM access, for the test to know
 * which way the driver was loaded */
static char first_dbm[16];

static void pooltree_child_init(apr_pool_t *pchild, server_rec *s)
{
    child_pool = pchild;
}

/* Opens the DBM file with the type a query names, stores and reads back
 * a key: 1 when all went well. */
static int dbm_roundtrip(request_rec *r, const char *type, const char *path)
{
    apr_dbm_t *db;
    apr_datum_t key, val, got;

    if (apr_dbm_open_ex(&db, type, path, APR_DBM_RWCREATE, APR_OS_DEFAULT,
                        r->pool) != APR_SUCCESS) {
        return 0;
    }
    key.dptr = "k";
    key.dsize = 1;
    val.dptr = (char *)r->protocol;
    val.dsize = strlen(r->protocol);
    if (apr_dbm_store(db, key, val) != APR_SUCCESS
        || apr_dbm_fetch(db, key, &got) != APR_SUCCESS || got.dsize != val.dsize) {
        apr_dbm_close(db);
        return 0;
    }
    apr_dbm_close(db);
    return 1;
}

static int pooltree_handler(request_rec *r)
{
    apr_pool_t *p, *root = r->pool;
    apr_pool_t *pconf = child_pool? apr_pool_parent_get(child_pool) : NULL;
    int depth = 0, through_child = 0, through_pconf = 0, through_conn = 0;
    const char *type, *path;

    if (!r->handler || strcmp(r->handler, "h2-pool-tree")) {
        return DECLINED;
    }
    for (p = r->pool; p; p = apr_pool_parent_get(p)) {
        root = p;
        depth++;
        through_child |= (p == child_pool);
        through_pconf |= (p == pconf);
        through_conn |= (p == r->connection->pool);
    }
    ap_set_content_type(r, "text/plain");
    ap_rprintf(r, "protocol=%s\n", r->protocol);
    ap_rprintf(r, "root=%pp\n", (void *)root);
    ap_rprintf(r, "depth=%d\n", depth);
    ap_rprintf(r, "through_child_pool=%d\n", through_child);
    ap_rprintf(r, "through_pconf=%d\n", through_pconf);
    ap_rprintf(r, "through_connection_pool=%d\n", through_conn);
    if (r->args && (path = strstr(r->args, "dbm=")) != NULL) {
        type = strstr(r->args, "type=")? strstr(r->args, "type=") + 5 : "SDBM";
        path = apr_pstrndup(r->pool, path + 4, strcspn(path + 4, "&"));
        type = apr_pstrndup(r->pool, type, strcspn(type, "&"));
        if (!first_dbm[0]) {
            apr_cpystrn(first_dbm, r->protocol, sizeof(first_dbm));
        }
        ap_rprintf(r, "pid=%ld\n", (long)getpid());
        ap_rprintf(r, "first_dbm=%s\n", first_dbm);
        ap_rprintf(r, "dbm=%d\n", dbm_roundtrip(r, type, path));
    }
    return OK;
}

static void register_hooks(apr_pool_t *p)
{
    ap_hook_child_init(pooltree_child_init, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_handler(pooltree_handler, NULL, NULL, APR_HOOK_MIDDLE);
}

AP_DECLARE_MODULE(h2_pooltree_test) = {
    STANDARD20_MODULE_STUFF, NULL, NULL, NULL, NULL, NULL, register_hooks
};
