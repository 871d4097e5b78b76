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

/* Stand-ins for httpd, the MPM, the workers and the clock, so that a
 * session runs over memory (see seam.h). */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <apr_buckets.h>
#include <apr_strings.h>
#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include <httpd.h>
#include <http_config.h>
#include <http_log.h>
#include <util_filter.h>
#include <ap_mpm.h>
#include <mpm_common.h>
#include <scoreboard.h>

#include "h2.h"
#include "h2_c1_idle.h"
#include "h2_c1_wait.h"
#include "h2_c2.h"
#include "h2_config.h"
#include "h2_fmap.h"
#include "h2_session.h"
#include "h2_status.h"
#include "h2_workers.h"
#include "h2_x_c1.h"
#include "h2_x_worker.h"
#include "seam.h"

/* --- the clock --- */

static apr_time_t virtual_now = APR_USEC_PER_SEC * 1000000LL;

/* Every caller in the test binary gets the virtual clock. */
apr_time_t apr_time_now(void)
{
    return virtual_now;
}

/* --- httpd --- */

module AP_MODULE_DECLARE_DATA http2_module;
AP_DECLARE_DATA apr_uint32_t ap_max_mem_free = 0;
static int problems, log_all = -1;

static void log_line(int level, const char *fmt, va_list ap)
{
    char buf[2048];
    int lvl = level & APLOG_LEVELMASK;

    apr_vsnprintf(buf, sizeof(buf), fmt, ap);
    if (lvl <= APLOG_ERR || (lvl <= APLOG_WARNING && strstr(buf, "invalid transition"))) {
        problems++;
    }
    if (log_all < 0) log_all = getenv("SEAM_LOG") != NULL;
    if (log_all) fprintf(stderr, "[%d] %s\n", lvl, buf);
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

AP_DECLARE(void) ap_log_rerror_(const char *file, int line, int module_index,
                                int level, apr_status_t status,
                                const request_rec *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line(level, fmt, ap);
    va_end(ap);
}

AP_DECLARE(apr_status_t) ap_mpm_query(int query_code, int *result)
{
    switch (query_code) {
    /* as prefork: the session's teardown then polls for its workers with
     * apr_sleep(), during which the fake workers finish (see below) */
    case AP_MPMQ_IS_THREADED: *result = AP_MPMQ_NOT_SUPPORTED; break;
    case AP_MPMQ_MPM_STATE:   *result = AP_MPMQ_RUNNING; break;
    case AP_MPMQ_MAX_THREADS: *result = 25; break;
    default:                  *result = 0; break;
    }
    return APR_SUCCESS;
}

AP_DECLARE(void) ap_increment_counts(ap_sb_handle_t *sbh, request_rec *r)
{
}

AP_DECLARE(int) ap_ssl_conn_is_ssl(conn_rec *c)
{
    return 0;
}

AP_DECLARE(void) ap_random_insecure_bytes(void *buf, apr_size_t size)
{
    static unsigned int x = 12345;   /* deterministic */
    unsigned char *p = buf;
    while (size--) {
        x = x * 1103515245u + 12345u;
        *p++ = (unsigned char)(x >> 16);
    }
}

AP_DECLARE(apr_status_t) ap_remove_output_filter_byhandle(ap_filter_t *next,
                                                          const char *handle)
{
    return APR_SUCCESS;
}

AP_DECLARE(void) ap_str_tolower(char *s)
{
    for (; *s; ++s) {
        if (*s >= 'A' && *s <= 'Z') *s = (char)(*s - 'A' + 'a');
    }
}

/* --- the configuration: defaults, some overridden by seam_opts --- */

static apr_int64_t conf_over[H2_CONF_COUNT];
static int conf_set[H2_CONF_COUNT];

#define SEAM_DEF(id, name, type, def, ...) [H2_CONF_##id] = def,
static const apr_int64_t conf_def[H2_CONF_COUNT] = { H2_CONF_VARS(SEAM_DEF) };

void h2_config_push_priority(server_rec *s, const char *ctype, h2_push_dep *dep,
                             int *weight)
{
    *dep = H2_PUSH_AFTER;
    *weight = 16;
}

apr_int64_t h2_config_sget(server_rec *s, h2_conf_var var)
{
    if (conf_set[var]) return conf_over[var];
    if (var == H2_CONF_STREAM_TIMEOUT) return s->timeout;
    return conf_def[var];
}

int h2_config_mpm_threaded(void)
{
    return 0;   /* as ap_mpm_query() above answers */
}

void h2_config_workers(server_rec *s, int *pmin, int *pmax, int *pidle_secs)
{
    *pmin = 1;
    *pmax = 8;
    *pidle_secs = 600;
}

const h2_read_timeouts *h2_config_read_timeouts(server_rec *s)
{
    static h2_read_timeouts rt;
    static int done;
    if (!done) {
        h2_read_timeouts_default(&rt);
        done = 1;
    }
    return &rt;
}

static void conf(h2_conf_var var, long v)
{
    conf_set[var] = 1;
    conf_over[var] = v;
}

/* --- the connection --- */

typedef struct chunk {
    struct chunk *next;
    size_t len, off;
    unsigned char data[];
} chunk;

struct seam {
    apr_pool_t *pool;           /* the test's */
    apr_pool_t *cpool;          /* the connection's */
    server_rec *s;
    conn_rec *c;
    h2_session *session;
    seam_opts opts;
    apr_socket_t *sock;         /* unconnected: wait_idle sets timeouts */
    chunk *in_first, *in_last;
    int in_eof;
    unsigned char *out;
    size_t out_len, out_cap;
    int done;
};

static seam *current;            /* one connection runs at a time */

AP_DECLARE(apr_socket_t *) ap_get_conn_socket(conn_rec *c)
{
    return current->sock;
}

AP_DECLARE(apr_status_t) ap_get_brigade(ap_filter_t *f, apr_bucket_brigade *bb,
                                        ap_input_mode_t mode, apr_read_type_e block,
                                        apr_off_t readbytes)
{
    seam *t = current;
    chunk *ch = t->in_first;
    size_t n;

    if (!ch) {
        if (t->in_eof) return APR_EOF;
        return block == APR_BLOCK_READ? APR_TIMEUP : APR_EAGAIN;
    }
    n = ch->len - ch->off;
    if ((apr_off_t)n > readbytes) n = (size_t)readbytes;
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_heap_create((const char *)ch->data + ch->off,
                                                       n, NULL, bb->bucket_alloc));
    ch->off += n;
    if (ch->off == ch->len) {
        t->in_first = ch->next;
        if (!t->in_first) t->in_last = NULL;
        free(ch);
    }
    return APR_SUCCESS;
}

AP_DECLARE(apr_status_t) ap_pass_brigade(ap_filter_t *f, apr_bucket_brigade *bb)
{
    seam *t = current;
    apr_bucket *b;

    for (b = APR_BRIGADE_FIRST(bb); b != APR_BRIGADE_SENTINEL(bb); b = APR_BUCKET_NEXT(b)) {
        const char *data;
        apr_size_t len;
        if (APR_BUCKET_IS_METADATA(b)) continue;
        if (apr_bucket_read(b, &data, &len, APR_BLOCK_READ) != APR_SUCCESS) abort();
        if (t->out_len + len > t->out_cap) {
            t->out_cap = (t->out_len + len) * 2 + 4096;
            t->out = realloc(t->out, t->out_cap);
            if (!t->out) abort();
        }
        memcpy(t->out + t->out_len, data, len);
        t->out_len += len;
    }
    apr_brigade_cleanup(bb);
    return APR_SUCCESS;
}

int h2_c1_idle_unpark(h2_c1_idler *e)
{
    return 0;
}

void h2_c2_note_conn_thread(void)
{
}

/* mod_status's table (h2_status.c) needs httpd's shared memory: no rows */
h2_status_row *h2_status_c1_open(conn_rec *c1, const char *protocol)
{
    return NULL;
}

void h2_status_c1_stream_start(h2_status_row *row, int id, const char *method,
                               const char *path)
{
}

void h2_status_c1_stream_done(h2_status_row *row)
{
}

void h2_status_c1_state(h2_status_row *row, conn_rec *c1, const char *state)
{
}

apr_bucket *h2_fmap_bucket_create(apr_file_t *f, const apr_finfo_t *fi,
                                  apr_bucket_alloc_t *list)
{
    return NULL;
}

/* --- the workers: a queue, and fake handlers run between the session's
 * rounds --- */

typedef struct task {
    h2_x *x;
    size_t sent;                /* body bytes handed over */
    apr_off_t body;             /* request body bytes read */
    int head_sent;
    size_t blocked_at;          /* >0: waits for room, output was this long */
} task;

#define MAX_TASKS 4096
static h2_wtask *queue[MAX_TASKS];
static int nqueued;
static task running[MAX_TASKS];
static int nrunning;
static h2_worker the_worker;
static apr_thread_cond_t *worker_cond;

h2_workers *h2_workers_of_child(void)
{
    return (h2_workers *)&the_worker;
}

void h2_workers_push(h2_workers *w, h2_wtask **tasks, int n)
{
    int i;
    for (i = 0; i < n; ++i) {
        if (nqueued == MAX_TASKS) abort();
        tasks[i]->queued = 1;
        queue[nqueued++] = tasks[i];
    }
}

void h2_workers_reprioritize(h2_workers *w, h2_wtask *t, int urgency)
{
    t->urgency = (unsigned char)urgency;   /* the seam's queue is in order */
}

int h2_workers_unqueue(h2_workers *w, h2_wtask *t)
{
    int i;
    for (i = 0; i < nqueued; ++i) {
        if (queue[i] == t) {
            memmove(&queue[i], &queue[i + 1], (size_t)(nqueued - i - 1) * sizeof(queue[0]));
            nqueued--;
            t->queued = 0;
            return 1;
        }
    }
    return 0;
}

apr_status_t h2_worker_wait(h2_worker *wk, apr_thread_mutex_t *mutex,
                            apr_interval_time_t timeout)
{
    return APR_TIMEUP;   /* nobody else runs: the handler tries again later */
}

apr_thread_cond_t *h2_worker_cond(h2_worker *wk)
{
    return worker_cond;
}

/* Hand one item over: 1 when taken, 0 when the stream has no room (the
 * handler "sleeps" until the connection sent something), -1 when the
 * stream is aborted. */
static int deliver(task *k, h2_hchunk_type type, int status, const char *data, size_t len)
{
    h2_x_item it;
    apr_status_t rv;

    memset(&it, 0, sizeof(it));
    it.type = type;
    it.status = status;
    it.data = data;
    it.len = len;
    rv = h2_x_worker_out(k->x, &it, 1, 1);
    if (rv == APR_SUCCESS) {
        k->blocked_at = 0;
        return 1;
    }
    if (APR_STATUS_IS_TIMEUP(rv)) {
        k->blocked_at = current->out_len + 1;
        return 0;
    }
    return -1;
}

/* One step of a fake handler; 1 when it is finished with the stream. */
static int handler_step(seam *t, task *k, int *progress)
{
    static char big[16384];
    apr_table_t *fields = apr_table_make(t->pool, 2);
    h2_x_item it;
    int rv;

    if (k->blocked_at && k->blocked_at == t->out_len + 1) {
        return 0;   /* still no room: nothing was sent since */
    }
    if (t->opts.handler == SEAM_HANDLER_ECHO) {
        apr_bucket_alloc_t *ba = apr_bucket_alloc_create(t->pool);
        apr_bucket_brigade *bb = apr_brigade_create(t->pool, ba);
        apr_off_t n = 0;
        apr_status_t rv;
        int eos = 0;
        do {
            rv = h2_x_worker_body(k->x, bb, 0, 0, APR_NONBLOCK_READ, 8192, 0, NULL, &n);
            k->body += n;
            if (n > 0) *progress = 1;
            eos = (!APR_BRIGADE_EMPTY(bb) && APR_BUCKET_IS_EOS(APR_BRIGADE_LAST(bb)));
            apr_brigade_cleanup(bb);
        } while (rv == APR_SUCCESS && n > 0 && !eos);
        if (rv == APR_EAGAIN) return 0;
        if (rv != APR_SUCCESS) return 1;
        if (!eos) return 0;
    }
    if (t->opts.handler == SEAM_HANDLER_NONE) {
        return 1;
    }
    if (!k->head_sent) {
        apr_table_setn(fields, "content-type", "text/plain");
        if (t->opts.handler == SEAM_HANDLER_ECHO) {
            apr_table_setn(fields, "x-body-length", apr_off_t_toa(t->pool, k->body));
        }
        memset(&it, 0, sizeof(it));
        it.type = H2_HC_HEADERS;
        it.status = 200;
        it.fields = fields;
        if (h2_x_worker_out(k->x, &it, 1, 0) != APR_SUCCESS) return 1;
        k->head_sent = 1;
        *progress = 1;
    }
    switch (t->opts.handler) {
    case SEAM_HANDLER_BIG:
        while (k->sent < t->opts.big_len) {
            size_t n = t->opts.big_len - k->sent;
            if (n > sizeof(big)) n = sizeof(big);
            if ((rv = deliver(k, H2_HC_DATA, 0, big, n)) <= 0) return rv < 0;
            k->sent += n;
            *progress = 1;
        }
        break;
    case SEAM_HANDLER_RESET:
        deliver(k, H2_HC_DATA, 0, "part", 4);
        deliver(k, H2_HC_RESET, H2_ERR_INTERNAL_ERROR, NULL, 0);
        return 1;
    default:
        if (!k->sent) {
            if ((rv = deliver(k, H2_HC_DATA, 0, "hello", 5)) <= 0) return rv < 0;
            k->sent = 5;
        }
        break;
    }
    deliver(k, H2_HC_EOS, 0, NULL, 0);
    return 1;
}

/* Let the fake workers take queued streams and take one step on each
 * running one. Returns 1 when anything happened. */
static int workers_step(seam *t)
{
    int i, progress = 0;

    while (nqueued > 0) {
        h2_wtask *w = queue[0];
        conn_rec *c2;
        task *k;
        memmove(&queue[0], &queue[1], (size_t)(nqueued - 1) * sizeof(queue[0]));
        nqueued--;
        w->queued = 0;
        k = &running[nrunning++];
        memset(k, 0, sizeof(*k));
        k->x = h2_x_worker_of(w);
        progress = 1;
        if (!h2_x_worker_take(k->x, &the_worker, &c2)) {
            h2_x_worker_done(k->x, NULL);   /* aborted before it started */
            nrunning--;
        }
    }
    for (i = 0; i < nrunning; ) {
        if (handler_step(t, &running[i], &progress)) {
            h2_x_worker_done(running[i].x, NULL);
            running[i] = running[--nrunning];
            progress = 1;
        }
        else {
            ++i;
        }
    }
    return progress;
}

/* The teardown waits for the workers: they notice the abort meanwhile. */
void apr_sleep(apr_interval_time_t t)
{
    int i;
    for (i = 0; i < nrunning; ++i) {
        running[i].blocked_at = 0;
    }
    workers_step(current);
    virtual_now += t;
}

/* The connection thread sleeps: the workers work meanwhile; with nothing
 * for them to do, time passes. */
static char the_waiter;

h2_c1_waiter *h2_c1_waiter_get(void)
{
    return (h2_c1_waiter *)&the_waiter;
}

int h2_c1_waiter_wait(h2_c1_waiter *w, apr_socket_t *sock, apr_interval_time_t timeout)
{
    if (!workers_step(current) && !current->in_first) {
        virtual_now += timeout > 0? timeout : apr_time_from_msec(1);
    }
    return H2_WAITED_WOKEN | H2_WAITED_INPUT;
}

void h2_c1_waiter_wake(h2_c1_waiter *w)
{
}

void h2_c1_waiter_drain(h2_c1_waiter *w)
{
}

/* --- the seam --- */

static struct ap_logconf logconf;
static ap_filter_rec_t frec_in = { "seam_in" }, frec_out = { "seam_out" };

seam *seam_new(const seam_opts *opts)
{
    static int initialized;
    apr_pool_t *pool;
    apr_socket_t *sock;
    seam *t;
    conn_rec *c;
    ap_filter_t *fin, *fout;

    if (!initialized) {
        apr_pool_t *p;
        apr_initialize();
        apr_pool_create(&p, NULL);
        apr_thread_cond_create(&worker_cond, p);
        initialized = 1;
    }
    memset(conf_set, 0, sizeof(conf_set));
    if (opts->max_streams) conf(H2_CONF_MAX_STREAMS, opts->max_streams);
    if (opts->window_size) conf(H2_CONF_WIN_SIZE, opts->window_size);
    if (opts->stream_max_mem) conf(H2_CONF_STREAM_MAX_MEM, opts->stream_max_mem);
    if (opts->max_stream_errors >= 0) conf(H2_CONF_MAX_STREAM_ERRORS, opts->max_stream_errors);

    apr_pool_create(&pool, NULL);
    t = apr_pcalloc(pool, sizeof(*t));
    t->pool = pool;
    t->opts = *opts;
    apr_pool_create(&t->cpool, pool);

    t->s = apr_pcalloc(pool, sizeof(*t->s));
    t->s->timeout = apr_time_from_sec(5);
    t->s->keep_alive_timeout = apr_time_from_sec(5);
    t->s->limit_req_line = 8190;
    t->s->limit_req_fieldsize = 8190;
    t->s->limit_req_fields = 100;
    logconf.level = getenv("SEAM_LOG")? APLOG_TRACE8 : APLOG_WARNING;
    t->s->log = logconf;

    c = apr_pcalloc(t->cpool, sizeof(*c));
    c->pool = t->cpool;
    c->id = 1;
    c->base_server = t->s;
    c->bucket_alloc = apr_bucket_alloc_create(t->cpool);
    c->conn_config = apr_pcalloc(t->cpool, 64 * sizeof(void *));
    apr_socket_create(&sock, APR_INET, SOCK_STREAM, APR_PROTO_TCP, t->cpool);
    t->sock = sock;
    fin = apr_pcalloc(t->cpool, sizeof(*fin));
    fin->frec = &frec_in;
    fin->c = c;
    fout = apr_pcalloc(t->cpool, sizeof(*fout));
    fout->frec = &frec_out;
    fout->c = c;
    c->input_filters = fin;
    c->output_filters = fout;
    t->c = c;
    current = t;
    nqueued = nrunning = 0;
    if (h2_session_create(&t->session, c, NULL, t->s) != APR_SUCCESS) {
        abort();
    }
    return t;
}

void seam_feed(seam *t, const void *data, size_t len)
{
    chunk *ch;
    if (!len) return;
    ch = malloc(sizeof(*ch) + len);
    if (!ch) abort();
    ch->next = NULL;
    ch->len = len;
    ch->off = 0;
    memcpy(ch->data, data, len);
    if (t->in_last) t->in_last->next = ch;
    else t->in_first = ch;
    t->in_last = ch;
}

void seam_eof(seam *t)
{
    t->in_eof = 1;
}

int seam_run(seam *t)
{
    current = t;
    while (!t->done) {
        apr_status_t rv = h2_session_process(t->session, H2_RUN_MAY_PARK | H2_RUN_MAY_YIELD);
        if (rv == APR_EOF) {
            t->done = 1;
            break;
        }
        /* parked or yielded: what the workers do now may give the session
         * more to do; if not, it waits for the client */
        if (!workers_step(t) && !t->in_first) {
            break;
        }
    }
    return t->done;
}

int seam_wait(seam *t, long long d)
{
    apr_time_t end = virtual_now + d;
    while (!t->done && virtual_now < end) {
        virtual_now += apr_time_from_msec(100);
        seam_run(t);
    }
    return t->done;
}

const unsigned char *seam_out(seam *t, size_t *len)
{
    *len = t->out_len;
    return t->out;
}

int seam_problems(void)
{
    return problems;
}

void seam_free(seam *t)
{
    chunk *ch;
    current = t;
    apr_pool_destroy(t->cpool);      /* the session's teardown */
    while ((ch = t->in_first) != NULL) {
        t->in_first = ch->next;
        free(ch);
    }
    free(t->out);
    apr_pool_destroy(t->pool);
}
