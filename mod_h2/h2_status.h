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
#ifndef H2_STATUS_H
#define H2_STATUS_H

/* HTTP/2 in mod_status: every child's HTTP/2 connections (client,
 * protocol, streams started/done, what the connection does, its last
 * request) and worker counts in a table in shared memory, shown on the
 * server-status page and as H2* lines of `?auto`.
 *
 * An HTTP/2 connection holds an MPM thread only while it has something to
 * do (it waits for its client and its workers in the MPM, h2_c1.c), so the
 * scoreboard line of that thread shows it only then; this table shows it
 * for its whole life. A row has one writer, its connection thread; the
 * page reads without locks and may see a row mid-update, never beyond
 * its bounds. */

#include <httpd.h>

typedef struct h2_status_row h2_status_row;

/* Parent, post_config: the table for this generation's children. */
apr_status_t h2_status_post_config(apr_pool_t *pconf, server_rec *s);

/* Child init: take this child's part of the table. */
void h2_status_child_init(apr_pool_t *pchild);

/* Connection thread: a row for the HTTP/2 connection c1 (NULL when the
 * child's rows are all taken; the page counts such connections). The
 * row is given back when c1's pool goes. */
h2_status_row *h2_status_c1_open(conn_rec *c1, const char *protocol);

/* Connection thread: a stream started processing / has ended. */
void h2_status_c1_stream_start(h2_status_row *row, int id, const char *method,
                               const char *path);
void h2_status_c1_stream_done(h2_status_row *row);

/* Connection thread: what the connection does now ("busy", "wait",
 * "idle", "done"); all but "busy" also go on the scoreboard line of c1's
 * thread. */
void h2_status_c1_state(h2_status_row *row, conn_rec *c1, const char *state);

/* Either (h2_workers.c, under the workers' lock): the child's worker
 * threads now. */
void h2_status_workers(int running, int idle, int max);

void h2_status_register_hooks(void);

#endif
