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
#ifndef H2_FRAME_CLOCK_H
#define H2_FRAME_CLOCK_H

#include <apr_time.h>

/* Since when a client owes the rest of something it started: the
 * connection preface, a frame, or a header block (HEADERS without
 * END_HEADERS until the CONTINUATION that ends it). Found from the frame
 * headers in the bytes the client sends, before nghttp2 sees them, so
 * that a client trickling a frame a byte at a time can be held to a
 * deadline however often it sends. Depends on APR only (unit tested). */

#define H2_PREFACE_LEN 24

typedef struct h2_frame_clock {
    apr_size_t preface_left;      /* preface bytes still to come */
    unsigned char hdr[9];         /* the frame header so far */
    apr_size_t hdr_have;
    apr_size_t payload_left;      /* of the current frame */
    apr_time_t frame_since;       /* the current frame (or preface) began */
    apr_off_t frame_bytes;        /*   and has this many bytes so far */
    int in_block;                 /* a header block is open */
    apr_time_t block_since;       /*   since */
    apr_off_t block_bytes;        /*   with this many bytes so far */
    int32_t data_stream;          /* the stream of the DATA frame header a
                                   * feed_to_data() ended with, else 0 */
} h2_frame_clock;

/* Start before the preface (with_preface) or at a frame boundary. */
void h2_frame_clock_init(h2_frame_clock *fc, int with_preface);

/* Account for len bytes the client sent at now. */
void h2_frame_clock_feed(h2_frame_clock *fc, const unsigned char *data,
                         apr_size_t len, apr_time_t now);

/* As h2_frame_clock_feed(), but stop right after the header of a DATA
 * frame (data_stream says which stream's); returns the bytes taken. */
apr_size_t h2_frame_clock_feed_to_data(h2_frame_clock *fc, const unsigned char *data,
                                       apr_size_t len, apr_time_t now);

/* 1 when the client owes the rest of a header block (that comes first:
 * its frames complete one by one) or of a frame, begun at *since, with
 * *bytes of it sent; 0 when it stands at a frame boundary. */
int h2_frame_clock_owed(const h2_frame_clock *fc, apr_time_t *since,
                        apr_off_t *bytes);

/* The server did not read for paused: the client's time runs on from
 * where it stood when the pause began. */
void h2_frame_clock_pause(h2_frame_clock *fc, apr_interval_time_t paused);

#endif
