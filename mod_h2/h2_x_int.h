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

/* What h2_x.c and h2_x_body.c share: the exchange's state, under its lock
 * as the comments say, and the helpers that wake either side. */

#ifndef H2_X_INT_H
#define H2_X_INT_H

#include "h2_c1_wait.h"
#include "h2_handoff.h"
#include "h2_workers.h"
#include "h2_x_c1.h"
#include "h2_x_worker.h"

struct h2_xconn {
    const h2_x_settings *set;
    apr_thread_mutex_t *mutex;
    apr_thread_cond_t *done_cond;   /* workers finished, at teardown;
                                     * NULL under prefork */
    h2_x *sent_first;               /* sent data since the last collect
                                     * (connection thread) */
    h2_hqueue sent_chunks;          /* consumed, freed (into hpool, under
                                     * the lock) at the next collect
                                     * (connection thread) */

    /* under mutex */
    h2_hpool hpool;
    h2_x *ready_first, *ready_last;
    apr_size_t mem_in;              /* request body bytes buffered */
    apr_size_t mem_out;             /* response bytes buffered (a file
                                     * range counts H2_HCHUNK_FILE_COST) */
    int c1_polling;
    int wakeup_sent;
    h2_c1_waiter *waiter;           /* the connection thread's, while polling */
    int n_processing;               /* QUEUED or RUNNING */
    int n_tunnels;                  /*   of them WebSockets */
    int n_queued;                   /* QUEUED */
    int n_parked;                   /* PARKED (in n_processing, not in the
                                     * connection's share of workers) */
    int n_starved;                  /*   of them starved (h2_x_c1_starved) */
    int wake_deferred;              /* a soft wake waits for n_queued == 0 */
    h2_x *due_first;                /* connection thread: streams given body */
    h2_x *logs_first, *logs_last;   /* connection thread: parked logs due */
    int tearing_down;
    apr_array_header_t *c2_free;    /* kept secondary connections */
    h2_wgroup wgroup;               /* its tasks in the workers' queue */
};

struct h2_x {
    h2_wtask task;                  /* in the workers' queue */
    h2_xconn *xc;
    void *owner;
    h2_x_req req;                   /* invariant 1 */

    /* under xc->mutex */
    h2_x_state state;
    int tunnel;                     /* admitted as a WebSocket */
    int aborted;                    /* the worker must stop */
    h2_hqueue in;                   /* request body */
    int in_eos;
    apr_table_t *trailers_in;
    apr_size_t in_consumed;         /* read by the worker, not yet reported */
    apr_size_t consume_wake;        /* 0, or report reads from this much on */
    h2_hqueue out;                  /* response from the worker */
    apr_size_t out_buffered;        /* in out and c1_out, not yet sent */
    int out_eos;                    /* worker appended EOS or RESET */
    int out_settled;                /* its last frame went out */
    conn_rec *parked_c2;            /* PARKED: the secondary with the log */
    int log_queued;                 /* PARKED: the log task was pushed */
    int starved;                    /* its response waits for window the
                                     * client withholds (h2_x_c1_starved) */
    int log_early;                  /* PARKED, starved past the share: its
                                     * log is written before the end */
    apr_off_t wire_out;             /* frame bytes written, as of the last
                                     * settle, abort or collect */
    struct h2_worker *worker;
    int worker_waits;               /* sleeps on its worker's cond */
    int room_waits;                 /*   for room for its output */
    int ready;                      /* in the ready list */
    h2_x *next_ready;

    /* the worker that has it only (set at creation before it is queued,
     * like req) */
    apr_interval_time_t timeout;    /* its request's H2StreamTimeout */
    /* a pipe that is readable while request body (or its end) waits: for
     * modules that poll the stream's input (h2_x_worker_pollfd); made by
     * the worker, written under xc->mutex */
    apr_pool_t *poll_pool;
    apr_file_t *poll_in, *poll_out;
    int poll_signalled;

    /* connection thread only */
    int pended;                     /* left NEW (h2_x_c1_pend): workers may
                                     * see it, state is read under the lock */
    int in_sent_list;
    h2_x *next_sent;
    int in_due;                     /* body came since the last h2_x_c1_body_due */
    int in_fresh;                   /* ... since the last one that kept it due */
    h2_x *next_due;
    int forgotten;                  /* to be purged */
    h2_x *next_log;                 /* in xc's list of logs due */
    h2_hqueue c1_out;               /* response chunks taken over */
    h2_hqueue held;                 /* fields nghttp2 points into */
    apr_size_t c1_sent;             /* bytes sent since the last collect */
    apr_off_t c1_wire;              /* frame bytes written, all of them */
};

/* Lock held: x's worker (or its poller) hears that input came. */
void h2_x_signal_worker_locked(h2_x *x);

/* Lock held: put x in the ready list, wake the connection thread as wake
 * says (H2_WAKE_*). */
void h2_x_ready_locked(h2_x *x, int wake);

/* Lock held: input came (body, its end, an abort); a poller sees it. */
void h2_x_poll_signal_locked(h2_x *x);

/* Lock held: all input taken, the pipe goes quiet again. */
void h2_x_poll_drain_locked(h2_x *x);

#endif
