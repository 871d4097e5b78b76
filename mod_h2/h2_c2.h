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
#ifndef H2_C2_H
#define H2_C2_H

#include <httpd.h>


/* Secondary connections: each stream's request runs on one, in a worker
 * thread, through httpd's ordinary request processing. A session keeps
 * the secondaries it has set up for reuse while it is busy. */

/* Child init: worker pool and caches. */
apr_status_t h2_c2_child_init(apr_pool_t *pchild, server_rec *s);

/* Call from an MPM thread that serves a connection: processes that
 * requests start from worker threads get this thread's signal mask. */
void h2_c2_note_conn_thread(void);

/* Worker: request r (its request line and headers set) begins: its head
 * counts for mod_logio (%I), and once it is logged it is counted in
 * mod_status as an access of the client connection with its bytes. */
void h2_c2_request_begins(request_rec *r);

/* 1 when c2 serves a WebSocket opened by an extended CONNECT (worker). */
int h2_c2_is_websocket(conn_rec *c2);

/* 1 when the stream c2 serves may push (H2Push on for its connection,
 * a client that takes pushes, not itself pushed); then *scheme and
 * *authority are its request's (worker). */
int h2_c2_may_push(conn_rec *c2, const char **scheme, const char **authority);

/* Set up request r of a WebSocket stream: its GET has no body (worker). */
void h2_c2_ws_request(request_rec *r);

void h2_c2_register_hooks(void);

#endif
