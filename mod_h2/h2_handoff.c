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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <apr_strings.h>
#include <apr_buckets.h>

#include "h2_handoff.h"

h2_hchunk *h2_hpool_get(h2_hpool *hp, h2_hchunk_type type, apr_size_t cap)
{
    h2_hchunk *c;

    if (cap == H2_HCHUNK_SIZE && hp->free) {
        c = hp->free;
        hp->free = c->next;
        hp->nfree--;
    }
    else {
        /* standard chunks are recycled, so a bit larger is fine; small ones
         * (fields, short bodies) are made to measure */
        apr_size_t alloc = (cap == 0)? 0 : cap;
        if (alloc > H2_HCHUNK_SIZE / 2 && alloc < H2_HCHUNK_SIZE) {
            alloc = H2_HCHUNK_SIZE;
        }
        c = malloc(sizeof(*c) + alloc);
        if (!c) {
            abort();  /* as APR does when memory runs out */
        }
        c->cap = alloc;
    }
    c->next = NULL;
    c->type = type;
    c->status = 0;
    c->start = c->end = 0;
    c->fd = -1;
    c->fd_sendfile = c->fd_mmap = 0;
    c->foff = 0;
    c->flen = 0;
    c->file = NULL;
    c->mm = NULL;
    return c;
}

void h2_hpool_put(h2_hpool *hp, h2_hchunk *c)
{
    if (c->mm) {
        /* slices written out already hold their own references */
        apr_bucket_destroy((apr_bucket *)c->mm);
        c->mm = NULL;
    }
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
    if (c->cap == H2_HCHUNK_SIZE && hp->nfree < hp->max_free) {
        c->next = hp->free;
        hp->free = c;
        hp->nfree++;
    }
    else {
        free(c);
    }
}

void h2_hpool_trim(h2_hpool *hp, int keep)
{
    while (hp->nfree > keep && hp->free) {
        h2_hchunk *c = hp->free;
        hp->free = c->next;
        hp->nfree--;
        free(c);
    }
}

apr_size_t h2_hchunk_cost(const h2_hchunk *c)
{
    switch (c->type) {
    case H2_HC_DATA: return c->end - c->start;
    case H2_HC_FILE: return H2_HCHUNK_FILE_COST;
    default: return 0;
    }
}

void h2_hqueue_append(h2_hqueue *q, h2_hchunk *c)
{
    c->next = NULL;
    if (q->last) {
        q->last->next = c;
    }
    else {
        q->first = c;
    }
    q->last = c;
    q->mem += h2_hchunk_cost(c);
}

h2_hchunk *h2_hqueue_pop(h2_hqueue *q)
{
    h2_hchunk *c = q->first;
    if (c) {
        q->first = c->next;
        if (!q->first) {
            q->last = NULL;
        }
        c->next = NULL;
        q->mem -= h2_hchunk_cost(c);
    }
    return c;
}

void h2_hqueue_move(h2_hqueue *dst, h2_hqueue *src)
{
    if (!src->first) {
        return;
    }
    if (dst->last) {
        dst->last->next = src->first;
    }
    else {
        dst->first = src->first;
    }
    dst->last = src->last;
    dst->mem += src->mem;
    src->first = src->last = NULL;
    src->mem = 0;
}

void h2_hqueue_write(h2_hqueue *q, h2_hpool *hp, const char *data, apr_size_t len)
{
    while (len > 0) {
        h2_hchunk *c = q->last;
        apr_size_t n;

        if (!c || c->type != H2_HC_DATA || c->end >= c->cap) {
            /* A small response gets a chunk its size, not 16 KB: under a
             * burst of requests that decides the peak memory. Chunks double
             * as a response goes on. */
            apr_size_t cap = H2_HCHUNK_SIZE;
            if (len < H2_HCHUNK_SIZE) {
                apr_size_t prev = (c && c->type == H2_HC_DATA)? c->cap : 0;
                cap = (len > H2_HCHUNK_MIN)? len : H2_HCHUNK_MIN;
                if (cap < 2 * prev) cap = 2 * prev;
                if (cap > H2_HCHUNK_SIZE) cap = H2_HCHUNK_SIZE;
            }
            c = h2_hpool_get(hp, H2_HC_DATA, cap);
            h2_hqueue_append(q, c);
        }
        n = c->cap - c->end;
        if (n > len) {
            n = len;
        }
        memcpy(c->data + c->end, data, n);
        c->end += n;
        q->mem += n;
        data += n;
        len -= n;
    }
}

void h2_hqueue_clear(h2_hqueue *q, h2_hpool *hp)
{
    h2_hchunk *c;
    while ((c = h2_hqueue_pop(q)) != NULL) {
        h2_hpool_put(hp, c);
    }
}

/* Layout: for each field, name and value each NUL terminated, one after
 * the other; the end of data marks the end of the list. */
typedef struct {
    apr_size_t len;
    char *p;
} fields_ctx;

static int field_len(void *ctx, const char *key, const char *val)
{
    fields_ctx *fc = ctx;
    fc->len += strlen(key) + strlen(val) + 2;
    return 1;
}

static int field_copy(void *ctx, const char *key, const char *val)
{
    fields_ctx *fc = ctx;
    apr_size_t kl = strlen(key) + 1, vl = strlen(val) + 1;
    memcpy(fc->p, key, kl);
    memcpy(fc->p + kl, val, vl);
    fc->p += kl + vl;
    return 1;
}

h2_hchunk *h2_hchunk_fields(h2_hpool *hp, h2_hchunk_type type, int status,
                            const apr_table_t *t)
{
    fields_ctx fc = { 0, NULL };
    h2_hchunk *c;

    if (t) {
        apr_table_do(field_len, &fc, t, NULL);
    }
    c = h2_hpool_get(hp, type, fc.len);
    c->status = status;
    fc.p = c->data;
    if (t) {
        apr_table_do(field_copy, &fc, t, NULL);
    }
    c->end = fc.len;
    return c;
}

int h2_hchunk_fields_do(const h2_hchunk *c, h2_hfield_cb *cb, void *ctx)
{
    const char *p = c->data, *end = c->data + c->end;
    while (p < end) {
        apr_size_t nl = strlen(p);
        const char *v = p + nl + 1;
        apr_size_t vl = strlen(v);
        if (!cb(ctx, p, nl, v, vl)) {
            return 0;
        }
        p = v + vl + 1;
    }
    return 1;
}
