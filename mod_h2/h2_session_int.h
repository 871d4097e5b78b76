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
#ifndef H2_SESSION_INT_H
#define H2_SESSION_INT_H

/* What the files of a session share (h2_session*.c and h2_upgrade.c).
 * Every function here runs in the connection thread that owns the
 * session; workers never see a session (they see h2_x). */

#include <nghttp2/nghttp2.h>

#include "h2_abuse.h"
#include "h2_c1_io.h"
#include "h2_config.h"
#include "h2_lifecycle.h"
#include "h2_session.h"
#include "h2_stream.h"
#include "h2_x_c1.h"

/* How often a connection thread that waits on workers looks at the MPM,
 * so that a graceful stop is noticed. */
#define H2_WAIT_SLICE apr_time_from_msec(500)
/* How long a shutdown notice waits for the client's PING answer: several
 * round trips of any real network. */
#define H2_STOP_NOTICE_WAIT apr_time_from_msec(1000)
#define H2_STOP_PING "h2-stop!"   /* 8 bytes of PING payload */
#define H2_MAX_STREAM_ID 0x7fffffff

/* A connection with streams in flight keeps its MPM thread while it waits
 * for them; under a steady load it never goes idle. After this long it
 * hands the thread back (the MPM queues it again at once), so that
 * connections waiting for a thread get their turn: without it, more busy
 * connections than MPM threads starve the rest until they time out. */
#define H2_C1_TURN apr_time_from_msec(100)

/* While reads keep bringing a stream body, its waiting worker is woken
 * once the stream holds this much (or when a read brings it nothing, or
 * the connection thread is to wait): woken per read (some 5 KB when the
 * client is the slower party), a worker slept, woke and contended for the
 * lock about three times per read (bench/upload.py, server CPU per GB). */
#define H2_BODY_WAKE_BATCH (256 * 1024)

/* While a stream takes a bulk upload (its window grew, and the client may
 * send this much twice over without a WINDOW_UPDATE), the connection
 * thread's waits for input end once this much has arrived, or after
 * H2_BULK_WAIT (what else the client sends waits that long at most). Woken
 * per arrival (some 64 KB on loopback), the connection thread and the
 * worker each slept and woke twice as often as HTTP/1.1's one reader. */
#define H2_BULK_LOWAT (128 * 1024)
#define H2_BULK_WAIT apr_time_from_msec(1)

/* What a worker reads of a grown window before it reports it (at most; a
 * quarter of the window below that): a wakeup of the connection thread
 * per report, and what is not reported yet counts as held. */
#define H2_CONSUME_REPORT_MAX (1024 * 1024)

/* How long a stream whose response completed before its request body
 * waits before RST_STREAM NO_ERROR tells the client to stop sending: the
 * frames it sent before it saw the response (a malformed body, a bad
 * WINDOW_UPDATE, its own reset) get their usual answers first. */
#define H2_EARLY_END_WAIT apr_time_from_msec(100)

/* What a connection's request heads may hold together, per stream it may
 * have open (at least two full header blocks, see h2_session_create). */
#define H2_CONN_HEAD_SHARE (32 * 1024)

/* RFC 9113 5.1.2 makes a stream over the advertised concurrency limit a
 * stream error, so the other streams go on; nghttp2 treats it as a
 * connection error once the limit is acknowledged. So nghttp2 gets a
 * higher limit and the client sees ours in our first SETTINGS frame,
 * patched on its way out (h2_session_cb.c); on_begin_headers() enforces
 * ours with REFUSED_STREAM. */
#define H2_NGH_STREAMS(max) ((max) > 0x3fffffff? 0x7fffffff : 2 * (max) + 10)

/* --- h2_session_prio.c: RFC 9218 priorities --- */

/* nghttp2 options and callbacks for PRIORITY_UPDATE and the fallback to
 * RFC 7540 priorities. */
void h2_session_prio_options(nghttp2_option *opt);
void h2_session_prio_callbacks(nghttp2_session_callbacks *cbs);

/* 1 when the client announced SETTINGS_NO_RFC7540_PRIORITIES: its DATA
 * goes out by urgency; else by the RFC 7540 tree. */
int h2_session_prio_extensible(h2_session *s);

/* A PRIORITY_UPDATE frame begins: checked and counted as a flood kind.
 * 0, or NGHTTP2_ERR_CALLBACK_FAILURE after a GOAWAY. */
int h2_session_prio_frame_begins(h2_session *s, const nghttp2_frame_hd *hd);

/* A request's head is complete: its priority from its Priority field and
 * any PRIORITY_UPDATE that came before it. */
void h2_session_prio_request(h2_session *s, h2_stream *stream);

/* A response goes out: a Priority field in it changes the stream's. */
void h2_session_prio_response(h2_session *s, h2_stream *stream,
                              const nghttp2_nv *nv, size_t nvlen);

/* The pushed stream ps, promised on page, as H2PushPriority's dep puts
 * it, in urgencies. */
void h2_session_prio_push(h2_session *s, h2_stream *ps, h2_stream *page, h2_push_dep dep);

/* --- h2_session_window.c: receive windows --- */

/* A stream's upload passed H2WindowSize: measure the round trip (a PING),
 * now and then again. */
void h2_session_window_data_in(h2_session *s, h2_stream *stream);

/* The client acknowledged our first SETTINGS: the time it took is a first
 * round trip, for window growth before a PING measures one. */
void h2_session_window_settings_ack(h2_session *s);

/* A PING ACK: 1 when it was our round-trip PING. */
int h2_session_window_ping_ack(h2_session *s, const uint8_t *opaque);

/* The handler consumed n bytes of stream's body (or nobody reads them):
 * grow its window when the window, not the link, holds the upload back,
 * and grant credit again once half of it is free, within the budgets. */
void h2_session_window_consumed(h2_session *s, h2_stream *stream, apr_size_t n);

/* n bytes of stream's body arrived, kept for its handler (kept) or not:
 * a handler that lets more than half its window wait goes back to
 * H2WindowSize. */
void h2_session_window_received(h2_session *s, h2_stream *stream, apr_size_t n, int kept);

/* The client ended stream's body: its credit left is no longer charged. */
void h2_session_window_input_end(h2_session *s, h2_stream *stream);

/* stream's response is complete while its client still sends the body:
 * RST_STREAM NO_ERROR after H2_EARLY_END_WAIT (what the client sent
 * meanwhile is still checked as usual). */
void h2_session_window_answered(h2_session *s, h2_stream *stream);

/* Reset the streams whose early end is due; returns when the next one
 * is, or 0. */
apr_time_t h2_session_window_early_ends(h2_session *s);

/* stream closed: what it held of the budgets is theirs again. */
void h2_session_window_closed(h2_session *s, h2_stream *stream);

/* H2_BULK_LOWAT while a stream takes a bulk upload the client may go on
 * sending without our WINDOW_UPDATE, else 0 (see H2_BULK_LOWAT). */
apr_size_t h2_session_window_lowat(h2_session *s);

/* --- h2_session_cb.c --- */

/* A DATA frame for stream id comes (its header about to reach nghttp2):
 * 0 when it is one on a closed stream and the connection is failed. */
int h2_session_data_begins(h2_session *s, int32_t id);

/* --- h2_session.c: state, streams --- */

/* The one place session states change (table: h2_lifecycle.c). */
void h2_session_transit(h2_session *s, h2_session_event ev);

/* The session's stream with id (NULL: none, or nghttp2 closed it). */
h2_stream *h2_session_stream(h2_session *s, int32_t id);
void h2_session_link(h2_session *s, h2_stream *stream);
void h2_session_unlink(h2_session *s, h2_stream *stream);

/* A worker is to run the stream: fix what it will see, queue it for
 * h2_session_dispatch(). */
void h2_session_schedule_later(h2_session *s, h2_stream *stream);

/* stream's urgency changed while it waits to be scheduled: move it to its
 * place among the waiting ones. */
void h2_session_requeue(h2_session *s, h2_stream *stream);

/* Promise the paths of PUSH chunk c on client stream origin (before its
 * response head) and start the pushed requests (h2_session_push.c). */
void h2_session_push(h2_session *s, h2_stream *origin, const h2_hchunk *c);

/* Place pushed stream ps, whose response head c goes out now, against the
 * stream it was promised on (H2PushPriority, critical H2PushResource). */
void h2_session_push_prioritize(h2_session *s, h2_stream *ps, const h2_hchunk *c);

/* The stream is closed and no worker has it: free it after this round. */
void h2_session_purge_later(h2_session *s, h2_stream *stream);

/* Free the streams h2_session_purge_later() collected. */
void h2_session_purge(h2_session *s);

/* --- h2_session_fail.c: the one way out --- */

/* Something went wrong on stream_id (RST_STREAM with code), or with the
 * connection (stream_id 0: GOAWAY with code, close once it is out); why
 * goes to the log and into the GOAWAY's debug data. A fault of the client
 * on a stream counts toward H2MaxStreamErrors. Returns nghttp2's answer. */
int h2_session_fail(h2_session *s, int32_t stream_id, uint32_t code, const char *why);

/* Submit a GOAWAY naming last_id; every GOAWAY goes through here. */
int h2_session_goaway(h2_session *s, int32_t last_id, uint32_t code, const char *why);

/* Log what nghttp2 refused (rv != 0) for stream_id; returns rv. Every
 * nghttp2 call that can fail goes through here or h2_session_fail(). */
int h2_session_ngcheck(h2_session *s, int32_t stream_id, const char *what, int rv);

/* Move on to stopping phase (never back). */
void h2_session_stopping(h2_session *s, h2_stop_phase phase);
const char *h2_stop_phase_str(h2_stop_phase phase);

/* 1 when code says the client broke the protocol on a stream. */
int h2_session_is_fault(uint32_t code);

/* Count the client's fault on stream id once (H2MaxStreamErrors). */
void h2_session_count_fault(h2_session *s, int32_t id);

/* Count a frame of a flood kind; 0 when the budget ran out (GOAWAY sent). */
int h2_session_flood_check(h2_session *s, h2_flood_kind kind);

/* Count a reset by the client; 0 when the budget ran out (GOAWAY sent). */
int h2_session_reset_check(h2_session *s);

/* --- h2_session_cb.c: the client's frames --- */

/* nghttp2's callbacks for a session (the caller frees them). */
nghttp2_session_callbacks *h2_session_callbacks(void);

/* --- h2_session_out.c: responses --- */

/* Answer stream with status and no body, without a worker. */
void h2_session_answer(h2_session *s, h2_stream *stream, int status);

/* Hand the streams waiting for workers over, within the connection's share. */
void h2_session_dispatch(h2_session *s);

/* Take over what the workers produced; returns the streams that had news. */
int h2_session_collect(h2_session *s);

/* Streams waiting for their window: look again after a WINDOW_UPDATE on
 * stream_id (0: the connection) or SETTINGS. */
void h2_session_resume_windows(h2_session *s, int32_t stream_id, int32_t increment);

/* The client's first SETTINGS came: an h2c upgrade's response may send DATA. */
void h2_session_preface_in(h2_session *s);

/* Streams that waited for the bucket of small frames: try again. */
void h2_session_retry_windows(h2_session *s);

/* nghttp2's send_data callback: a DATA frame's payload into the output. */
int h2_session_send_data(nghttp2_session *ngh, nghttp2_frame *frame,
                         const uint8_t *framehd, size_t length,
                         nghttp2_data_source *source, void *ud);

/* --- h2_upgrade.c --- */

/* Stream 1 of an h2c upgrade: the HTTP/1.1 request r that asked for it. */
apr_status_t h2_session_upgrade(h2_session *s, request_rec *r);

#endif
