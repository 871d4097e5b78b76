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
#ifndef H2_HANDOFF_H
#define H2_HANDOFF_H

#include <apr_buckets.h>
#include <apr_tables.h>

/* Data moving between a stream's worker thread and the connection thread.
 * Bucket allocators are not thread-safe, so buckets never cross threads:
 * memory data is copied into chunks, file data crosses as a duplicated
 * file descriptor plus range, so that the connection can sendfile it after
 * the request (and its pool) are gone. All functions here but
 * h2_hfields_build() must be called with the owning session's lock held;
 * the lock is what makes it safe. */

typedef enum {
    H2_HC_DATA,      /* bytes in data[start..end) */
    H2_HC_FILE,      /* fd, range; fd is closed when the chunk is freed */
    H2_HC_HEADERS,   /* final response: status + serialized fields */
    H2_HC_INTERIM,   /* 1xx response: status + serialized fields */
    H2_HC_TRAILERS,  /* serialized trailer fields */
    H2_HC_EOS,       /* end of response body */
    H2_HC_RESET,     /* abort the stream with error code in status */
    H2_HC_PUSH,      /* paths to push ("path" fields), before the HEADERS */
} h2_hchunk_type;

#define H2_HCHUNK_SIZE (16 * 1024)
#define H2_HCHUNK_MIN  2048

typedef struct h2_hchunk h2_hchunk;
struct h2_hchunk {
    h2_hchunk *next;
    h2_hchunk_type type;
    int status;
    apr_size_t cap;
    apr_size_t start, end;
    int fd;
    int fd_sendfile;       /* the file may be sent with sendfile */
    int fd_mmap;           /* the file may be memory mapped */
    apr_off_t foff;
    apr_size_t flen;
    void *file;            /* apr_file_t the connection made for fd */
    void *mm;              /* connection's mmap bucket of a window of it */
    apr_off_t mm_off;      /* file offset where that window starts */
    int nfields;           /* fields serialized in a fields chunk */
    char data[];
};

/* Chunks up to H2_HCHUNK_SIZE come in size classes (none, 1, 2, 4, 8 and
 * 16 KB of data) and are recycled per class instead of freed: a small
 * response costs three chunks, and malloc/free of them showed up as 2k
 * instructions per request. */
#define H2_HCLASSES 6
typedef struct h2_hpool {
    h2_hchunk *free[H2_HCLASSES];
    int nfree;             /* over all classes */
    int max_free;          /* per class */
    int nclass[H2_HCLASSES];
    apr_size_t free_bytes; /* data capacity of the cached chunks */
} h2_hpool;

/* Bytes of chunk capacity a pool caches at most: a busy connection with
 * many small responses would otherwise keep a full set of every class. */
#define H2_HPOOL_MAX_FREE_BYTES (256 * 1024)

typedef struct h2_hqueue {
    h2_hchunk *first, *last;
    apr_size_t mem;        /* bytes of memory data queued */
} h2_hqueue;

/* Bytes a queued file range counts against H2StreamMaxMemSize: it holds an
 * open file, not memory, but must still bound how far a handler runs ahead. */
#define H2_HCHUNK_FILE_COST 8192

/* Full-size chunks freed where no pool is at hand (request body chunks a
 * worker's buckets free) wait in a cache of the child's, at most
 * H2_HSPARE_MAX of them (fewer when MaxMemFree for each MPM thread is
 * less), for the next connection thread that needs one: freed to malloc,
 * an upload's chunks came back from the kernel page by page (a fifth of
 * the connection thread's time went to page faults), and, allocated in
 * whichever MPM thread's malloc arena served the connection at the time
 * and freed by the worker, they left megabytes free in every arena: a
 * 512 MB PUT to mod_dav grew the child by 10-40 MB with a cache of 128,
 * by 6-8 MB with room for an upload's window (4 MB on loopback) and
 * more. The cache is freed when the child goes quiet. */
#define H2_HSPARE_MAX 1024            /* 16 MB */

/* Set up the child's cache of at most max chunks (without it, full-size
 * chunks are freed). */
apr_status_t h2_hspare_child_init(apr_pool_t *pchild, int max);

/* The child is quiet: free the cached chunks (an upload's last ones). */
void h2_hspare_child_quiet(void);

/* A chunk with room for cap bytes of data. */
h2_hchunk *h2_hpool_get(h2_hpool *hp, h2_hchunk_type type, apr_size_t cap);

/* Return a chunk, closing its file if it has one. */
void h2_hpool_put(h2_hpool *hp, h2_hchunk *c);

/* Keep at most keep chunks cached. */
void h2_hpool_trim(h2_hpool *hp, int keep);

void h2_hqueue_append(h2_hqueue *q, h2_hchunk *c);
h2_hchunk *h2_hqueue_pop(h2_hqueue *q);

/* Move all chunks of src to the end of dst. */
void h2_hqueue_move(h2_hqueue *dst, h2_hqueue *src);

/* Copy len bytes of data into DATA chunks at the end of q. */
void h2_hqueue_write(h2_hqueue *q, h2_hpool *hp, const char *data, apr_size_t len);

/* Free every chunk in q. */
void h2_hqueue_clear(h2_hqueue *q, h2_hpool *hp);

/* A data chunk taken out of its queue, handed on as a heap bucket of its
 * data from start to end, without a copy: the bucket frees the chunk. */
apr_bucket *h2_hchunk_bucket(h2_hchunk *c, apr_bucket_alloc_t *list);

/* Bytes q counts against its limit. */
apr_size_t h2_hchunk_cost(const h2_hchunk *c);

/* Serialize fields of table t (may be NULL) into a chunk of type with
 * status, as HTTP/2 wants them: names lowercased, whitespace around values
 * trimmed; fields HTTP/2 cannot carry (connection-specific, invalid name or
 * value) are left out. */
h2_hchunk *h2_hchunk_fields(h2_hpool *hp, h2_hchunk_type type, int status,
                            const apr_table_t *t);

/* Fields serialized ahead, on a worker and outside the connection's lock,
 * in the layout of a fields chunk. */
typedef struct h2_hfields {
    int built;             /* 0: none, use the table */
    const char *data;
    apr_size_t len;
    int nfields;
} h2_hfields;

typedef void h2_hfield_bad_cb(void *ctx, const char *name);

/* Without the lock (it touches only t and p): serialize the fields of t
 * into hf (memory from pool p) as h2_hchunk_fields does, checking them as
 * h2_hdr_out_field_checked does on the way: a field HTTP cannot carry is
 * left out and named to bad (if given). One pass instead of a check, a
 * serialization and a count. Returns how many were left out so. */
int h2_hfields_build(apr_pool_t *p, const apr_table_t *t, h2_hfields *hf,
                     h2_hfield_bad_cb *bad, void *ctx);

/* A chunk of type with status holding the fields hf holds. */
h2_hchunk *h2_hchunk_hfields(h2_hpool *hp, h2_hchunk_type type, int status,
                             const h2_hfields *hf);

/* Call cb for each serialized field of c until it returns 0. */
typedef int h2_hfield_cb(void *ctx, const char *name, apr_size_t nlen,
                         const char *value, apr_size_t vlen);
int h2_hchunk_fields_do(const h2_hchunk *c, h2_hfield_cb *cb, void *ctx);

#endif
