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
/* Idle HTTP/2 connections of a child: their registry, keep-alive deadlines
 * and graceful stops. */

#include <poll.h>
#include <unistd.h>
#include <apr_portable.h>
#include <apr_thread_proc.h>
#include <apr_thread_mutex.h>
#include <apr_thread_cond.h>
#include <httpd.h>
#include <http_core.h>
#include <http_log.h>
#include <ap_mpm.h>
#include <scoreboard.h>

#include "h2.h"
#include "h2_c1_idle.h"
#include "h2_util.h"

APLOG_USE_MODULE(http2);

static struct {
    apr_thread_mutex_t *mutex;
    apr_thread_cond_t *cond;
    apr_thread_t *thread;
    h2_c1_idler *first;         /* parked connections */
    apr_time_t wakes_at;        /* the reaper's next own wakeup, 0: none */
    int retiring;               /* stopping gracefully, no restart */
    int stopping;
    int shutdown;
} idle;

/* How often a retiring child looks whether its siblings stop too. */
#define H2_IDLE_SIBLINGS_CHECK apr_time_from_msec(100)

/* 1 when no other child is still serving: a graceful stop of the whole
 * server (`-k graceful-stop`), which, unlike a spare child retired, tells
 * every child at once and changes no generation. */
static int siblings_all_quiescing(void)
{
    int i, limit = 0;
    pid_t me = getpid();

    if (!ap_scoreboard_image
        || ap_mpm_query(AP_MPMQ_HARD_LIMIT_DAEMONS, &limit) != APR_SUCCESS) {
        return 0;
    }
    for (i = 0; i < limit; i++) {
        process_score *ps = ap_get_scoreboard_process(i);
        if (ps->pid && ps->pid != me && !ps->quiescing) {
            return 0;
        }
    }
    return 1;
}

static void unlink_locked(h2_c1_idler *s)
{
    if (s->prev) s->prev->next = s->next;
    else idle.first = s->next;
    if (s->next) s->next->prev = s->prev;
    s->prev = s->next = NULL;
    s->listed = 0;
}

/* Called with the lock held: make the MPM give the session back. */
static void wake_locked(h2_c1_idler *s)
{
    apr_socket_t *sock = ap_get_conn_socket(s->c1);
    s->expired = idle.stopping? H2_IDLE_STOPPING : H2_IDLE_EXPIRED;
    unlink_locked(s);
    if (sock) {
        apr_socket_shutdown(sock, APR_SHUTDOWN_READ);
    }
}

/* 1 when the client sent something the MPM has not handed back to us yet:
 * the connection is waiting for an MPM thread, it is not idle. */
static int has_input(h2_c1_idler *s)
{
    apr_socket_t *sock = ap_get_conn_socket(s->c1);
    apr_os_sock_t fd;
    struct pollfd pfd;

    if (!sock || apr_os_sock_get(&fd, sock) != APR_SUCCESS) {
        return 0;
    }
    pfd.fd = fd;
    pfd.events = POLLIN;
    pfd.revents = 0;
    return poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR));
}

static void *APR_THREAD_FUNC reaper(apr_thread_t *thread, void *data)
{
    h2_util_thread_name("h2-idle");
    apr_thread_mutex_lock(idle.mutex);
    while (!idle.shutdown) {
        apr_time_t now = apr_time_now(), next = 0;
        h2_c1_idler *s = idle.first, *n;

        if (idle.retiring && !idle.stopping && siblings_all_quiescing()) {
            idle.stopping = 1;
        }
        for (; s; s = n) {
            n = s->next;
            if (!idle.stopping && s->deadline <= now && has_input(s)) {
                /* all MPM threads were busy (e.g. with connections waiting
                 * for their streams) when the client's next requests came:
                 * closing it now would fail them. Look again later. */
                s->deadline = now + s->keepalive;
            }
            if (idle.stopping || s->deadline <= now) {
                wake_locked(s);
            }
            else if (!next || s->deadline < next) {
                next = s->deadline;
            }
        }
        if (idle.retiring && !idle.stopping
            && (!next || next > now + H2_IDLE_SIBLINGS_CHECK)) {
            next = now + H2_IDLE_SIBLINGS_CHECK;
        }
        idle.wakes_at = next;
        if (next) {
            apr_thread_cond_timedwait(idle.cond, idle.mutex, next - now);
        }
        else {
            apr_thread_cond_wait(idle.cond, idle.mutex);
        }
    }
    apr_thread_mutex_unlock(idle.mutex);
    return NULL;
}

static apr_status_t idle_cleanup(void *data)
{
    apr_status_t trv;
    apr_thread_mutex_lock(idle.mutex);
    idle.shutdown = 1;
    apr_thread_cond_signal(idle.cond);
    apr_thread_mutex_unlock(idle.mutex);
    apr_thread_join(&trv, idle.thread);
    return APR_SUCCESS;
}

apr_status_t h2_c1_idle_child_init(apr_pool_t *pchild, server_rec *s)
{
    apr_status_t rv;
    int async = 0;

    ap_mpm_query(AP_MPMQ_IS_ASYNC, &async);
    if (!async) {
        return APR_SUCCESS;   /* without an async MPM, sessions never park */
    }
    if ((rv = apr_thread_mutex_create(&idle.mutex, APR_THREAD_MUTEX_DEFAULT,
                                      pchild)) != APR_SUCCESS
        || (rv = apr_thread_cond_create(&idle.cond, pchild)) != APR_SUCCESS
        || (rv = ap_thread_create(&idle.thread, NULL, reaper, NULL,
                                  pchild)) != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, s, APLOGNO(21070)
                     "h2: could not start the idle connection timer");
        idle.mutex = NULL;
        return rv;
    }
    apr_pool_pre_cleanup_register(pchild, NULL, idle_cleanup);
    return APR_SUCCESS;
}

void h2_c1_idle_park(h2_c1_idler *s)
{
    if (!idle.mutex) {
        return;
    }
    apr_thread_mutex_lock(idle.mutex);
    s->deadline = apr_time_now() + s->keepalive;
    s->expired = 0;
    if (idle.stopping) {
        /* no need to wait: come straight back */
        s->expired = H2_IDLE_STOPPING;
    }
    else {
        s->prev = NULL;
        s->next = idle.first;
        if (idle.first) idle.first->prev = s;
        idle.first = s;
        s->listed = 1;
        /* Only a deadline before the reaper's next wakeup needs it awake;
         * with one KeepAliveTimeout, that is only when nothing was parked. */
        if (!idle.wakes_at || s->deadline < idle.wakes_at) {
            idle.wakes_at = s->deadline;
            apr_thread_cond_signal(idle.cond);
        }
    }
    apr_thread_mutex_unlock(idle.mutex);
}

int h2_c1_idle_unpark(h2_c1_idler *s)
{
    int expired;
    if (!idle.mutex) {
        return 0;
    }
    apr_thread_mutex_lock(idle.mutex);
    if (s->listed) {
        unlink_locked(s);
    }
    expired = s->expired;
    s->expired = 0;
    apr_thread_mutex_unlock(idle.mutex);
    return expired;
}

void h2_c1_idle_child_stopping(apr_pool_t *pchild, int graceful)
{
    int gen = -1;

    if (!idle.mutex) {
        return;
    }
    if (graceful && ap_scoreboard_image
        && ap_mpm_query(AP_MPMQ_GENERATION, &gen) == APR_SUCCESS
        && ap_scoreboard_image->global->running_generation == gen) {
        /* No restart: the MPM retires a spare child, or the whole server
         * stops gracefully. A retired child's idle connections need not go
         * now (clients would lose them for nothing); the idle timer closes
         * them after KeepAliveTimeout, and busy ones say GOAWAY when their
         * streams are done. Once every other child stops too, it is the
         * server's stop: they go at once, as HTTP/1.1's idle ones do. */
        apr_thread_mutex_lock(idle.mutex);
        idle.retiring = 1;
        apr_thread_cond_signal(idle.cond);
        apr_thread_mutex_unlock(idle.mutex);
        return;
    }
    apr_thread_mutex_lock(idle.mutex);
    idle.stopping = 1;
    apr_thread_cond_signal(idle.cond);
    apr_thread_mutex_unlock(idle.mutex);
}
