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
/* Kept memory mappings of files served, shared by a child's connections. */

#include <stdlib.h>
#include <sys/mman.h>
#include <apr_portable.h>
#include <apr_thread_mutex.h>
#include <apr_time.h>

#include "h2_fmap.h"

typedef struct fmap_entry {
    apr_dev_t dev;
    apr_ino_t ino;
    apr_off_t size;
    apr_time_t mtime;
    char *addr;
    int refs;              /* buckets (shared parts) holding it */
    int cached;            /* in a slot; if not, unmapped at the last release */
    apr_time_t last_used;
} fmap_entry;

static struct {
    apr_thread_mutex_t *mutex;
    fmap_entry *slot[H2_FMAP_SLOTS];
    apr_size_t mapped;     /* bytes of the entries in slots */
} fm;

static void unmap_entry(fmap_entry *e)
{
    munmap(e->addr, (size_t)e->size);
    free(e);
}

/* Take slot i out of the cache; returns the entry if nobody holds it
 * (to be unmapped once the lock is released). */
static fmap_entry *drop_locked(int i)
{
    fmap_entry *e = fm.slot[i];
    fm.slot[i] = NULL;
    fm.mapped -= (apr_size_t)e->size;
    e->cached = 0;
    return e->refs == 0? e : NULL;
}

static void release(fmap_entry *e)
{
    int gone;
    apr_thread_mutex_lock(fm.mutex);
    gone = (--e->refs == 0 && !e->cached);
    apr_thread_mutex_unlock(fm.mutex);
    if (gone) {
        unmap_entry(e);
    }
}

/* --- the bucket type: a slice of a cached mapping --- */

typedef struct {
    apr_bucket_refcount refcount;
    fmap_entry *e;
} fmap_ref;

static apr_status_t fmap_bucket_read(apr_bucket *b, const char **str,
                                     apr_size_t *len, apr_read_type_e block)
{
    fmap_ref *r = b->data;
    *str = r->e->addr + b->start;
    *len = b->length;
    return APR_SUCCESS;
}

static void fmap_bucket_destroy(void *data)
{
    fmap_ref *r = data;
    if (apr_bucket_shared_destroy(r)) {
        release(r->e);
        apr_bucket_free(r);
    }
}

/* The mapping lives as long as a bucket refers to it, whatever pool the
 * bucket is set aside into. */
static const apr_bucket_type_t fmap_bucket_type = {
    "H2FMAP", 5, APR_BUCKET_DATA,
    fmap_bucket_destroy,
    fmap_bucket_read,
    apr_bucket_setaside_noop,
    apr_bucket_shared_split,
    apr_bucket_shared_copy
};

/* --- the cache --- */

/* Take mappings out of the cache: all (at child exit), or those no bucket
 * holds that were unused for H2_FMAP_IDLE. Held ones are unmapped when
 * their last bucket goes. */
static void sweep(int all)
{
    fmap_entry *gone[H2_FMAP_SLOTS];
    int i, ngone = 0;
    apr_time_t now = apr_time_now();

    apr_thread_mutex_lock(fm.mutex);
    for (i = 0; i < H2_FMAP_SLOTS; ++i) {
        fmap_entry *e = fm.slot[i];
        if (e && (all || (e->refs == 0 && now - e->last_used >= H2_FMAP_IDLE))
            && (gone[ngone] = drop_locked(i)) != NULL) {
            ++ngone;
        }
    }
    apr_thread_mutex_unlock(fm.mutex);
    for (i = 0; i < ngone; ++i) {
        unmap_entry(gone[i]);
    }
}

static apr_status_t fmap_cleanup(void *data)
{
    sweep(1);
    return APR_SUCCESS;
}

apr_status_t h2_fmap_child_init(apr_pool_t *pchild)
{
    apr_status_t rv = apr_thread_mutex_create(&fm.mutex, APR_THREAD_MUTEX_DEFAULT,
                                              pchild);
    if (rv == APR_SUCCESS) {
        /* registered after the mutex was created: runs before it goes */
        apr_pool_cleanup_register(pchild, NULL, fmap_cleanup,
                                  apr_pool_cleanup_null);
    }
    return rv;
}

apr_bucket *h2_fmap_bucket_create(apr_file_t *f, const apr_finfo_t *fi,
                                  apr_bucket_alloc_t *list)
{
    fmap_entry *e = NULL, *gone[H2_FMAP_SLOTS];
    int i, free_slot = -1, ngone = 0;
    apr_os_file_t fd;
    fmap_ref *r;
    apr_bucket *b;
    apr_time_t now;

    if (!fm.mutex
        || (fi->valid & H2_FMAP_FINFO) != H2_FMAP_FINFO
        || fi->size < H2_FMAP_MIN_FILE || fi->size > H2_FMAP_MAX_FILE) {
        return NULL;
    }
    now = apr_time_now();
    apr_thread_mutex_lock(fm.mutex);
    for (i = 0; i < H2_FMAP_SLOTS; ++i) {
        fmap_entry *x = fm.slot[i];
        if (!x) {
            if (free_slot < 0) free_slot = i;
        }
        else if (x->dev == fi->device && x->ino == fi->inode) {
            if (x->size == fi->size && x->mtime == fi->mtime) {
                e = x;
                break;
            }
            /* the file changed since it was mapped */
            if ((gone[ngone] = drop_locked(i)) != NULL) ++ngone;
            if (free_slot < 0) free_slot = i;
        }
    }
    while (!e && (free_slot < 0
                  || fm.mapped + (apr_size_t)fi->size > H2_FMAP_MAX_TOTAL)) {
        /* make room: the least recently used mapping nobody holds */
        int lru = -1;
        for (i = 0; i < H2_FMAP_SLOTS; ++i) {
            if (fm.slot[i] && fm.slot[i]->refs == 0
                && (lru < 0 || fm.slot[i]->last_used < fm.slot[lru]->last_used)) {
                lru = i;
            }
        }
        if (lru < 0) {
            break;
        }
        gone[ngone++] = drop_locked(lru);
        if (free_slot < 0) free_slot = lru;
    }
    if (!e && free_slot >= 0
        && fm.mapped + (apr_size_t)fi->size <= H2_FMAP_MAX_TOTAL
        && apr_os_file_get(&fd, f) == APR_SUCCESS) {
        void *addr = mmap(NULL, (size_t)fi->size, PROT_READ, MAP_SHARED, fd, 0);
        if (addr != MAP_FAILED && (e = calloc(1, sizeof(*e))) != NULL) {
            e->dev = fi->device;
            e->ino = fi->inode;
            e->size = fi->size;
            e->mtime = fi->mtime;
            e->addr = addr;
            e->cached = 1;
            fm.slot[free_slot] = e;
            fm.mapped += (apr_size_t)fi->size;
        }
        else if (addr != MAP_FAILED) {
            munmap(addr, (size_t)fi->size);
        }
    }
    if (e) {
        e->refs++;
        e->last_used = now;
    }
    apr_thread_mutex_unlock(fm.mutex);
    for (i = 0; i < ngone; ++i) {
        unmap_entry(gone[i]);
    }
    if (!e) {
        return NULL;
    }
    r = apr_bucket_alloc(sizeof(*r), list);
    r->e = e;
    b = apr_bucket_alloc(sizeof(*b), list);
    APR_BUCKET_INIT(b);
    b->free = apr_bucket_free;
    b->list = list;
    b = apr_bucket_shared_make(b, r, 0, (apr_size_t)fi->size);
    b->type = &fmap_bucket_type;
    return b;
}

void h2_fmap_trim(void)
{
    if (fm.mutex) {
        sweep(0);
    }
}
