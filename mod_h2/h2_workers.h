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
#ifndef H2_WORKERS_H
#define H2_WORKERS_H

#include <apr_thread_proc.h>
#include <apr_thread_mutex.h>
#include <apr_thread_cond.h>
#include <httpd.h>

/* The pool of threads that process streams, one pool per child process.
 * Streams wait in one FIFO; an idle worker sleeps on its own condition
 * variable. A busy worker takes the next stream without sleeping, so a
 * push wakes workers only up to the number of CPUs; a watchdog wakes more
 * when the awake ones block in their handlers and the queue stands still. */

typedef struct h2_workers h2_workers;

/* A piece of work in the queue; embedded in what it stands for (h2_x). */
/* The tasks of one client connection: how many of them wait in the queue
 * at each urgency (RFC 9218, 0 most urgent), under the queue's lock. */
#define H2_WURGENCY_LEVELS 8
typedef struct h2_wgroup {
    unsigned int nq[H2_WURGENCY_LEVELS];
} h2_wgroup;

typedef struct h2_wtask h2_wtask;
struct h2_wtask {
    h2_wtask *q_prev, *q_next;
    int queued;
    h2_wgroup *group;          /* its connection's; set before the push */
    unsigned char urgency;     /* 0..7; changed only by reprioritize */
};

typedef struct h2_worker {
    h2_workers *workers;
    apr_thread_t *thread;
    apr_thread_cond_t *cond;   /* idle wait, and stream I/O waits */
    struct h2_worker *next_idle;
    struct h2_worker *next;    /* all workers */
    int exited;
} h2_worker;

/* Processes one stream; set at module init by the c2 code. */
typedef void h2_worker_process_fn(h2_worker *worker, h2_wtask *task);

/* Create the child's worker pool and start min workers. */
h2_workers *h2_workers_create(server_rec *s, apr_pool_t *pchild,
                              int min_workers, int max_workers,
                              int idle_secs, h2_worker_process_fn *process);

/* Call fn on the watchdog thread once the child is quiet after work: no
 * stream was taken for a tick (H2_QUIET_TICK) and no worker is busy. fn
 * returns 1 while streams still hold memory it could not give back (held
 * by their clients): it is called again at the next quiet tick. */
void h2_workers_on_quiet(int (*fn)(void));

/* The child's pool (NULL before h2_workers_create). */
h2_workers *h2_workers_of_child(void);

/* Queue n tasks, in order. */
void h2_workers_push(h2_workers *w, h2_wtask **tasks, int n);

/* Wait on the worker's condition (with mutex held) for its stream's I/O;
 * meanwhile the worker does not count as one that will take the next
 * queued stream. */
apr_status_t h2_worker_wait(h2_worker *wk, apr_thread_mutex_t *mutex,
                            apr_interval_time_t timeout);

/* Take task out of the queue if it is still waiting there.
 * Returns 1 if it was removed, 0 if a worker has it or had it. */
int h2_workers_unqueue(h2_workers *w, h2_wtask *task);

/* Give task a new urgency; where it waits in the queue, it is taken
 * before its connection's less urgent ones from now on. */
void h2_workers_reprioritize(h2_workers *w, h2_wtask *task, int urgency);

/* The condition a worker sleeps on while it waits for its stream's I/O. */
apr_thread_cond_t *h2_worker_cond(h2_worker *wk);

#endif
