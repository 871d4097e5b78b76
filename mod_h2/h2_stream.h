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
#ifndef H2_STREAM_H
#define H2_STREAM_H

#include <httpd.h>
#include <http_log.h>
#include "h2_headers_check.h"
#include "h2_handoff.h"
#include "h2_lifecycle.h"
#include "h2_priority.h"
#include "h2_bdp.h"
#include "h2_x_c1.h"

struct h2_session;

typedef struct h2_stream h2_stream;
struct h2_stream {
    int id;
    struct h2_session *session;
    apr_pool_t *pool;              /* c1-owned; destroyed at purge */
    h2_stream_state state;
    apr_time_t created;

    /* Connection thread only; what workers see of it goes through x. */
    h2_x *x;                       /* the exchange with its worker */
    int trace;                     /* the session's log level */
    h2_req_head req;               /* request header block */
    h2_req_head trailer_head;      /* request trailer block */
    apr_table_t *trailers_in;
    int answer_status;             /* >0: answer directly with this status */
    int refuse_status;             /* >0: httpd answers with this status
                                    * (a head over httpd's limits) */
    int response_submitted;
    int data_deferred;             /* nghttp2 waits for data on us */
    int window_deferred;           /*   or for the client's window (set
                                    * and cleared by h2_session_send_wait_*) */
    int has_body_in;               /* request has a body */
    int fault_counted;             /* counted toward H2MaxStreamErrors */
    int reset_sent;                /* we sent RST_STREAM */
    int settled;                   /* its last frame went out */
    apr_off_t head_in;             /* request head's frame bytes */
    int status_counted;            /* started in mod_status's table */
    apr_off_t in_received;         /* DATA payload received, all of it */
    apr_off_t in_consumed;         /*   read by its handler or dropped */
    h2_stream *next_new;           /* ready to be scheduled */
    int on_new;                    /* in the session's list of those */
    int pushed_on;                 /* promised on this client stream, or 0 */
    int push_critical;             /*   as a critical H2PushResource */
    h2_prio prio;                  /* RFC 9218 urgency and incremental */
    h2_bdp bdp;                    /* the receive window it is kept at */
    apr_int32_t win_grown;         /*   the grown one, while it is kept at
                                    *   H2WindowSize for falling behind */
    apr_int64_t win_charge;        /* what it may hold beyond H2WindowSize,
                                    * charged to the growth budgets */
    apr_time_t early_end_at;       /* response complete, body not: reset
                                    * then (h2_session_recv_window_answered) */
    h2_stream *prev_all, *next_all;
};

/* Child init: the allocator stream pools come from. */
apr_status_t h2_stream_child_init(apr_pool_t *pchild);

/* The child is quiet (no worker busy for a while): give back what the
 * stream allocator keeps, if no stream pool uses it (watchdog thread).
 * Returns 1 when streams still live (a later call may do it). */
int h2_stream_child_quiet(void);

/* Create stream id of session in a pool of its own (parent: fallback
 * when the child's stream allocator is not there). */
h2_stream *h2_stream_create(struct h2_session *session, int id, apr_pool_t *parent);

/* The slow path of h2_stream_transit(): an invalid transition (warned
 * of) or one to trace. */
void h2_stream_transit_note(h2_stream *stream, h2_stream_event ev);

/* The one place stream states change, as the table in h2_lifecycle.c
 * says; traces each transition (trace1), warns of an invalid one. Inline:
 * it runs 6 times a stream. */
static APR_INLINE void h2_stream_transit(h2_stream *stream, h2_stream_event ev)
{
    int n = h2_stream_next(stream->state, ev);
    if (n >= 0 && stream->trace < APLOG_TRACE1) {
        stream->state = (h2_stream_state)n;
    }
    else {
        h2_stream_transit_note(stream, ev);
    }
}

/* Free the stream's exchange and pool. */
void h2_stream_destroy(h2_stream *stream);

#endif
