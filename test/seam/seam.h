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
#ifndef H2_SEAM_H
#define H2_SEAM_H

/* The test seam: a session of mod_h2 (h2_session*.c, h2_stream.c, h2_x.c
 * and what they use) run without httpd's network or threads. Client bytes
 * are fed in, server bytes read out; the connection's filters, the MPM,
 * the workers and the clock are stand-ins (seam.c):
 *   - input: ap_get_brigade() hands out what seam_feed() queued, in the
 *     pieces it was queued in; then EAGAIN, or EOF after seam_eof();
 *   - output: ap_pass_brigade() appends to a buffer (seam_out());
 *   - workers: streams handed to the workers wait in a queue; a fake
 *     handler answers each (seam_handler) while the connection thread
 *     "sleeps" (h2_c1_waiter_wait()) and when seam_run() comes back;
 *   - time is virtual: a sleep with nothing to do advances it, so that
 *     timeouts happen at once and runs are deterministic;
 *   - log: lines go to stderr with SEAM_LOG set; warnings naming an
 *     "invalid transition" and errors are counted (seam_problems()). */

#include <stddef.h>

typedef enum {
    SEAM_HANDLER_HELLO,     /* 200, "hello" */
    SEAM_HANDLER_BIG,       /* 200, big_len bytes, handed over in 16 KB steps */
    SEAM_HANDLER_ECHO,      /* reads the whole body, 200 with its length */
    SEAM_HANDLER_RESET,     /* 200 head, some body, then the response breaks */
    SEAM_HANDLER_NONE,      /* ends without a response */
} seam_handler;

typedef struct seam_opts {
    seam_handler handler;
    size_t big_len;               /* SEAM_HANDLER_BIG */
    long max_streams;             /* H2MaxSessionStreams, 0: default */
    long window_size;             /* H2WindowSize, 0: default */
    long stream_max_mem;          /* H2StreamMaxMemSize, 0: default */
    long max_stream_errors;       /* H2MaxStreamErrors, -1: default */
} seam_opts;

typedef struct seam seam;

/* A session on a fresh connection (h2c with prior knowledge). */
seam *seam_new(const seam_opts *opts);

/* Queue client bytes, delivered as one read. */
void seam_feed(seam *t, const void *data, size_t len);

/* The client closes after what was queued. */
void seam_eof(seam *t);

/* Run the session until it waits for the client with nothing in progress
 * (or had its turn with streams in progress), or ends. Returns 1 when the
 * session ended. */
int seam_run(seam *t);

/* Let d of (virtual) time pass while the client does nothing, the session
 * running as it would meanwhile. Returns 1 when the session ended. */
int seam_wait(seam *t, long long d);

/* All bytes the server wrote so far. */
const unsigned char *seam_out(seam *t, size_t *len);

/* Log warnings of invalid transitions and errors so far (all seams). */
int seam_problems(void);

/* Free the connection (the session's teardown runs). */
void seam_free(seam *t);

#endif
