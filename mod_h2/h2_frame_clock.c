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
/* Tracks where the client's bytes stand in HTTP/2 framing, for timeouts. */
#include <string.h>
#include "h2_frame_clock.h"

#define H2_FT_HEADERS       0x1
#define H2_FT_DATA          0x0
#define H2_FT_PUSH_PROMISE  0x5
#define H2_FT_CONTINUATION  0x9
#define H2_FLAG_END_HEADERS 0x4

void h2_frame_clock_init(h2_frame_clock *fc, int with_preface)
{
    memset(fc, 0, sizeof(*fc));
    fc->preface_left = with_preface? H2_PREFACE_LEN : 0;
}

/* A frame header is complete: note a header block opening or closing. */
static void frame_start(h2_frame_clock *fc)
{
    const unsigned char *h = fc->hdr;
    unsigned char type = h[3], flags = h[4];

    fc->payload_left = ((apr_size_t)h[0] << 16) | ((apr_size_t)h[1] << 8) | h[2];
    if ((type == H2_FT_HEADERS || type == H2_FT_PUSH_PROMISE)
        && !(flags & H2_FLAG_END_HEADERS)) {
        fc->in_block = 1;
        fc->block_since = fc->frame_since;
        fc->block_bytes = fc->frame_bytes;
    }
    else if (type == H2_FT_CONTINUATION && (flags & H2_FLAG_END_HEADERS)) {
        fc->in_block = 0;
    }
    fc->hdr_have = 0;
}

static int at_boundary(const h2_frame_clock *fc)
{
    return !fc->preface_left && !fc->hdr_have && !fc->payload_left;
}

apr_size_t h2_frame_clock_feed_to_data(h2_frame_clock *fc, const unsigned char *data,
                                       apr_size_t len, apr_time_t now)
{
    apr_size_t i = 0;

    fc->data_stream = 0;
    while (i < len) {
        apr_size_t n = len - i;
        if (at_boundary(fc) || (fc->preface_left == H2_PREFACE_LEN)) {
            fc->frame_since = now;      /* a new frame (or the preface) */
            fc->frame_bytes = 0;
        }
        if (fc->preface_left) {
            if (n > fc->preface_left) n = fc->preface_left;
            fc->preface_left -= n;
        }
        else if (!fc->payload_left) {
            if (n > 9 - fc->hdr_have) n = 9 - fc->hdr_have;
            memcpy(fc->hdr + fc->hdr_have, data + i, n);
            fc->hdr_have += n;
            if (fc->hdr_have == 9) {
                fc->frame_bytes += (apr_off_t)n;
                if (fc->in_block) fc->block_bytes += (apr_off_t)n;
                frame_start(fc);
                i += n;
                if (fc->hdr[3] == H2_FT_DATA) {
                    fc->data_stream = (int32_t)((((apr_uint32_t)fc->hdr[5] << 24)
                        | ((apr_uint32_t)fc->hdr[6] << 16) | ((apr_uint32_t)fc->hdr[7] << 8)
                        | fc->hdr[8]) & 0x7fffffff);
                    return i;
                }
                continue;
            }
        }
        else {
            if (n > fc->payload_left) n = fc->payload_left;
            fc->payload_left -= n;
        }
        fc->frame_bytes += (apr_off_t)n;
        if (fc->in_block) fc->block_bytes += (apr_off_t)n;
        i += n;
    }
    return i;
}

void h2_frame_clock_feed(h2_frame_clock *fc, const unsigned char *data,
                         apr_size_t len, apr_time_t now)
{
    apr_size_t i = 0;
    while (i < len) {
        i += h2_frame_clock_feed_to_data(fc, data + i, len - i, now);
    }
}

int h2_frame_clock_owed(const h2_frame_clock *fc, apr_time_t *since,
                        apr_off_t *bytes)
{
    if (fc->in_block) {
        *since = fc->block_since;
        *bytes = fc->block_bytes;
        return 1;
    }
    if (!at_boundary(fc) && fc->preface_left != H2_PREFACE_LEN) {
        *since = fc->frame_since;
        *bytes = fc->frame_bytes;
        return 1;
    }
    return 0;
}

void h2_frame_clock_pause(h2_frame_clock *fc, apr_interval_time_t paused)
{
    if (paused > 0) {
        if (fc->in_block) fc->block_since += paused;
        if (fc->frame_since) fc->frame_since += paused;
    }
}
