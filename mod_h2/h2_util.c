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
/* Small helpers shared by the module's files. */

#include <apr_strings.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <apr_lib.h>
#include <apr_allocator.h>
#include <httpd.h>
#include <mpm_common.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

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
    nghttp2_nv *nv;
    size_t n;
    uint8_t flags;
} nv_ctx;

static int add_nv(void *ctx, const char *name, apr_size_t nlen,
                  const char *value, apr_size_t vlen)
{
    nv_ctx *x = ctx;
    /* the worker stored them ready to go: lowercase, checked, trimmed */
    x->nv[x->n].name = (uint8_t *)name;
    x->nv[x->n].namelen = nlen;
    x->nv[x->n].value = (uint8_t *)value;
    x->nv[x->n].valuelen = vlen;
    x->nv[x->n].flags = x->flags;
    x->n++;
    return 1;
}

apr_status_t h2_util_chunk_to_nv(const h2_hchunk *c, apr_pool_t *p,
                                 nghttp2_nv **pnv, size_t *pnvlen,
                                 int with_status, int no_copy)
{
    nv_ctx x;

    x.nv = apr_palloc(p, (c->nfields + 1) * sizeof(nghttp2_nv));
    x.n = 0;
    x.flags = no_copy? (NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE)
                     : NGHTTP2_NV_FLAG_NONE;
    if (with_status) {
        char *st = apr_palloc(p, 4);
        int code = (c->status >= 100 && c->status <= 999)? c->status : 500;
        st[0] = (char)('0' + code / 100);
        st[1] = (char)('0' + code / 10 % 10);
        st[2] = (char)('0' + code % 10);
        st[3] = 0;
        x.nv[0] = (nghttp2_nv){ (uint8_t *)":status", (uint8_t *)st, 7, 3,
                                x.flags };
        x.n = 1;
    }
    h2_hchunk_fields_do(c, add_nv, &x);
    *pnv = x.nv;
    *pnvlen = x.n;
    return APR_SUCCESS;
}

void h2_util_release_free_memory(void)
{
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

void h2_util_thread_name(const char *name)
{
#if defined(__linux__)
    prctl(PR_SET_NAME, name, 0, 0, 0);
#else
    (void)name;
#endif
}
