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
/* test_x_threads' worker side: the fake handler h2_workers' threads run
 * for each stream, as h2_c2.c's c2_process() drives a request through the
 * exchange: take, read the body (blocking, not, by line, speculatively, or
 * polling the stream's pipe), hand the response over in items (fields,
 * data, file ranges, trailers, the end), reset it when it broke, done. It
 * checks every body byte and the request as the connection fixed it. */

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <apr_buckets.h>
#include <apr_portable.h>
#include <apr_strings.h>

#include "h2.h"
#include "h2_workers.h"
#include "xt.h"

typedef struct wctx {
    h2_x *x;
    const h2_x_req *req;
    xt_plan pl;
    apr_uint64_t r;
    apr_pool_t *pool;
    apr_bucket_brigade *bb;
    apr_table_t *trailers;        /* the request's: the body's end fills it */
    apr_size_t body_off;
    int body_eos;
    apr_size_t resp_off;
    apr_pollfd_t pfd;
    int have_pfd;
} wctx;

/* The body bytes in w->bb, n of them from w->body_off on: check, count,
 * drop (their chunks go back from this thread). */
static void body_check(wctx *w, int spec, int getline, apr_off_t n)
{
    apr_bucket *b;
    apr_size_t off = w->body_off, total = 0;
    int line_ended = 0;

    for (b = APR_BRIGADE_FIRST(w->bb); b != APR_BRIGADE_SENTINEL(w->bb);
         b = APR_BUCKET_NEXT(b)) {
        const char *d;
        apr_size_t len;
        if (APR_BUCKET_IS_EOS(b)) {
            if (spec || w->body_eos || off != w->pl.body_len) {
                xt_fail("(%ld-%d) body end at %zu of %zu%s", w->req->set->conn_id,
                        w->req->id, off, w->pl.body_len, spec? ", speculative" : "");
            }
            w->body_eos = 1;
            continue;
        }
        apr_bucket_read(b, &d, &len, APR_BLOCK_READ);
        if (off + len > w->pl.body_len || !xt_check_bytes(w->pl.body_salt, off, d, len)) {
            xt_fail("(%ld-%d) body bytes %zu..%zu of %zu wrong%s", w->req->set->conn_id,
                    w->req->id, off, off + len, w->pl.body_len, spec? " (speculative)" : "");
        }
        if (getline && len > 0) {
            const char *lf = memchr(d, '\n', len);
            if (line_ended || (lf && lf != d + len - 1)) {
                xt_fail("(%ld-%d) a line read went past its LF", w->req->set->conn_id,
                        w->req->id);
            }
            line_ended = (lf != NULL);
        }
        off += len;
        total += len;
    }
    if ((apr_off_t)total != n) {
        xt_fail("(%ld-%d) body read counted %ld of %zu bytes", w->req->set->conn_id,
                w->req->id, (long)n, total);
    }
    if (!spec) {
        w->body_off = off;
        apr_atomic_add32(&xt_st.body_kb, (apr_uint32_t)(total / 1024));
    }
    if (w->body_eos && w->pl.trailers) {
        const char *v = apr_table_get(w->trailers, "x-trailer");
        if (!v || atoi(v) != w->req->id) {
            xt_fail("(%ld-%d) request trailers missing", w->req->set->conn_id, w->req->id);
        }
    }
    apr_brigade_cleanup(w->bb);
}

/* Wait as a module polling the connection's input does (mod_proxy's
 * tunnels): on the stream's pipe, for at most its timeout. */
static apr_status_t poll_wait(wctx *w)
{
    apr_interval_time_t timeout;
    apr_os_file_t fd;
    struct pollfd p;

    if (!w->have_pfd) {
        if (h2_x_worker_pollfd(w->x, w->pool, &w->pfd, &timeout) != APR_SUCCESS) {
            xt_fail("(%ld-%d) no pollfd", w->req->set->conn_id, w->req->id);
            return APR_EGENERAL;
        }
        w->have_pfd = 1;
    }
    apr_os_file_get(&fd, w->pfd.desc.f);
    p.fd = fd;
    p.events = POLLIN;
    p.revents = 0;
    apr_atomic_inc32(&xt_st.pollfd_waits);
    if (poll(&p, 1, (int)apr_time_as_msec(w->pl.timeout) + 1) == 0) {
        return APR_TIMEUP;
    }
    return APR_SUCCESS;
}

/* One read of the body, in a mode of chance; EAGAIN when non-blocking and
 * nothing is there. */
static apr_status_t body_read(wctx *w, int block)
{
    int getline = xt_one_in(&w->r, 8), spec = xt_one_in(&w->r, 8);
    apr_off_t want = 1 + (apr_off_t)xt_below(&w->r, xt_one_in(&w->r, 3)? 64 : 40000);
    apr_time_t deadline = xt_one_in(&w->r, 4)? apr_time_now() + w->pl.timeout : 0;
    apr_off_t n = 0;
    apr_status_t rv;

    if (w->pl.use_pollfd && block) {
        /* as a tunnel does: poll, read what is there, poll again when
         * nothing was; the pipe may have been readable for input the last
         * read took already, once, but must then go quiet */
        int idle = 0;
        do {
            if ((rv = poll_wait(w)) != APR_SUCCESS) {
                return rv;
            }
            rv = h2_x_worker_body(w->x, w->bb, getline, spec, APR_NONBLOCK_READ,
                                  want, deadline, w->trailers, &n);
            if (APR_STATUS_IS_EAGAIN(rv) && ++idle > 1) {
                xt_fail("(%ld-%d) the input pipe stays readable with no input",
                        w->req->set->conn_id, w->req->id);
                return rv;
            }
        } while (APR_STATUS_IS_EAGAIN(rv));
    }
    else {
        rv = h2_x_worker_body(w->x, w->bb, getline, spec,
                              block? APR_BLOCK_READ : APR_NONBLOCK_READ, want,
                              deadline, w->trailers, &n);
    }
    if (rv == APR_SUCCESS) {
        body_check(w, spec, getline, n);
    }
    else if (APR_STATUS_IS_TIMEUP(rv)) {
        apr_atomic_inc32(&xt_st.body_timeouts);
    }
    return rv;
}

/* Read the rest of the body. */
static apr_status_t body_all(wctx *w)
{
    apr_status_t rv = APR_SUCCESS;
    while (!w->body_eos && (rv = body_read(w, 1)) == APR_SUCCESS);
    return rv;
}

static apr_status_t out(wctx *w, h2_x_item *items, int n, int flush)
{
    apr_status_t rv = h2_x_worker_out(w->x, items, n, flush);
    if (APR_STATUS_IS_TIMEUP(rv)) {
        apr_atomic_inc32(&xt_st.room_timeouts);
    }
    return rv;
}

/* A fields item: from the table, or serialized ahead as h2_response.c
 * does for most responses. */
static void fields_item(wctx *w, h2_x_item *it, h2_hchunk_type type, int status,
                        const char *name)
{
    apr_table_t *t = apr_table_make(w->pool, 2);

    memset(it, 0, sizeof(*it));
    it->type = type;
    it->status = status;
    apr_table_setn(t, name, apr_itoa(w->pool, w->req->id));
    apr_table_setn(t, "Content-Type", "text/plain");
    it->fields = t;
    if (xt_one_in(&w->r, 2)) {
        h2_hfields_build(w->pool, t, &it->hf, NULL, NULL);
    }
}

/* The next response item, data or a file range, of at most max bytes. */
static void data_item(wctx *w, h2_x_item *it, apr_size_t max)
{
    apr_size_t want = 1 + xt_below(&w->r, xt_one_in(&w->r, 4)? 20000 : 3000), n;
    const unsigned char *p;

    if (want > max) want = max;
    p = xt_at(w->pl.resp_salt, w->resp_off, want, &n);
    memset(it, 0, sizeof(*it));
    it->len = n;
    if (xt_one_in(&w->r, 5)) {
        it->type = H2_HC_FILE;
        it->fd = dup(xt_file_fd);
        it->off = (apr_off_t)(p - xt_buf);
        it->sendfile = xt_one_in(&w->r, 2);
        it->mmap = xt_one_in(&w->r, 2);
    }
    else {
        it->type = H2_HC_DATA;
        it->data = (const char *)p;
    }
    w->resp_off += n;
}

/* Hand the response body over up to end, reading body in between unless
 * the plan reads it first or not at all. */
static apr_status_t respond_body(wctx *w, apr_size_t end)
{
    h2_x_item items[4];
    apr_status_t rv;

    while (w->resp_off < end) {
        int i, n = 1 + (int)xt_below(&w->r, 4);
        for (i = 0; i < n && w->resp_off < end; ++i) {
            data_item(w, &items[i], end - w->resp_off);
        }
        if ((rv = out(w, items, i, xt_one_in(&w->r, 4))) != APR_SUCCESS) {
            return rv;
        }
        if (w->pl.has_body && !w->pl.skip_body && !w->body_eos) {
            rv = body_read(w, xt_one_in(&w->r, 3));
            if (rv != APR_SUCCESS && !APR_STATUS_IS_EAGAIN(rv)) {
                return rv;
            }
        }
    }
    return APR_SUCCESS;
}

/* The handler; APR_SUCCESS when the response ended as the plan says. */
static apr_status_t handle(wctx *w)
{
    h2_x_item it;
    apr_status_t rv;
    int reading = w->pl.has_body && !w->pl.skip_body;

    if (reading && w->pl.read_first && (rv = body_all(w)) != APR_SUCCESS) {
        return rv;
    }
    if (w->pl.kind == XT_NONE) {
        return APR_EGENERAL;       /* no response: the c2 resets */
    }
    if (w->pl.interim) {
        fields_item(w, &it, H2_HC_INTERIM, 103, "x-early");
        if ((rv = out(w, &it, 1, 1)) != APR_SUCCESS) return rv;
    }
    fields_item(w, &it, H2_HC_HEADERS, 200, "x-id");
    if ((rv = out(w, &it, 1, 0)) != APR_SUCCESS) return rv;
    if (w->pl.kind == XT_BREAK) {
        if ((rv = respond_body(w, w->pl.brk)) != APR_SUCCESS) return rv;
        return APR_EGENERAL;
    }
    if ((rv = respond_body(w, w->pl.resp_len)) != APR_SUCCESS) return rv;
    if (reading && (rv = body_all(w)) != APR_SUCCESS) return rv;
    if (w->pl.resp_trailers) {
        fields_item(w, &it, H2_HC_TRAILERS, 0, "x-resp-trailer");
        if ((rv = out(w, &it, 1, 0)) != APR_SUCCESS) return rv;
    }
    memset(&it, 0, sizeof(it));
    it.type = H2_HC_EOS;
    return out(w, &it, 1, xt_one_in(&w->r, 2));
}

/* A request the worker got must be as the connection thread fixed it
 * before it was queued (invariant 1 of h2_x_types.h). */
static void check_req(wctx *w)
{
    const h2_x_req *req = w->req;

    if (req->has_body != w->pl.has_body || !req->head
        || req->head->websocket != w->pl.websocket || req->created == 0) {
        xt_fail("(%ld-%d) the worker sees another request than was queued",
                req->set->conn_id, req->id);
    }
}

void xt_process(h2_worker *wk, h2_wtask *task)
{
    h2_x *x = h2_x_worker_of(task);
    conn_rec *c2 = NULL;
    h2_x_item it;
    apr_status_t rv;
    wctx w;

    memset(&w, 0, sizeof(w));
    w.x = x;
    if (!(w.req = h2_x_worker_take(x, wk, &c2))) {
        apr_atomic_inc32(&xt_st.taken_back);
        h2_x_worker_done(x, NULL);    /* aborted before it started */
        return;
    }
    if (c2 && xt_c2_take_parked(c2)) {
        /* a parked log handed back, as c2_process() writes it */
        xt_c2_use(c2);
        apr_atomic_inc32(&xt_st.logs_worker);
        xt_c2_unuse(c2);
        if ((c2 = h2_x_worker_done(x, c2)) != NULL) {
            xt_c2_discard(c2);
        }
        return;
    }
    if (c2) apr_atomic_inc32(&xt_st.c2_reused);
    else c2 = xt_c2_new();
    xt_c2_use(c2);
    xt_plan_make(&w.pl, xt_seed, w.req->set->conn_id, w.req->id);
    w.r = w.pl.wseed;
    check_req(&w);
    apr_pool_create(&w.pool, NULL);
    w.bb = apr_brigade_create(w.pool, apr_bucket_alloc_create(w.pool));
    w.trailers = apr_table_make(w.pool, 2);
    h2_x_worker_timeout(x, w.pl.timeout);

    if ((rv = handle(&w)) != APR_SUCCESS) {
        if (getenv("H2_XT_SLOW") && w.pl.kind == XT_NORMAL && rv != APR_ECONNABORTED) {
            fprintf(stderr, "(%ld-%d) handler ended with %d, body %zu/%zu eos %d pollfd %d\n",
                    w.req->set->conn_id, w.req->id, rv, w.body_off, w.pl.body_len,
                    w.body_eos, w.pl.use_pollfd);
        }
        /* as c2_process() does for a response that did not end */
        memset(&it, 0, sizeof(it));
        it.type = H2_HC_RESET;
        it.status = APR_STATUS_IS_ECONNABORTED(rv)? H2_ERR_CANCEL : H2_ERR_INTERNAL_ERROR;
        h2_x_worker_out(x, &it, 1, 1);
    }
    h2_x_worker_count(x, NULL);
    xt_c2_unuse(c2);
    if (rv == APR_SUCCESS && w.pl.kind == XT_NORMAL && !w.pl.use_pollfd
        && xt_one_in(&w.r, 2)) {
        /* as c2_run() does when the response is not out yet: the log
         * waits for it, the worker goes (its pool held no poll pipe) */
        xt_c2_park(c2);
        if (h2_x_worker_park(x, c2)) {
            apr_atomic_inc32(&xt_st.parked);
            apr_pool_destroy(w.pool);
            return;
        }
        xt_c2_take_parked(c2);        /* settled meanwhile: logged here */
    }
    if ((c2 = h2_x_worker_done(x, c2)) != NULL) {
        xt_c2_discard(c2);
    }
    apr_pool_destroy(w.pool);         /* after done: it closed the pipe */
}
