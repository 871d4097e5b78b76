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
/* The chunks response and request data cross between threads in, and their
 * recycling. */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <apr_strings.h>
#include <apr_buckets.h>
#include <apr_thread_mutex.h>

#include "h2_handoff.h"
#include "h2_headers_check.h"

static int size_class(apr_size_t cap)
{
    int k = 0;
    apr_size_t sz = 0;
    while (sz < cap && k < H2_HCLASSES - 1) {
        sz = sz? 2 * sz : 1024;
        ++k;
    }
    return (cap <= sz)? k : -1;
}

static apr_size_t class_size(int k)
{
    return k? ((apr_size_t)1024 << (k - 1)) : 0;
}

static apr_thread_mutex_t *spare_mutex;
static h2_hchunk *spare;
static int nspare, spare_max;

static apr_status_t hspare_cleanup(void *data)
{
    h2_hchunk *c;
    (void)data;
    while ((c = spare) != NULL) {
        spare = c->next;
        free(c);
    }
    nspare = 0;
    spare_mutex = NULL;
    return APR_SUCCESS;
}

apr_status_t h2_hspare_child_init(apr_pool_t *pchild, int max)
{
    apr_status_t rv = apr_thread_mutex_create(&spare_mutex, APR_THREAD_MUTEX_DEFAULT, pchild);
    if (rv == APR_SUCCESS) {
        spare_max = max;
        apr_pool_cleanup_register(pchild, NULL, hspare_cleanup, apr_pool_cleanup_null);
    }
    return rv;
}

void h2_hspare_child_quiet(void)
{
    h2_hchunk *c;

    if (!spare_mutex) {
        return;
    }
    apr_thread_mutex_lock(spare_mutex);
    c = spare;
    spare = NULL;
    nspare = 0;
    apr_thread_mutex_unlock(spare_mutex);
    while (c) {
        h2_hchunk *next = c->next;
        free(c);
        c = next;
    }
}

/* Keep a full-size chunk in the child's cache, or free it. */
static void hspare_put(void *base)
{
    h2_hchunk *c = base;

    if (spare_mutex && c->cap == H2_HCHUNK_SIZE) {
        apr_thread_mutex_lock(spare_mutex);
        if (nspare < spare_max) {
            c->next = spare;
            spare = c;
            ++nspare;
            c = NULL;
        }
        apr_thread_mutex_unlock(spare_mutex);
    }
    free(c);
}

static h2_hchunk *hspare_get(void)
{
    h2_hchunk *c = NULL;

    /* spare is read under the lock only: a peek without it raced with the
     * workers' hspare_put() (a data race, whatever value it read), and
     * this runs only when a connection's own cache has no chunk */
    if (spare_mutex) {
        apr_thread_mutex_lock(spare_mutex);
        if ((c = spare) != NULL) {
            spare = c->next;
            --nspare;
        }
        apr_thread_mutex_unlock(spare_mutex);
    }
    return c;
}

h2_hchunk *h2_hpool_get(h2_hpool *hp, h2_hchunk_type type, apr_size_t cap)
{
    h2_hchunk *c;
    int k = size_class(cap);

    if (k >= 0 && hp->free[k]) {
        c = hp->free[k];
        hp->free[k] = c->next;
        hp->nclass[k]--;
        hp->nfree--;
        hp->free_bytes -= c->cap;
    }
    else {
        apr_size_t alloc = (k >= 0)? class_size(k) : cap;
        c = (alloc == H2_HCHUNK_SIZE)? hspare_get() : NULL;
        if (!c) {
            c = malloc(sizeof(*c) + alloc);
            if (!c) {
                abort();  /* as APR does when memory runs out */
            }
            c->cap = alloc;
        }
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
    c->nfields = 0;
    return c;
}

void h2_hpool_put(h2_hpool *hp, h2_hchunk *c)
{
    int k;

    if (c->mm) {
        /* slices written out already hold their own references */
        apr_bucket_destroy((apr_bucket *)c->mm);
        c->mm = NULL;
    }
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
    k = size_class(c->cap);
    if (k >= 0 && class_size(k) == c->cap && hp->nclass[k] < hp->max_free
        && hp->free_bytes + c->cap <= H2_HPOOL_MAX_FREE_BYTES) {
        c->next = hp->free[k];
        hp->free[k] = c;
        hp->nclass[k]++;
        hp->nfree++;
        hp->free_bytes += c->cap;
    }
    else {
        hspare_put(c);
    }
}

void h2_hpool_trim(h2_hpool *hp, int keep)
{
    int k;
    for (k = 0; k < H2_HCLASSES; ++k) {
        while (hp->nclass[k] > keep && hp->free[k]) {
            h2_hchunk *c = hp->free[k];
            hp->free[k] = c->next;
            hp->nclass[k]--;
            hp->nfree--;
            hp->free_bytes -= c->cap;
            free(c);
        }
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

apr_bucket *h2_hchunk_bucket(h2_hchunk *c, apr_bucket_alloc_t *list)
{
    apr_size_t off = (apr_size_t)(c->data - (char *)c);
    apr_bucket *b = apr_bucket_heap_create((const char *)c, off + c->end, hspare_put, list);

    /* the chunk comes back to the cache (or free()): the bucket's base is
     * the chunk itself */
    b->start = (apr_off_t)(off + c->start);
    b->length = c->end - c->start;
    return b;
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

/* Layout: for each field, its name length and value length (4 bytes
 * each, native order), then name and value, unterminated; the end of data
 * marks the end of the list. */
#define FIELD_HDR 8

/* The bytes the fields of a (entries e) take serialized; the lengths of
 * the first 64 fields go to lens (name, value, name, ...). */
static apr_size_t fields_len(const apr_array_header_t *a, const apr_table_entry_t *e,
                             apr_uint32_t *lens)
{
    apr_size_t len = 0;
    int i;

    for (i = 0; a && i < a->nelts; ++i) {
        if (e[i].key && e[i].val) {
            apr_size_t nl = strlen(e[i].key), vl = strlen(e[i].val);
            if (i < 64) {
                lens[2*i] = (apr_uint32_t)nl;
                lens[2*i+1] = (apr_uint32_t)vl;
            }
            len += FIELD_HDR + nl + vl;
        }
    }
    return len;
}

/* Where fields are serialized to, and what came of it. */
typedef struct {
    char *p;                /* where the next field goes */
    int nfields;
    int nbad;               /* fields HTTP cannot carry (checked only) */
} fields_out;

/* Serialize the fields of a (entries e, the lengths of the first 64 in
 * lens) to o: as h2_hdr_out_field_checked takes them when checked, the
 * ones HTTP cannot carry named to bad (if given), else as
 * h2_hdr_out_field takes them. */
static void fields_put(const apr_array_header_t *a, const apr_table_entry_t *e,
                       const apr_uint32_t *lens, int checked, fields_out *o,
                       h2_hfield_bad_cb *bad, void *ctx)
{
    int i;

    for (i = 0; a && i < a->nelts; ++i) {
        const char *v;
        apr_uint32_t nl, vl;
        apr_size_t vlen;
        int res;

        if (!e[i].key || !e[i].val) {
            continue;
        }
        nl = (i < 64)? lens[2*i] : (apr_uint32_t)strlen(e[i].key);
        v = e[i].val;
        vlen = (i < 64)? lens[2*i+1] : strlen(v);
        res = checked? h2_hdr_out_field_checked(e[i].key, nl, o->p + FIELD_HDR, &v, &vlen)
                     : h2_hdr_out_field(e[i].key, nl, o->p + FIELD_HDR, &v, &vlen);
        if (res < 0) {
            ++o->nbad;
            if (bad) {
                bad(ctx, e[i].key);
            }
            continue;
        }
        if (res == 0) {
            continue;
        }
        vl = (apr_uint32_t)vlen;
        memcpy(o->p, &nl, 4);
        memcpy(o->p + 4, &vl, 4);
        memcpy(o->p + FIELD_HDR + nl, v, vl);
        o->p += FIELD_HDR + nl + vl;
        o->nfields++;
    }
}

h2_hchunk *h2_hchunk_fields(h2_hpool *hp, h2_hchunk_type type, int status,
                            const apr_table_t *t)
{
    const apr_array_header_t *a = t? apr_table_elts(t) : NULL;
    const apr_table_entry_t *e = a? (const apr_table_entry_t *)a->elts : NULL;
    apr_uint32_t lens[2 * 64];      /* the lengths of the first 64 fields */
    h2_hchunk *c = h2_hpool_get(hp, type, fields_len(a, e, lens));
    fields_out o = { NULL, 0, 0 };

    c->status = status;
    o.p = c->data;
    fields_put(a, e, lens, 0, &o, NULL, NULL);
    c->nfields = o.nfields;
    c->end = (apr_size_t)(o.p - c->data);
    return c;
}

int h2_hfields_build(apr_pool_t *pool, const apr_table_t *t, h2_hfields *hf,
                     h2_hfield_bad_cb *bad, void *ctx)
{
    const apr_array_header_t *a = apr_table_elts(t);
    const apr_table_entry_t *e = (const apr_table_entry_t *)a->elts;
    apr_uint32_t lens[2 * 64];      /* the lengths of the first 64 fields */
    apr_size_t len = fields_len(a, e, lens);
    fields_out o = { NULL, 0, 0 };

    memset(hf, 0, sizeof(*hf));
    hf->built = 1;
    hf->data = o.p = apr_palloc(pool, len? len : 1);
    fields_put(a, e, lens, 1, &o, bad, ctx);
    hf->len = (apr_size_t)(o.p - hf->data);
    hf->nfields = o.nfields;
    return o.nbad;
}

h2_hchunk *h2_hchunk_hfields(h2_hpool *hp, h2_hchunk_type type, int status,
                             const h2_hfields *hf)
{
    h2_hchunk *c = h2_hpool_get(hp, type, hf->len);
    c->status = status;
    memcpy(c->data, hf->data, hf->len);
    c->end = hf->len;
    c->nfields = hf->nfields;
    return c;
}

int h2_hchunk_fields_do(const h2_hchunk *c, h2_hfield_cb *cb, void *ctx)
{
    const char *p = c->data, *end = c->data + c->end;
    while (p < end) {
        apr_uint32_t nl, vl;
        memcpy(&nl, p, 4);
        memcpy(&vl, p + 4, 4);
        if (!cb(ctx, p + FIELD_HDR, nl, p + FIELD_HDR + nl, vl)) {
            return 0;
        }
        p += FIELD_HDR + nl + vl;
    }
    return 1;
}
