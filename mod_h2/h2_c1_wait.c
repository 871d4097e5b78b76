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
/* How a connection thread waits for its socket and its workers: one eventfd
 * per thread. */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <fcntl.h>
#if defined(__linux__)
#include <sys/eventfd.h>
#endif
#include <apr_portable.h>

#include "h2_c1_wait.h"

struct h2_c1_waiter {
    int rfd, wfd;     /* the same eventfd on Linux, a pipe's ends elsewhere */
    h2_c1_waiter *next;
};

/* Waiters live as long as the process, not as their thread: a worker may
 * write a wakeup after it let go of the connection's lock (h2_x.c), when
 * the thread it wakes may have moved on. Threads that wait are the MPM's,
 * which live as long as the child, so there are no more of them than of
 * those threads; the list keeps them reachable. */
static pthread_key_t waiter_key;
static pthread_once_t waiter_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t waiters_mutex = PTHREAD_MUTEX_INITIALIZER;
static h2_c1_waiter *waiters;

static void waiter_key_init(void)
{
    pthread_key_create(&waiter_key, NULL);
}

static void waiter_close(h2_c1_waiter *w)
{
    close(w->rfd);
    if (w->wfd != w->rfd) {
        close(w->wfd);
    }
    free(w);
}

/* At the end of the child, after the workers stopped. */
static apr_status_t waiters_cleanup(void *data)
{
    h2_c1_waiter *w;

    (void)data;
    pthread_mutex_lock(&waiters_mutex);
    while ((w = waiters) != NULL) {
        waiters = w->next;
        waiter_close(w);
    }
    pthread_mutex_unlock(&waiters_mutex);
    return APR_SUCCESS;
}

void h2_c1_wait_child_init(apr_pool_t *pchild)
{
    apr_pool_cleanup_register(pchild, NULL, waiters_cleanup, apr_pool_cleanup_null);
}

h2_c1_waiter *h2_c1_waiter_get(void)
{
    h2_c1_waiter *w;

    pthread_once(&waiter_once, waiter_key_init);
    w = pthread_getspecific(waiter_key);
    if (w) {
        return w;
    }
    w = malloc(sizeof(*w));
    if (!w) {
        return NULL;
    }
#if defined(__linux__)
    w->rfd = w->wfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (w->rfd < 0) {
        free(w);
        return NULL;
    }
#else
    {
        int fds[2];
        if (pipe(fds) != 0) {
            free(w);
            return NULL;
        }
        fcntl(fds[0], F_SETFL, O_NONBLOCK);
        fcntl(fds[1], F_SETFL, O_NONBLOCK);
        fcntl(fds[0], F_SETFD, FD_CLOEXEC);
        fcntl(fds[1], F_SETFD, FD_CLOEXEC);
        w->rfd = fds[0];
        w->wfd = fds[1];
    }
#endif
    if (pthread_setspecific(waiter_key, w) != 0) {
        waiter_close(w);
        return NULL;
    }
    pthread_mutex_lock(&waiters_mutex);
    w->next = waiters;
    waiters = w;
    pthread_mutex_unlock(&waiters_mutex);
    return w;
}

void h2_c1_waiter_drain(h2_c1_waiter *w)
{
#if defined(__linux__)
    uint64_t count;
    /* one read empties an eventfd: a second would only say EAGAIN */
    if (read(w->rfd, &count, sizeof(count)) < 0) {
        /* EAGAIN: nothing was pending */
    }
#else
    char buf[64];
    while (read(w->rfd, buf, sizeof(buf)) > 0) {
        /* a pipe may hold several */
    }
#endif
}

int h2_c1_waiter_wait(h2_c1_waiter *w, apr_socket_t *sock,
                      apr_interval_time_t timeout)
{
    struct pollfd pfd[2];
    apr_os_sock_t fd;
    int ms = (timeout < 0)? -1 : (int)((timeout + 999) / 1000);
    int n, flags = 0;

    if (!sock) {
        fd = -1;        /* poll() skips it: the wakeup alone ends the wait */
    }
    else if (apr_os_sock_get(&fd, sock) != APR_SUCCESS) {
        return H2_WAITED_INPUT;
    }
    pfd[0].fd = fd;
    pfd[0].events = POLLIN;
    pfd[1].fd = w->rfd;
    pfd[1].events = POLLIN;
    pfd[0].revents = pfd[1].revents = 0;
    n = poll(pfd, 2, ms);
    if (n < 0 || fd < 0 || pfd[0].revents) {
        flags |= H2_WAITED_INPUT;
    }
    if (n > 0 && (pfd[1].revents & POLLIN)) {
        h2_c1_waiter_drain(w);
        flags |= H2_WAITED_WOKEN;
    }
    return flags;
}

void h2_c1_waiter_wake(h2_c1_waiter *w)
{
#if defined(__linux__)
    uint64_t one = 1;
#else
    char one = 1;
#endif

    if (w && write(w->wfd, &one, sizeof(one)) < 0) {
        /* full: a wakeup is pending already */
    }
}
