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

/* HTTP/2 in mod_status: the shared table of connections and workers. */

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include <httpd.h>
#include <apr_atomic.h>
#include <apr_optional_hooks.h>
#include <apr_shm.h>
#include <apr_strings.h>
#include <http_log.h>
#include <http_protocol.h>
#include <ap_mpm.h>
#include <scoreboard.h>
#include <mod_status.h>

#include "h2.h"
#include "h2_status.h"

/* Rows per child: an event or worker child serves many connections, a
 * prefork child one. More connections than rows are counted, not listed. */
#define H2_STATUS_ROWS_THREADED 64
#define H2_STATUS_ROWS_PREFORK  2

/* mod_status of any child reads these while their owners write them, with
 * no lock (none can span processes: a child may die holding it). The
 * counts are read and written with APR's atomics: a reader in the same
 * process as the writer otherwise raced with it in C's sense (what
 * ThreadSanitizer reported for the workers' counts against the
 * status page's sums). The texts are copied as they are, as httpd's
 * scoreboard lines are: a reader may see one half-written. */
struct h2_status_row {
    apr_uint32_t in_use;
    apr_uint32_t started, done;    /* streams */
    int last_id;
    long conn_id;
    char client[48];
    char protocol[8];
    char vhost[64];
    char state[8];
    char method[16];
    char path[80];
};

typedef struct {
    apr_uint32_t owner;            /* pid of the child, 0: free */
    apr_uint32_t running, idle, max;   /* its workers */
    apr_uint32_t unlisted;         /* connections without a row */
} h2_status_child;

typedef struct {
    int nchildren, nrows;
    apr_size_t stride;             /* bytes per child: its counts, its rows */
} h2_status_head;

static h2_status_head *head;       /* the generation's table, or NULL */
static h2_status_child *mine;      /* this child's part */

static h2_status_child *child_at(int i)
{
    return (h2_status_child *)((char *)head + APR_ALIGN_DEFAULT(sizeof(*head))
                               + (apr_size_t)i * head->stride);
}

static h2_status_row *row_at(h2_status_child *ch, int i)
{
    return (h2_status_row *)((char *)ch + APR_ALIGN_DEFAULT(sizeof(*ch))) + i;
}

apr_status_t h2_status_post_config(apr_pool_t *pconf, server_rec *s)
{
    apr_shm_t *shm;
    apr_status_t rv;
    int nchildren = 0, threaded = 0, nrows;
    apr_size_t stride, size;

    head = NULL;
    ap_mpm_query(AP_MPMQ_HARD_LIMIT_DAEMONS, &nchildren);
    ap_mpm_query(AP_MPMQ_IS_THREADED, &threaded);
    if (nchildren < 1) {
        nchildren = 1;
    }
    nrows = threaded? H2_STATUS_ROWS_THREADED : H2_STATUS_ROWS_PREFORK;
    stride = APR_ALIGN_DEFAULT(APR_ALIGN_DEFAULT(sizeof(h2_status_child))
                               + nrows * sizeof(h2_status_row));
    size = APR_ALIGN_DEFAULT(sizeof(h2_status_head)) + nchildren * stride;
    /* anonymous: the children inherit it; it goes with pconf */
    rv = apr_shm_create(&shm, size, NULL, pconf);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, rv, s, APLOGNO(21098)
                     "mod_h2: no shared memory for the HTTP/2 part of "
                     "server-status (%" APR_SIZE_T_FMT " bytes); it will "
                     "not list HTTP/2 connections", size);
        return rv;
    }
    head = apr_shm_baseaddr_get(shm);
    memset(head, 0, size);
    head->nchildren = nchildren;
    head->nrows = nrows;
    head->stride = stride;
    return APR_SUCCESS;
}

static int owner_gone(apr_uint32_t pid)
{
    return pid == 0 || (kill((pid_t)pid, 0) != 0 && errno == ESRCH);
}

void h2_status_child_init(apr_pool_t *pchild)
{
    apr_uint32_t me = (apr_uint32_t)getpid();
    int i;

    (void)pchild;
    mine = NULL;
    for (i = 0; head && i < head->nchildren; ++i) {
        h2_status_child *ch = child_at(i);
        apr_uint32_t owner = apr_atomic_read32(&ch->owner);
        /* a child that died left its part behind: take it over */
        if (owner_gone(owner) && apr_atomic_cas32(&ch->owner, me, owner) == owner) {
            memset((char *)ch + sizeof(ch->owner), 0, head->stride - sizeof(ch->owner));
            mine = ch;
            return;
        }
    }
}

static apr_status_t row_release(void *data)
{
    h2_status_row *row = data;
    apr_atomic_set32(&row->in_use, 0);
    return APR_SUCCESS;
}

static apr_status_t unlisted_release(void *data)
{
    apr_atomic_dec32(&((h2_status_child *)data)->unlisted);
    return APR_SUCCESS;
}

h2_status_row *h2_status_c1_open(conn_rec *c1, const char *protocol)
{
    int i;

    if (!mine) {
        return NULL;
    }
    for (i = 0; i < head->nrows; ++i) {
        h2_status_row *row = row_at(mine, i);
        if (apr_atomic_cas32(&row->in_use, 1, 0) == 0) {
            apr_atomic_set32(&row->started, 0);
            apr_atomic_set32(&row->done, 0);
            row->last_id = 0;
            row->conn_id = c1->id;
            apr_cpystrn(row->client, c1->client_ip? c1->client_ip : "",
                        sizeof(row->client));
            apr_cpystrn(row->protocol, protocol, sizeof(row->protocol));
            apr_cpystrn(row->vhost, c1->base_server->server_hostname?
                        c1->base_server->server_hostname : "", sizeof(row->vhost));
            apr_cpystrn(row->state, "busy", sizeof(row->state));
            row->method[0] = row->path[0] = '\0';
            apr_pool_cleanup_register(c1->pool, row, row_release,
                                      apr_pool_cleanup_null);
            return row;
        }
    }
    apr_atomic_inc32(&mine->unlisted);
    apr_pool_cleanup_register(c1->pool, mine, unlisted_release,
                              apr_pool_cleanup_null);
    return NULL;
}

void h2_status_c1_stream_start(h2_status_row *row, int id, const char *method,
                               const char *path)
{
    if (row) {
        apr_atomic_inc32(&row->started);
        row->last_id = id;
        if (ap_extended_status) {
            /* copied, not formatted: this is per stream */
            apr_cpystrn(row->method, method? method : "-", sizeof(row->method));
            apr_cpystrn(row->path, path? path : "-", sizeof(row->path));
        }
    }
}

void h2_status_c1_stream_done(h2_status_row *row)
{
    if (row) {
        apr_atomic_inc32(&row->done);
    }
}

void h2_status_c1_state(h2_status_row *row, conn_rec *c1, const char *state)
{
    char descr[160];
    worker_score *ws;
    int status;

    if (!row) {
        return;
    }
    apr_cpystrn(row->state, state, sizeof(row->state));
    /* The thread's line is written when a turn ends (what it leaves the
     * connection in stays on the line), not when one starts: once per
     * turn is what a busy connection can afford. */
    if (ap_extended_status && c1->sbh && strcmp(state, "busy")) {
        /* the scoreboard line of the thread that runs the connection now,
         * in the form the stock module gives it */
        if (row->last_id) {
            apr_snprintf(descr, sizeof(descr), "[%u/%u] %s: stream %d, %s %s",
                         row->started, row->done, state, row->last_id, row->method,
                         row->path);
        }
        else {
            apr_snprintf(descr, sizeof(descr), "[%u/%u] %s", row->started,
                         row->done, state);
        }
        /* the status stays the MPM's (it counts its threads by it);
         * client, protocol and vhost are the connection's */
        ws = ap_get_scoreboard_worker(c1->sbh);
        status = ws? ws->status : SERVER_BUSY_READ;
        ap_update_child_status_from_conn(c1->sbh, status, c1);
        ap_update_child_status_descr(c1->sbh, status, descr);
    }
}

void h2_status_workers(int running, int idle, int max)
{
    if (mine) {
        apr_atomic_set32(&mine->running, (apr_uint32_t)running);
        apr_atomic_set32(&mine->idle, (apr_uint32_t)idle);
        apr_atomic_set32(&mine->max, (apr_uint32_t)max);
    }
}

typedef struct {
    apr_uint32_t conns, open, busy, idle, max, children;
} h2_status_sum;

static void sum_up(h2_status_sum *sum)
{
    int i, k;
    memset(sum, 0, sizeof(*sum));
    for (i = 0; i < head->nchildren; ++i) {
        h2_status_child *ch = child_at(i);
        apr_uint32_t running = apr_atomic_read32(&ch->running);
        apr_uint32_t idle = apr_atomic_read32(&ch->idle);
        if (owner_gone(apr_atomic_read32(&ch->owner))) {
            continue;
        }
        sum->children++;
        sum->busy += running > idle? running - idle : 0;
        sum->idle += idle;
        sum->max += apr_atomic_read32(&ch->max);
        sum->conns += apr_atomic_read32(&ch->unlisted);
        for (k = 0; k < head->nrows; ++k) {
            h2_status_row *row = row_at(ch, k);
            apr_uint32_t started = apr_atomic_read32(&row->started);
            apr_uint32_t done = apr_atomic_read32(&row->done);
            if (apr_atomic_read32(&row->in_use)) {
                sum->conns++;
                sum->open += started > done? started - done : 0;
            }
        }
    }
}

static void print_rows(request_rec *r)
{
    int i, k;
    ap_rputs("<table border=\"0\"><tr><th>PID</th><th>Conn</th><th>Client</th>"
             "<th>Protocol</th><th>VHost</th><th>Streams started/done</th>"
             "<th>State</th><th>Last request</th></tr>\n", r);
    for (i = 0; i < head->nchildren; ++i) {
        h2_status_child *ch = child_at(i);
        if (owner_gone(apr_atomic_read32(&ch->owner))) {
            continue;
        }
        for (k = 0; k < head->nrows; ++k) {
            h2_status_row row = *row_at(ch, k);   /* a snapshot */
            if (!row.in_use) {
                continue;
            }
            row.client[sizeof(row.client) - 1] = row.protocol[sizeof(row.protocol) - 1] = 0;
            row.vhost[sizeof(row.vhost) - 1] = row.state[sizeof(row.state) - 1] = 0;
            row.method[sizeof(row.method) - 1] = row.path[sizeof(row.path) - 1] = 0;
            ap_rprintf(r, "<tr><td>%u</td><td>%ld</td><td>%s</td><td>%s</td>"
                       "<td>%s</td><td>%u/%u</td><td>%s</td><td>%s %s</td></tr>\n",
                       ch->owner, row.conn_id, ap_escape_html(r->pool, row.client),
                       ap_escape_html(r->pool, row.protocol),
                       ap_escape_html(r->pool, row.vhost), row.started, row.done,
                       ap_escape_html(r->pool, row.state),
                       ap_escape_html(r->pool, row.method),
                       ap_escape_html(r->pool, row.path));
        }
    }
    ap_rputs("</table>\n", r);
}

static int status_hook(request_rec *r, int flags)
{
    h2_status_sum sum;

    if (!head) {
        return OK;
    }
    sum_up(&sum);
    if (flags & AP_STATUS_SHORT) {
        ap_rprintf(r, "H2Connections: %u\nH2StreamsOpen: %u\nH2WorkersBusy: %u\n"
                   "H2WorkersIdle: %u\nH2WorkersMax: %u\n", sum.conns, sum.open,
                   sum.busy, sum.idle, sum.max);
        return OK;
    }
    ap_rprintf(r, "<hr />\n<h2>HTTP/2 (mod_h2)</h2>\n<dl><dt>%u HTTP/2 connections, "
               "%u streams open</dt>\n<dt>%u workers busy, %u idle, at most %u "
               "(%u children)</dt></dl>\n", sum.conns, sum.open, sum.busy,
               sum.idle, sum.max, sum.children);
    if (!(flags & AP_STATUS_NOTABLE)) {
        print_rows(r);
    }
    return OK;
}

void h2_status_register_hooks(void)
{
    APR_OPTIONAL_HOOK(ap, status_hook, status_hook, NULL, NULL, APR_HOOK_MIDDLE);
}
