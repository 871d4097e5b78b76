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
#include <apr_strings.h>
#include <apr_lib.h>
#include <apr_allocator.h>
#include <httpd.h>
#include <mpm_common.h>

#include "h2.h"
#include "h2_headers_check.h"
#include "h2_util.h"

apr_size_t h2_util_max_free(apr_size_t dflt)
{
    apr_size_t max = ap_max_mem_free;   /* 0: MaxMemFree not set */

    if (max == APR_ALLOCATOR_MAX_FREE_UNLIMITED) {
        return dflt;
    }
    return (dflt == APR_ALLOCATOR_MAX_FREE_UNLIMITED || max < dflt)? max : dflt;
}

int h2_util_cache_max(int max, apr_size_t size)
{
    apr_size_t bound = ap_max_mem_free;

    if (bound == APR_ALLOCATOR_MAX_FREE_UNLIMITED || size == 0
        || bound / size >= (apr_size_t)max) {
        return max;
    }
    return (int)(bound / size);
}

const char *h2_util_error_str(uint32_t code)
{
    static const char *names[] = {
        "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
        "SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR",
        "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR",
        "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
    };
    return code < sizeof(names)/sizeof(names[0])? names[code] : "UNKNOWN_ERROR";
}

typedef struct {
    apr_pool_t *p;
    nghttp2_nv *nv;
    size_t n, cap;
} nv_ctx;

static int add_nv(void *ctx, const char *name, apr_size_t nlen,
                  const char *value, apr_size_t vlen)
{
    nv_ctx *x = ctx;
    char *lname;
    apr_size_t i;

    if (x->n >= x->cap) {
        return 0;
    }
    lname = apr_pstrmemdup(x->p, name, nlen);
    for (i = 0; i < nlen; ++i) {
        lname[i] = (char)apr_tolower(lname[i]);
    }
    if (!h2_hdr_name_valid(lname, nlen) || h2_hdr_is_connection_specific(lname, nlen)) {
        return 1;
    }
    /* handlers may leave whitespace around values; HTTP/2 forbids it */
    while (vlen > 0 && (value[0] == ' ' || value[0] == '\t')) {
        ++value; --vlen;
    }
    while (vlen > 0 && (value[vlen-1] == ' ' || value[vlen-1] == '\t')) {
        --vlen;
    }
    if (!h2_hdr_value_valid(value, vlen)) {
        return 1;
    }
    x->nv[x->n].name = (uint8_t *)lname;
    x->nv[x->n].namelen = nlen;
    x->nv[x->n].value = (uint8_t *)value;
    x->nv[x->n].valuelen = vlen;
    x->nv[x->n].flags = NGHTTP2_NV_FLAG_NONE;
    x->n++;
    return 1;
}

apr_status_t h2_util_chunk_to_nv(const h2_hchunk *c, apr_pool_t *p,
                                 nghttp2_nv **pnv, size_t *pnvlen,
                                 int with_status)
{
    nv_ctx x;
    apr_size_t nfields = 0;
    const char *d = c->data, *end = c->data + c->end;

    /* each field is two NUL terminated strings */
    for (; d < end; ++d) {
        if (!*d) ++nfields;
    }
    x.p = p;
    x.cap = nfields / 2 + 1;
    x.nv = apr_palloc(p, x.cap * sizeof(nghttp2_nv));
    x.n = 0;
    if (with_status) {
        char *st = apr_itoa(p, c->status);
        x.nv[0] = (nghttp2_nv){ (uint8_t *)":status", (uint8_t *)st, 7,
                                strlen(st), NGHTTP2_NV_FLAG_NONE };
        x.n = 1;
    }
    h2_hchunk_fields_do(c, add_nv, &x);
    *pnv = x.nv;
    *pnvlen = x.n;
    return APR_SUCCESS;
}
