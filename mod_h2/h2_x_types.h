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
#ifndef H2_X_TYPES_H
#define H2_X_TYPES_H

/* The exchange's types, which both sides of the boundary between a client
 * connection's thread and the workers that run its streams see.
 *
 * Each side includes only its own header, so that the compiler refuses a
 * call across (scripts/check_threads.py checks the includes):
 *   h2_x_c1.h      h2_x_c1_*: the connection thread that owns the session;
 *   h2_x_worker.h  h2_x_worker_*: the worker that has taken the stream;
 *   here           h2_x_* either may call: child init's only.
 *
 * Invariants:
 *   1. A stream's h2_x_req is written by the connection thread before
 *      h2_x_c1_admit() and never after; the workers' queue lock, taken by
 *      the push and by the worker's take, orders those writes before any
 *      worker reads them. Workers read nothing else of the connection's.
 *   2. Everything else both sides touch (body and response queues, the
 *      hand-off state, wake-ups, the connection's memory counts, the kept
 *      secondary connections, the chunk cache) lives in h2_x.c and is read
 *      and written only with the connection's lock held.
 *   3. A stream's exchange is freed (h2_x_c1_destroy) only in the states
 *      NEW and DONE: no worker has it and none will take it.
 *   4. A worker waiting for room or for body sleeps on its own condition
 *      with the connection's lock; whoever changes what it waits for
 *      (collect, body in, abort) signals it under that lock.
 *
 * Lock order: the connection's lock (in h2_x.c) is innermost. While it is held
 * nothing else is locked: the workers' queue lock (h2_workers.c), the
 * secondary shells' lock (h2_c2.c) and the idle registry's (h2_c1_idle.c)
 * are taken only without it. Waking the connection thread writes an
 * eventfd, which takes no lock. */

#include <apr_poll.h>
#include <apr_thread_mutex.h>
#include <httpd.h>

#include "h2_handoff.h"
#include "h2_headers_check.h"
#include "h2_read_timeout.h"

struct h2_worker;
struct h2_wtask;

typedef struct h2_xconn h2_xconn;   /* a connection's side of it */
typedef struct h2_x h2_x;           /* a stream's */

/* What the workers of a connection read of its configuration; fixed when
 * the session is created. */
typedef struct h2_x_settings {
    conn_rec *c1;
    apr_size_t stream_max_mem;          /* H2StreamMaxMemSize */
    apr_interval_time_t stream_timeout; /* H2StreamTimeout */
    int output_buffering;               /* H2OutputBuffering */
    int copy_files;                     /* H2CopyFiles */
    const h2_read_timeouts *read_timeouts;
    int max_processing;                 /* streams with workers at once */
    int threaded;                       /* not prefork: wait on a condition */
    long conn_id;                       /* c1's id when the session started */
    void *sbh;                          /* c1's scoreboard handle then: the
                                         * event MPM clears c1's once the
                                         * client closed, and a parked log
                                         * may still count after that */
    int loglevel;                       /* the module's on c1, for traces:
                                         * fixed for a connection, and the
                                         * check is cheaper than APLOGc* */
} h2_x_settings;

/* A stream's request as its worker sees it (invariant 1). */
typedef struct h2_x_req {
    const h2_x_settings *set;
    int id;
    apr_time_t created;
    const h2_req_head *head;        /* validated request head */
    int has_body;
    apr_off_t head_in;              /* its head's frame bytes as received
                                     * (mod_logio's %I) */
    int refuse_status;              /* >0: answer with it (over a limit) */
    int push_enabled;               /* H2Push on and the client takes pushes */
    int pushed_on;                  /* a pushed request: the stream it was
                                     * promised on; else 0 */
} h2_x_req;

/* A stream's hand-off between the threads, one table in h2_x.c:
 *   NEW -> PENDING      the connection decided a worker runs it
 *   PENDING -> QUEUED   admitted (within the connection's worker share)
 *   QUEUED -> RUNNING   a worker took it
 *   QUEUED -> DONE      taken back before a worker took it
 *   RUNNING -> DONE     the worker finished
 *   RUNNING -> PARKED   the worker finished but for the request's log,
 *                       which waits for the response to go out; the
 *                       worker is free meanwhile
 *   PARKED -> RUNNING   a worker took the log task (response out, or the
 *                       stream aborted) */
typedef enum {
    H2_XS_NEW,
    H2_XS_PENDING,
    H2_XS_QUEUED,
    H2_XS_RUNNING,
    H2_XS_DONE,
    H2_XS_PARKED,
} h2_x_state;

/* How urgently the connection thread should look at a ready stream. */
#define H2_WAKE_NONE 0   /* when it comes by anyway */
#define H2_WAKE_SOFT 1   /* soon: a response head or end; may wait while
                          * the connection has streams queued for workers */
#define H2_WAKE_HARD 2   /* now: data to stream, a flush, a waiting worker */

/* Child init, before any connection or worker runs, by the layer that
 * owns secondary connections: discard gives back one the exchange kept for
 * a connection's next streams (h2_x_worker_done) when the connection idles
 * or ends; log writes the parked log a secondary holds, called by
 * h2_x_c1_run_logs() on the connection thread, which owns c2 for that
 * call (NULL: a worker writes it). */
typedef void h2_x_discard_c2_fn(conn_rec *c2);
typedef void h2_x_log_fn(conn_rec *c2);
void h2_x_child_init(h2_x_discard_c2_fn *discard, h2_x_log_fn *log);

/* A piece of response a worker hands over. */
typedef struct h2_x_item {
    h2_hchunk_type type;
    const char *data;               /* DATA: len bytes */
    apr_size_t len;                 /*   FILE: the range's length */
    int fd;                         /* FILE: ours; closed when sent */
    apr_off_t off;
    int sendfile, mmap;
    int status;                     /* fields' status; RESET: error code */
    const apr_table_t *fields;      /* HEADERS, INTERIM, TRAILERS */
    h2_hfields hf;                  /*   the fields already serialized */
} h2_x_item;

#endif
