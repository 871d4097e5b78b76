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
#ifndef H2_XT_H
#define H2_XT_H

/* What the parts of test_x_threads share: the exchange (h2_x.c,
 * h2_x_body.c, h2_handoff.c, h2_workers.c, h2_c1_wait.c) run with real
 * threads, connection threads on one side (test_x_threads.c) and the
 * child's workers running fake handlers on the other (xt_worker.c).
 *
 * Both sides derive what a stream does from (seed, connection, stream id)
 * alone, its "plan", so they share nothing but what crosses the exchange:
 * the connection thread knows which bytes each request body has and which
 * response must come back, the worker which body must arrive and what to
 * answer. Every byte is checked on arrival against the stream's pattern,
 * which depends on the stream and the offset: a byte lost, doubled,
 * reordered or handed to the wrong stream shows. */

#include <apr_atomic.h>
#include <apr_time.h>

#include "h2_x_c1.h"
#include "h2_x_worker.h"

/* The bytes bodies and responses are made of: stream s's byte i is
 * xt_buf[(salt(s) + i) % XT_BUF_LEN]; the same bytes are in a file that
 * responses send ranges of (file items cross as descriptors). */
#define XT_BUF_LEN (64 * 1024)
extern unsigned char xt_buf[XT_BUF_LEN];
extern int xt_file_fd;

/* What a stream does. */
typedef enum {
    XT_NORMAL,       /* response of resp_len bytes, then its end */
    XT_BREAK,        /* breaks (RESET) after brk bytes of response */
    XT_NONE,         /* ends without a response (the c2 then resets) */
    XT_STALL_BODY,   /* the client stops sending body after brk bytes: the
                      * worker's body read times out */
    XT_STALL_OUT,    /* the client stops reading the response after brk
                      * bytes: the worker's wait for room times out */
} xt_kind;

typedef struct xt_plan {
    xt_kind kind;
    int has_body;
    apr_size_t body_len;
    unsigned body_salt;
    int trailers;                  /* the request ends with trailers */
    apr_size_t resp_len;
    unsigned resp_salt;
    apr_size_t brk;
    int interim;                   /* a 103 before the response */
    int resp_trailers;
    int read_first;                /* whole body before the response */
    int skip_body;                 /* never reads the body */
    int use_pollfd;                /* waits for body by poll() on the pipe */
    int websocket;                 /* admitted as a tunnel */
    apr_interval_time_t timeout;   /* H2StreamTimeout of its request */
    apr_uint64_t wseed;            /* the worker's choices */
} xt_plan;

void xt_plan_make(xt_plan *pl, apr_uint64_t seed, long conn_no, int id);

/* splitmix64: a seeded PRNG per thread or stream. */
static APR_INLINE apr_uint64_t xt_rand(apr_uint64_t *s)
{
    apr_uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* 0..n-1 */
static APR_INLINE apr_size_t xt_below(apr_uint64_t *s, apr_size_t n)
{
    return n? (apr_size_t)(xt_rand(s) % n) : 0;
}

/* 1 with probability 1/n */
static APR_INLINE int xt_one_in(apr_uint64_t *s, unsigned n)
{
    return xt_rand(s) % n == 0;
}

/* Where in xt_buf byte off of a stream with salt starts, and how many
 * bytes from there are contiguous (at most want). */
static APR_INLINE const unsigned char *xt_at(unsigned salt, apr_size_t off,
                                             apr_size_t want, apr_size_t *n)
{
    apr_size_t i = (salt + off) % XT_BUF_LEN;
    *n = (want < XT_BUF_LEN - i)? want : XT_BUF_LEN - i;
    return xt_buf + i;
}

/* 1 when data[0..len) is the stream's bytes from off on. */
int xt_check_bytes(unsigned salt, apr_size_t off, const char *data, apr_size_t len);

/* Failures and counts, from any thread. */
extern apr_uint64_t xt_seed;
extern volatile apr_uint32_t xt_failures;
void xt_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

typedef struct xt_stats {
    volatile apr_uint32_t streams, conns, teardowns, aborts, body_timeouts,
        room_timeouts, resets, eos, taken_back, c2_made, c2_reused,
        waits, pollfd_waits, counted, parked, logs_c1, logs_worker;
    volatile apr_uint32_t body_kb, resp_kb;
} xt_stats;
extern xt_stats xt_st;

/* Fake secondary connections: made by workers, kept by connections
 * (h2_x_worker_done), given back by xt_c2_discard() (the
 * exchange's, from h2_x_child_init()); none may be used by
 * two workers at once, none may be left at the end. */
conn_rec *xt_c2_new(void);
void xt_c2_use(conn_rec *c2);      /* a worker starts with it */
void xt_c2_unuse(conn_rec *c2);
void xt_c2_discard(conn_rec *c2);
extern volatile apr_uint32_t xt_c2_live;

/* A worker parks c2 with its request's log (h2_x_worker_park): marked
 * before, so that whoever writes the log knows it holds one. The log is
 * written by the connection thread (xt_c2_log_on_c1, the exchange's from
 * h2_x_child_init()) or, where the connection is not threaded, by a
 * worker that takes the parked stream (xt_c2_take_parked() is 1). */
void xt_c2_park(conn_rec *c2);
int xt_c2_take_parked(conn_rec *c2);
void xt_c2_log_on_c1(conn_rec *c2);

/* The fake handler the workers run (xt_worker.c). */
struct h2_worker;
struct h2_wtask;
void xt_process(struct h2_worker *wk, struct h2_wtask *task);

/* Bytes malloc'ed by the exchange (and this test) and not freed yet:
 * malloc and free are wrapped at link time (-Wl,--wrap). */
long xt_malloc_live(void);

/* Problems the module logged: errors, invalid transitions (xt_stubs.c). */
extern volatile apr_uint32_t xt_log_problems;

#endif
