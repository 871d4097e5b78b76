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

/* Flood and rate budgets of a client connection (see h2_abuse.h). */

#include "h2_abuse.h"

static const unsigned int flood_limit[H2_FLOOD_KINDS] = {
    [H2_FLOOD_EMPTY_FRAMES] = H2_ABUSE_EMPTY_FRAMES_PER_SEC,
    [H2_FLOOD_PRIORITY]     = H2_ABUSE_PRIORITY_PER_SEC,
    [H2_FLOOD_TINY_WINDOWS] = H2_ABUSE_TINY_WINDOWS_PER_SEC,
    [H2_FLOOD_CLOSED_RESETS] = H2_ABUSE_CLOSED_RESETS_PER_SEC,
};

void h2_abuse_init(h2_abuse *a, int max_stream_errors, apr_time_t now)
{
    int i;
    for (i = 0; i < H2_FLOOD_KINDS; ++i) {
        a->flood[i] = 0;
    }
    a->flood_window_start = now;
    a->resets.tokens = H2_RESET_BURST;
    a->resets.refill = now;
    a->tiny_frames.tokens = H2_TINY_FRAMES_BURST;
    a->tiny_frames.refill = now;
    a->stream_errors = 0;
    a->max_stream_errors = max_stream_errors;
}

int h2_abuse_flood(h2_abuse *a, h2_flood_kind kind, apr_time_t now)
{
    if (now - a->flood_window_start > apr_time_from_sec(1)) {
        int i;
        a->flood_window_start = now;
        for (i = 0; i < H2_FLOOD_KINDS; ++i) {
            a->flood[i] = 0;
        }
    }
    return ++a->flood[kind] <= flood_limit[kind];
}

const char *h2_abuse_flood_str(h2_flood_kind kind)
{
    switch (kind) {
    case H2_FLOOD_EMPTY_FRAMES: return "flood of empty frames";
    case H2_FLOOD_PRIORITY:     return "flood of PRIORITY frames";
    case H2_FLOOD_TINY_WINDOWS: return "flood of WINDOW_UPDATEs too small to send on";
    case H2_FLOOD_CLOSED_RESETS: return "flood of RST_STREAMs for closed streams";
    default:                    return "flood";
    }
}

int h2_abuse_reset(h2_abuse *a, apr_time_t now)
{
    return h2_tokens_take(&a->resets, H2_RESET_RATE, H2_RESET_BURST, now);
}

int h2_abuse_tiny_frame(h2_abuse *a, apr_time_t now)
{
    return h2_tokens_take(&a->tiny_frames, H2_TINY_FRAMES_PER_SEC,
                          H2_TINY_FRAMES_BURST, now);
}

int h2_abuse_tiny_frame_ready(const h2_abuse *a, apr_time_t now)
{
    return h2_tokens_ready(&a->tiny_frames, H2_TINY_FRAMES_PER_SEC, now);
}

int h2_abuse_stream_error(h2_abuse *a)
{
    return !a->max_stream_errors || ++a->stream_errors <= a->max_stream_errors;
}

int h2_tokens_take(h2_tokens *b, double rate, double burst, apr_time_t now)
{
    b->tokens += (double)(now - b->refill) * rate / (double)APR_USEC_PER_SEC;
    if (b->tokens > burst) {
        b->tokens = burst;
    }
    b->refill = now;
    if (b->tokens < 1.0) {
        return 0;
    }
    b->tokens -= 1.0;
    return 1;
}

int h2_tokens_ready(const h2_tokens *b, double rate, apr_time_t now)
{
    return b->tokens + (double)(now - b->refill) * rate / (double)APR_USEC_PER_SEC >= 1.0;
}
