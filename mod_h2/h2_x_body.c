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

/* Request bodies across the hand-off: what the connection thread puts in,
 * what workers take out (or poll for), and what the connection holds.
 * Waking the reader is h2_x.c's, which calls nothing here. */

#include <string.h>

#include <apr_strings.h>
#include <apr_thread_cond.h>
#include <httpd.h>
#include <http_log.h>

#include "h2.h"
#include "h2_x_int.h"

APLOG_USE_MODULE(http2);

/* --- connection thread --- */

int h2_x_c1_body_in(h2_x *x, const char *data, apr_size_t len)
{
    h2_xconn *xc = x->xc;
    int kept = 0;

    apr_thread_mutex_lock(xc->mutex);
    /* a stream may get its body before a worker picked it up */
    if ((x->state == H2_XS_PENDING || x->state == H2_XS_QUEUED
              || x->state == H2_XS_RUNNING) && !x->aborted) {
        h2_hqueue_write(&x->in, &xc->hpool, data, len);
        xc->mem_in += len;
        x->in_fresh = 1;
        if (!x->in_due) {
            /* the worker hears of it once per read (h2_x_c1_body_due) */
            x->in_due = 1;
            x->next_due = xc->due_first;
            xc->due_first = x;
        }
        kept = 1;
    }
    apr_thread_mutex_unlock(xc->mutex);
    return kept;
}

void h2_x_c1_body_end(h2_x *x, apr_table_t *trailers)
{
    /* Not x->state: once the stream is queued, workers write that (under
     * the lock), and reading it here without the lock raced with them. */
    if (!x->pended) {
        /* no worker sees it yet (the usual GET): no lock */
        x->in_eos = 1;
        x->trailers_in = trailers;
        return;
    }
    apr_thread_mutex_lock(x->xc->mutex);
    x->in_eos = 1;
    x->trailers_in = trailers;
    h2_x_signal_worker_locked(x);
    apr_thread_mutex_unlock(x->xc->mutex);
}

/* --- worker --- */

apr_status_t h2_x_worker_pollfd(h2_x *x, apr_pool_t *p, apr_pollfd_t *pfd,
                                apr_interval_time_t *ptimeout)
{
    h2_xconn *xc = x->xc;
    apr_status_t rv = APR_SUCCESS;

    apr_thread_mutex_lock(xc->mutex);
    if (!x->poll_in) {
        if ((rv = apr_pool_create(&x->poll_pool, p)) == APR_SUCCESS) {
            rv = apr_file_pipe_create_pools(&x->poll_in, &x->poll_out,
                                            APR_FULL_NONBLOCK, x->poll_pool,
                                            x->poll_pool);
        }
        if (rv != APR_SUCCESS) {
            if (x->poll_pool) apr_pool_destroy(x->poll_pool);
            x->poll_pool = NULL;
            x->poll_in = x->poll_out = NULL;
        }
        else if (x->in.first || x->in_eos || x->aborted) {
            h2_x_poll_signal_locked(x);
        }
    }
    if (rv == APR_SUCCESS) {
        pfd->p = x->poll_pool;
        pfd->desc_type = APR_POLL_FILE;
        pfd->desc.f = x->poll_in;
        pfd->reqevents = APR_POLLIN;
        pfd->rtnevents = 0;
        if (ptimeout) {
            *ptimeout = x->timeout;
        }
    }
    apr_thread_mutex_unlock(xc->mutex);
    return rv;
}

/* Move up to readbytes of body into bb (lock held); returns the bytes. */
static apr_off_t body_take_locked(h2_x *x, apr_bucket_brigade *bb, int getline,
                                  int speculative, apr_off_t readbytes)
{
    h2_hchunk *c;
    apr_off_t n = 0;

    for (c = x->in.first; c && n < readbytes; ) {
        apr_size_t k = c->end - c->start;
        const char *d = c->data + c->start;
        int line_end = 0;
        if ((apr_off_t)k > readbytes - n) {
            k = (apr_size_t)(readbytes - n);
        }
        else if (!getline && !speculative) {
            /* the rest of the chunk goes whole: handed over, not copied */
            APR_BRIGADE_INSERT_TAIL(bb, h2_hchunk_bucket(h2_hqueue_pop(&x->in),
                                                         bb->bucket_alloc));
            n += (apr_off_t)k;
            c = x->in.first;
            continue;
        }
        if (getline) {
            const char *lf = memchr(d, '\n', k);
            if (lf) {
                k = (apr_size_t)(lf - d) + 1;
                line_end = 1;
            }
        }
        APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_heap_create(d, k, NULL, bb->bucket_alloc));
        n += (apr_off_t)k;
        if (speculative) {
            c = c->next;
        }
        else {
            c->start += k;
            x->in.mem -= k;
            if (c->start == c->end) {
                h2_hpool_put(&x->xc->hpool, h2_hqueue_pop(&x->in));
                c = x->in.first;
            }
        }
        if (line_end) {
            break;
        }
    }
    return n;
}

apr_status_t h2_x_worker_body(h2_x *x, apr_bucket_brigade *bb, int getline,
                              int speculative, apr_read_type_e block,
                              apr_off_t readbytes, apr_time_t deadline,
                              apr_table_t *trailers, apr_off_t *pread)
{
    h2_xconn *xc = x->xc;
    apr_status_t rv;
    apr_off_t n;

    *pread = 0;
    apr_thread_mutex_lock(xc->mutex);
    while (!x->in.first && !x->in_eos && !x->aborted) {
        apr_interval_time_t wait = x->timeout;
        if (block == APR_NONBLOCK_READ) {
            /* The pipe may say input came that an earlier read took
             * already (h2_x_c1_body_due() signals what came since its last
             * call): quiet it, or a poller (mod_proxy's tunnels) finds it
             * readable at once again and spins until more input comes. */
            h2_x_poll_drain_locked(x);
            apr_thread_mutex_unlock(xc->mutex);
            return APR_EAGAIN;
        }
        if (x->in_consumed > 0 && x->in_consumed >= x->consume_wake) {
            /* the client may wait for window to send more */
            h2_x_ready_locked(x, H2_WAKE_HARD);
        }
        if (deadline && deadline - apr_time_now() < wait) {
            wait = deadline - apr_time_now();
        }
        rv = APR_TIMEUP;
        if (wait > 0) {
            if (xc->set->loglevel >= APLOG_TRACE2) {
                ap_log_cerror(APLOG_MARK, APLOG_TRACE2, 0, xc->set->c1,
                              "h2_x(%ld-%d): worker waits for request body",
                              xc->set->conn_id, x->req.id);
            }
            x->worker_waits = 1;
            rv = h2_worker_wait(x->worker, xc->mutex, wait);
            x->worker_waits = 0;
        }
        if (APR_STATUS_IS_TIMEUP(rv)) {
            apr_thread_mutex_unlock(xc->mutex);
            return rv;
        }
    }
    if (x->aborted && !x->in_eos) {
        /* a body that is complete is still read whole: a handler reading
         * the (empty) body of a GET whose client left meanwhile sees its
         * end, as over HTTP/1.1, not an error to log */
        apr_thread_mutex_unlock(xc->mutex);
        return APR_ECONNABORTED;
    }
    n = body_take_locked(x, bb, getline, speculative, readbytes);
    h2_x_poll_drain_locked(x);
    if (!speculative && n > 0) {
        x->in_consumed += (apr_size_t)n;
        if (x->consume_wake? x->in_consumed >= x->consume_wake
            : (x->in_consumed >= H2_HCHUNK_SIZE || !x->in.first)) {
            /* let the client send more */
            h2_x_ready_locked(x, H2_WAKE_HARD);
        }
    }
    if (!speculative && !x->in.first && x->in_eos) {
        if (x->trailers_in && trailers) {
            apr_table_overlap(trailers, x->trailers_in, APR_OVERLAP_TABLES_SET);
        }
        APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(bb->bucket_alloc));
    }
    apr_thread_mutex_unlock(xc->mutex);
    *pread = n;
    return APR_SUCCESS;
}

