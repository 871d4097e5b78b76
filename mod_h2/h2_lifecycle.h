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
#ifndef H2_LIFECYCLE_H
#define H2_LIFECYCLE_H

/* The lifecycles of a stream and of a session, one table each: which
 * event moves which state where. Pure logic (test/unit/test_lifecycle.c);
 * h2_stream.c and h2_session.c apply them, trace every transition and log
 * an invalid one (a warning with "invalid transition", which fails tests). */

/* RFC 9113 section 5.1, the states a stream passes through on a server
 * ("reserved (remote)" is absent: clients do not push), and one of ours
 * after "closed": PURGED, the stream is let go and freed at the end of
 * the round (once no worker has it). */
typedef enum {
    H2_SS_IDLE,
    H2_SS_RESERVED_LOCAL,  /* reserved (local): promised by a PUSH_PROMISE */
    H2_SS_OPEN,
    H2_SS_CLOSED_REMOTE,   /* half-closed (remote): request complete */
    H2_SS_CLOSED_LOCAL,    /* half-closed (local): response complete */
    H2_SS_CLOSED,
    H2_SS_PURGED,
    H2_SS_COUNT
} h2_stream_state;

typedef enum {
    H2_SSEV_HEADERS_IN,    /* request headers received */
    H2_SSEV_EOS_IN,        /* END_STREAM received */
    H2_SSEV_EOS_OUT,       /* END_STREAM sent */
    H2_SSEV_RESET,         /* RST_STREAM sent or received, nghttp2 closed it */
    H2_SSEV_CLOSED,        /* nghttp2 closed it without error */
    H2_SSEV_PURGE,         /* we let it go */
    H2_SSEV_PROMISED,      /* PUSH_PROMISE sent for it */
    H2_SSEV_HEADERS_OUT,   /* response headers sent on a promised stream */
    H2_SSEV_COUNT
} h2_stream_event;

/* The life of an HTTP/2 connection as mod_h2 drives it. */
typedef enum {
    H2_SESS_INIT,      /* created, nothing exchanged */
    H2_SESS_BUSY,      /* frames are being read or written */
    H2_SESS_WAIT,      /* streams in progress, nothing to do until I/O */
    H2_SESS_IDLE,      /* no streams in progress, waiting for the client */
    H2_SESS_DRAIN,     /* GOAWAY sent or received, finishing the streams */
    H2_SESS_DONE,      /* to be closed */
    H2_SESS_COUNT
} h2_session_state;

typedef enum {
    H2_SEV_START,          /* preface and settings exchanged */
    H2_SEV_IO,             /* frames were read or written */
    H2_SEV_WAIT,           /* nothing to read or write, streams in progress */
    H2_SEV_NO_IO,          /* nothing to read or write, none in progress */
    H2_SEV_NO_STREAMS,     /* the last stream closed */
    H2_SEV_SHUTDOWN,       /* graceful stop: GOAWAY, then drain */
    H2_SEV_CLIENT_GOAWAY,  /* client sent GOAWAY */
    H2_SEV_EOF,            /* client closed the connection */
    H2_SEV_ERROR,          /* fatal protocol or I/O error */
    H2_SEV_TIMEOUT,        /* idle or I/O timeout */
    H2_SEV_COUNT
} h2_session_event;

/* The tables (h2_lifecycle.c); -1 marks a transition that does not exist. */
extern const signed char h2_stream_table[H2_SS_COUNT][H2_SSEV_COUNT];
extern const signed char h2_session_table[H2_SESS_COUNT][H2_SEV_COUNT];

/* The state event moves a stream in from to; -1 if the table has no such
 * transition (a bug: the caller logs it). Inline: it runs 6 times a
 * stream. */
static inline int h2_stream_next(h2_stream_state from, h2_stream_event ev)
{
    return ((unsigned)from < H2_SS_COUNT && (unsigned)ev < H2_SSEV_COUNT)?
           h2_stream_table[from][ev] : -1;
}

/* The same for a session. */
static inline int h2_session_next(h2_session_state from, h2_session_event ev)
{
    return ((unsigned)from < H2_SESS_COUNT && (unsigned)ev < H2_SEV_COUNT)?
           h2_session_table[from][ev] : -1;
}

const char *h2_stream_state_str(h2_stream_state state);
const char *h2_stream_event_str(h2_stream_event ev);
const char *h2_session_state_str(h2_session_state state);
const char *h2_session_event_str(h2_session_event ev);

#endif
