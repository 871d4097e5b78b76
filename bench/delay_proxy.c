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
/* A lean latency link for the benchmarks: TCP on loopback with a fixed
 * delay each way, for a machine whose kernel has no netem. What toxiproxy's
 * latency toxic does, at a fraction of its CPU: on this 2-core machine
 * toxiproxy spends as much per GB as client and server together, which
 * turns a 20 ms link into a CPU contest.
 *
 *   delay_proxy ONE_WAY_US LIFETIME_S LISTEN:UPSTREAM [LISTEN:UPSTREAM...]
 *
 * Every byte read from one side is written to the other ONE_WAY_US after
 * it arrived; reading takes what comes as fast as it comes (no end-to-end
 * window, as toxiproxy), up to DP_QUEUE_MAX per direction. Listens on
 * 127.0.0.1 only, connects to 127.0.0.1 only, and exits after LIFETIME_S
 * seconds or on SIGTERM. Single-threaded: epoll, level-triggered. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DP_SEG_SIZE   (256 * 1024)          /* bytes one queued segment holds */
#define DP_QUEUE_MAX  (256u * 1024 * 1024)  /* queued per direction at most */
#define DP_READS_MAX  16                    /* reads per readable event */
#define DP_MAX_LISTEN 16

typedef struct seg {
    struct seg *next;
    int64_t due;                /* us, monotonic: when it may go out */
    size_t len, off;
    char data[DP_SEG_SIZE];
} seg;

typedef struct dir {
    int from, to;
    seg *head, *tail;
    size_t queued;
    int eof, shut, blocked;     /* blocked: the last write hit EAGAIN */
} dir;

typedef struct pair pair;
typedef struct endpt { pair *p; int side; unsigned interest; } endpt;

struct pair {
    pair *next;
    int fd[2];                  /* 0 the client, 1 the upstream */
    dir d[2];                   /* d[0] client -> upstream, d[1] back */
    endpt e[2];
    int dead;
};

static int ep;
static int64_t one_way;
static seg *free_segs;
static pair *pairs;
static volatile sig_atomic_t stop;

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static seg *seg_get(void)
{
    seg *s = free_segs;
    if (s) {
        free_segs = s->next;
    }
    else if (!(s = malloc(sizeof(*s)))) {
        perror("delay_proxy: malloc");
        exit(1);
    }
    s->next = NULL;
    s->len = s->off = 0;
    return s;
}

static void seg_put(seg *s)
{
    s->next = free_segs;
    free_segs = s;
}

static void set_interest(pair *p, int side)
{
    endpt *e = &p->e[side];
    dir *in = &p->d[side], *out = &p->d[1 - side];
    unsigned want = 0;
    struct epoll_event ev;

    if (!in->eof && in->queued < DP_QUEUE_MAX) {
        want |= EPOLLIN;
    }
    if (out->blocked) {
        want |= EPOLLOUT;
    }
    if (want == e->interest) {
        return;
    }
    memset(&ev, 0, sizeof(ev));
    ev.events = want;
    ev.data.ptr = e;
    epoll_ctl(ep, EPOLL_CTL_MOD, p->fd[side], &ev);
    e->interest = want;
}

/* Take what the side's socket holds, stamped with when it may go on. */
static void pump_in(pair *p, int side)
{
    dir *d = &p->d[side];
    int i;

    for (i = 0; i < DP_READS_MAX && d->queued < DP_QUEUE_MAX; ++i) {
        int64_t due = now_us() + one_way;
        seg *t = d->tail;
        ssize_t n;
        if (!t || t->off || t->len == DP_SEG_SIZE || due - t->due > 200) {
            /* a segment holds what arrived within 200 us of its first byte */
            t = seg_get();
            t->due = due;
            if (d->tail) {
                d->tail->next = t;
            }
            else {
                d->head = t;
            }
            d->tail = t;
        }
        n = read(d->from, t->data + t->len, DP_SEG_SIZE - t->len);
        if (n > 0) {
            t->len += (size_t)n;
            d->queued += (size_t)n;
            continue;
        }
        if (n == 0) {
            d->eof = 1;
        }
        else if (errno != EAGAIN && errno != EINTR) {
            p->dead = 1;
        }
        break;
    }
}

/* Write what is due; returns when the next byte is due (0: nothing queued,
 * -1: blocked on the socket). */
static int64_t pump_out(pair *p, int side, int64_t now)
{
    dir *d = &p->d[side];

    d->blocked = 0;
    while (d->head) {
        seg *s = d->head;
        ssize_t n;
        if (s->len == s->off) {
            if (s == d->tail) {
                break;          /* empty, still filling */
            }
            d->head = s->next;
            seg_put(s);
            continue;
        }
        if (s->due > now) {
            return s->due;
        }
        n = write(d->to, s->data + s->off, s->len - s->off);
        if (n < 0) {
            if (errno == EAGAIN) {
                d->blocked = 1;
                return -1;
            }
            if (errno != EINTR) {
                p->dead = 1;
            }
            return 0;
        }
        s->off += (size_t)n;
        d->queued -= (size_t)n;
        if (s->off == s->len && s != d->tail) {
            d->head = s->next;
            seg_put(s);
        }
        else if (s->off == s->len) {
            s->len = s->off = 0;    /* the tail, emptied: reuse in place */
        }
    }
    if (d->eof && !d->queued && !d->shut) {
        shutdown(d->to, SHUT_WR);
        d->shut = 1;
    }
    return 0;
}

static void pair_close(pair *p)
{
    int i;
    for (i = 0; i < 2; ++i) {
        seg *s, *n;
        close(p->fd[i]);
        for (s = p->d[i].head; s; s = n) {
            n = s->next;
            seg_put(s);
        }
    }
    free(p);
}

static int nonblock_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fcntl(fd, F_SETFL, O_NONBLOCK);
}

static void accept_one(int lfd, int upstream)
{
    struct sockaddr_in a;
    struct epoll_event ev;
    pair *p;
    int c, u, i;

    c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c < 0) {
        return;
    }
    u = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)upstream);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* a blocking connect on loopback: answered at once */
    if (u < 0 || connect(u, (struct sockaddr *)&a, sizeof(a)) < 0
        || nonblock_nodelay(u) < 0 || nonblock_nodelay(c) < 0) {
        close(c);
        if (u >= 0) {
            close(u);
        }
        return;
    }
    if (!(p = calloc(1, sizeof(*p)))) {
        perror("delay_proxy: calloc");
        exit(1);
    }
    p->fd[0] = c;
    p->fd[1] = u;
    for (i = 0; i < 2; ++i) {
        p->d[i].from = p->fd[i];
        p->d[i].to = p->fd[1 - i];
        p->e[i].p = p;
        p->e[i].side = i;
        p->e[i].interest = EPOLLIN;
        memset(&ev, 0, sizeof(ev));
        ev.events = EPOLLIN;
        ev.data.ptr = &p->e[i];
        epoll_ctl(ep, EPOLL_CTL_ADD, p->fd[i], &ev);
    }
    p->next = pairs;
    pairs = p;
}

static int listen_on(int port)
{
    struct sockaddr_in a;
    int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0
        || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 128) < 0) {
        fprintf(stderr, "delay_proxy: cannot listen on 127.0.0.1:%d: %s\n", port,
                strerror(errno));
        exit(1);
    }
    return fd;
}

/* Write what is due on every connection, close the finished ones; returns
 * the epoll timeout until the next due byte. */
static struct timespec *pump_all(struct timespec *ts)
{
    int64_t now = now_us(), next = 0;
    pair **pp = &pairs;

    while (*pp) {
        pair *p = *pp;
        int i;
        for (i = 0; i < 2 && !p->dead; ++i) {
            int64_t due = pump_out(p, i, now);
            if (due > 0 && (!next || due < next)) {
                next = due;
            }
        }
        if (p->dead || (p->d[0].shut && p->d[1].shut)) {
            *pp = p->next;
            epoll_ctl(ep, EPOLL_CTL_DEL, p->fd[0], NULL);
            epoll_ctl(ep, EPOLL_CTL_DEL, p->fd[1], NULL);
            pair_close(p);
            continue;
        }
        set_interest(p, 0);
        set_interest(p, 1);
        pp = &p->next;
    }
    if (!next) {
        ts->tv_sec = 1;
        ts->tv_nsec = 0;
    }
    else {
        int64_t wait = (next > now)? next - now : 0;
        ts->tv_sec = wait / 1000000;
        ts->tv_nsec = (wait % 1000000) * 1000;
    }
    return ts;
}

static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv)
{
    int lfd[DP_MAX_LISTEN], up[DP_MAX_LISTEN], nl = 0, i;
    struct epoll_event ev, evs[64];
    int64_t deadline;

    if (argc < 4) {
        fprintf(stderr, "usage: %s ONE_WAY_US LIFETIME_S LISTEN:UPSTREAM...\n", argv[0]);
        return 2;
    }
    one_way = atoll(argv[1]);
    deadline = now_us() + (int64_t)atoi(argv[2]) * 1000000;
    signal(SIGTERM, on_term);
    signal(SIGINT, on_term);
    signal(SIGPIPE, SIG_IGN);
    if ((ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
        perror("delay_proxy: epoll_create1");
        return 1;
    }
    for (i = 3; i < argc && nl < DP_MAX_LISTEN; ++i, ++nl) {
        if (sscanf(argv[i], "%d:%d", &lfd[nl], &up[nl]) != 2) {
            fprintf(stderr, "delay_proxy: bad LISTEN:UPSTREAM '%s'\n", argv[i]);
            return 2;
        }
        lfd[nl] = listen_on(lfd[nl]);
        memset(&ev, 0, sizeof(ev));
        ev.events = EPOLLIN;
        ev.data.u64 = (uint64_t)nl;     /* below any pointer */
        epoll_ctl(ep, EPOLL_CTL_ADD, lfd[nl], &ev);
    }
    printf("ready\n");
    fflush(stdout);
    while (!stop && now_us() < deadline) {
        struct timespec ts;
        int n = epoll_pwait2(ep, evs, 64, pump_all(&ts), NULL);
        for (i = 0; i < n; ++i) {
            if (evs[i].data.u64 < DP_MAX_LISTEN) {
                int k = (int)evs[i].data.u64;
                accept_one(lfd[k], up[k]);
                continue;
            }
            {
                endpt *e = evs[i].data.ptr;
                pair *p = e->p;
                if (p->dead) {
                    continue;
                }
                if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                    pump_in(p, e->side);
                }
                /* EPOLLOUT: pump_all writes what is due */
            }
        }
    }
    return 0;
}
