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
#ifndef H2_FMAP_H
#define H2_FMAP_H

#include <apr_buckets.h>
#include <apr_file_io.h>

/* A per-child cache of read-only mappings of whole files, for the DATA
 * frames h2_c1_io takes from mapped files (EnableMMAP on): slices of the
 * mapping on cleartext, the bytes TLS records are copied from on TLS.
 *
 * HTTP/1.1 maps such a file, lets the kernel copy from the mapping and
 * unmaps it again, for every response: page faults to map it, and an
 * munmap whose TLB shootdown interrupts every CPU. A file served again
 * while its mapping is cached costs none of that. Entries are keyed by
 * device, inode, size and modification time, so a changed or replaced
 * file is mapped anew; what a mapping shows is the page cache, as a read
 * would. Limits: H2_FMAP_SLOTS files per child, each of H2_FMAP_MIN_FILE
 * to H2_FMAP_MAX_FILE bytes, H2_FMAP_MAX_TOTAL bytes mapped per child;
 * a mapping unused for H2_FMAP_IDLE is dropped. */
#define H2_FMAP_SLOTS       16
#define H2_FMAP_MIN_FILE    (256 * 1024)
#define H2_FMAP_MAX_FILE    (64 * 1024 * 1024)
#define H2_FMAP_MAX_TOTAL   (256 * 1024 * 1024)
#define H2_FMAP_IDLE        apr_time_from_sec(10)

/* Child init: the lock of the cache, and unmapping all at child exit. */
apr_status_t h2_fmap_child_init(apr_pool_t *pchild);

/* What h2_fmap_bucket_create() needs to know of a file. */
#define H2_FMAP_FINFO (APR_FINFO_SIZE | APR_FINFO_MTIME | APR_FINFO_INODE \
                       | APR_FINFO_DEV)

/* A bucket of the whole of file f (fi: its H2_FMAP_FINFO) from its cached
 * mapping, or NULL when f is outside the limits or the cache is full of
 * mappings in use. The bucket and its copies hold the mapping; it may
 * outlive any pool. */
apr_bucket *h2_fmap_bucket_create(apr_file_t *f, const apr_finfo_t *fi,
                                  apr_bucket_alloc_t *list);

/* Drop mappings no bucket holds that were unused for H2_FMAP_IDLE. */
void h2_fmap_trim(void);

#endif /* H2_FMAP_H */
