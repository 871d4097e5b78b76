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
#ifndef H2_X_C1_H
#define H2_X_C1_H

/* The exchange as the connection thread that owns the session uses it:
 * only that thread includes this (h2_x_types.h says why). */

#include "h2_x_types.h"

/* The connection's side, in pool p (the connection's). */
h2_xconn *h2_x_c1_conn_create(apr_pool_t *p, const h2_x_settings *set);

/* A stream's exchange, in its pool p; owner is the connection thread's
 * stream, handed back by h2_x_c1_collect(). req->head etc. are filled in
 * by the caller before h2_x_c1_admit(). */
h2_x *h2_x_c1_create(h2_xconn *xc, apr_pool_t *p, int id, void *owner);

/* The request a worker will see; writable until admitted. */
h2_x_req *h2_x_c1_req(h2_x *x);

/* Free the stream's queued chunks and give back what its buffers counted. */
void h2_x_c1_destroy(h2_x *x);

/* NEW -> PENDING: a worker is to run it; body may be kept from now on. */
void h2_x_c1_pend(h2_x *x);

/* PENDING -> QUEUED, if the connection is within its worker share: 1.
 * Else the stream stays PENDING: 0 when the connection is at its share,
 * -1 when the stream is a WebSocket and WebSockets hold their part of it
 * (others may still be admitted). Queue the admitted ones with
 * h2_x_c1_schedule(). */
int h2_x_c1_admit(h2_x *x);

/* Whether the stream's response waits for window its client withholds
 * (nothing of it can be sent). A PARKED stream holds its secondary
 * connection and request pool (some 25 KB) for its log: past the
 * connection's share of workers of such streams, a starved one's log is
 * written at once, with what went out by then, and the rest of its
 * response (a file range, or chunks) goes out without them. A client
 * that opens no window on 100 streams so holds no more requests than it
 * has workers, and every stream still gets its response head. */
void h2_x_c1_starved(h2_x *x, int starved);

/* The urgency (RFC 9218, 0..7) the stream waits for a worker with. */
void h2_x_c1_set_urgency(h2_x *x, int urgency);

/* Report what the worker reads of the body only once it is n bytes (a
 * quarter of a grown window: nghttp2 sends WINDOW_UPDATE at half), not at
 * every read; 0: at every read of 16 KB or that empties the queue. */
void h2_x_c1_set_consume_wake(h2_x *x, apr_size_t n);

/* Hand n admitted streams to the workers. */
void h2_x_c1_schedule(h2_x **xs, int n);

/* The stream is not wanted any more (reset, closed, teardown): take it
 * back if no worker has it yet, else tell its worker to stop. Returns 1
 * when a worker still has it. */
int h2_x_c1_abort(h2_x *x);

/* Request body bytes that arrived: 1 when kept, 0 when nobody will read
 * them (the caller then opens the window itself). */
int h2_x_c1_body_in(h2_x *x, const char *data, apr_size_t len);

/* The body is complete; trailers (may be NULL) go to the request. */
void h2_x_c1_body_end(h2_x *x, apr_table_t *trailers);

/* Wake the workers of streams that got body since the last call and hold
 * at least min bytes of it (0: all of them); the others stay due. Once per
 * read from the client, not once per DATA frame. */
void h2_x_c1_body_due(h2_xconn *xc, apr_size_t min);

/* For each stream a worker made ready since the last call: move its output
 * to the connection's queue and call cb with the body bytes the worker
 * consumed and whether it is DONE. Also settles what was sent since the
 * last call. Returns the number of streams. */
typedef void h2_x_collect_cb(void *ctx, void *owner, apr_size_t consumed,
                             int done);
int h2_x_c1_collect(h2_xconn *xc, h2_x_collect_cb *cb, void *ctx);

/* The response chunks taken over, in order: the connection thread reads
 * and pops them without the lock. */
h2_hqueue *h2_x_c1_out(h2_x *x);

/* Keep chunk c until the stream is freed (nghttp2 points into it). */
void h2_x_c1_hold(h2_x *x, h2_hchunk *c);

/* Chunk c went out: free it at the next collect. */
void h2_x_c1_sent_chunk(h2_xconn *xc, h2_hchunk *c);

/* n response bytes of x went out: room for its worker at the next collect. */
void h2_x_c1_sent(h2_x *x, apr_size_t n);

/* n bytes of frames of x (its head, DATA, a reset) were written to the
 * connection: what mod_logio's %O counts for its request. */
void h2_x_c1_wire(h2_x *x, apr_size_t n);

/* The last frame of x's response went out (END_STREAM or RST_STREAM): its
 * request may be logged now, with what went out (a parked log is written
 * by h2_x_c1_run_logs(), or under prefork handed to a worker). */
void h2_x_c1_settle(h2_x *x);

/* Write the parked logs whose responses went out (or were reset) since the
 * last call: after the flush that sent them, as over HTTP/1.1 the thread
 * that wrote a response logs it, without waking a worker for each. */
void h2_x_c1_run_logs(h2_xconn *xc);

/* The stream is freed in the next h2_x_c1_purge(); no more collects for it. */
void h2_x_c1_forget(h2_x *x);

/* Drop forgotten streams from the lists of ready and sent ones. */
void h2_x_c1_purge(h2_xconn *xc);

/* Sleep until sock (if not NULL) is readable, a worker wakes us, or
 * timeout passes; returns at once when a stream is ready already. Returns
 * 0 when sock had no input when the wait ended (the next non-blocking
 * read would find nothing), else 1. */
int h2_x_c1_wait(h2_xconn *xc, apr_socket_t *sock, apr_interval_time_t timeout);

/* Streams with workers (queued or running). */
int h2_x_c1_processing(h2_xconn *xc);

/* Bytes of request bodies and responses the connection buffers; of them
 * request bodies (queued for workers, or read by them and not yet
 * collected) in *body unless body is NULL. */
apr_size_t h2_x_c1_mem_held(h2_xconn *xc, apr_size_t *body);

/* The connection idles (final: ends, all output written or dropped): give
 * back kept secondaries and cached chunks. */
void h2_x_c1_idle(h2_xconn *xc, int final);

/* The connection ends: h2_x_c1_abort() every stream between these two;
 * the second waits until no worker has one. */
void h2_x_c1_teardown_start(h2_xconn *xc);
void h2_x_c1_teardown_wait(h2_xconn *xc);

#endif
