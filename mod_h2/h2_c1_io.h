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
#ifndef H2_C1_IO_H
#define H2_C1_IO_H

#include <apr_buckets.h>
#include <httpd.h>
#include "h2_tls_sizing.h"

/* Reading and writing the client connection. Output is gathered: frame
 * bytes are copied into buffers that go down as single buckets sized for
 * TLS records (or large on cleartext), file data on cleartext goes as file
 * buckets so the core can sendfile it, and everything is written with one
 * flush per round instead of one write per frame. */

typedef struct h2_c1_io {
    conn_rec *c;
    long id;                   /* c's id when the session started (logs) */
    int is_tls;
    apr_bucket_brigade *bb_in;
    apr_bucket_brigade *bb_out;
    char *buf;                 /* arena frame bytes are gathered in */
    apr_size_t arena;          /* its size */
    apr_size_t buf_len;        /* bytes in the arena */
    apr_size_t seg_start;      /* arena bytes not yet in a bucket start here */
    apr_size_t seg_max;        /* TLS: size of the record being filled */
    apr_size_t pending;        /* weight of what waits to be written */
    h2_tls_sizing tls;
    apr_socket_t *sock;
    int corked;
    int direct;                /* output chain is only the core: writev ourselves */
    int has_file;              /* bb_out holds file buckets (sendfile) */
    apr_size_t lowat;          /* SO_RCVLOWAT set on the socket, or 0 */
    int in_direct;             /* H2_IN_*: how non-blocking reads go */
    int in_drained;            /* the last read came back short */
} h2_c1_io;

/* Cleartext connections whose input chain is only the core (and
 * mod_logio's counter) read the socket themselves once the core holds
 * nothing: one recv() of up to 64 KB where the core reads 8000 bytes. */
#define H2_IN_FILTERS 0         /* through the input filters, always */
#define H2_IN_DRAIN   1         /* through them until the core is empty */
#define H2_IN_DIRECT  2         /* recv() on the socket */

/* Child init: the cache of output arenas. */
apr_status_t h2_c1_io_child_init(apr_pool_t *pchild);

/* Set up I/O for c1 with the TLS sizing parameters of server s. */
void h2_c1_io_init(h2_c1_io *io, conn_rec *c, server_rec *s, int is_tls);

/* Copy len bytes to the output. */
apr_status_t h2_c1_io_append(h2_c1_io *io, const char *data, apr_size_t len);

/* Queue len bytes of file f at off; range_left is what remains of the
 * file range being sent, this piece included. On cleartext, the data is
 * not copied, unless sendfile is off and the range small: with mmap
 * allowed, a piece is a slice of a mapped window kept in *pmm (the
 * whole file, if h2_fmap keeps it mapped), which
 * starts at file offset *pmm_off (the caller destroys the bucket *pmm
 * when done with the file), else a file bucket for sendfile; f must stay
 * open until the next h2_c1_io_flush() returned. On TLS, and for small
 * ranges without sendfile, the data is read into the arena. */
apr_status_t h2_c1_io_append_file(h2_c1_io *io, apr_file_t *f, apr_off_t off,
                                  apr_size_t len, apr_off_t range_left,
                                  int can_mmap, apr_pool_t *p,
                                  void **pmm, apr_off_t *pmm_off);

/* TLS: the size (9-byte header included) a frame written next should
 * have to end exactly where a TLS record ends; 0 on cleartext. */
apr_size_t h2_c1_io_record_fit(h2_c1_io *io);

/* Write out everything queued; blocks until the data is with the kernel. */
apr_status_t h2_c1_io_flush(h2_c1_io *io);

/* 1 when enough is queued that it should be written before queueing more. */
int h2_c1_io_needs_flush(h2_c1_io *io);

/* Let polls for input see the socket readable only once n bytes are
 * there (SO_RCVLOWAT; 0: at one byte, the default). Non-blocking reads
 * take what there is either way; blocking reads and the MPM's polls would
 * wait for n: set it back to 0 before either. */
void h2_c1_io_set_lowat(h2_c1_io *io, apr_size_t n);

/* 1 when output waits to be written. */
int h2_c1_io_has_output(h2_c1_io *io);

/* Give back the output arena while the connection idles. */
void h2_c1_io_idle(h2_c1_io *io);

/* Called for each chunk of input read. Returns APR_SUCCESS to go on. */
typedef apr_status_t h2_c1_io_feed(void *ctx, const char *data, apr_size_t len);

/* Read what is available (or wait for input when block) and feed it. */
apr_status_t h2_c1_io_read(h2_c1_io *io, apr_read_type_e block,
                           h2_c1_io_feed *feed, void *ctx);

#endif
