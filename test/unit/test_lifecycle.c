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
/* The stream and session lifecycles (h2_lifecycle.c): a stream moves as
 * RFC 9113 section 5.1 draws it for a server, a session as design.md says;
 * everything else is an invalid transition. */
#include <string.h>

#include "h2_lifecycle.h"
#include "unit.h"

static void test_stream_follows_rfc9113_figure_2(void)
{
    /* a GET: HEADERS with END_STREAM, then the response */
    CHECK(h2_stream_next(H2_SS_IDLE, H2_SSEV_HEADERS_IN) == H2_SS_OPEN);
    CHECK(h2_stream_next(H2_SS_OPEN, H2_SSEV_EOS_IN) == H2_SS_CLOSED_REMOTE);
    CHECK(h2_stream_next(H2_SS_CLOSED_REMOTE, H2_SSEV_EOS_OUT) == H2_SS_CLOSED);
    /* a response that ends before the upload does */
    CHECK(h2_stream_next(H2_SS_OPEN, H2_SSEV_EOS_OUT) == H2_SS_CLOSED_LOCAL);
    CHECK(h2_stream_next(H2_SS_CLOSED_LOCAL, H2_SSEV_EOS_IN) == H2_SS_CLOSED);
    /* closed, then let go */
    CHECK(h2_stream_next(H2_SS_CLOSED, H2_SSEV_CLOSED) == H2_SS_CLOSED);
    CHECK(h2_stream_next(H2_SS_CLOSED, H2_SSEV_PURGE) == H2_SS_PURGED);
    /* a pushed stream: promised, then its response head, then its end */
    CHECK(h2_stream_next(H2_SS_IDLE, H2_SSEV_PROMISED) == H2_SS_RESERVED_LOCAL);
    CHECK(h2_stream_next(H2_SS_RESERVED_LOCAL, H2_SSEV_HEADERS_OUT) == H2_SS_CLOSED_REMOTE);
    CHECK(h2_stream_next(H2_SS_RESERVED_LOCAL, H2_SSEV_HEADERS_IN) < 0);
    CHECK(h2_stream_next(H2_SS_RESERVED_LOCAL, H2_SSEV_EOS_IN) < 0);
    CHECK(h2_stream_next(H2_SS_OPEN, H2_SSEV_PROMISED) < 0);
    CHECK(h2_stream_next(H2_SS_OPEN, H2_SSEV_HEADERS_OUT) < 0);
}

static void test_stream_reset_closes_from_every_live_state(void)
{
    int st;
    for (st = H2_SS_IDLE; st <= H2_SS_CLOSED; ++st) {
        CHECK(h2_stream_next(st, H2_SSEV_RESET) == H2_SS_CLOSED);
        CHECK(h2_stream_next(st, H2_SSEV_CLOSED) == H2_SS_CLOSED);
    }
}

static void test_stream_invalid_transitions(void)
{
    int ev;
    /* END_STREAM twice in one direction, headers twice, data before them */
    CHECK(h2_stream_next(H2_SS_OPEN, H2_SSEV_HEADERS_IN) < 0);
    CHECK(h2_stream_next(H2_SS_IDLE, H2_SSEV_EOS_IN) < 0);
    CHECK(h2_stream_next(H2_SS_IDLE, H2_SSEV_EOS_OUT) < 0);
    CHECK(h2_stream_next(H2_SS_CLOSED_REMOTE, H2_SSEV_EOS_IN) < 0);
    CHECK(h2_stream_next(H2_SS_CLOSED_LOCAL, H2_SSEV_EOS_OUT) < 0);
    CHECK(h2_stream_next(H2_SS_CLOSED, H2_SSEV_EOS_OUT) < 0);
    /* only a closed stream is let go, and a purged one is gone */
    CHECK(h2_stream_next(H2_SS_OPEN, H2_SSEV_PURGE) < 0);
    for (ev = 0; ev < H2_SSEV_COUNT; ++ev) {
        CHECK(h2_stream_next(H2_SS_PURGED, ev) < 0);
    }
    CHECK(h2_stream_next(H2_SS_COUNT, H2_SSEV_RESET) < 0);
    CHECK(h2_stream_next(H2_SS_OPEN, H2_SSEV_COUNT) < 0);
}

static void test_session_lifecycle(void)
{
    int st, ev;
    CHECK(h2_session_next(H2_SESS_INIT, H2_SEV_START) == H2_SESS_BUSY);
    CHECK(h2_session_next(H2_SESS_BUSY, H2_SEV_WAIT) == H2_SESS_WAIT);
    CHECK(h2_session_next(H2_SESS_WAIT, H2_SEV_IO) == H2_SESS_BUSY);
    CHECK(h2_session_next(H2_SESS_BUSY, H2_SEV_NO_IO) == H2_SESS_IDLE);
    CHECK(h2_session_next(H2_SESS_IDLE, H2_SEV_IO) == H2_SESS_BUSY);
    /* a drain ends when nothing is left in progress */
    CHECK(h2_session_next(H2_SESS_BUSY, H2_SEV_SHUTDOWN) == H2_SESS_DRAIN);
    CHECK(h2_session_next(H2_SESS_IDLE, H2_SEV_CLIENT_GOAWAY) == H2_SESS_DRAIN);
    CHECK(h2_session_next(H2_SESS_DRAIN, H2_SEV_IO) == H2_SESS_DRAIN);
    CHECK(h2_session_next(H2_SESS_DRAIN, H2_SEV_WAIT) == H2_SESS_DRAIN);
    CHECK(h2_session_next(H2_SESS_DRAIN, H2_SEV_NO_IO) == H2_SESS_DONE);
    CHECK(h2_session_next(H2_SESS_DRAIN, H2_SEV_NO_STREAMS) == H2_SESS_DONE);
    /* the last stream closing outside a drain changes nothing */
    CHECK(h2_session_next(H2_SESS_WAIT, H2_SEV_NO_STREAMS) == H2_SESS_WAIT);
    /* the client leaving, failing or timing out ends it from anywhere */
    for (st = H2_SESS_INIT; st < H2_SESS_COUNT; ++st) {
        CHECK(h2_session_next(st, H2_SEV_EOF) == H2_SESS_DONE);
        CHECK(h2_session_next(st, H2_SEV_ERROR) == H2_SESS_DONE);
        CHECK(h2_session_next(st, H2_SEV_TIMEOUT) == H2_SESS_DONE);
    }
    /* and DONE is final */
    for (ev = H2_SEV_IO; ev < H2_SEV_COUNT; ++ev) {
        CHECK(h2_session_next(H2_SESS_DONE, ev) == H2_SESS_DONE);
    }
    /* it starts once */
    CHECK(h2_session_next(H2_SESS_BUSY, H2_SEV_START) < 0);
    CHECK(h2_session_next(H2_SESS_DONE, H2_SEV_START) < 0);
}

static void test_names(void)
{
    CHECK(!strcmp(h2_stream_state_str(H2_SS_CLOSED_REMOTE), "HALF_CLOSED_REMOTE"));
    CHECK(!strcmp(h2_stream_event_str(H2_SSEV_PURGE), "PURGE"));
    CHECK(!strcmp(h2_session_state_str(H2_SESS_DRAIN), "DRAIN"));
    CHECK(!strcmp(h2_session_event_str(H2_SEV_CLIENT_GOAWAY), "CLIENT_GOAWAY"));
    CHECK(!strcmp(h2_stream_state_str(H2_SS_COUNT), "?"));
}

int main(void)
{
    test_stream_follows_rfc9113_figure_2();
    test_stream_reset_closes_from_every_live_state();
    test_stream_invalid_transitions();
    test_session_lifecycle();
    test_names();
    return unit_done("test_lifecycle");
}
