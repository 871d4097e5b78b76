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
/* test_x_threads' stand-ins for what httpd would link (the log, the
 * scoreboard, thread creation, mod_status's table, the secondary
 * connections' shells) and the helpers both of its sides use: plans,
 * byte patterns, failures, counted malloc. Each stand-in does the least
 * the exchange needs; none pretends to be more of httpd. */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <apr_strings.h>
#include <apr_thread_proc.h>
#include <httpd.h>
#include <http_config.h>
#include <http_log.h>
#include <mpm_common.h>
#include <scoreboard.h>

#include "h2_fmap.h"
#include "h2_status.h"
#include "xt.h"

/* --- httpd --- */

module AP_MODULE_DECLARE_DATA http2_module;
AP_DECLARE_DATA apr_uint32_t ap_max_mem_free = 0;       /* MaxMemFree unset */
AP_DECLARE_DATA apr_size_t ap_thread_stacksize = 0;
volatile apr_uint32_t xt_log_problems;

/* A warning naming an invalid transition, or an error, fails the test
 * (as in test/h2env.py); the rest is printed only with H2_XT_LOG set. */
static void log_line(int level, const char *fmt, va_list ap)
{
    char buf[1024];
    int lvl = level & APLOG_LEVELMASK;
    int problem;

    if (lvl > APLOG_WARNING && !getenv("H2_XT_LOG")) {
        return;
    }
    apr_vsnprintf(buf, sizeof(buf), fmt, ap);
    problem = lvl <= APLOG_ERR || strstr(buf, "invalid transition") != NULL;
    if (problem) {
        apr_atomic_inc32(&xt_log_problems);
    }
    if (problem || getenv("H2_XT_LOG")) {
        fprintf(stderr, "log[%d] %s\n", lvl, buf);
    }
}

AP_DECLARE(void) ap_log_cerror_(const char *file, int line, int module_index,
                                int level, apr_status_t status,
                                const conn_rec *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line(level, fmt, ap);
    va_end(ap);
}

AP_DECLARE(void) ap_log_error_(const char *file, int line, int module_index,
                               int level, apr_status_t status,
                               const server_rec *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line(level, fmt, ap);
    va_end(ap);
}

/* httpd's version sets up the thread's current-thread record for its
 * thread-local pools; the workers here need none */
AP_DECLARE(apr_status_t) ap_thread_create(apr_thread_t **thread, apr_threadattr_t *attr,
                                          apr_thread_start_t func, void *data,
                                          apr_pool_t *pool)
{
    return apr_thread_create(thread, attr, func, data, pool);
}

/* the scoreboard update h2_x_worker_count() makes under the lock */
AP_DECLARE(void) ap_increment_counts(ap_sb_handle_t *sbh, request_rec *r)
{
    apr_atomic_inc32(&xt_st.counted);
}

/* mod_status's table lives in httpd's shared memory: nothing to publish */
void h2_status_workers(int running, int idle, int max)
{
}

/* the workers' watchdog trims kept file mappings: there are none */
void h2_fmap_trim(void)
{
}

/* --- secondary connections: a kept one goes back here --- */

typedef struct xt_c2 {
    conn_rec c;
    volatile apr_uint32_t in_use;
    volatile apr_uint32_t parked;
} xt_c2;

volatile apr_uint32_t xt_c2_live;

conn_rec *xt_c2_new(void)
{
    /* malloc, counted as its free() is (with a memset, gcc would make
     * it a calloc, which the link does not wrap); no field is read */
    xt_c2 *f = malloc(sizeof(*f));
    if (!f) abort();
    f->in_use = 0;
    f->parked = 0;
    apr_atomic_inc32(&xt_c2_live);
    apr_atomic_inc32(&xt_st.c2_made);
    return &f->c;
}

void xt_c2_use(conn_rec *c2)
{
    if (apr_atomic_cas32(&((xt_c2 *)c2)->in_use, 1, 0) != 0) {
        xt_fail("a secondary connection handed to two workers at once");
    }
}

void xt_c2_unuse(conn_rec *c2)
{
    apr_atomic_set32(&((xt_c2 *)c2)->in_use, 0);
}

void xt_c2_park(conn_rec *c2)
{
    apr_atomic_set32(&((xt_c2 *)c2)->parked, 1);
}

int xt_c2_take_parked(conn_rec *c2)
{
    return apr_atomic_cas32(&((xt_c2 *)c2)->parked, 0, 1) == 1;
}

void xt_c2_log_on_c1(conn_rec *c2)
{
    if (!xt_c2_take_parked(c2)) {
        xt_fail("the connection thread was given a secondary without a parked log");
        return;
    }
    xt_c2_use(c2);          /* nobody else may have it meanwhile */
    apr_atomic_inc32(&xt_st.logs_c1);
    xt_c2_unuse(c2);
}

void xt_c2_discard(conn_rec *c2)
{
    if (apr_atomic_read32(&((xt_c2 *)c2)->in_use)) {
        xt_fail("a secondary connection discarded while a worker uses it");
    }
    if (apr_atomic_read32(&((xt_c2 *)c2)->parked)) {
        xt_fail("a secondary connection discarded with its log unwritten");
    }
    apr_atomic_dec32(&xt_c2_live);
    free(c2);
}

/* --- counted malloc (the link wraps malloc and free of our objects) --- */

void *__real_malloc(size_t n);
void __real_free(void *p);
static volatile long malloc_live;

void *__wrap_malloc(size_t n)
{
    void *p = __real_malloc(n);
    if (p) __atomic_add_fetch(&malloc_live, 1, __ATOMIC_RELAXED);
    return p;
}

void __wrap_free(void *p)
{
    if (p) __atomic_sub_fetch(&malloc_live, 1, __ATOMIC_RELAXED);
    __real_free(p);
}

long xt_malloc_live(void)
{
    return __atomic_load_n(&malloc_live, __ATOMIC_RELAXED);
}

/* --- shared helpers --- */

unsigned char xt_buf[XT_BUF_LEN];
int xt_file_fd = -1;
apr_uint64_t xt_seed;
volatile apr_uint32_t xt_failures;
xt_stats xt_st;

void xt_fail(const char *fmt, ...)
{
    va_list ap;
    if (apr_atomic_inc32(&xt_failures) >= 20) {
        return;   /* the first ones tell */
    }
    va_start(ap, fmt);
    fprintf(stderr, "FAIL (seed %llu): ", (unsigned long long)xt_seed);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int xt_check_bytes(unsigned salt, apr_size_t off, const char *data, apr_size_t len)
{
    while (len > 0) {
        apr_size_t n;
        const unsigned char *want = xt_at(salt, off, len, &n);
        if (memcmp(want, data, n) != 0) {
            return 0;
        }
        data += n;
        off += n;
        len -= n;
    }
    return 1;
}

/* Sizes: mostly small, some up to max. */
static apr_size_t some_len(apr_uint64_t *r, apr_size_t max)
{
    switch (xt_below(r, 4)) {
    case 0: return xt_below(r, 100);
    case 1: return xt_below(r, 4096);
    case 2: return xt_below(r, 32 * 1024);
    default: return xt_below(r, max + 1);
    }
}

void xt_plan_make(xt_plan *pl, apr_uint64_t seed, long conn_no, int id)
{
    apr_uint64_t r = seed ^ ((apr_uint64_t)conn_no << 32) ^ (apr_uint64_t)id;
    unsigned k = (unsigned)xt_below(&r, 100);

    memset(pl, 0, sizeof(*pl));
    xt_rand(&r);
    pl->kind = (k < 70)? XT_NORMAL : (k < 78)? XT_BREAK : (k < 84)? XT_NONE
             : (k < 92)? XT_STALL_BODY : XT_STALL_OUT;
    /* a stalled response's request has no body: the worker's short
     * timeout would end its body read first */
    pl->has_body = (pl->kind == XT_STALL_BODY)
                   || (pl->kind != XT_STALL_OUT && xt_one_in(&r, 2));
    pl->body_len = pl->has_body? some_len(&r, 192 * 1024) : 0;
    pl->body_salt = (unsigned)xt_rand(&r);
    pl->trailers = pl->has_body && xt_one_in(&r, 4);
    pl->resp_len = some_len(&r, 256 * 1024);
    pl->resp_salt = (unsigned)xt_rand(&r);
    pl->brk = xt_below(&r, pl->resp_len + 1);
    if (pl->kind == XT_STALL_BODY) {
        pl->body_len += 1;               /* at least a byte never comes */
        pl->brk = xt_below(&r, pl->body_len);
    }
    if (pl->kind == XT_STALL_OUT) {
        pl->resp_len += 64 * 1024;       /* more than H2StreamMaxMemSize */
    }
    pl->interim = xt_one_in(&r, 8);
    pl->resp_trailers = xt_one_in(&r, 8);
    pl->read_first = xt_one_in(&r, 2) || pl->kind == XT_STALL_BODY;
    pl->skip_body = pl->kind != XT_STALL_BODY && xt_one_in(&r, 10);
    pl->use_pollfd = xt_one_in(&r, 6);
    pl->websocket = xt_one_in(&r, 12);
    /* stalls end by the worker's timeout; others never see theirs */
    pl->timeout = (pl->kind == XT_STALL_BODY || pl->kind == XT_STALL_OUT)
                  ? apr_time_from_msec(1 + (long)xt_below(&r, 10))
                  : apr_time_from_sec(60);
    pl->wseed = xt_rand(&r);
}
