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

/* What the files of a session share (h2_session*.c, h2_stream.c and
 * h2_upgrade.c): the session's fields, and their functions.
 * Every function here runs in the connection thread that owns the
 * session; workers never see a session (they see h2_x). */

#include <apr_poll.h>
#include <apr_thread_mutex.h>
#include <apr_thread_cond.h>
#include <httpd.h>
#include <nghttp2/nghttp2.h>

#include "h2_abuse.h"
#include "h2_c1_idle.h"
#include "h2_c1_io.h"
#include "h2_config.h"
#include "h2_frame_clock.h"
#include "h2_handoff.h"
#include "h2_headers_check.h"
#include "h2_lifecycle.h"
#include "h2_ngmem.h"
#include "h2_priority.h"
#include "h2_read_timeout.h"
#include "h2_session.h"
#include "h2_stream.h"
#include "h2_x_c1.h"

/* Stream ids remembered after close, to tell late frames on a closed
 * stream from a client reusing ids it never opened. */
#define H2_CLOSED_RING 64

/* How far a session is in stopping; it only goes forward. */
typedef enum {
    H2_STOP_NONE,      /* serving */
    H2_STOP_NOTICE,    /* shutdown notice out, streams still taken */
    H2_STOP_GOAWAY,    /* final GOAWAY submitted: no new streams */
    H2_STOP_CLOSE,     /* GOAWAY for an error: close once it is out */
    H2_STOP_CLOSED,    /* the last frame is written: nothing may follow */
} h2_stop_phase;

struct h2_session {
    conn_rec *c1;
    long id;                        /* c1's id when it started: the MPM may
                                     * give c1 another as it moves between
                                     * threads, the logs keep this one */
    server_rec *s;
    apr_pool_t *pool;
    nghttp2_session *ngh;
    h2_ngmem ngmem;                /* nghttp2's memory, recycled */
    h2_session_state state;
    h2_c1_io io;
    int is_tls;

    /* limits and settings, read once from the config */
    int max_streams;
    int window_size;
    apr_interval_time_t timeout;
    apr_interval_time_t keepalive_timeout;
    int max_data_frame_len;
    int padding_bits;
    h2_hdr_limits hdr_limits;
    apr_size_t send_block_max;      /* H2MaxHeaderBlockLen for responses;
                                     * 0: nghttp2's own (64 KB), as stock */
    const h2_read_timeouts *read_timeouts;  /* RequestReadTimeout's */
    h2_hdr_budget hdr_budget;       /* decoded request heads held, see
                                     * mem_admits() in h2_session_cb.c */
    apr_size_t mem_max;             /* what request bodies and responses
                                     * may hold before new streams are
                                     * refused */

    /* connection thread only */
    struct h2_stream *streams;      /* all live streams */
    int open_streams;               /* not closed by nghttp2 */
    int pushed_open;                /*   of them promised by us */
    struct h2_stream *new_first, *new_last;   /* to be scheduled */
    struct h2_stream *purge;        /* closed, to be freed next round */
    h2_stop_phase stop;             /* how far it is in stopping */
    apr_time_t stop_final_at;       /* shutdown notice out: final GOAWAY due */
    int settings_patched;           /* our limit is in the SETTINGS sent */
    int ngh_flooded;                /* nghttp2 refuses to queue more */
    int refusals_not_faults;        /* REFUSED_STREAMs not to count */
    apr_time_t last_client_io;
    apr_time_t input_empty_at;      /* when the socket and the input
                                     * filters were last seen empty (0: not
                                     * known), see H2_INPUT_RECHECK */
    h2_frame_clock clock;           /* where the client is in its frames */
    apr_time_t turn_start;          /* got the MPM thread at */
    apr_time_t starved_at;          /* streams' windows last looked at
                                     * (note_starved in h2_session_out.c) */
    int last_stream_started;
    int32_t max_client_stream;      /* highest stream id the client used */
    int32_t *closed_ring;           /* recently closed stream ids
                                     * (H2_CLOSED_RING), made at the
                                     * first close */
    unsigned int closed_ring_next;
    h2_abuse abuse;                 /* flood and rate budgets */
    int window_waiters;             /* streams with window_deferred (see
                                     * h2_session_send_wait_set) */
    int preface_due;                /* h2c upgrade: the client's SETTINGS not
                                     * in yet, stream 1 sends no DATA */
    int push_on;                    /* H2Push of the connection's server */
    struct h2_push_diary *push_diary;  /* made at the first push */
    /* RFC 9218 (h2_session_prio.c) */
    uint8_t *prio_buf;              /* a PRIORITY_UPDATE so far (4 +
                                     * H2_PRIO_UPDATE_MAX), made at the
                                     * first */
    size_t prio_len;                /*   its length so far */
    struct h2_prio_idle *prio_idle; /* updates for streams not yet opened */
    int prio_nidle;
    /* receive windows (h2_session_recv_window.c) */
    apr_interval_time_t rtt;        /* round trip, 0 until measured: the
                                     * least of the samples (H2_RTT_KEEP) */
    apr_time_t rtt_at;              /*   measured then */
    apr_time_t rtt_min_at;          /*   that least sample taken then */
    apr_time_t rtt_ping_at;         /* the PING out since, or 0 */
    apr_time_t settings_at;         /* our SETTINGS went out then, unacked */
    apr_int64_t win_charged;        /* what its streams may hold beyond
                                     * H2WindowSize each (H2_BDP_GROWTH_MAX) */
    int early_ends;                 /* streams with early_end_at set */

    h2_c1_idler idle;               /* h2_c1_idle.c's, under its lock */

    /* what is shared with the workers */
    h2_x_settings xset;
    h2_xconn *xc;

    struct h2_status_row *srow;     /* its row in mod_status's table */
};


/* How often a connection thread that waits on workers looks at the MPM,
 * so that a graceful stop is noticed. */
#define H2_WAIT_SLICE apr_time_from_msec(500)
/* For how long after the input was seen empty (a read said EAGAIN, a
 * direct read came back short, a wait saw only workers) the connection
 * thread's non-blocking reads are skipped: each would be a system call
 * (through mod_ssl and OpenSSL on TLS) saying EAGAIN. Nothing is missed
 * meanwhile: every wait polls the socket and a parked connection is
 * polled by the MPM; a loop busy writing reads again after this long. */
#define H2_INPUT_RECHECK apr_time_from_msec(1)
/* How long a shutdown notice stands before the final GOAWAY: several
 * round trips of any real network (h2o waits 1 s too, nghttpx 2 s), or
 * H2_STOP_NOTICE_RTTS of the client's measured round trip if that is
 * longer, up to H2_STOP_NOTICE_MAX. */
#define H2_STOP_NOTICE_WAIT apr_time_from_msec(1000)
#define H2_STOP_NOTICE_RTTS 4
#define H2_STOP_NOTICE_MAX apr_time_from_sec(5)
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
int h2_session_prio_is_extensible(h2_session *s);

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

/* --- h2_session_recv_window.c: receive windows --- */

/* A stream's upload passed H2WindowSize: measure the round trip (a PING),
 * now and then again. */
void h2_session_recv_window_data_in(h2_session *s, h2_stream *stream);

/* The client acknowledged our first SETTINGS: the time it took is a first
 * round trip, for window growth before a PING measures one. */
void h2_session_recv_window_settings_ack(h2_session *s);

/* A PING ACK: 1 when it answers our round-trip PING, which measured the
 * round trip then. */
int h2_session_recv_window_rtt_acked(h2_session *s, const uint8_t *opaque);

/* The handler consumed n bytes of stream's body (or nobody reads them):
 * grow its window when the window, not the link, holds the upload back,
 * and grant credit again once half of it is free, within the budgets. */
void h2_session_recv_window_consumed(h2_session *s, h2_stream *stream,
                                     apr_size_t n);

/* n bytes of stream's body arrived, kept for its handler (kept) or not:
 * a handler that lets more than half its window wait goes back to
 * H2WindowSize. */
void h2_session_recv_window_received(h2_session *s, h2_stream *stream,
                                     apr_size_t n, int kept);

/* The client ended stream's body: its credit left is no longer charged. */
void h2_session_recv_window_input_end(h2_session *s, h2_stream *stream);

/* stream's response is complete while its client still sends the body:
 * RST_STREAM NO_ERROR after H2_EARLY_END_WAIT (what the client sent
 * meanwhile is still checked as usual). */
void h2_session_recv_window_answered(h2_session *s, h2_stream *stream);

/* Reset the streams whose early end is due; returns when the next one
 * is, or 0. */
apr_time_t h2_session_recv_window_early_ends(h2_session *s);

/* stream closed: what it held of the budgets is theirs again. */
void h2_session_recv_window_closed(h2_session *s, h2_stream *stream);

/* H2_BULK_LOWAT while a stream takes a bulk upload the client may go on
 * sending without our WINDOW_UPDATE, else 0 (see H2_BULK_LOWAT). */
apr_size_t h2_session_recv_window_lowat(h2_session *s);

/* --- h2_session_cb.c --- */

/* A DATA frame for stream id comes (its header about to reach nghttp2):
 * 1 when it may, 0 when it is one on a closed stream and the connection
 * is failed. */
int h2_session_data_may_begin(h2_session *s, int32_t id);

/* --- h2_session.c: state, streams --- */

/* The one place session states change (table: h2_lifecycle.c). */
void h2_session_transit(h2_session *s, h2_session_event ev);

/* The session's stream with id (NULL: none, or nghttp2 closed it). */
h2_stream *h2_session_stream(h2_session *s, int32_t id);

/* Where a stream comes from: the client's HEADERS, our PUSH_PROMISE, or
 * the HTTP/1.1 request of an h2c upgrade (stream 1). */
typedef enum {
    H2_ORIGIN_CLIENT,
    H2_ORIGIN_PUSH,
    H2_ORIGIN_UPGRADE,
} h2_stream_origin;

/* Open stream id: created, listed, counted as open and attached to
 * nghttp2's stream (a pushed one also in the PROMISED state). */
h2_stream *h2_session_stream_open(h2_session *s, int32_t id, h2_stream_origin origin);

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

/* Count a frame of a flood kind: 1 while within the budget, 0 when it ran
 * out (GOAWAY sent). */
int h2_session_flood_ok(h2_session *s, h2_flood_kind kind);

/* Count a reset by the client: 1 while within the budget, 0 when it ran
 * out (GOAWAY sent). */
int h2_session_reset_ok(h2_session *s);

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

/* stream waits for the client's window to send DATA (set), or no longer
 * (clear): its window_deferred and the session's window_waiters change
 * only together, here. Either may be called again in the same state. */
void h2_session_send_wait_set(h2_session *s, h2_stream *stream);
void h2_session_send_wait_clear(h2_session *s, h2_stream *stream);

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
