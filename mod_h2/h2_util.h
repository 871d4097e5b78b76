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
#ifndef H2_UTIL_H
#define H2_UTIL_H

#include <apr_pools.h>
#include <nghttp2/nghttp2.h>
#include "h2_handoff.h"

/* What an allocator of ours keeps of the memory freed into it: `dflt`
 * (0 = all of it), or less when httpd's MaxMemFree says so: that directive
 * bounds every allocator of a child, ours included. */
apr_size_t h2_util_max_free(apr_size_t dflt);

/* How many freed items of `size` bytes a cache of ours keeps: `max`, or
 * fewer so that they stay within MaxMemFree when that is set. With
 * `MaxMemFree 1` (the sanitizer test runs) nothing is kept, so that every
 * release reaches free() where ASan and valgrind watch it. */
int h2_util_cache_max(int max, apr_size_t size);

/* Give memory the C library holds free back to the system (glibc). */
void h2_util_release_free_memory(void);

/* Name the calling thread (Linux), so that `top -H`, perf and /proc tell
 * the module's threads from the MPM's. */
void h2_util_thread_name(const char *name);

/* Drop from the singly linked list at *head (elements of type, linked
 * through member next) those for which gone(element) is true, in one pass
 * (unlinking each alone walks the list each time: quadratic with many
 * streams); last becomes the new last element (NULL when empty). */
#define H2_UNLIST(type, head, next, gone, last) do {            \
        type **pp_ = (head);                                    \
        (last) = NULL;                                          \
        while (*pp_) {                                          \
            if (gone(*pp_)) {                                   \
                *pp_ = (*pp_)->next;                            \
            }                                                   \
            else {                                              \
                (last) = *pp_;                                  \
                pp_ = &(*pp_)->next;                            \
            }                                                   \
        }                                                       \
    } while (0)

/* Name of an RFC 9113 error code, for logs. */
const char *h2_util_error_str(uint32_t code);

/* Turn a HEADERS/INTERIM/TRAILERS chunk into nghttp2 name/value pairs in
 * pool p, pointing into the chunk (h2_hchunk_fields prepared the fields),
 * ":status" first when with_status. no_copy: nghttp2 may keep pointing
 * into the chunk instead of copying, so the caller must keep the chunk
 * until the stream is gone. */
apr_status_t h2_util_chunk_to_nv(const h2_hchunk *c, apr_pool_t *p,
                                 nghttp2_nv **pnv, size_t *pnvlen,
                                 int with_status, int no_copy);

#endif
