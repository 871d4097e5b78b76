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
/* nghttp2's memory for one session: small blocks recycled through free
 * lists. */

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "h2_ngmem.h"

/* Every block starts with a header holding its class (or -1 for a block
 * from malloc) and, for those, its size; 16 bytes keep the payload aligned
 * for any type. */
typedef union {
    struct {
        int cls;
        size_t size;
    } h;
    max_align_t align;
} blk_hdr;

#define HDR_SIZE sizeof(blk_hdr)

static size_t class_size(int k)
{
    return (size_t)32 << k;
}

static int class_of(size_t size)
{
    int k = 0;
    while (k < H2_NGMEM_CLASSES && class_size(k) < size) {
        ++k;
    }
    return k < H2_NGMEM_CLASSES? k : -1;
}

static void *ngmem_malloc(size_t size, void *ud)
{
    h2_ngmem *m = ud;
    int k = class_of(size);
    blk_hdr *b;

    if (k >= 0 && m->free[k]) {
        b = m->free[k];
        m->free[k] = *(void **)(b + 1);
        m->nfree[k]--;
        return b + 1;
    }
    b = malloc(HDR_SIZE + (k >= 0? class_size(k) : size));
    if (!b) {
        return NULL;
    }
    b->h.cls = k;
    b->h.size = size;
    return b + 1;
}

static void ngmem_free(void *ptr, void *ud)
{
    h2_ngmem *m = ud;
    blk_hdr *b;
    int k;

    if (!ptr) {
        return;
    }
    b = (blk_hdr *)ptr - 1;
    k = b->h.cls;
    if (k >= 0 && m->nfree[k] < m->max_free) {
        *(void **)ptr = m->free[k];
        m->free[k] = b;
        m->nfree[k]++;
        return;
    }
    free(b);
}

static void *ngmem_calloc(size_t nmemb, size_t size, void *ud)
{
    void *p;
    if (size && nmemb > (size_t)-1 / size) {
        return NULL;
    }
    p = ngmem_malloc(nmemb * size, ud);
    if (p) {
        memset(p, 0, nmemb * size);
    }
    return p;
}

static void *ngmem_realloc(void *ptr, size_t size, void *ud)
{
    blk_hdr *b;
    size_t have;
    void *np;

    if (!ptr) {
        return ngmem_malloc(size, ud);
    }
    b = (blk_hdr *)ptr - 1;
    have = (b->h.cls >= 0)? class_size(b->h.cls) : b->h.size;
    if (size <= have) {
        return ptr;
    }
    np = ngmem_malloc(size, ud);
    if (np) {
        memcpy(np, ptr, have);
        ngmem_free(ptr, ud);
    }
    return np;
}

void h2_ngmem_init(h2_ngmem *m, int max_free)
{
    memset(m, 0, sizeof(*m));
    m->max_free = max_free;
    m->mem.mem_user_data = m;
    m->mem.malloc = ngmem_malloc;
    m->mem.free = ngmem_free;
    m->mem.calloc = ngmem_calloc;
    m->mem.realloc = ngmem_realloc;
}

void h2_ngmem_trim(h2_ngmem *m)
{
    int k;
    for (k = 0; k < H2_NGMEM_CLASSES; ++k) {
        while (m->free[k]) {
            blk_hdr *b = m->free[k];
            m->free[k] = *(void **)(b + 1);
            free(b);
        }
        m->nfree[k] = 0;
    }
}
