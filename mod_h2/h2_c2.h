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

/* The child went quiet (watchdog thread): the idle secondary connection
 * shells go, with what their allocators kept. */
void h2_c2_child_quiet(void);

/* Call from an MPM thread that serves a connection: processes that
 * requests start from worker threads get this thread's signal mask. */
void h2_c2_note_conn_thread(void);

void h2_c2_register_hooks(void);

#endif
