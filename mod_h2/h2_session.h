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
#ifndef H2_SESSION_H
#define H2_SESSION_H

#include <httpd.h>

struct h2_c1_idler;

/* A client connection's HTTP/2 session. Its fields are the session files'
 * own (h2_session_int.h); others get what they need through functions. */
typedef struct h2_session h2_session;

/* Create the session for c1, configured by server s (NULL: the
 * connection's base server). upgrade_r: the HTTP/1.1 request that asked
 * for h2c, which becomes stream 1 (NULL for a direct or TLS start). */
apr_status_t h2_session_create(h2_session **psession, conn_rec *c1,
                               request_rec *upgrade_r, server_rec *s);

/* How h2_session_process may hand the connection back to the MPM. */
#define H2_RUN_BLOCK     0   /* never: the thread is the connection's */
#define H2_RUN_MAY_PARK  1   /* when idle, to wait for input */
#define H2_RUN_MAY_YIELD 2   /* also when busy, after its turn (H2_C1_TURN) */

/* Drive the session until it is idle and may park (APR_EAGAIN), has had
 * its turn and may yield (APR_INCOMPLETE), or is done (APR_EOF). */
apr_status_t h2_session_process(h2_session *session, int how);

/* Refuse the connection with GOAWAY code (e.g. INADEQUATE_SECURITY). */
void h2_session_refuse(h2_session *session, int code, const char *why);

/* Send a final GOAWAY (NO_ERROR, why as debug data) if none went out yet. */
void h2_session_goodbye(h2_session *session, const char *why);

/* The session is done: stop its streams and wait until no worker runs one
 * (the teardown does that too, later; called earlier where the connection
 * thread must not run anything of httpd's while a worker does). */
void h2_session_end_streams(h2_session *session);

/* The connection's entry in the registry of idle connections
 * (h2_c1_idle.c), which holds there all it needs of the session. */
struct h2_c1_idler *h2_session_idler(h2_session *session);

#endif
