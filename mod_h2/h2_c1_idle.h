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
#ifndef H2_C1_IDLE_H
#define H2_C1_IDLE_H

#include <httpd.h>

/* Idle HTTP/2 connections wait in the event MPM's I/O queue, which the
 * MPM does not cut short when its threads are busy (a client's next
 * request is never lost to that). The MPM applies no KeepAliveTimeout
 * there and does not wake them for a graceful stop, so the child keeps a
 * registry of them: when a connection's KeepAliveTimeout passes, or the
 * child stops, the read side of its socket is shut down, the MPM sees it
 * readable and hands it back, and the session says goodbye with GOAWAY. */

apr_status_t h2_c1_idle_child_init(apr_pool_t *pchild, server_rec *s);

/* A connection's entry in the registry, which its session holds (the
 * registry knows connections, not sessions); written under the
 * registry's lock once parked. */
typedef struct h2_c1_idler {
    conn_rec *c1;
    apr_interval_time_t keepalive;      /* its KeepAliveTimeout */
    struct h2_c1_idler *prev, *next;
    int listed;
    int expired;
    apr_time_t deadline;
} h2_c1_idler;

/* The connection goes to wait in the MPM now. */
void h2_c1_idle_park(h2_c1_idler *e);

/* Why a parked session was woken: it should then say goodbye and close. */
#define H2_IDLE_EXPIRED  1    /* its KeepAliveTimeout is over */
#define H2_IDLE_STOPPING 2    /* the child stops */

/* The connection is back (or going away). Returns 0 if the MPM handed it
 * back for input, else H2_IDLE_EXPIRED or H2_IDLE_STOPPING. */
int h2_c1_idle_unpark(h2_c1_idler *e);

/* The child is stopping: on a restart or an ungraceful stop, wake all
 * parked sessions to say goodbye; a spare child the MPM retires lets
 * them run out their KeepAliveTimeout. */
void h2_c1_idle_child_stopping(apr_pool_t *pchild, int graceful);

#endif
