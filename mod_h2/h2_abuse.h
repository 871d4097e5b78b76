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
#ifndef H2_ABUSE_H
#define H2_ABUSE_H

/* Budgets that keep a client from making us work for nothing: floods of
 * frames that carry nothing, rapid resets, tiny DATA frames, stream errors.
 * Pure logic, the time passed in (unit tested: test/unit/test_abuse.c);
 * the session answers a budget that ran out with GOAWAY ENHANCE_YOUR_CALM. */

#include <apr_time.h>

/* Frames that cost work and carry nothing, counted per second. */
typedef enum {
    H2_FLOOD_EMPTY_FRAMES,     /* DATA/HEADERS without payload or END_STREAM */
    H2_FLOOD_PRIORITY,         /* PRIORITY frames */
    H2_FLOOD_TINY_WINDOWS,     /* WINDOW_UPDATEs that leave a waiting stream's
                                * window below H2_MIN_DATA_FRAME */
    H2_FLOOD_CLOSED_RESETS,    /* RST_STREAMs of streams closed, reset or
                                * answered on our side (no rapid reset) */
    H2_FLOOD_KINDS
} h2_flood_kind;

#define H2_ABUSE_EMPTY_FRAMES_PER_SEC  200
#define H2_ABUSE_PRIORITY_PER_SEC      1000
#define H2_ABUSE_TINY_WINDOWS_PER_SEC  200
/* A client that cancels a download with a large window gets the DATA
 * frames in flight, and some clients (python-h2) answer each with another
 * RST_STREAM: 10 MB in flight are 640 of them. They cost a frame's
 * parsing each; only an endless stream of them is a flood. */
#define H2_ABUSE_CLOSED_RESETS_PER_SEC 5000

/* The smallest DATA frame sent while more of the response is queued: a
 * client that opens its window a few bytes at a time would otherwise get
 * a frame, and cost a frame's work, for every few bytes (the peer's own
 * initial window, when smaller, is honoured). Smaller frames are sent
 * from a bucket of this many, refilled at this rate, so that a client
 * (or h2spec) opening a window by a byte now and then still sees it used. */
#define H2_MIN_DATA_FRAME              1024
#define H2_TINY_FRAMES_BURST           64
#define H2_TINY_FRAMES_PER_SEC         100
/* how soon a stream that waits for the bucket tries again */
#define H2_TINY_FRAME_RETRY            apr_time_from_msec(10)

/* Rapid reset (CVE-2023-44487): streams the client opened and reset
 * before their responses were complete, a bucket of this many, refilled
 * at H2_RESET_RATE per second. */
#define H2_RESET_BURST                 500
#define H2_RESET_RATE                  33
/* nghttp2's own limit counts every RST_STREAM it receives, also those of
 * closed streams, and ends the connection with INTERNAL_ERROR and no
 * words: set above both of our budgets together (the flood's count may
 * pass its limit twice within a second, across the start of a second),
 * it is only the backstop. */
#define H2_RESET_BACKSTOP_BURST        (2 * (H2_RESET_BURST + 2 * H2_ABUSE_CLOSED_RESETS_PER_SEC))
#define H2_RESET_BACKSTOP_RATE         (2 * (H2_RESET_RATE + H2_ABUSE_CLOSED_RESETS_PER_SEC))

/* A budget that refills over time. */
typedef struct h2_tokens {
    double tokens;
    apr_time_t refill;
} h2_tokens;

typedef struct h2_abuse {
    unsigned int flood[H2_FLOOD_KINDS];  /* in the current second */
    apr_time_t flood_window_start;
    h2_tokens resets;                    /* client resets still allowed */
    h2_tokens tiny_frames;               /* DATA frames below
                                          * H2_MIN_DATA_FRAME still allowed */
    int stream_errors;                   /* the client caused */
    int max_stream_errors;               /* H2MaxStreamErrors, 0: no limit */
} h2_abuse;

/* Full budgets at now. */
void h2_abuse_init(h2_abuse *a, int max_stream_errors, apr_time_t now);

/* Count one frame of kind at now; 0 when that exceeds its per-second limit. */
int h2_abuse_flood(h2_abuse *a, h2_flood_kind kind, apr_time_t now);

/* What kind counts, for the log and the GOAWAY's debug data. */
const char *h2_abuse_flood_str(h2_flood_kind kind);

/* A stream the client reset; 0 when the reset budget is spent. */
int h2_abuse_reset(h2_abuse *a, apr_time_t now);

/* A DATA frame below H2_MIN_DATA_FRAME; 0 when none may be sent now. */
int h2_abuse_tiny_frame(h2_abuse *a, apr_time_t now);

/* 1 when h2_abuse_tiny_frame() would allow one now (nothing is taken). */
int h2_abuse_tiny_frame_ready(const h2_abuse *a, apr_time_t now);

/* A stream error the client caused; 0 when over H2MaxStreamErrors. */
int h2_abuse_stream_error(h2_abuse *a);

/* Take one from a bucket of at most burst tokens that refills at rate a
 * second; 0 when it is empty. */
int h2_tokens_take(h2_tokens *b, double rate, double burst, apr_time_t now);

/* 1 when h2_tokens_take() would succeed at now (nothing is taken). */
int h2_tokens_ready(const h2_tokens *b, double rate, apr_time_t now);

#endif
