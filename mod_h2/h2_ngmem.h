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
#ifndef H2_NGMEM_H
#define H2_NGMEM_H

#include <nghttp2/nghttp2.h>

/* Memory for one nghttp2 session. nghttp2 allocates and frees a handful of
 * small blocks per stream (stream state, frames, header copies); from
 * malloc that cost about 800 instructions per request. A session is only
 * ever used by its connection's thread, so its blocks can be recycled
 * through per-size free lists without any locking. Blocks larger than the
 * biggest class go straight to malloc. */

#define H2_NGMEM_CLASSES 8          /* 32, 64, ... 4096 bytes */

typedef struct h2_ngmem {
    nghttp2_mem mem;                /* what nghttp2 calls */
    void *free[H2_NGMEM_CLASSES];
    int nfree[H2_NGMEM_CLASSES];
    int max_free;                   /* per class */
} h2_ngmem;

/* Set up m for a session; m must outlive the nghttp2 session. */
void h2_ngmem_init(h2_ngmem *m, int max_free);

/* Give the cached blocks back to malloc (e.g. when the session idles). */
void h2_ngmem_trim(h2_ngmem *m);

#endif
