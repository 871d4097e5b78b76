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
/* libFuzzer target for the code that turns a request's header block into
 * method, target and header table (h2_headers_check.c).
 *
 * Input: fields as "name\0value\0" pairs; a first byte below 0x20 picks
 * small limits (and a small connection budget) so the limit paths are
 * reached too. Besides not crashing
 * (ASan/UBSan watch that), whatever the validator accepts must be safe to
 * hand to httpd as an HTTP/1.1-style request, the joined cookie must stay
 * within the field limit, and the budget must get back exactly what the
 * block charged: checked below. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <apr_general.h>
#include <apr_pools.h>
#include <apr_tables.h>

#include "h2_headers_check.h"

static apr_pool_t *root;

static int check_field(void *ctx, const char *key, const char *val)
{
    const char *p;
    /* names: lowercase tokens; values: no CR, LF, NUL, no edge spaces */
    if (!*key) abort();
    for (p = key; *p; ++p) {
        if (*p >= 'A' && *p <= 'Z') abort();
        if (*p == ':' || *p == ' ' || *p == '\r' || *p == '\n') abort();
    }
    if (strchr(val, '\r') || strchr(val, '\n')) abort();
    if (*val && (val[0] == ' ' || val[0] == '\t')) abort();
    if (ctx && ((!strcmp(key, "connection") && !strcmp(val, "Upgrade"))
                || (!strcmp(key, "upgrade") && !strcmp(val, "websocket")))) {
        return 1;   /* what a WebSocket's extended CONNECT becomes */
    }
    if (!strcasecmp(key, "connection") || !strcasecmp(key, "transfer-encoding")
        || !strcasecmp(key, "upgrade") || !strcasecmp(key, "keep-alive")) abort();
    return 1;
}

static void check_token(const char *s)
{
    for (; s && *s; ++s) {
        if ((unsigned char)*s <= 0x20 || *s == 0x7f) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p;
    h2_req_head h;
    h2_hdr_budget budget = { 0, 256 * 1024 };
    /* :protocol (RFC 8441) allowed, except with the small limits */
    h2_hdr_limits lim = { 8190, 100, 8190, 64 * 1024, &budget, 1 };
    size_t i = 0;

    if (!root) {
        apr_initialize();
        apr_pool_create(&root, NULL);
    }
    if (size > 0 && data[0] < 0x20) {
        h2_hdr_limits small = { 64, 4, 64, 512, &budget };
        budget.max = 300;
        lim = small;
        ++i;
    }
    apr_pool_create(&p, root);
    h2_req_head_init(&h, p, &lim);
    while (i < size) {
        const char *name = (const char *)data + i, *value;
        const uint8_t *nend = memchr(data + i, 0, size - i), *vend;
        size_t nlen, vlen;
        if (!nend) break;
        nlen = (size_t)(nend - (data + i));
        value = (const char *)nend + 1;
        i += nlen + 1;
        vend = (i < size)? memchr(data + i, 0, size - i) : NULL;
        vlen = vend? (size_t)(vend - (data + i)) : size - i;
        h2_req_head_add(&h, name, nlen, value, vlen);
        i += vlen + 1;
    }
    if (h2_req_head_end(&h) == H2_HDR_OK) {
        if (!h.method) abort();
        check_token(h.method);
        check_token(h.path);
        check_token(h.authority);
        check_token(h.scheme);
        if (strcmp(h.method, "CONNECT")) {
            if (!h.path || !h.scheme) abort();
            if (h.path[0] != '/' && strcmp(h.path, "*")) abort();
        }
        else if (!h.authority || h.path) abort();
        if (h.websocket && (strcmp(h.method, "GET") || !h.protocol)) abort();
        apr_table_do(check_field, h.websocket? &h : NULL, h.headers, NULL);
    }
    if (h.cookie && sizeof("cookie: ") - 1 + h.cookie_len > lim.max_field_len) abort();
    if (budget.used != h.charged || budget.used > budget.max) abort();
    h2_req_head_release(&h);
    if (budget.used != 0) abort();
    apr_pool_destroy(p);
    return 0;
}
