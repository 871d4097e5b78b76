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

/* The stream and session transition tables (see h2_lifecycle.h). */

#include "h2_lifecycle.h"

#define X (-1)   /* no such transition */

/* RFC 9113 figure 2, server side. RESET and CLOSED come from nghttp2's
 * close callback (or an RST_STREAM) in any state before PURGED; a closed
 * stream stays closed. A pushed stream is promised (reserved (local)), and
 * its response head makes it half-closed (remote): it has no request body. */
#define R H2_SS_RESERVED_LOCAL
const signed char h2_stream_table[H2_SS_COUNT][H2_SSEV_COUNT] = {
    /*                     HEADERS_IN   EOS_IN               EOS_OUT              RESET         CLOSED        PURGE         PROMISED HEADERS_OUT */
    [H2_SS_IDLE]         = { H2_SS_OPEN, X,                   X,                   H2_SS_CLOSED, H2_SS_CLOSED, X,            R,       X },
    [R]                  = { X,          X,                   X,                   H2_SS_CLOSED, H2_SS_CLOSED, X,            X,       H2_SS_CLOSED_REMOTE },
    [H2_SS_OPEN]         = { X,          H2_SS_CLOSED_REMOTE, H2_SS_CLOSED_LOCAL,  H2_SS_CLOSED, H2_SS_CLOSED, X,            X,       X },
    [H2_SS_CLOSED_REMOTE]= { X,          X,                   H2_SS_CLOSED,        H2_SS_CLOSED, H2_SS_CLOSED, X,            X,       X },
    [H2_SS_CLOSED_LOCAL] = { X,          H2_SS_CLOSED,        X,                   H2_SS_CLOSED, H2_SS_CLOSED, X,            X,       X },
    [H2_SS_CLOSED]       = { X,          X,                   X,                   H2_SS_CLOSED, H2_SS_CLOSED, H2_SS_PURGED, X,       X },
    [H2_SS_PURGED]       = { X,          X,                   X,                   X,            X,            X,            X,       X },
};
#undef R

/* A session drains once a GOAWAY went either way, and is done when the
 * client leaves, fails or times out, or the drain ends. Events after DONE
 * (streams closing at teardown) change nothing. */
#define ANY_END H2_SESS_DRAIN, H2_SESS_DRAIN, H2_SESS_DONE, H2_SESS_DONE, H2_SESS_DONE
const signed char h2_session_table[H2_SESS_COUNT][H2_SEV_COUNT] = {
    /*                START         IO             WAIT           NO_IO          NO_STREAMS    SHUTDOWN..TIMEOUT */
    [H2_SESS_INIT]  = { H2_SESS_BUSY, H2_SESS_BUSY,  H2_SESS_WAIT,  H2_SESS_IDLE,  H2_SESS_INIT,  ANY_END },
    [H2_SESS_BUSY]  = { X,            H2_SESS_BUSY,  H2_SESS_WAIT,  H2_SESS_IDLE,  H2_SESS_BUSY,  ANY_END },
    [H2_SESS_WAIT]  = { X,            H2_SESS_BUSY,  H2_SESS_WAIT,  H2_SESS_IDLE,  H2_SESS_WAIT,  ANY_END },
    [H2_SESS_IDLE]  = { X,            H2_SESS_BUSY,  H2_SESS_WAIT,  H2_SESS_IDLE,  H2_SESS_IDLE,  ANY_END },
    [H2_SESS_DRAIN] = { X,            H2_SESS_DRAIN, H2_SESS_DRAIN, H2_SESS_DONE,  H2_SESS_DONE,  ANY_END },
    [H2_SESS_DONE]  = { X,            H2_SESS_DONE,  H2_SESS_DONE,  H2_SESS_DONE,  H2_SESS_DONE,
                        H2_SESS_DONE, H2_SESS_DONE, H2_SESS_DONE, H2_SESS_DONE, H2_SESS_DONE },
};

const char *h2_stream_state_str(h2_stream_state state)
{
    static const char *names[H2_SS_COUNT] = {
        "IDLE", "RESERVED_LOCAL", "OPEN", "HALF_CLOSED_REMOTE", "HALF_CLOSED_LOCAL",
        "CLOSED", "PURGED"
    };
    return (unsigned)state < H2_SS_COUNT? names[state] : "?";
}

const char *h2_stream_event_str(h2_stream_event ev)
{
    static const char *names[H2_SSEV_COUNT] = {
        "HEADERS_IN", "EOS_IN", "EOS_OUT", "RESET", "CLOSED", "PURGE", "PROMISED",
        "HEADERS_OUT"
    };
    return (unsigned)ev < H2_SSEV_COUNT? names[ev] : "?";
}

const char *h2_session_state_str(h2_session_state state)
{
    static const char *names[H2_SESS_COUNT] = {
        "INIT", "BUSY", "WAIT", "IDLE", "DRAIN", "DONE"
    };
    return (unsigned)state < H2_SESS_COUNT? names[state] : "?";
}

const char *h2_session_event_str(h2_session_event ev)
{
    static const char *names[H2_SEV_COUNT] = {
        "START", "IO", "WAIT", "NO_IO", "NO_STREAMS", "SHUTDOWN", "CLIENT_GOAWAY",
        "EOF", "ERROR", "TIMEOUT"
    };
    return (unsigned)ev < H2_SEV_COUNT? names[ev] : "?";
}
