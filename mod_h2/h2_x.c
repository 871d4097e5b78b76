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

/* The exchange between a connection thread and its streams' workers: the
 * shared state, its lock, its hand-off table and the wake-ups either way
 * (invariants in h2_x_types.h). */

#include <unistd.h>

#include <apr_strings.h>
#include <apr_thread_cond.h>
#include <httpd.h>
#include <http_log.h>
#include <scoreboard.h>

#include "h2.h"
#include "h2_c1_wait.h"
#include "h2_util.h"
#include "h2_workers.h"
#include "h2_x_int.h"
#include "h2_headers_check.h"
#include "h2_priority.h"

APLOG_USE_MODULE(http2);

/* Set-up secondary connections a busy connection keeps for its next
 * streams. It needs about as many as it has streams with workers at once;
 * keeping its high-water mark instead (tens, after a burst with blocked
 * handlers) held ~80 KB each for as long as the connection stayed busy,
 * over a hundred MB per child under a steady load. */
#define H2_C2_KEEP 4

/* Gives a kept secondary connection back to the cache of their shells,
 * which the worker side owns (h2_c2.c); set once at child init, before
 * any connection or worker runs. Without it, none are kept. */
static h2_x_discard_c2_fn *discard_c2;
static h2_x_log_fn *log_runner;

void h2_x_child_init(h2_x_discard_c2_fn *discard, h2_x_log_fn *log)
{
    discard_c2 = discard;
    log_runner = log;
}

static const char *h2_x_state_str(h2_x_state state)
{
    static const char *names[] = { "new", "pending", "queued", "running", "done",
                                    "parked" };
    return (unsigned)state < sizeof(names) / sizeof(names[0])? names[state] : "?";
}

/* The hand-off table: allowed[from] is the set of states it may go to. */
static const unsigned char allowed[] = {
    [H2_XS_NEW]     = 1u << H2_XS_PENDING,
    [H2_XS_PENDING] = 1u << H2_XS_QUEUED,
    [H2_XS_QUEUED]  = (1u << H2_XS_RUNNING) | (1u << H2_XS_DONE),
    [H2_XS_RUNNING] = (1u << H2_XS_DONE) | (1u << H2_XS_PARKED),
    [H2_XS_DONE]    = 0,
    [H2_XS_PARKED]  = 1u << H2_XS_RUNNING,
};

/* An invalid or traced transition of x (the slow path of x_transit). */
static int transit_note(h2_x *x, h2_x_state to, const char *why)
{
    conn_rec *c1 = x->req.set->c1;

    if (!(allowed[x->state] & (1u << to))) {
        ap_log_cerror(APLOG_MARK, APLOG_WARNING, 0, c1, APLOGNO(21088)
                      "h2_x(%ld-%d): invalid transition of the hand-off: %s -> %s (%s)",
                      x->req.set->conn_id, x->req.id, h2_x_state_str(x->state),
                      h2_x_state_str(to), why);
        return 0;
    }
    ap_log_cerror(APLOG_MARK, APLOG_TRACE2, 0, c1, "h2_x(%ld-%d): %s -> %s (%s)",
                  x->req.set->conn_id, x->req.id, h2_x_state_str(x->state),
                  h2_x_state_str(to), why);
    x->state = to;
    return 1;
}

/* Move x to state to, as the table allows. Called under the lock by
 * either thread, but for NEW -> PENDING, which the connection thread makes
 * without it (no worker sees the stream before it is queued): hence no
 * _locked in its name. Inline: it runs 5 times a stream. */
static APR_INLINE int x_transit(h2_x *x, h2_x_state to, const char *why)
{
    if ((allowed[x->state] & (1u << to)) && x->req.set->loglevel < APLOG_TRACE2) {
        x->state = to;
        return 1;
    }
    return transit_note(x, to, why);
}

void h2_x_poll_signal_locked(h2_x *x)
{
    char b = 1;
    apr_size_t n = 1;

    if (x->poll_out && !x->poll_signalled
        && apr_file_write(x->poll_out, &b, &n) == APR_SUCCESS) {
        x->poll_signalled = 1;
    }
}

void h2_x_poll_drain_locked(h2_x *x)
{
    char buf[8];
    apr_size_t n = sizeof(buf);

    if (x->poll_signalled && !x->in.first && !x->in_eos && !x->aborted) {
        while (apr_file_read(x->poll_in, buf, &n) == APR_SUCCESS) {
            n = sizeof(buf);
        }
        x->poll_signalled = 0;
    }
}

void h2_x_signal_worker_locked(h2_x *x)
{
    if (x->worker_waits) {
        apr_thread_cond_signal(h2_worker_cond(x->worker));
    }
    h2_x_poll_signal_locked(x);
}

/* The waiter of the connection thread, when it sleeps and no wakeup is on
 * its way yet: the caller writes the wakeup (h2_c1_waiter_wake). */
static h2_c1_waiter *wake_c1_locked(h2_xconn *xc, int id, const char *why)
{
    if (xc->c1_polling && !xc->wakeup_sent) {
        xc->wakeup_sent = 1;
        if (xc->set->loglevel >= APLOG_TRACE3) {
            ap_log_cerror(APLOG_MARK, APLOG_TRACE3, 0, xc->set->c1,
                          "h2_x(%ld-%d): wakes the connection thread (%s)",
                          xc->set->conn_id, id, why);
        }
        return xc->waiter;
    }
    return NULL;
}

/* Put x in the ready list; the waiter to wake as wake says, if any. */
static h2_c1_waiter *ready_locked(h2_x *x, int wake)
{
    h2_xconn *xc = x->xc;

    if (!x->ready) {
        x->ready = 1;
        x->next_ready = NULL;
        if (xc->ready_last) xc->ready_last->next_ready = x;
        else xc->ready_first = x;
        xc->ready_last = x;
    }
    if (wake == H2_WAKE_SOFT && xc->n_queued > 0) {
        /* More of this connection's streams wait for a worker: their
         * results come soon, and one wakeup serves them all. The worker
         * taking the last of them wakes the connection. */
        xc->wake_deferred = 1;
    }
    else if (wake != H2_WAKE_NONE) {
        return wake_c1_locked(xc, x->req.id, wake == H2_WAKE_HARD? "now" : "soon");
    }
    return NULL;
}

void h2_x_ready_locked(h2_x *x, int wake)
{
    h2_c1_waiter_wake(ready_locked(x, wake));
}

/* One stream (x) fewer waits in the queue. */
static void unqueued_locked(h2_xconn *xc, h2_x *x)
{
    if (xc->n_queued > 0 && --xc->n_queued == 0 && xc->wake_deferred) {
        xc->wake_deferred = 0;
        h2_c1_waiter_wake(wake_c1_locked(xc, x->req.id, "deferred"));
    }
}

/* --- connection thread --- */

h2_xconn *h2_x_c1_conn_create(apr_pool_t *p, const h2_x_settings *set)
{
    h2_xconn *xc = apr_pcalloc(p, sizeof(*xc));
    apr_status_t rv;

    xc->set = set;
    if ((rv = apr_thread_mutex_create(&xc->mutex, APR_THREAD_MUTEX_DEFAULT, p))
        != APR_SUCCESS) {
        ap_log_cerror(APLOG_MARK, APLOG_ERR, rv, set->c1, APLOGNO(21089)
                      "h2_x(%ld): cannot create the connection's lock", set->conn_id);
        return NULL;
    }
    /* A prefork child exits from its SIGTERM handler, which runs in the
     * connection thread, wherever that is, and destroys the pools from
     * there. Should the thread wait on a condition variable in teardown
     * then, destroying that variable waits for the interrupted waiter,
     * i.e. forever, and the child hangs until the parent's SIGKILL. There
     * teardown polls for its workers instead. */
    if (set->threaded && apr_thread_cond_create(&xc->done_cond, p) != APR_SUCCESS) {
        xc->done_cond = NULL;
    }
    xc->hpool.max_free = h2_util_cache_max(32, H2_HCHUNK_SIZE);
    xc->c2_free = apr_array_make(p, H2_C2_KEEP, sizeof(conn_rec *));
    return xc;
}

h2_x *h2_x_c1_create(h2_xconn *xc, apr_pool_t *p, int id, void *owner)
{
    h2_x *x = apr_pcalloc(p, sizeof(*x));

    x->xc = xc;
    x->owner = owner;
    x->req.set = xc->set;
    x->req.id = id;
    x->task.group = &xc->wgroup;
    x->task.urgency = H2_PRIO_URGENCY_DEFAULT;
    x->state = H2_XS_NEW;
    x->timeout = xc->set->stream_timeout;   /* until its directory's is known */
    return x;
}

h2_x_req *h2_x_c1_req(h2_x *x)
{
    return &x->req;
}

void h2_x_c1_destroy(h2_x *x)
{
    h2_xconn *xc = x->xc;

    apr_thread_mutex_lock(xc->mutex);
    /* under the lock: when this warns, a worker may be writing the state */
    if (x->state != H2_XS_NEW && x->state != H2_XS_DONE
        && x->state != H2_XS_PENDING) {
        ap_log_cerror(APLOG_MARK, APLOG_WARNING, 0, xc->set->c1, APLOGNO(21090)
                      "h2_x(%ld-%d): invalid transition: freed while %s", xc->set->conn_id, x->req.id,
                      h2_x_state_str(x->state));
    }
    /* what the connection's budget still counts for this stream */
    xc->mem_in -= x->in.mem + x->in_consumed;
    xc->mem_out -= x->out_buffered;
    h2_hqueue_clear(&x->in, &xc->hpool);
    h2_hqueue_clear(&x->out, &xc->hpool);
    h2_hqueue_clear(&x->c1_out, &xc->hpool);
    h2_hqueue_clear(&x->held, &xc->hpool);
    apr_thread_mutex_unlock(xc->mutex);
}

void h2_x_c1_pend(h2_x *x)
{
    /* no worker sees a stream before it is admitted: no lock yet */
    x_transit(x, H2_XS_PENDING, "to be run");
    x->pended = 1;
}

/* How many of a connection's workers WebSockets may hold: they hold one
 * as long as they are open, so a quarter (at least one) stays for the
 * connection's other requests. */
static int tunnels_max(const h2_x_settings *set)
{
    int reserve = set->max_processing / 4;
    if (set->max_processing <= 1) return 1;
    return set->max_processing - (reserve > 0? reserve : 1);
}

int h2_x_c1_admit(h2_x *x)
{
    h2_xconn *xc = x->xc;
    int ok = 0, tunnel = x->req.head && x->req.head->websocket;

    apr_thread_mutex_lock(xc->mutex);
    /* One connection gets at most a share of the workers, so that its slow
     * or stuck requests cannot starve the others; the rest waits until
     * some of its own finish. */
    if (xc->n_processing - xc->n_parked >= xc->set->max_processing) {
        ok = 0;
    }
    else if (tunnel && xc->n_tunnels >= tunnels_max(xc->set)) {
        ok = -1;
    }
    else if (x_transit(x, H2_XS_QUEUED, "admitted")) {
        xc->n_processing++;
        xc->n_queued++;
        if (tunnel) {
            x->tunnel = 1;
            xc->n_tunnels++;
        }
        ok = 1;
    }
    apr_thread_mutex_unlock(xc->mutex);
    return ok;
}

static int log_due_locked(h2_x *x);
static void log_due(h2_x *x);

void h2_x_c1_starved(h2_x *x, int starved)
{
    h2_xconn *xc = x->xc;
    int due = 0;

    if (x->starved == starved) {
        return;     /* the flag is the connection thread's to write */
    }
    apr_thread_mutex_lock(xc->mutex);
    x->starved = starved;
    if (x->state == H2_XS_PARKED) {
        xc->n_starved += starved? 1 : -1;
        if (starved && xc->n_starved > xc->set->max_processing
            && (due = log_due_locked(x))) {
            /* past the share: its log goes now, with what went out */
            x->wire_out = x->c1_wire;
            x->log_early = 1;
        }
    }
    apr_thread_mutex_unlock(xc->mutex);
    if (due) {
        log_due(x);
    }
}

void h2_x_c1_set_urgency(h2_x *x, int urgency)
{
    /* under the queue's lock, whether the task waits there yet or not */
    h2_workers_reprioritize(h2_workers_of_child(), &x->task, urgency);
}

void h2_x_c1_set_consume_wake(h2_x *x, apr_size_t n)
{
    apr_thread_mutex_lock(x->xc->mutex);
    x->consume_wake = n;
    apr_thread_mutex_unlock(x->xc->mutex);
}

void h2_x_c1_schedule(h2_x **xs, int n)
{
    h2_wtask *tasks[64];
    int i, k = 0;

    /* the queue lock is taken without ours (lock order) */
    for (i = 0; i < n; ++i) {
        tasks[k++] = &xs[i]->task;
        if (k == (int)(sizeof(tasks) / sizeof(tasks[0]))) {
            h2_workers_push(h2_workers_of_child(), tasks, k);
            k = 0;
        }
    }
    if (k > 0) {
        h2_workers_push(h2_workers_of_child(), tasks, k);
    }
}

/* Lock held: 1 when x's parked log is to be handed to a worker now (once). */
static int log_due_locked(h2_x *x)
{
    if (x->state != H2_XS_PARKED || x->log_queued) {
        return 0;
    }
    x->log_queued = 1;
    return 1;
}


/* x's parked log is due (once; the queue's lock, without ours): the
 * connection thread writes it after its next flush. Under prefork a worker
 * does, so that one request's code runs at a time in the process. */
static void log_due(h2_x *x)
{
    h2_xconn *xc = x->xc;
    h2_wtask *t = &x->task;

    if (log_runner && xc->set->threaded) {
        x->next_log = NULL;
        if (xc->logs_last) xc->logs_last->next_log = x;
        else xc->logs_first = x;
        xc->logs_last = x;
        return;
    }
    h2_workers_push(h2_workers_of_child(), &t, 1);
}

static conn_rec *finish(h2_x *x, conn_rec *c2, const char *why);

void h2_x_c1_run_logs(h2_xconn *xc)
{
    h2_x *x;
    conn_rec *c2;

    while ((x = xc->logs_first) != NULL) {
        xc->logs_first = x->next_log;
        if (!xc->logs_first) {
            xc->logs_last = NULL;
        }
        apr_thread_mutex_lock(xc->mutex);
        x_transit(x, H2_XS_RUNNING, "its log taken by the connection thread");
        xc->n_parked--;
        xc->n_starved -= x->starved;
        c2 = x->parked_c2;
        x->parked_c2 = NULL;
        apr_thread_mutex_unlock(xc->mutex);
        log_runner(c2);
        c2 = finish(x, c2, "logged by the connection thread");
        if (c2 && discard_c2) {
            discard_c2(c2);
        }
    }
}

int h2_x_c1_abort(h2_x *x)
{
    h2_xconn *xc = x->xc;
    int queued, busy, due;

    apr_thread_mutex_lock(xc->mutex);
    queued = (x->state == H2_XS_QUEUED);
    apr_thread_mutex_unlock(xc->mutex);
    if (queued && h2_workers_unqueue(h2_workers_of_child(), &x->task)) {
        /* no worker took it: none ever will */
        apr_thread_mutex_lock(xc->mutex);
        x_transit(x, H2_XS_DONE, "taken back");
        xc->n_processing--;
        xc->n_tunnels -= x->tunnel;
        unqueued_locked(xc, x);
        apr_thread_mutex_unlock(xc->mutex);
        return 0;
    }
    apr_thread_mutex_lock(xc->mutex);
    x->wire_out = x->c1_wire;   /* what its log will count */
    if (x->state == H2_XS_PARKED) {
        /* only its log is left, which may be written now */
        x->aborted = 1;
        due = log_due_locked(x);
        apr_thread_mutex_unlock(xc->mutex);
        if (due) {
            log_due(x);
        }
        return 1;
    }
    busy = (x->state == H2_XS_QUEUED || x->state == H2_XS_RUNNING);
    if (busy && !x->aborted) {
        /* the response is no longer wanted: stop the handler early */
        x->aborted = 1;
        h2_x_signal_worker_locked(x);
        if (xc->set->loglevel >= APLOG_TRACE2) {
            ap_log_cerror(APLOG_MARK, APLOG_TRACE2, 0, xc->set->c1,
                          "h2_x(%ld-%d): worker told to stop", xc->set->conn_id,
                          x->req.id);
        }
    }
    apr_thread_mutex_unlock(xc->mutex);
    return busy;
}

/* Give workers the room the connection sent since the last collect. */
static void settle_sent_locked(h2_xconn *xc)
{
    h2_x *x;

    h2_hqueue_clear(&xc->sent_chunks, &xc->hpool);
    for (x = xc->sent_first; x; x = x->next_sent) {
        x->in_sent_list = 0;
        x->out_buffered -= x->c1_sent;
        xc->mem_out -= x->c1_sent;
        x->c1_sent = 0;
        x->wire_out = x->c1_wire;
        if (x->worker_waits && x->out_buffered <= xc->set->stream_max_mem / 2) {
            h2_x_signal_worker_locked(x);
        }
    }
    xc->sent_first = NULL;
}

int h2_x_c1_collect(h2_xconn *xc, h2_x_collect_cb *cb, void *ctx)
{
    h2_x *ready, *x;
    int n = 0;

    apr_thread_mutex_lock(xc->mutex);
    settle_sent_locked(xc);
    ready = xc->ready_first;
    xc->ready_first = xc->ready_last = NULL;
    apr_thread_mutex_unlock(xc->mutex);

    /* A stream stays marked ready (so no worker relinks it) until its
     * output moved over under the lock; only then may it be listed anew. */
    while (ready) {
        apr_size_t consumed;
        int done;

        x = ready;
        apr_thread_mutex_lock(xc->mutex);
        ready = x->next_ready;
        x->next_ready = NULL;
        x->ready = 0;
        h2_hqueue_move(&x->c1_out, &x->out);
        consumed = x->in_consumed;
        x->in_consumed = 0;
        done = (x->state == H2_XS_DONE || x->state == H2_XS_NEW);
        if (done && x->in.first) {
            /* the handler finished without reading all of the body: free
             * it and open the window, or the client stalls on it */
            consumed += x->in.mem;
            h2_hqueue_clear(&x->in, &xc->hpool);
        }
        xc->mem_in -= consumed;
        apr_thread_mutex_unlock(xc->mutex);
        if (xc->set->loglevel >= APLOG_TRACE3) {
            ap_log_cerror(APLOG_MARK, APLOG_TRACE3, 0, xc->set->c1,
                          "h2_x(%ld-%d): output taken over, %" APR_SIZE_T_FMT
                          " body bytes read%s", xc->set->conn_id, x->req.id,
                          consumed, done? ", worker done" : "");
        }
        ++n;
        cb(ctx, x->owner, consumed, done);
    }
    return n;
}

h2_hqueue *h2_x_c1_out(h2_x *x)
{
    return &x->c1_out;
}

void h2_x_c1_hold(h2_x *x, h2_hchunk *c)
{
    h2_hqueue_append(&x->held, c);
}

void h2_x_c1_sent_chunk(h2_xconn *xc, h2_hchunk *c)
{
    h2_hqueue_append(&xc->sent_chunks, c);
}

void h2_x_c1_sent(h2_x *x, apr_size_t n)
{
    h2_xconn *xc = x->xc;

    x->c1_sent += n;
    if (!x->in_sent_list) {
        /* the sent list is the connection thread's alone: no lock */
        x->in_sent_list = 1;
        x->next_sent = xc->sent_first;
        xc->sent_first = x;
    }
}

void h2_x_c1_wire(h2_x *x, apr_size_t n)
{
    x->c1_wire += (apr_off_t)n;     /* the connection thread's alone */
}

void h2_x_c1_settle(h2_x *x)
{
    h2_xconn *xc = x->xc;
    int due;

    apr_thread_mutex_lock(xc->mutex);
    x->wire_out = x->c1_wire;
    x->out_settled = 1;
    due = log_due_locked(x);
    apr_thread_mutex_unlock(xc->mutex);
    if (due) {
        log_due(x);
    }
}

void h2_x_c1_body_due(h2_xconn *xc, apr_size_t min)
{
    apr_thread_cond_t *conds[8];
    int n = 0, i;
    h2_x *x, *next, *keep = NULL;

    if (!xc->due_first) {
        return;
    }
    apr_thread_mutex_lock(xc->mutex);
    for (x = xc->due_first; x; x = next) {
        next = x->next_due;
        if (min && x->in_fresh && x->in.mem < min && x->worker_waits && !x->forgotten) {
            /* Too little to be worth a wakeup while more is coming (this
             * read brought some): a worker faster than its client would
             * else sleep and wake, and contend for the lock, once per
             * read. A read that brings it nothing wakes it. */
            x->in_fresh = 0;
            x->next_due = keep;
            keep = x;
            continue;
        }
        x->in_fresh = 0;
        x->in_due = 0;
        if (x->worker_waits && n < (int)(sizeof(conds) / sizeof(conds[0]))) {
            /* Signalled after the unlock: woken while we still held the
             * lock, the worker would preempt us only to sleep on the lock
             * (two switches per read on a busy machine). A worker's cond
             * lives as long as the child, and its waits check again. */
            conds[n++] = h2_worker_cond(x->worker);
            h2_x_poll_signal_locked(x);
        }
        else {
            h2_x_signal_worker_locked(x);
        }
    }
    xc->due_first = keep;
    apr_thread_mutex_unlock(xc->mutex);
    for (i = 0; i < n; ++i) {
        apr_thread_cond_signal(conds[i]);
    }
}

void h2_x_c1_forget(h2_x *x)
{
    x->forgotten = 1;   /* written and read by the connection thread */
}

#define FORGOTTEN(x) ((x)->forgotten)

void h2_x_c1_purge(h2_xconn *xc)
{
    h2_x_c1_body_due(xc, 0);   /* forgotten streams leave that list too */
    /* one pass per list: unlinking each stream alone walks lists as long
     * as the open streams (quadratic at -m 100) */
    apr_thread_mutex_lock(xc->mutex);
    if (xc->ready_first) {
        H2_UNLIST(h2_x, &xc->ready_first, next_ready, FORGOTTEN, xc->ready_last);
    }
    apr_thread_mutex_unlock(xc->mutex);
    if (xc->sent_first) {
        h2_x *last_sent;
        H2_UNLIST(h2_x, &xc->sent_first, next_sent, FORGOTTEN, last_sent);
        (void)last_sent;
    }
}

int h2_x_c1_wait(h2_xconn *xc, apr_socket_t *sock, apr_interval_time_t timeout)
{
    h2_c1_waiter *w = h2_c1_waiter_get();
    int woken, waited;

    h2_x_c1_body_due(xc, 0);   /* no worker waits on body while we sleep */
    if (!w) {
        apr_sleep(apr_time_from_msec(1));
        return 1;
    }
    apr_thread_mutex_lock(xc->mutex);
    if (xc->ready_first) {
        apr_thread_mutex_unlock(xc->mutex);
        return 1;
    }
    if (xc->wake_deferred && xc->n_queued == 0) {
        xc->wake_deferred = 0;
        apr_thread_mutex_unlock(xc->mutex);
        return 1;
    }
    xc->waiter = w;
    xc->c1_polling = 1;
    xc->wakeup_sent = 0;
    apr_thread_mutex_unlock(xc->mutex);

    waited = h2_c1_waiter_wait(w, sock, timeout);

    apr_thread_mutex_lock(xc->mutex);
    woken = xc->wakeup_sent;
    xc->c1_polling = 0;
    xc->wakeup_sent = 0;
    xc->waiter = NULL;
    apr_thread_mutex_unlock(xc->mutex);
    if (woken && !(waited & H2_WAITED_WOKEN)) {
        /* the socket ended the wait, the (single) wakeup of this wait came
         * on top: the thread's next wait, maybe for another connection,
         * must not see it */
        h2_c1_waiter_drain(w);
    }
    return (waited & H2_WAITED_INPUT)? 1 : 0;
}

int h2_x_c1_processing(h2_xconn *xc)
{
    int n;
    apr_thread_mutex_lock(xc->mutex);
    n = xc->n_processing;
    apr_thread_mutex_unlock(xc->mutex);
    return n;
}

apr_size_t h2_x_c1_mem_held(h2_xconn *xc, apr_size_t *body)
{
    apr_size_t held;
    apr_thread_mutex_lock(xc->mutex);
    held = xc->mem_in + xc->mem_out;
    if (body) {
        *body = xc->mem_in;
    }
    apr_thread_mutex_unlock(xc->mutex);
    return held;
}

void h2_x_c1_idle(h2_xconn *xc, int final)
{
    conn_rec *c2;

    apr_thread_mutex_lock(xc->mutex);
    if (final) {
        /* at the end only: before, they may hold files a flush still sends */
        h2_hqueue_clear(&xc->sent_chunks, &xc->hpool);
    }
    h2_hpool_trim(&xc->hpool, 0);
    apr_thread_mutex_unlock(xc->mutex);
    for (;;) {
        apr_thread_mutex_lock(xc->mutex);
        c2 = (xc->c2_free->nelts > 0)? *(conn_rec **)apr_array_pop(xc->c2_free) : NULL;
        apr_thread_mutex_unlock(xc->mutex);
        if (!c2) {
            break;
        }
        discard_c2(c2);   /* its shell lock, without ours */
    }
}

void h2_x_c1_teardown_start(h2_xconn *xc)
{
    apr_thread_mutex_lock(xc->mutex);
    xc->tearing_down = 1;
    apr_thread_mutex_unlock(xc->mutex);
}

void h2_x_c1_teardown_wait(h2_xconn *xc)
{
    h2_x_c1_run_logs(xc);   /* the aborts made the parked ones due */
    apr_thread_mutex_lock(xc->mutex);
    if (xc->done_cond) {
        while (xc->n_processing > 0) {
            apr_thread_cond_wait(xc->done_cond, xc->mutex);
        }
    }
    else {
        /* prefork: see h2_x_c1_conn_create */
        apr_interval_time_t pause = apr_time_from_msec(1);
        while (xc->n_processing > 0) {
            apr_thread_mutex_unlock(xc->mutex);
            apr_sleep(pause);
            if (pause < apr_time_from_msec(16)) pause *= 2;
            apr_thread_mutex_lock(xc->mutex);
        }
    }
    apr_thread_mutex_unlock(xc->mutex);
}

/* --- worker --- */

h2_x *h2_x_worker_of(h2_wtask *task)
{
    return (h2_x *)((char *)task - APR_OFFSETOF(h2_x, task));
}

const h2_x_req *h2_x_worker_take(h2_x *x, h2_worker *wk, conn_rec **pc2)
{
    h2_xconn *xc = x->xc;
    int aborted;

    *pc2 = NULL;
    apr_thread_mutex_lock(xc->mutex);
    if (x->state == H2_XS_PARKED) {
        x_transit(x, H2_XS_RUNNING, "its log taken by a worker");
        x->worker = wk;
        xc->n_parked--;
        xc->n_starved -= x->starved;
        *pc2 = x->parked_c2;
        x->parked_c2 = NULL;
        apr_thread_mutex_unlock(xc->mutex);
        return &x->req;
    }
    x_transit(x, H2_XS_RUNNING, "taken by a worker");
    x->worker = wk;
    aborted = x->aborted;
    unqueued_locked(xc, x);
    if (!aborted && xc->c2_free->nelts > 0) {
        *pc2 = *(conn_rec **)apr_array_pop(xc->c2_free);
    }
    apr_thread_mutex_unlock(xc->mutex);
    return aborted? NULL : &x->req;
}

void h2_x_worker_count(h2_x *x, request_rec *r)
{
    conn_rec *c1 = x->req.set->c1;
    ap_sb_handle_t *sbh = c1->sbh? c1->sbh : (ap_sb_handle_t *)x->req.set->sbh;

    /* the client connection's scoreboard slot, as for its HTTP/1.1
     * requests; the lock keeps this connection's workers from losing
     * each other's updates */
    if (sbh) {
        apr_thread_mutex_lock(x->xc->mutex);
        ap_increment_counts(sbh, r);
        apr_thread_mutex_unlock(x->xc->mutex);
    }
}

int h2_x_worker_settled(h2_x *x, apr_off_t *wire, int *complete)
{
    h2_xconn *xc = x->xc;
    int settled;

    apr_thread_mutex_lock(xc->mutex);
    settled = x->out_settled || x->aborted || x->log_early;
    *wire = x->wire_out;
    *complete = x->out_settled || (x->log_early && !x->aborted);
    apr_thread_mutex_unlock(xc->mutex);
    return settled;
}

int h2_x_worker_park(h2_x *x, conn_rec *c2)
{
    h2_xconn *xc = x->xc;
    int parked = 0;

    apr_thread_mutex_lock(xc->mutex);
    if (!x->out_settled && !x->aborted && x->starved
        && xc->n_starved >= xc->set->max_processing) {
        /* past the share of starved ones (h2_x_c1_starved): logged now */
        x->log_early = 1;
    }
    else if (!x->out_settled && !x->aborted) {
        x_transit(x, H2_XS_PARKED, "its log waits for the response");
        x->parked_c2 = c2;
        x->worker = NULL;
        x->worker_waits = 0;
        xc->n_parked++;
        xc->n_starved += x->starved;
        parked = 1;
        /* its share of workers is free: streams waiting for one may go */
        h2_x_ready_locked(x, H2_WAKE_SOFT);
    }
    apr_thread_mutex_unlock(xc->mutex);
    return parked;
}

void h2_x_worker_timeout(h2_x *x, apr_interval_time_t timeout)
{
    x->timeout = timeout;
}

/* Wait (lock held) until x holds less than H2StreamMaxMemSize of output,
 * or it is aborted or H2StreamTimeout passed. */
static apr_status_t wait_for_room_locked(h2_x *x)
{
    h2_xconn *xc = x->xc;
    apr_status_t rv = APR_SUCCESS;

    while (x->out_buffered >= xc->set->stream_max_mem && !x->aborted) {
        /* the client reads slower than we produce */
        h2_x_ready_locked(x, H2_WAKE_HARD);
        if (xc->set->loglevel >= APLOG_TRACE2) {
            ap_log_cerror(APLOG_MARK, APLOG_TRACE2, 0, xc->set->c1,
                          "h2_x(%ld-%d): worker waits for room (%" APR_SIZE_T_FMT
                          " bytes buffered)", xc->set->conn_id, x->req.id,
                          x->out_buffered);
        }
        x->worker_waits = x->room_waits = 1;
        rv = h2_worker_wait(x->worker, xc->mutex, x->timeout);
        x->worker_waits = x->room_waits = 0;
        if (APR_STATUS_IS_TIMEUP(rv)) {
            return rv;
        }
        rv = APR_SUCCESS;
    }
    return x->aborted? APR_ECONNABORTED : rv;
}

/* Append one item to x's output (lock held). Returns the wake it asks. */
static int out_append_locked(h2_x *x, const h2_x_item *it)
{
    h2_xconn *xc = x->xc;
    h2_hchunk *c;

    switch (it->type) {
    case H2_HC_DATA:
        h2_hqueue_write(&x->out, &xc->hpool, it->data, it->len);
        x->out_buffered += it->len;
        xc->mem_out += it->len;
        return H2_WAKE_NONE;
    case H2_HC_FILE:
        c = h2_hpool_get(&xc->hpool, H2_HC_FILE, 0);
        c->fd = it->fd;
        c->foff = it->off;
        c->flen = it->len;
        c->fd_sendfile = it->sendfile;
        c->fd_mmap = it->mmap;
        h2_hqueue_append(&x->out, c);
        x->out_buffered += h2_hchunk_cost(c);
        xc->mem_out += h2_hchunk_cost(c);
        return H2_WAKE_NONE;
    case H2_HC_HEADERS:
    case H2_HC_INTERIM:
    case H2_HC_TRAILERS:
    case H2_HC_PUSH:
        c = it->hf.built? h2_hchunk_hfields(&xc->hpool, it->type, it->status, &it->hf)
                        : h2_hchunk_fields(&xc->hpool, it->type, it->status, it->fields);
        h2_hqueue_append(&x->out, c);
        return H2_WAKE_SOFT;
    case H2_HC_EOS:
    case H2_HC_RESET:
        c = h2_hpool_get(&xc->hpool, it->type, 0);
        c->status = it->status;
        h2_hqueue_append(&x->out, c);
        x->out_eos = 1;
        return H2_WAKE_SOFT;
    }
    return H2_WAKE_NONE;
}

apr_status_t h2_x_worker_out(h2_x *x, const h2_x_item *items, int n, int flush)
{
    h2_xconn *xc = x->xc;
    apr_status_t rv = APR_SUCCESS;
    int i, w, wake = (flush || !xc->set->output_buffering)? H2_WAKE_HARD
                                                            : H2_WAKE_NONE;
    apr_size_t before;
    h2_c1_waiter *waiter = NULL;

    apr_thread_mutex_lock(xc->mutex);
    before = x->out_buffered;
    for (i = 0; i < n; ++i) {
        if ((rv = wait_for_room_locked(x)) != APR_SUCCESS) {
            for (; i < n; ++i) {
                if (items[i].type == H2_HC_FILE) close(items[i].fd);
            }
            break;
        }
        if (x->out_eos) {
            if (items[i].type == H2_HC_FILE) close(items[i].fd);
            continue;
        }
        w = out_append_locked(x, &items[i]);
        if (wake < w) wake = w;
    }
    if (x->out_buffered - before >= H2_HCHUNK_SIZE
        || x->out_buffered >= H2_HCHUNK_SIZE) {
        wake = H2_WAKE_HARD;   /* a frame's worth to stream out */
    }
    if (i > 0 || flush) {
        waiter = ready_locked(x, wake);
    }
    apr_thread_mutex_unlock(xc->mutex);
    /* after the unlock: the thread it wakes takes the lock first thing
     * (h2_x_c1_wait); woken while we held it, it slept again on the lock
     * in about one of five requests at -m 1 */
    h2_c1_waiter_wake(waiter);
    return rv;
}

conn_rec *h2_x_worker_done(h2_x *x, conn_rec *c2)
{
    return finish(x, c2, "worker finished");
}

/* x's request is over, c2 (if any) free: keep it for the connection's
 * next streams, or return it to be discarded (either thread). */
static conn_rec *finish(h2_x *x, conn_rec *c2, const char *why)
{
    h2_xconn *xc = x->xc;

    apr_thread_mutex_lock(xc->mutex);
    if (c2 && discard_c2 && xc->c2_free->nelts < H2_C2_KEEP) {
        APR_ARRAY_PUSH(xc->c2_free, conn_rec *) = c2;
        c2 = NULL;
    }
    x_transit(x, H2_XS_DONE, why);
    if (x->poll_pool) {
        apr_pool_destroy(x->poll_pool);     /* closes the pipe */
        x->poll_pool = NULL;
        x->poll_in = x->poll_out = NULL;
    }
    x->worker = NULL;
    x->worker_waits = 0;
    xc->n_processing--;
    xc->n_tunnels -= x->tunnel;
    h2_x_ready_locked(x, H2_WAKE_SOFT);
    if (xc->n_processing == 0 && xc->tearing_down && xc->done_cond) {
        apr_thread_cond_broadcast(xc->done_cond);
    }
    apr_thread_mutex_unlock(xc->mutex);
    return c2;
}
