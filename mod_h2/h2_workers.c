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
/* The worker threads of a child and their queue of streams. */

#include <apr_strings.h>
#include <apr_atomic.h>
#include <unistd.h>
#include <fcntl.h>
#include <stdlib.h>
#include <httpd.h>
#include <http_log.h>
#include <mpm_common.h>

#include "h2.h"
#include "h2_fmap.h"
#include "h2_status.h"
#include "h2_util.h"
#include "h2_workers.h"

APLOG_USE_MODULE(http2);

struct h2_workers {
    server_rec *s;
    apr_pool_t *pool;
    apr_thread_mutex_t *mutex;
    apr_thread_cond_t *all_done;
    h2_worker_process_fn *process;
    int min_workers, max_workers;
    apr_interval_time_t idle_timeout;
    int running;
    int nidle;
    int shutdown;
    h2_worker *idle;          /* LIFO: the most recently active run first */
    h2_worker *all;
    h2_wtask *q_first, *q_last;
    int nqueued;
    apr_threadattr_t *attr;

    /* Workers not parked and not waiting on their stream's I/O, i.e. those
     * that will look at the queue again soon. Atomic: stream I/O waits
     * change it under the session's lock, not ours. */
    volatile apr_uint32_t nawake;
    int concurrency;          /* awake workers a push aims for */
    int ncpu;
    apr_uint32_t ntaken;      /* streams taken from the queue, ever */

    /* The stall watchdog: wakes more workers when the queue stands still
     * because the awake ones block (CGI, proxy) instead of computing. */
    apr_thread_t *watch_thread;
    apr_thread_cond_t *watch_cond;
    int watch_sleeps;         /* waiting for a push, not ticking */
};

/* How long queued streams may see no worker take any of them before the
 * watchdog wakes more workers than the CPU count (documented in
 * docs/design.md, "Worker wakeups"). */
#define H2_WORKER_STALL apr_time_from_msec(2)
/* While every CPU is busy, the stalled workers are as likely to wait for a
 * CPU as for their handlers, and more threads would only queue up for the
 * CPUs too (and for the process's memory map lock): the watchdog then
 * waits this long before it wakes more. */
#define H2_WORKER_STALL_SATURATED apr_time_from_msec(100)

/* glibc keeps what threads free in its per-thread arenas, and a busy child
 * frees in other threads than it allocates (workers fill response chunks,
 * connection threads free them): the free memory in the arenas grew by
 * megabytes a minute in a 10-minute soak while the memory in use stayed
 * flat. The watchdog gives it back to the system this often. */
#define H2_TRIM_INTERVAL apr_time_from_sec(10)
/* How often the watchdog looks whether the child went quiet after work:
 * then the caches kept for busy times and malloc's free memory go back at
 * once (within two ticks of the last stream's end), not after the next
 * H2_TRIM_INTERVAL. */
#define H2_QUIET_TICK apr_time_from_sec(2)

static int (*on_quiet)(void);

void h2_workers_on_quiet(int (*fn)(void))
{
    on_quiet = fn;
}

static void *APR_THREAD_FUNC worker_run(apr_thread_t *thread, void *data);

/* Called with the lock held: the counts mod_status shows (h2_status.c). */
static void publish(h2_workers *w)
{
    h2_status_workers(w->running, w->nidle, w->max_workers);
}

/* Called with the workers lock held. */
static apr_status_t spawn_worker(h2_workers *w)
{
    h2_worker *wk;
    apr_status_t rv = APR_SUCCESS, trv;
    int reused = 0;

    /* A retired worker's slot is reused, so that threads coming and going
     * over the child's life neither leak threads nor memory. */
    for (wk = w->all; wk; wk = wk->next) {
        if (wk->exited) {
            apr_thread_join(&trv, wk->thread);
            wk->exited = 0;
            reused = 1;
            break;
        }
    }
    if (!wk) {
        wk = apr_pcalloc(w->pool, sizeof(*wk));
        wk->workers = w;
        rv = apr_thread_cond_create(&wk->cond, w->pool);
    }
    if (rv == APR_SUCCESS) {
        rv = ap_thread_create(&wk->thread, w->attr, worker_run, wk, w->pool);
    }
    if (rv != APR_SUCCESS && reused) {
        wk->exited = 1;
    }
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, w->s, APLOGNO(21001)
                     "h2_workers: could not start worker thread %d",
                     w->running + 1);
        return rv;
    }
    if (!reused) {
        wk->next = w->all;
        w->all = wk;
    }
    w->running++;
    apr_atomic_inc32(&w->nawake);
    publish(w);
    return APR_SUCCESS;
}

/* Lock held: take task out of the queue. */
static void queue_unlink(h2_workers *w, h2_wtask *task)
{
    if (task->q_prev) task->q_prev->q_next = task->q_next;
    else w->q_first = task->q_next;
    if (task->q_next) task->q_next->q_prev = task->q_prev;
    else w->q_last = task->q_prev;
    task->q_next = task->q_prev = NULL;
    task->queued = 0;
    w->nqueued--;
    if (task->group) {
        task->group->nq[task->urgency]--;
    }
}

/* Lock held: the queue's first task is its connection's turn; the task
 * that gets it is that connection's most urgent one (RFC 9218), the first
 * queued of those. Connections keep their turns in arrival order, so one
 * that marks all its requests urgent passes none of another's. The scan
 * happens only when a connection's queued tasks differ in urgency. */
static h2_wtask *queue_take(h2_workers *w)
{
    h2_wtask *task = w->q_first, *t;
    h2_wgroup *g;
    int u;

    if (!task) {
        return NULL;
    }
    if ((g = task->group) != NULL) {
        for (u = 0; u < task->urgency && !g->nq[u]; ++u);
        for (t = task->q_next; u < task->urgency && t; t = t->q_next) {
            if (t->group == g && t->urgency == u) {
                task = t;
                break;
            }
        }
    }
    queue_unlink(w, task);
    w->ntaken++;
    return task;
}

/* Workers one push or watchdog tick wakes at most. */
#define H2_WAKE_MAX 64

/* Called with the lock held: take up to n (at most H2_WAKE_MAX) parked
 * workers off the idle list (they count as awake from now on) into wake[],
 * starting new threads when none is parked. The caller signals them after
 * unlocking, so that they do not wake up only to block on the lock it
 * still holds. */
static int take_idle_locked(h2_workers *w, int n, h2_worker **wake)
{
    int k = 0;
    if (n > H2_WAKE_MAX) {
        n = H2_WAKE_MAX;
    }
    while (k < n) {
        if (w->idle) {
            h2_worker *wk = w->idle;
            w->idle = wk->next_idle;
            w->nidle--;
            apr_atomic_inc32(&w->nawake);
            wake[k++] = wk;
            publish(w);
        }
        else if (w->running < w->max_workers && !w->shutdown
                 && spawn_worker(w) == APR_SUCCESS) {
            --n;    /* a new thread is awake by itself */
        }
        else {
            break;
        }
    }
    return k;
}

static void signal_all(h2_worker **wake, int n)
{
    int i;
    for (i = 0; i < n; ++i) {
        apr_thread_cond_signal(wake[i]->cond);
    }
}

/* Called with the lock held: take wk off the idle list. 0 when it was
 * not on it (someone took it off to give it work). */
static int unlist_idle(h2_workers *w, h2_worker *wk)
{
    h2_worker **pw = &w->idle;
    while (*pw && *pw != wk) {
        pw = &(*pw)->next_idle;
    }
    if (!*pw) {
        return 0;
    }
    *pw = wk->next_idle;
    w->nidle--;
    publish(w);
    return 1;
}

static void *APR_THREAD_FUNC worker_run(apr_thread_t *thread, void *data)
{
    h2_worker *wk = data;
    h2_workers *w = wk->workers;
    h2_wtask *task;

    h2_util_thread_name("h2-worker");
    apr_thread_mutex_lock(w->mutex);
    while (!w->shutdown) {
        task = queue_take(w);
        if (task) {
            apr_thread_mutex_unlock(w->mutex);
            w->process(wk, task);
            apr_thread_mutex_lock(w->mutex);
            continue;
        }
        /* nothing queued: park on our own condition */
        wk->next_idle = w->idle;
        w->idle = wk;
        w->nidle++;
        apr_atomic_dec32(&w->nawake);
        publish(w);
        if (w->running > w->min_workers) {
            apr_status_t rv = apr_thread_cond_timedwait(wk->cond, w->mutex,
                                                        w->idle_timeout);
            if (APR_STATUS_IS_TIMEUP(rv) && !w->q_first
                && w->running > w->min_workers && unlist_idle(w, wk)) {
                /* idled long enough above the minimum: retire (wherever
                 * it is in the list: workers timing out in turn re-park
                 * at its head, so waiting to be the head could last) */
                break;
            }
        }
        else {
            apr_thread_cond_wait(wk->cond, w->mutex);
        }
        /* whoever woke us took us off the idle list, unless it was a
         * timeout or spurious wakeup: then remove ourselves */
        if (unlist_idle(w, wk)) {
            apr_atomic_inc32(&w->nawake);
        }
    }
    w->running--;
    wk->exited = 1;
    publish(w);
    if (w->running == 0) {
        apr_thread_cond_broadcast(w->all_done);
    }
    apr_thread_mutex_unlock(w->mutex);
    return NULL;
}

void h2_workers_push(h2_workers *w, h2_wtask **tasks, int n)
{
    h2_worker *wake[H2_WAKE_MAX];
    int i, want, nwake, awake, kick_watch = 0;

    apr_thread_mutex_lock(w->mutex);
    for (i = 0; i < n; ++i) {
        h2_wtask *task = tasks[i];
        task->queued = 1;
        task->q_next = NULL;
        task->q_prev = w->q_last;
        if (w->q_last) {
            w->q_last->q_next = task;
        }
        else {
            w->q_first = task;
        }
        w->q_last = task;
        w->nqueued++;
        if (task->group) {
            task->group->nq[task->urgency]++;
        }
    }
    /* A worker that finishes a stream takes the next one without sleeping,
     * so the queue needs only as many awake workers as there are CPUs to
     * run them. Waking one per stream costs a context switch per request
     * and has them fight over the locks. */
    awake = (int)apr_atomic_read32(&w->nawake);
    want = w->concurrency - awake;
    if (want > n) want = n;
    nwake = (want > 0)? take_idle_locked(w, want, wake) : 0;
    if (w->watch_sleeps && w->nqueued > nwake) {
        /* streams wait for workers that may block: have them watched */
        w->watch_sleeps = 0;
        kick_watch = 1;
    }
    apr_thread_mutex_unlock(w->mutex);
    signal_all(wake, nwake);
    if (kick_watch) {
        apr_thread_cond_signal(w->watch_cond);
    }
}

apr_thread_cond_t *h2_worker_cond(h2_worker *wk)
{
    return wk->cond;
}

apr_status_t h2_worker_wait(h2_worker *wk, apr_thread_mutex_t *mutex,
                            apr_interval_time_t timeout)
{
    h2_workers *w = wk->workers;
    apr_status_t rv;

    apr_atomic_dec32(&w->nawake);
    rv = apr_thread_cond_timedwait(wk->cond, mutex, timeout);
    apr_atomic_inc32(&w->nawake);
    return rv;
}

/* 1 when the machine has at least as many runnable threads as CPUs
 * (besides the caller), from the kernel's count in /proc/loadavg. */
static int cpus_saturated(h2_workers *w)
{
    char buf[128];
    const char *slash;
    int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0) {
        return 0;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) {
        return 0;
    }
    buf[n] = '\0';
    /* "0.52 0.58 0.59 3/467 12345": runnable/total is the fourth field */
    slash = strchr(buf, '/');
    while (slash && slash > buf && slash[-1] >= '0' && slash[-1] <= '9') {
        --slash;
    }
    return slash && atoi(slash) - 1 >= w->ncpu;
}

/* Ticks every H2_WORKER_STALL while streams are queued. When none of them
 * was taken for a tick, the awake workers are stuck in handlers that wait
 * on something (a CGI, a backend): then every queued stream gets a worker
 * of its own, up to H2MaxWorkers. Unless the CPUs are all busy: then the
 * workers rather wait for a CPU, and only a longer stall wakes more. */
static void *APR_THREAD_FUNC watch_run(apr_thread_t *thread, void *data)
{
    h2_workers *w = data;
    apr_uint32_t seen = 0, taken_at_tick = 0;
    apr_time_t since = 0, trim_at = apr_time_now() + H2_QUIET_TICK;
    apr_time_t trimmed = apr_time_now();
    int dirty = 0;      /* work done since the last trim when quiet */

    h2_util_thread_name("h2-watch");
    apr_thread_mutex_lock(w->mutex);
    while (!w->shutdown) {
        apr_time_t stalled, now = apr_time_now();
        if (now >= trim_at) {
            /* malloc memory only after work was done since the last time
             * (every H2_TRIM_INTERVAL while busy, at once when quiet);
             * mappings go once unused for a while, also when idle */
            int took = (w->ntaken != taken_at_tick);
            int quiet = !took && !w->q_first && w->nidle == w->running;
            taken_at_tick = w->ntaken;
            dirty |= took;
            apr_thread_mutex_unlock(w->mutex);
            h2_fmap_trim();
            if (dirty && quiet && !(on_quiet && on_quiet())) {
                /* all given back: nothing more to do until the next work */
                h2_util_release_free_memory();
                trimmed = now;
                dirty = 0;
            }
            else if (dirty && now - trimmed >= H2_TRIM_INTERVAL) {
                h2_util_release_free_memory();
                trimmed = now;
            }
            apr_thread_mutex_lock(w->mutex);
            trim_at = apr_time_now() + H2_QUIET_TICK;
            continue;
        }
        if (!w->q_first) {
            w->watch_sleeps = 1;
            while (w->watch_sleeps && !w->shutdown) {
                if (APR_STATUS_IS_TIMEUP(apr_thread_cond_timedwait(
                        w->watch_cond, w->mutex, trim_at - apr_time_now()))) {
                    break;
                }
            }
            w->watch_sleeps = 0;
            seen = w->ntaken;
            since = apr_time_now();
            continue;
        }
        apr_thread_cond_timedwait(w->watch_cond, w->mutex, H2_WORKER_STALL);
        if (!w->q_first || w->ntaken != seen || w->shutdown) {
            seen = w->ntaken;
            since = apr_time_now();
            continue;
        }
        stalled = apr_time_now() - since;
        if (stalled >= H2_WORKER_STALL_SATURATED || !cpus_saturated(w)) {
            h2_worker *wake[H2_WAKE_MAX];
            int nwake = take_idle_locked(w, w->nqueued, wake);
            ap_log_error(APLOG_MARK, APLOG_TRACE2, 0, w->s,
                         "h2_workers: %d streams queued, none taken for %dms, "
                         "waking %d more workers", w->nqueued,
                         (int)apr_time_as_msec(stalled), nwake);
            apr_thread_mutex_unlock(w->mutex);
            signal_all(wake, nwake);
            apr_thread_mutex_lock(w->mutex);
            seen = w->ntaken;
            since = apr_time_now();
        }
    }
    apr_thread_mutex_unlock(w->mutex);
    return NULL;
}

int h2_workers_unqueue(h2_workers *w, h2_wtask *task)
{
    int removed = 0;

    apr_thread_mutex_lock(w->mutex);
    if (task->queued) {
        queue_unlink(w, task);
        removed = 1;
    }
    apr_thread_mutex_unlock(w->mutex);
    return removed;
}

void h2_workers_reprioritize(h2_workers *w, h2_wtask *task, int urgency)
{
    apr_thread_mutex_lock(w->mutex);
    if (task->queued && task->group) {
        task->group->nq[task->urgency]--;
        task->group->nq[urgency]++;
    }
    task->urgency = (unsigned char)urgency;
    apr_thread_mutex_unlock(w->mutex);
}

static apr_status_t workers_cleanup(void *data)
{
    h2_workers *w = data;
    h2_worker *wk;
    apr_status_t trv;

    apr_thread_mutex_lock(w->mutex);
    w->shutdown = 1;
    for (wk = w->all; wk; wk = wk->next) {
        apr_thread_cond_signal(wk->cond);
    }
    apr_thread_cond_signal(w->watch_cond);
    while (w->running > 0) {
        /* connections finished their streams before the child pool goes;
         * anything still running is bounded by the stream timeouts */
        if (apr_thread_cond_timedwait(w->all_done, w->mutex,
                                      apr_time_from_sec(5)) != APR_SUCCESS) {
            break;
        }
    }
    apr_thread_mutex_unlock(w->mutex);
    if (w->watch_thread) {
        apr_thread_join(&trv, w->watch_thread);
    }
    if (w->running == 0) {
        for (wk = w->all; wk; wk = wk->next) {
            if (wk->thread) {
                apr_thread_join(&trv, wk->thread);
            }
        }
    }
    return APR_SUCCESS;
}

static h2_workers *child_workers;

h2_workers *h2_workers_of_child(void)
{
    return child_workers;
}

h2_workers *h2_workers_create(server_rec *s, apr_pool_t *pchild,
                              int min_workers, int max_workers,
                              int idle_secs, h2_worker_process_fn *process)
{
    h2_workers *w;
    apr_pool_t *pool;
    apr_allocator_t *allocator;
    apr_thread_mutex_t *amutex;
    int i;

    /* Own allocator with a mutex: threads create their pools from it. */
    apr_allocator_create(&allocator);
    apr_allocator_max_free_set(allocator,
                               h2_util_max_free(APR_ALLOCATOR_MAX_FREE_UNLIMITED));
    apr_pool_create_ex(&pool, pchild, NULL, allocator);
    apr_allocator_owner_set(allocator, pool);
    apr_thread_mutex_create(&amutex, APR_THREAD_MUTEX_DEFAULT, pool);
    apr_allocator_mutex_set(allocator, amutex);
    apr_pool_tag(pool, "h2_workers");

    w = apr_pcalloc(pool, sizeof(*w));
    w->s = s;
    w->pool = pool;
    w->process = process;
    w->min_workers = min_workers;
    w->max_workers = max_workers;
    w->idle_timeout = apr_time_from_sec(idle_secs);
    w->ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (w->ncpu < 1) {
        w->ncpu = 1;
    }
    w->concurrency = w->ncpu;
    if (w->concurrency < 2) {
        w->concurrency = 2;
    }
    if (w->concurrency > max_workers) {
        w->concurrency = max_workers;
    }
    apr_thread_mutex_create(&w->mutex, APR_THREAD_MUTEX_DEFAULT, pool);
    apr_thread_cond_create(&w->all_done, pool);
    apr_thread_cond_create(&w->watch_cond, pool);
    apr_threadattr_create(&w->attr, pool);
    if (ap_thread_stacksize != 0) {
        apr_threadattr_stacksize_set(w->attr, ap_thread_stacksize);
    }

    apr_thread_mutex_lock(w->mutex);
    for (i = 0; i < min_workers; ++i) {
        if (spawn_worker(w) != APR_SUCCESS) {
            break;
        }
    }
    apr_thread_mutex_unlock(w->mutex);
    if (ap_thread_create(&w->watch_thread, w->attr, watch_run, w, pool)
        != APR_SUCCESS) {
        /* without the watchdog, blocking handlers must not hold up the
         * queue: wake a worker for every stream */
        w->watch_thread = NULL;
        w->concurrency = max_workers;
    }
    apr_pool_pre_cleanup_register(pool, w, workers_cleanup);
    ap_log_error(APLOG_MARK, APLOG_DEBUG, 0, s, APLOGNO(21002)
                 "h2_workers: started %d of min %d, max %d workers, idle %ds",
                 w->running, min_workers, max_workers, idle_secs);
    child_workers = w;
    return w;
}
