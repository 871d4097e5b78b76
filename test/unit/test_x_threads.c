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
/* The exchange between connection threads and workers with real threads:
 * two connection threads, each running connection after connection, and
 * the child's workers (h2_workers.c) running fake handlers (xt_worker.c),
 * request bodies and responses crossing in both directions through h2_x,
 * h2_x_body and h2_handoff's chunks, with the wake-ups of h2_c1_wait, and
 * resets, timeouts and connection teardowns at random points. Every byte
 * is checked where it arrives; at the end of each connection its memory
 * counts must be zero and every hand-off NEW, PENDING (never admitted) or
 * DONE; at the end no chunk, descriptor or secondary connection may be
 * left. Seeded (H2_XT_SEED), the seed printed; H2_XT_ROUNDS streams
 * (default 8000, about 3 s) or H2_XT_SECONDS (default 20), whichever ends
 * first; H2_XT_IDLE the workers' idle seconds (default: 0 or 1 by the
 * seed); H2_XT_SLOW prints the streams of a connection thread that slept
 * over 50 ms and the handlers of normal streams that ended early.
 * Meant to be run under ThreadSanitizer too (make -C sandbox test-tsan). */

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <apr_general.h>
#include <apr_strings.h>
#include <apr_thread_proc.h>
#include <httpd.h>
#include <http_log.h>

#include "h2.h"
#include "h2_workers.h"
#include "h2_x_int.h"
#include "unit.h"
#include "xt.h"

#define XT_THREADS 2                 /* connection threads */
#define XT_OPEN_MAX 12               /* streams open at once on a connection */
#define XT_WAIT apr_time_from_sec(5) /* a wait this long lost a wake-up */

typedef struct cstream cstream;
struct cstream {
    cstream *next;                   /* the connection's open streams */
    cstream *next_pend;              /* waiting to be admitted */
    h2_x *x;
    apr_pool_t *pool;
    int id;
    xt_plan pl;
    h2_req_head head;
    int pending, aborted, busy, done;
    int abort_in;                    /* >0: the client resets it then */
    apr_size_t body_sent, body_acked;
    int body_ended;
    apr_size_t resp_off;
    int got_interim, got_head, got_trailers, got_eos, got_reset;
    int settled;                     /* its last frame "went out" */
};

typedef struct conn {
    apr_uint64_t r;
    long no;
    apr_pool_t *pool;
    conn_rec *c1;
    struct ap_logconf log;
    h2_x_settings *set;
    h2_xconn *xc;
    cstream *streams;
    cstream *pend_first;
    cstream *purge;
    int nopen, created, total, next_id, round, teardown_at;
    apr_size_t window;
    char *buf;                       /* file ranges are read into it */
} conn;

static apr_uint32_t rounds_max = 8000;
static apr_time_t deadline;
static volatile apr_uint32_t started, progress_mark;

/* --- a connection --- */

static void conn_init(conn *c, long no, apr_uint64_t r)
{
    static const apr_size_t mems[] = { 4096, 16384, 65536 };
    static const apr_size_t windows[] = { 16384, 65536, 262144 };

    memset(c, 0, sizeof(*c));
    c->r = r;
    c->no = no;
    apr_pool_create(&c->pool, NULL);
    c->buf = apr_palloc(c->pool, XT_BUF_LEN);
    c->c1 = apr_pcalloc(c->pool, sizeof(*c->c1));
    c->c1->pool = c->pool;
    c->c1->id = no;
    c->c1->sbh = c;                     /* counted by the stand-in only */
    c->log.level = xt_one_in(&c->r, 8)? APLOG_TRACE3 : APLOG_WARNING;
    c->c1->log = &c->log;
    c->set = apr_pcalloc(c->pool, sizeof(*c->set));
    c->set->c1 = c->c1;
    c->set->stream_max_mem = mems[xt_below(&c->r, 3)];
    c->set->stream_timeout = apr_time_from_sec(60);
    c->set->output_buffering = xt_one_in(&c->r, 2);
    c->set->max_processing = 1 + (int)xt_below(&c->r, 6);
    c->set->threaded = !xt_one_in(&c->r, 4);   /* else teardown polls */
    c->set->conn_id = no;
    c->set->loglevel = c->log.level;
    c->xc = h2_x_c1_conn_create(c->pool, c->set);
    c->window = windows[xt_below(&c->r, 3)];
    c->total = 1 + (int)xt_below(&c->r, xt_one_in(&c->r, 4)? 300 : 30);
    c->teardown_at = xt_one_in(&c->r, 4)? 1 + (int)xt_below(&c->r, 200) : 0;
    c->next_id = 1;
    apr_atomic_inc32(&xt_st.conns);
}

static int rounds_over(void)
{
    return apr_atomic_read32(&started) >= rounds_max || apr_time_now() >= deadline;
}

/* A new stream, as h2_session_schedule_later() makes one. */
static void stream_open(conn *c)
{
    apr_pool_t *p;
    cstream *st;
    h2_x_req *xr;

    apr_pool_create(&p, c->pool);
    st = apr_pcalloc(p, sizeof(*st));
    st->pool = p;
    st->id = c->next_id;
    c->next_id += 2;
    xt_plan_make(&st->pl, xt_seed, c->no, st->id);
    st->x = h2_x_c1_create(c->xc, p, st->id, st);
    st->head.pool = p;
    st->head.websocket = st->pl.websocket;
    xr = h2_x_c1_req(st->x);
    xr->created = apr_time_now();
    xr->head = &st->head;
    xr->has_body = st->pl.has_body;
    if (!st->pl.has_body) {
        h2_x_c1_body_end(st->x, NULL);     /* before any worker sees it */
        st->body_ended = 1;
    }
    if (xt_one_in(&c->r, 3)) {
        h2_x_c1_set_urgency(st->x, (int)xt_below(&c->r, 8));
    }
    h2_x_c1_pend(st->x);
    if (st->pl.has_body && xt_one_in(&c->r, 2)) {
        h2_x_c1_set_consume_wake(st->x, c->window / 4);
    }
    st->abort_in = xt_one_in(&c->r, 12)? 1 + (int)xt_below(&c->r, 40) : 0;
    st->pending = 1;
    st->next = c->streams;
    c->streams = st;
    {
        cstream **pp = &c->pend_first;   /* arrival order */
        while (*pp) pp = &(*pp)->next_pend;
        *pp = st;
    }
    c->nopen++;
    c->created++;
    apr_atomic_inc32(&started);
}

static void pend_remove(conn *c, cstream *st)
{
    cstream **pp = &c->pend_first;
    while (*pp && *pp != st) pp = &(*pp)->next_pend;
    if (*pp) *pp = st->next_pend;
    st->pending = 0;
}

/* Admit and queue pending streams, as h2_session_dispatch() does. */
static int dispatch(conn *c)
{
    h2_x *batch[XT_OPEN_MAX];
    cstream *st, *next;
    int n = 0, ok;

    for (st = c->pend_first; st; st = next) {
        next = st->next_pend;
        if ((ok = h2_x_c1_admit(st->x)) == 0) {
            break;
        }
        if (ok < 0) {
            continue;            /* a WebSocket waits, others may pass */
        }
        pend_remove(c, st);
        st->busy = 1;
        batch[n++] = st->x;
    }
    if (n > 0) {
        h2_x_c1_schedule(batch, n);
    }
    return n > 0;
}

/* Request body as the client sends it, within the stream's window. */
static int send_body(conn *c, cstream *st)
{
    apr_size_t limit = (st->pl.kind == XT_STALL_BODY)? st->pl.brk : st->pl.body_len;
    apr_size_t room = c->window - (st->body_sent - st->body_acked), want, n, piece;
    const unsigned char *p;

    if (st->body_ended || st->aborted || st->done) {
        return 0;
    }
    piece = 1 + xt_below(&c->r, 20000);
    want = limit - st->body_sent;
    if (want > room) want = room;
    if (want > piece) want = piece;
    if (want > 0) {
        p = xt_at(st->pl.body_salt, st->body_sent, want, &n);
        if (!h2_x_c1_body_in(st->x, (const char *)p, n)) {
            st->body_acked += n;     /* nobody reads it: the window opens */
        }
        st->body_sent += n;
    }
    if (st->body_sent == st->pl.body_len) {
        apr_table_t *t = NULL;
        if (st->pl.trailers) {
            t = apr_table_make(st->pool, 1);
            apr_table_setn(t, "x-trailer", apr_itoa(st->pool, st->id));
        }
        h2_x_c1_body_end(st->x, t);
        st->body_ended = 1;
    }
    return want > 0 || st->body_ended;
}

static void on_collected(void *ctx, void *owner, apr_size_t consumed, int done)
{
    cstream *st = owner;

    st->body_acked += consumed;
    if (st->body_acked > st->body_sent) {
        xt_fail("(%ld-%d) more body consumed (%zu) than sent (%zu)",
                ((conn *)ctx)->no, st->id, st->body_acked, st->body_sent);
    }
    if (done) {
        st->done = 1;
    }
}

/* --- the response, as h2_session_out.c takes it off the queue --- */

typedef struct { int id; const char *name; int found; } field_find;

static int find_field(void *ctx, const char *n, apr_size_t nl, const char *v,
                      apr_size_t vl)
{
    field_find *f = ctx;
    char num[16];
    if (nl == strlen(f->name) && !memcmp(n, f->name, nl)) {
        apr_snprintf(num, sizeof(num), "%d", f->id);
        f->found = (vl == strlen(num) && !memcmp(v, num, vl));
    }
    return 1;
}

static int has_field(cstream *st, h2_hchunk *c, const char *name)
{
    field_find f = { st->id, name, 0 };
    h2_hchunk_fields_do(c, find_field, &f);
    return f.found;
}

/* Bytes of a data or file chunk go out: up to *budget of them. */
static void send_bytes(conn *c, cstream *st, h2_hchunk *c0, apr_size_t *budget,
                       apr_size_t limit)
{
    h2_hqueue *q = h2_x_c1_out(st->x);
    apr_size_t k = (c0->type == H2_HC_DATA)? c0->end - c0->start : c0->flen;

    if (k > *budget) k = *budget;
    if (k > limit - st->resp_off) k = limit - st->resp_off;
    if (c0->type == H2_HC_DATA) {
        if (!xt_check_bytes(st->pl.resp_salt, st->resp_off, c0->data + c0->start, k)) {
            xt_fail("(%ld-%d) response bytes %zu..%zu wrong", c->no, st->id,
                    st->resp_off, st->resp_off + k);
        }
        c0->start += k;
        q->mem -= k;
        h2_x_c1_sent(st->x, k);
        if (c0->start == c0->end) h2_x_c1_sent_chunk(c->xc, h2_hqueue_pop(q));
    }
    else {
        if (k > XT_BUF_LEN) k = XT_BUF_LEN;
        if (pread(c0->fd, c->buf, k, c0->foff) != (ssize_t)k
            || !xt_check_bytes(st->pl.resp_salt, st->resp_off, c->buf, k)) {
            xt_fail("(%ld-%d) response file range at %zu wrong", c->no, st->id,
                    st->resp_off);
        }
        c0->foff += (apr_off_t)k;
        c0->flen -= k;
        if (c0->flen == 0) {
            h2_x_c1_sent(st->x, H2_HCHUNK_FILE_COST);
            h2_x_c1_sent_chunk(c->xc, h2_hqueue_pop(q));
        }
    }
    st->resp_off += k;
    *budget -= k;
    apr_atomic_add32(&xt_st.resp_kb, (apr_uint32_t)(k / 1024));
}

/* A fields or end chunk; 0 when the stream's output is over. */
static int take_mark(conn *c, cstream *st, h2_hchunk *c0)
{
    h2_hqueue *q = h2_x_c1_out(st->x);
    h2_hchunk *rest;

    switch (c0->type) {
    case H2_HC_INTERIM:
        if (st->got_head || c0->status != 103 || !has_field(st, c0, "x-early")) {
            xt_fail("(%ld-%d) interim response wrong", c->no, st->id);
        }
        st->got_interim = 1;
        h2_x_c1_hold(st->x, h2_hqueue_pop(q));
        return 1;
    case H2_HC_HEADERS:
        if (st->got_head || c0->status != 200 || !has_field(st, c0, "x-id")) {
            xt_fail("(%ld-%d) response head wrong", c->no, st->id);
        }
        st->got_head = 1;
        h2_x_c1_hold(st->x, h2_hqueue_pop(q));   /* nghttp2 points into it */
        return 1;
    case H2_HC_TRAILERS:
        if (!st->got_head || !has_field(st, c0, "x-resp-trailer")) {
            xt_fail("(%ld-%d) response trailers wrong", c->no, st->id);
        }
        st->got_trailers = 1;
        h2_x_c1_sent_chunk(c->xc, h2_hqueue_pop(q));
        return 1;
    case H2_HC_EOS:
        st->got_eos = 1;
        h2_x_c1_sent_chunk(c->xc, h2_hqueue_pop(q));
        return 0;
    case H2_HC_RESET:
        st->got_reset = 1;
        while ((rest = h2_hqueue_pop(q)) != NULL) h2_x_c1_sent_chunk(c->xc, rest);
        return 0;
    default:
        xt_fail("(%ld-%d) unexpected chunk type %d", c->no, st->id, c0->type);
        h2_x_c1_sent_chunk(c->xc, h2_hqueue_pop(q));
        return 1;
    }
}

/* Send what the stream has, within budget; a stalled reader stops at its
 * break. Returns 1 when anything went. */
static int drain(conn *c, cstream *st, apr_size_t *budget)
{
    h2_hqueue *q = h2_x_c1_out(st->x);
    apr_size_t limit = (st->pl.kind == XT_STALL_OUT)? st->pl.brk : (apr_size_t)-1;
    h2_hchunk *c0;
    int moved = 0;

    if (st->aborted) {
        return 0;         /* a closed stream's output waits for its purge */
    }
    while ((c0 = q->first) != NULL) {
        if (c0->type == H2_HC_DATA || c0->type == H2_HC_FILE) {
            if (!st->got_head) {
                xt_fail("(%ld-%d) body without a response", c->no, st->id);
            }
            if (*budget == 0 || st->resp_off >= limit) {
                break;
            }
            send_bytes(c, st, c0, budget, limit);
        }
        else if (!take_mark(c, st, c0)) {
            moved = 1;
            break;
        }
        moved = 1;
    }
    return moved;
}

/* 1 when st has output the client takes (with a window of 0 this round,
 * it opens one later: no reason for the connection thread to sleep). */
static int drainable(cstream *st)
{
    h2_hchunk *c0 = h2_x_c1_out(st->x)->first;

    if (!c0 || st->aborted) {
        return 0;
    }
    return st->pl.kind != XT_STALL_OUT || st->resp_off < st->pl.brk
           || (c0->type != H2_HC_DATA && c0->type != H2_HC_FILE);
}

/* --- the end of a stream --- */

/* What a stream the client kept must have seen once its worker is done. */
static void stream_verify(conn *c, cstream *st)
{
    const xt_plan *pl = &st->pl;
    int ok = 1;

    if (st->body_acked != st->body_sent) {
        xt_fail("(%ld-%d) body sent %zu, window back %zu", c->no, st->id,
                st->body_sent, st->body_acked);
    }
    switch (pl->kind) {
    case XT_NORMAL:
        ok = st->got_head && st->got_eos && st->resp_off == pl->resp_len
             && st->got_interim == pl->interim && st->got_trailers == pl->resp_trailers;
        break;
    case XT_BREAK:
        ok = st->got_head && st->got_reset && st->resp_off == pl->brk;
        break;
    case XT_NONE:
        ok = !st->got_head && st->got_reset;
        break;
    case XT_STALL_BODY:
        ok = !st->got_eos;
        break;
    case XT_STALL_OUT:
        ok = st->resp_off <= pl->brk;
        break;
    }
    if (!ok) {
        xt_fail("(%ld-%d) kind %d ended with head %d eos %d reset %d at %zu of %zu",
                c->no, st->id, pl->kind, st->got_head, st->got_eos, st->got_reset,
                st->resp_off, pl->resp_len);
    }
    if (st->got_reset) apr_atomic_inc32(&xt_st.resets);
    if (st->got_eos) apr_atomic_inc32(&xt_st.eos);
}

static void stream_unlink(conn *c, cstream *st)
{
    cstream **pp = &c->streams;
    while (*pp != st) pp = &(*pp)->next;
    *pp = st->next;
    if (st->pending) pend_remove(c, st);
    c->nopen--;
}

/* To be freed at the end of the round (h2_session_purge_later()). */
static void stream_finish(conn *c, cstream *st)
{
    stream_unlink(c, st);
    h2_x_c1_forget(st->x);
    st->next = c->purge;
    c->purge = st;
    apr_atomic_inc32(&xt_st.streams);
    apr_atomic_inc32(&progress_mark);
}

static void purge(conn *c)
{
    cstream *st;

    if (!c->purge) {
        return;
    }
    h2_x_c1_purge(c->xc);
    while ((st = c->purge) != NULL) {
        c->purge = st->next;
        h2_x_c1_destroy(st->x);
        apr_pool_destroy(st->pool);
    }
}

/* The client resets streams whose time came; the finished ones go. */
static int settle(conn *c)
{
    cstream *st, *next;
    int moved = 0;

    for (st = c->streams; st; st = next) {
        next = st->next;
        if ((st->got_eos || st->got_reset) && !st->settled && !st->aborted) {
            /* as frame_sent() on its END_STREAM or RST_STREAM */
            st->settled = 1;
            h2_x_c1_settle(st->x);
        }
        if (st->abort_in && --st->abort_in == 0 && !st->aborted) {
            st->aborted = 1;
            st->busy = h2_x_c1_abort(st->x);
            apr_atomic_inc32(&xt_st.aborts);
            moved = 1;
        }
        if (st->aborted && (st->done || !st->busy)) {
            stream_finish(c, st);
            moved = 1;
        }
        else if (st->done && !st->aborted
                 && (st->got_eos || st->got_reset || !h2_x_c1_out(st->x)->first
                     || st->pl.kind == XT_STALL_OUT)) {
            stream_verify(c, st);
            stream_finish(c, st);
            moved = 1;
        }
    }
    return moved;
}

/* --- the connection's rounds --- */

/* The connection's memory counts: exact for bodies (the client knows what
 * it sent and got back), bounded for responses (under wrap-around too). */
static void check_mem(conn *c)
{
    apr_size_t body, held = h2_x_c1_mem_held(c->xc, &body), unacked = 0;
    cstream *st;

    for (st = c->streams; st; st = st->next) {
        unacked += st->body_sent - st->body_acked;
    }
    if (body != unacked) {
        xt_fail("(%ld) request bodies counted %zu, the client has %zu unacknowledged",
                c->no, body, unacked);
    }
    if (held - body > (apr_size_t)(c->nopen + 1) * (c->set->stream_max_mem + 96 * 1024)) {
        xt_fail("(%ld) responses counted %zu for %d streams", c->no, held - body, c->nopen);
    }
}

static int round_io(conn *c)
{
    apr_size_t budget = xt_one_in(&c->r, 4)? 0 : xt_below(&c->r, 96 * 1024);
    int moved = 0;
    cstream *st;

    while (c->nopen < XT_OPEN_MAX && c->created < c->total && !rounds_over()) {
        stream_open(c);
        moved = 1;
        if (xt_one_in(&c->r, 3)) break;   /* the client sends more later */
    }
    moved |= dispatch(c);
    for (st = c->streams; st; st = st->next) {
        moved |= send_body(c, st);
    }
    h2_x_c1_body_due(c->xc, xt_one_in(&c->r, 2)? H2_HCHUNK_SIZE : 0);
    moved |= h2_x_c1_collect(c->xc, on_collected, c) > 0;
    for (st = c->streams; st; st = st->next) {
        moved |= drain(c, st, &budget) | (budget == 0 && drainable(st));
    }
    if (xt_one_in(&c->r, 50) && c->streams) {
        h2_x_c1_set_urgency(c->streams->x, (int)xt_below(&c->r, 8));
    }
    moved |= settle(c);
    h2_x_c1_run_logs(c->xc);        /* as after the session's flush */
    purge(c);
    check_mem(c);
    return moved;
}

static void wait_for_workers(conn *c)
{
    apr_time_t t0 = apr_time_now();

    apr_atomic_inc32(&xt_st.waits);
    h2_x_c1_wait(c->xc, NULL, XT_WAIT);
    if (getenv("H2_XT_SLOW") && apr_time_now() - t0 > apr_time_from_msec(50)) {
        cstream *st;
        fprintf(stderr, "(%ld) waited %ldms, %d open, %d processing\n", c->no,
                (long)apr_time_as_msec(apr_time_now() - t0), c->nopen,
                h2_x_c1_processing(c->xc));
        for (st = c->streams; st; st = st->next) {
            fprintf(stderr, "  %d kind %d state %d pend %d ab %d done %d body %zu/%zu/%zu"
                    " resp %zu/%zu out %p\n", st->id, st->pl.kind, st->x->state,
                    st->pending, st->aborted, st->done, st->body_sent, st->body_acked,
                    st->pl.body_len, st->resp_off, st->pl.resp_len,
                    (void *)h2_x_c1_out(st->x)->first);
        }
    }
    if (apr_time_now() - t0 >= XT_WAIT
        && h2_x_c1_collect(c->xc, on_collected, c) > 0) {
        xt_fail("(%ld) a stream was ready and the connection thread slept %lds",
                c->no, (long)apr_time_sec(XT_WAIT));
    }
}

/* The connection ends, as session_teardown() ends it: abort what is
 * open, wait for the workers, free every stream. */
static void conn_end(conn *c)
{
    cstream *st;
    apr_size_t held, body;

    h2_x_c1_teardown_start(c->xc);
    for (st = c->streams; st; st = st->next) {
        h2_x_c1_abort(st->x);
    }
    h2_x_c1_teardown_wait(c->xc);
    purge(c);
    while ((st = c->streams) != NULL) {
        h2_x_state s = st->x->state;   /* no worker has it: the wait said so */
        if (s != H2_XS_DONE && s != H2_XS_NEW && !(s == H2_XS_PENDING && st->pending)) {
            xt_fail("(%ld-%d) hand-off state %d at the end", c->no, st->id, s);
        }
        stream_unlink(c, st);
        apr_atomic_inc32(&xt_st.streams);
        h2_x_c1_destroy(st->x);
        apr_pool_destroy(st->pool);
    }
    held = h2_x_c1_mem_held(c->xc, &body);
    if (held != 0 || h2_x_c1_processing(c->xc) != 0) {
        xt_fail("(%ld) at the end: %zu bytes counted (%zu body), %d processing",
                c->no, held, body, h2_x_c1_processing(c->xc));
    }
    h2_x_c1_idle(c->xc, 1);
    apr_pool_destroy(c->pool);
}

static void conn_run(long no, apr_uint64_t r)
{
    conn c;

    conn_init(&c, no, r);
    for (;;) {
        int moved = round_io(&c);
        ++c.round;
        if (c.teardown_at && c.round >= c.teardown_at) {
            apr_atomic_inc32(&xt_st.teardowns);
            break;
        }
        if (c.nopen == 0 && (c.created >= c.total || rounds_over())) {
            break;
        }
        if (c.nopen == 0 && xt_one_in(&c.r, 3)) {
            h2_x_c1_idle(c.xc, 0);
        }
        if (!moved) {
            wait_for_workers(&c);
        }
    }
    conn_end(&c);
}

static void *APR_THREAD_FUNC c1_thread(apr_thread_t *t, void *data)
{
    long i = (long)(apr_uintptr_t)data, k;
    apr_uint64_t r = xt_seed ^ (apr_uint64_t)(i + 1) * 0x51ed27;

    for (k = 0; !rounds_over(); ++k) {
        conn_run(1 + i + k * XT_THREADS, xt_rand(&r));
    }
    return NULL;
}

/* --- the child --- */

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    int n = 0;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) n += (e->d_name[0] != '.');
    closedir(d);
    return n;
}

static void make_data(void)
{
    char path[] = "/tmp/h2_xt_XXXXXX";
    apr_uint64_t r = xt_seed;
    size_t i;

    for (i = 0; i < XT_BUF_LEN; ++i) xt_buf[i] = (unsigned char)xt_rand(&r);
    xt_file_fd = mkstemp(path);
    if (xt_file_fd < 0 || unlink(path) != 0
        || write(xt_file_fd, xt_buf, XT_BUF_LEN) != XT_BUF_LEN) {
        perror("test file");
        exit(2);
    }
}

/* Run the connection threads; the main thread watches that streams keep
 * ending (a deadlock or lost wake-up stops them). */
static void run_threads(apr_pool_t *p)
{
    apr_thread_t *t[XT_THREADS];
    apr_status_t trv;
    apr_uint32_t seen = 0;
    apr_time_t still_since = apr_time_now();
    long i;

    for (i = 0; i < XT_THREADS; ++i) {
        apr_thread_create(&t[i], NULL, c1_thread, (void *)(apr_uintptr_t)i, p);
    }
    while (!rounds_over() || apr_atomic_read32(&started) > apr_atomic_read32(&xt_st.streams)) {
        apr_uint32_t now = apr_atomic_read32(&progress_mark);
        if (now != seen) {
            seen = now;
            still_since = apr_time_now();
        }
        else if (apr_time_now() - still_since > apr_time_from_sec(60)) {
            fprintf(stderr, "FAIL (seed %llu): no stream ended for 60s, %u of %u done\n",
                    (unsigned long long)xt_seed, apr_atomic_read32(&xt_st.streams),
                    apr_atomic_read32(&started));
            abort();
        }
        apr_sleep(apr_time_from_msec(50));
    }
    for (i = 0; i < XT_THREADS; ++i) {
        apr_thread_join(&trv, t[i]);
    }
}

static apr_uint64_t env_num(const char *name, apr_uint64_t dflt)
{
    const char *v = getenv(name);
    return (v && *v)? strtoull(v, NULL, 10) : dflt;
}

int main(void)
{
    apr_pool_t *pchild, *p;
    server_rec *s;
    apr_time_t start;
    int fds, idle;

    xt_seed = env_num("H2_XT_SEED", (apr_uint64_t)time(NULL) ^ ((apr_uint64_t)getpid() << 20));
    rounds_max = (apr_uint32_t)env_num("H2_XT_ROUNDS", 8000);
    printf("test_x_threads: seed %llu (H2_XT_SEED to repeat), up to %u streams\n",
           (unsigned long long)xt_seed, rounds_max);
    fflush(stdout);
    apr_initialize();
    fds = count_fds();
    make_data();
    apr_pool_create(&pchild, NULL);
    apr_pool_create(&p, NULL);
    s = apr_pcalloc(pchild, sizeof(*s));
    s->log.level = APLOG_WARNING;
    h2_c1_wait_child_init(pchild);
    CHECK(h2_hspare_child_init(pchild, H2_HSPARE_MAX) == APR_SUCCESS);
    h2_x_child_init(xt_c2_discard, xt_c2_log_on_c1);   /* as h2_c2.c's does */
    /* with 0 s, workers above the minimum retire whenever the queue is
     * empty, and threads come and go all through the run; with 1 s they
     * park, and pushes wake them */
    idle = (int)env_num("H2_XT_IDLE", xt_seed & 1);
    CHECK(h2_workers_create(s, pchild, 1, 4, idle, xt_process) != NULL);

    start = apr_time_now();
    deadline = start + apr_time_from_sec((long)env_num("H2_XT_SECONDS", 20));
    run_threads(p);
    apr_pool_destroy(p);
    apr_pool_destroy(pchild);     /* joins the workers, frees the spares */
    close(xt_file_fd);

    printf("test_x_threads: %u streams on %u connections in %.1fs: %u reset by the "
           "client, %u torn down, %u taken back; %u ended, %u reset; %u body and %u "
           "room timeouts; %u KB body, %u KB response; %u waits, %u polls; %u "
           "secondaries made, %u reused; %u logs parked, written by %u connection "
           "threads and %u workers\n",
           xt_st.streams, xt_st.conns, (double)(apr_time_now() - start) / APR_USEC_PER_SEC,
           xt_st.aborts, xt_st.teardowns, xt_st.taken_back, xt_st.eos, xt_st.resets,
           xt_st.body_timeouts, xt_st.room_timeouts, xt_st.body_kb, xt_st.resp_kb,
           xt_st.waits, xt_st.pollfd_waits, xt_st.c2_made, xt_st.c2_reused,
           xt_st.parked, xt_st.logs_c1, xt_st.logs_worker);
    CHECK(xt_failures == 0);
    CHECK(xt_log_problems == 0);
    CHECK(xt_st.streams >= 1000 || rounds_max < 1000);
    CHECK(xt_st.streams == started);
    CHECK(xt_st.parked == xt_st.logs_c1 + xt_st.logs_worker);
    CHECK(xt_st.logs_c1 > 0 || rounds_max < 1000);
    CHECK(xt_c2_live == 0);
    CHECK(xt_malloc_live() == 0);
    CHECK(count_fds() == fds);
    if (xt_malloc_live() != 0 || count_fds() != fds) {
        fprintf(stderr, "left: %ld malloc'ed blocks, %d descriptors\n",
                xt_malloc_live(), count_fds() - fds);
    }
    apr_terminate();
    return unit_done("test_x_threads");
}
