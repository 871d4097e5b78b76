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
#ifndef H2_X_WORKER_H
#define H2_X_WORKER_H

/* The exchange as the worker that has taken a stream uses it: only worker
 * code includes this (h2_x_types.h says why). */

#include "h2_x_types.h"

/* The stream of a task the workers' queue handed out. */
h2_x *h2_x_worker_of(struct h2_wtask *task);

/* The worker wk takes x from the queue: QUEUED -> RUNNING. Returns the
 * request, NULL when the stream was aborted meanwhile (the worker then
 * only calls h2_x_worker_done); *pc2 is a kept secondary or NULL. For a
 * parked log (PARKED -> RUNNING): the request, and in *pc2 the secondary
 * connection that parked it. */
const h2_x_req *h2_x_worker_take(h2_x *x, struct h2_worker *wk, conn_rec **pc2);

/* Count request r, logged, in the scoreboard as an access of the client
 * connection (mod_status's totals). */
void h2_x_worker_count(h2_x *x, request_rec *r);

/* Whether x's request may be logged now, so that its log tells what went
 * out: 1 when its last frame was written or the stream was aborted (reset,
 * connection gone), with *wire the frame bytes written for it and
 * *complete 1 when the response went out whole; 0 when its output is
 * still on its way. */
int h2_x_worker_settled(h2_x *x, apr_off_t *wire, int *complete);

/* The worker is done with x but for its log, which waits for the output
 * (h2_x_worker_settled() said 0): RUNNING -> PARKED, c2 stays with x until
 * a worker takes the log task. Returns 0 when x settled meanwhile: log
 * it now and end with h2_x_worker_done(). */
int h2_x_worker_park(h2_x *x, conn_rec *c2);

/* H2StreamTimeout for x's request (its directory's, once known): how long
 * waits for room or for request body last. */
void h2_x_worker_timeout(h2_x *x, apr_interval_time_t timeout);

/* Worker: fill pfd with a descriptor that is readable while request body
 * (or its end, or an abort) waits to be read, for modules that poll a
 * connection's input (mod_proxy's tunnels); made in a subpool of p, gone
 * when the worker is done. ptimeout (may be NULL): H2StreamTimeout. */
apr_status_t h2_x_worker_pollfd(h2_x *x, apr_pool_t *p, apr_pollfd_t *pfd,
                                apr_interval_time_t *ptimeout);

/* Hand n items of response over, waiting while the stream holds what
 * H2StreamMaxMemSize allows; flush: the connection should send now. File
 * descriptors of items not taken are closed. */
apr_status_t h2_x_worker_out(h2_x *x, const h2_x_item *items, int n, int flush);

/* Read up to readbytes of request body into bb (mode as for input filters,
 * GETLINE stopping after a LF; speculative reads leave it queued), waiting
 * until deadline (0: H2StreamTimeout) when nothing is there and block.
 * trailers: the request's table the trailers go into at the end. */
apr_status_t h2_x_worker_body(h2_x *x, apr_bucket_brigade *bb, int getline,
                              int speculative, apr_read_type_e block,
                              apr_off_t readbytes, apr_time_t deadline,
                              apr_table_t *trailers, apr_off_t *pread);

/* The worker is finished with x: RUNNING -> DONE. c2 (may be NULL) is kept
 * for the connection's next stream; returns it when not kept. */
conn_rec *h2_x_worker_done(h2_x *x, conn_rec *c2);

#endif
