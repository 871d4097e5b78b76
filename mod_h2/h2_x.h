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
#ifndef H2_X_H
#define H2_X_H

/* The boundary between a client connection's thread and the workers that
 * run its streams: everything that crosses between them goes through here.
 *
 * Who may call what (checked by scripts/check_threads.py):
 *   h2_x_c1_*      the connection thread that owns the session, only;
 *   h2_x_worker_*  the worker that has taken the stream, only;
 *   h2_x_*         either.
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
 * Lock order: the connection's lock (here) is innermost. While it is held
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

/* How a parked request's log is written off its worker: given the
 * secondary connection that holds it, set once at child init by the layer
 * that owns secondaries. Called by h2_x_c1_run_logs() on the connection
 * thread, which owns c2 for that call. */
typedef void h2_x_log_fn(conn_rec *c2);
void h2_x_child_log_by(h2_x_log_fn *fn);

/* --- connection thread --- */

/* The connection's side, in pool p (the connection's). */
h2_xconn *h2_x_c1_conn_create(apr_pool_t *p, const h2_x_settings *set);

/* A stream's exchange, in its pool p; owner is the connection thread's
 * stream, handed back by h2_x_c1_collect(). req->head etc. are filled in
 * by the caller before h2_x_c1_admit(). */
h2_x *h2_x_c1_create(h2_xconn *xc, apr_pool_t *p, int id, void *owner);

/* The request a worker will see; writable until admitted. */
h2_x_req *h2_x_c1_req(h2_x *x);

/* Free the stream's queued chunks and give back what its buffers counted. */
void h2_x_c1_destroy(h2_x *x);

/* NEW -> PENDING: a worker is to run it; body may be kept from now on. */
void h2_x_c1_pend(h2_x *x);

/* PENDING -> QUEUED, if the connection is within its worker share: 1.
 * Else the stream stays PENDING: 0 when the connection is at its share,
 * -1 when the stream is a WebSocket and WebSockets hold their part of it
 * (others may still be admitted). Queue the admitted ones with
 * h2_x_c1_schedule(). */
int h2_x_c1_admit(h2_x *x);

/* The urgency (RFC 9218, 0..7) the stream waits for a worker with. */
void h2_x_c1_set_urgency(h2_x *x, int urgency);

/* Report what the worker reads of the body only once it is n bytes (a
 * quarter of a grown window: nghttp2 sends WINDOW_UPDATE at half), not at
 * every read; 0: at every read of 16 KB or that empties the queue. */
void h2_x_c1_set_consume_wake(h2_x *x, apr_size_t n);

/* Hand n admitted streams to the workers. */
void h2_x_c1_schedule(h2_x **xs, int n);

/* The stream is not wanted any more (reset, closed, teardown): take it
 * back if no worker has it yet, else tell its worker to stop. Returns 1
 * when a worker still has it. */
int h2_x_c1_abort(h2_x *x);

/* Request body bytes that arrived: 1 when kept, 0 when nobody will read
 * them (the caller then opens the window itself). */
int h2_x_c1_body_in(h2_x *x, const char *data, apr_size_t len);

/* The body is complete; trailers (may be NULL) go to the request. */
void h2_x_c1_body_end(h2_x *x, apr_table_t *trailers);

/* Wake the workers of streams that got body since the last call and hold
 * at least min bytes of it (0: all of them); the others stay due. Once per
 * read from the client, not once per DATA frame. */
void h2_x_c1_body_due(h2_xconn *xc, apr_size_t min);

/* For each stream a worker made ready since the last call: move its output
 * to the connection's queue and call cb with the body bytes the worker
 * consumed and whether it is DONE. Also settles what was sent since the
 * last call. Returns the number of streams. */
typedef void h2_x_collect_cb(void *ctx, void *owner, apr_size_t consumed,
                             int done);
int h2_x_c1_collect(h2_xconn *xc, h2_x_collect_cb *cb, void *ctx);

/* The response chunks taken over, in order: the connection thread reads
 * and pops them without the lock. */
h2_hqueue *h2_x_c1_out(h2_x *x);

/* Keep chunk c until the stream is freed (nghttp2 points into it). */
void h2_x_c1_hold(h2_x *x, h2_hchunk *c);

/* Chunk c went out: free it at the next collect. */
void h2_x_c1_sent_chunk(h2_xconn *xc, h2_hchunk *c);

/* n response bytes of x went out: room for its worker at the next collect. */
void h2_x_c1_sent(h2_x *x, apr_size_t n);

/* n bytes of frames of x (its head, DATA, a reset) were written to the
 * connection: what mod_logio's %O counts for its request. */
void h2_x_c1_wire(h2_x *x, apr_size_t n);

/* The last frame of x's response went out (END_STREAM or RST_STREAM): its
 * request may be logged now, with what went out (a parked log is written
 * by h2_x_c1_run_logs(), or under prefork handed to a worker). */
void h2_x_c1_settle(h2_x *x);

/* Write the parked logs whose responses went out (or were reset) since the
 * last call: after the flush that sent them, as over HTTP/1.1 the thread
 * that wrote a response logs it, without waking a worker for each. */
void h2_x_c1_run_logs(h2_xconn *xc);

/* The stream is freed in the next h2_x_c1_purge(); no more collects for it. */
void h2_x_c1_forget(h2_x *x);

/* Drop forgotten streams from the lists of ready and sent ones. */
void h2_x_c1_purge(h2_xconn *xc);

/* Sleep until sock (if not NULL) is readable, a worker wakes us, or
 * timeout passes; returns at once when a stream is ready already. Returns
 * 0 when sock had no input when the wait ended (the next non-blocking
 * read would find nothing), else 1. */
int h2_x_c1_wait(h2_xconn *xc, apr_socket_t *sock, apr_interval_time_t timeout);

/* Streams with workers (queued or running). */
int h2_x_c1_processing(h2_xconn *xc);

/* Bytes of request bodies and responses the connection buffers; of them
 * request bodies (queued for workers, or read by them and not yet
 * collected) in *body unless body is NULL. */
apr_size_t h2_x_c1_mem_held(h2_xconn *xc, apr_size_t *body);

/* The connection idles (final: ends, all output written or dropped): give
 * back kept secondaries and cached chunks. */
void h2_x_c1_idle(h2_xconn *xc, int final);

/* The connection ends: h2_x_c1_abort() every stream between these two;
 * the second waits until no worker has one. */
void h2_x_c1_teardown_start(h2_xconn *xc);
void h2_x_c1_teardown_wait(h2_xconn *xc);

/* --- worker --- */

/* The stream of a task the workers' queue handed out. */
h2_x *h2_x_worker_of(struct h2_wtask *task);

/* The worker wk takes x from the queue: QUEUED -> RUNNING. Returns the
 * request, NULL when the stream was aborted meanwhile (the worker then
 * only calls h2_x_worker_done); *pc2 is a kept secondary or NULL. For a
 * parked log (PARKED -> RUNNING): the request, and in *pc2 the secondary
 * connection that parked it. */
const h2_x_req *h2_x_worker_take(h2_x *x, struct h2_worker *wk, conn_rec **pc2);

/* Count request r, logged, in the scoreboard as an access of the client
 * connection (mod_status's totals). */
void h2_x_worker_count(h2_x *x, request_rec *r);

/* Whether x's request may be logged now, so that its log tells what went
 * out: 1 when its last frame was written or the stream was aborted (reset,
 * connection gone), with *wire the frame bytes written for it and
 * *complete 1 when the response went out whole; 0 when its output is
 * still on its way. */
int h2_x_worker_settled(h2_x *x, apr_off_t *wire, int *complete);

/* The worker is done with x but for its log, which waits for the output
 * (h2_x_worker_settled() said 0): RUNNING -> PARKED, c2 stays with x until
 * a worker takes the log task. Returns 0 when x settled meanwhile: log
 * it now and end with h2_x_worker_done(). */
int h2_x_worker_park(h2_x *x, conn_rec *c2);

/* H2StreamTimeout for x's request (its directory's, once known): how long
 * waits for room or for request body last. */
void h2_x_worker_timeout(h2_x *x, apr_interval_time_t timeout);

/* Worker: fill pfd with a descriptor that is readable while request body
 * (or its end, or an abort) waits to be read, for modules that poll a
 * connection's input (mod_proxy's tunnels); made in a subpool of p, gone
 * when the worker is done. ptimeout (may be NULL): H2StreamTimeout. */
apr_status_t h2_x_worker_pollfd(h2_x *x, apr_pool_t *p, apr_pollfd_t *pfd,
                                apr_interval_time_t *ptimeout);

/* Hand n items of response over, waiting while the stream holds what
 * H2StreamMaxMemSize allows; flush: the connection should send now. File
 * descriptors of items not taken are closed. */
apr_status_t h2_x_worker_out(h2_x *x, const h2_x_item *items, int n, int flush);

/* Read up to readbytes of request body into bb (mode as for input filters,
 * GETLINE stopping after a LF; speculative reads leave it queued), waiting
 * until deadline (0: H2StreamTimeout) when nothing is there and block.
 * trailers: the request's table the trailers go into at the end. */
apr_status_t h2_x_worker_body(h2_x *x, apr_bucket_brigade *bb, int getline,
                              int speculative, apr_read_type_e block,
                              apr_off_t readbytes, apr_time_t deadline,
                              apr_table_t *trailers, apr_off_t *pread);

/* The worker is finished with x: RUNNING -> DONE. c2 (may be NULL) is kept
 * for the connection's next stream; returns it when not kept. */
conn_rec *h2_x_worker_done(h2_x *x, conn_rec *c2);

#endif
