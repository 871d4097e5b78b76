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

#include <apr_poll.h>
#include <apr_thread_mutex.h>
#include <apr_thread_cond.h>
#include <httpd.h>
#include <nghttp2/nghttp2.h>

#include "h2_abuse.h"
#include "h2_c1_idle.h"
#include "h2_c1_io.h"
#include "h2_lifecycle.h"
#include "h2_handoff.h"
#include "h2_x_c1.h"
#include "h2_ngmem.h"
#include "h2_headers_check.h"
#include "h2_priority.h"
#include "h2_frame_clock.h"
#include "h2_read_timeout.h"

struct h2_stream;

/* Stream ids remembered after close, to tell late frames on a closed
 * stream from a client reusing ids it never opened. */
#define H2_CLOSED_RING 64

/* How far a session is in stopping; it only goes forward. */
typedef enum {
    H2_STOP_NONE,      /* serving */
    H2_STOP_NOTICE,    /* shutdown notice and PING out, streams still taken */
    H2_STOP_GOAWAY,    /* final GOAWAY submitted: no new streams */
    H2_STOP_CLOSE,     /* GOAWAY for an error: close once it is out */
    H2_STOP_CLOSED,    /* the last frame is written: nothing may follow */
} h2_stop_phase;

typedef struct h2_session h2_session;
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
    apr_time_t stop_notice_at;      /* shutdown notice and PING sent at */
    int stop_ping_acked;            /* the client answered that PING */
    int settings_patched;           /* our limit is in the SETTINGS sent */
    int ngh_flooded;                /* nghttp2 refuses to queue more */
    int refusals_not_faults;        /* REFUSED_STREAMs not to count */
    apr_time_t last_client_io;
    h2_frame_clock clock;           /* where the client is in its frames */
    apr_time_t turn_start;          /* got the MPM thread at */
    int last_stream_started;
    int32_t max_client_stream;      /* highest stream id the client used */
    int32_t closed_ring[H2_CLOSED_RING];  /* recently closed stream ids */
    unsigned int closed_ring_next;
    h2_abuse abuse;                 /* flood and rate budgets */
    int window_waiters;             /* streams with window_deferred */
    int preface_due;                /* h2c upgrade: the client's SETTINGS not
                                     * in yet, stream 1 sends no DATA */
    int push_on;                    /* H2Push of the connection's server */
    struct h2_push_diary *push_diary;  /* made at the first push */
    /* RFC 9218 (h2_session_prio.c) */
    uint8_t prio_buf[4 + H2_PRIO_UPDATE_MAX];  /* a PRIORITY_UPDATE so far */
    size_t prio_len;                /*   its length so far */
    struct h2_prio_idle *prio_idle; /* updates for streams not yet opened */
    int prio_nidle;
    /* receive windows (h2_session_window.c) */
    apr_interval_time_t rtt;        /* round trip, 0 until measured */
    apr_time_t rtt_at;              /*   measured then */
    apr_time_t rtt_ping_at;         /* the PING out since, or 0 */
    apr_time_t settings_at;         /* our SETTINGS went out then, unacked */
    apr_int64_t win_charged;        /* what its streams may hold beyond
                                     * H2WindowSize each (H2_BDP_GROWTH_MAX) */
    int early_ends;                 /* streams with early_end_at set */

    /* the connection's entry in the idle registry (h2_c1_idle.c) */
    h2_c1_idler idle;

    /* what is shared with the workers */
    h2_x_settings xset;
    h2_xconn *xc;

    struct h2_status_row *srow;     /* its row in mod_status's table */
};

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

#endif
