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
/* The connection loop: reading, writing, waiting, turns and the stopping protocol. */

#include <apr_strings.h>
#include <apr_base64.h>
#include <apr_portable.h>
#include <httpd.h>
#include <http_core.h>
#include <http_config.h>
#include <http_log.h>
#include <http_protocol.h>
#include <ap_mpm.h>
#include <http_ssl.h>
#include <assert.h>

#include "h2.h"
#include "h2_config.h"
#include "h2_session_int.h"
#include "h2_status.h"
#include "h2_util.h"

APLOG_USE_MODULE(http2);

/* Hand len bytes of input to nghttp2; APR_EGENERAL when it (or we) ended
 * the connection over them. */
static apr_status_t ngh_recv(h2_session *s, const char *data, apr_size_t len)
{
    ssize_t n = nghttp2_session_mem_recv(s->ngh, (const uint8_t *)data, len);
    if (n < 0) {
        ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21017)
                      "h2_session(%ld): input: %s", s->id,
                      nghttp2_strerror((int)n));
        if (n == NGHTTP2_ERR_BAD_CLIENT_MAGIC) {
            /* not HTTP/2 at all: nothing more to say in HTTP/2 */
            return APR_EGENERAL;
        }
        if (n == NGHTTP2_ERR_FLOODED) {
            /* nghttp2's queue is full of the acks the flood asked for:
             * say goodbye ourselves, before all of them */
            s->ngh_flooded = 1;
            h2_session_fail(s, 0, H2_ERR_ENHANCE_YOUR_CALM, "flood of SETTINGS/PING");
            return APR_EGENERAL;
        }
        h2_session_fail(s, 0, (n == NGHTTP2_ERR_CALLBACK_FAILURE)?
                        H2_ERR_INTERNAL_ERROR : H2_ERR_PROTOCOL_ERROR,
                        nghttp2_strerror((int)n));
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

/* Input from the client: to the frame clock, then nghttp2. A DATA frame's
 * header is checked before nghttp2 gets its last byte, when the frames
 * before it have been processed: nghttp2 ignores DATA on a stream it has
 * forgotten, where RFC 9113 5.1 asks for STREAM_CLOSED. */
static apr_status_t feed(void *ctx, const char *data, apr_size_t len)
{
    h2_session *s = ctx;
    apr_time_t now = apr_time_now();
    apr_status_t rv;

    while (len > 0) {
        apr_size_t n = h2_frame_clock_feed_to_data(&s->clock, (const unsigned char *)data,
                                                   len, now);
        if (s->clock.data_stream) {
            if ((n > 1 && (rv = ngh_recv(s, data, n - 1)) != APR_SUCCESS)
                || !h2_session_data_may_begin(s, s->clock.data_stream)) {
                return APR_EGENERAL;
            }
            data += n - 1;
            len -= n - 1;
            n = 1;
        }
        if ((rv = ngh_recv(s, data, n)) != APR_SUCCESS) {
            return rv;
        }
        data += n;
        len -= n;
    }
    return APR_SUCCESS;
}

static apr_status_t read_input(h2_session *s, apr_read_type_e block)
{
    apr_status_t rv;
    apr_time_t now = apr_time_now();

    if (block == APR_NONBLOCK_READ && s->input_empty_at
        && now - s->input_empty_at < H2_INPUT_RECHECK) {
        rv = APR_EAGAIN;
    }
    else {
        s->io.in_drained = 0;
        rv = h2_c1_io_read(&s->io, block, feed, s);
        /* EAGAIN came from the socket: the filters above it hold nothing */
        s->input_empty_at = (APR_STATUS_IS_EAGAIN(rv)
                             || (rv == APR_SUCCESS && s->io.in_drained))? now : 0;
    }
    /* while reads bring body, workers are woken for a batch of it; a read
     * that finds the socket empty, and every wait, wakes them for what
     * there is */
    h2_x_c1_body_due(s->xc, (rv == APR_SUCCESS)? H2_BODY_WAKE_BATCH : 0);
    if (rv == APR_SUCCESS) {
        s->last_client_io = apr_time_now();
    }
    return rv;
}

static apr_status_t send_output(h2_session *s, int *progress)
{
    int rv;

    if (s->stop == H2_STOP_CLOSED) {
        return APR_SUCCESS;
    }
    if (nghttp2_session_want_write(s->ngh)) {
        rv = nghttp2_session_send(s->ngh);
        if (rv != 0) {
            ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21018)
                          "h2_session(%ld): send: %s", s->id,
                          nghttp2_strerror(rv));
            return APR_EGENERAL;
        }
    }
    if (h2_c1_io_has_output(&s->io)) {
        *progress = 1;
        return h2_c1_io_flush(&s->io);
    }
    return APR_SUCCESS;
}

/* Sleep until the client sends something or a worker has news. */
static void wait_for_io(h2_session *s, apr_interval_time_t timeout)
{
    int maybe_input = h2_x_c1_wait(s->xc, ap_get_conn_socket(s->c1), timeout);
    /* with SO_RCVLOWAT set, poll() does not see what is below it, which a
     * read after the wait must take */
    s->input_empty_at = (!maybe_input && !s->io.lowat)? apr_time_now() : 0;
}

static void shutdown_graceful(h2_session *s, const char *why)
{
    if (s->stop >= H2_STOP_GOAWAY) {
        return;
    }
    ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21019)
                  "h2_session(%ld): GOAWAY after stream %d: %s", s->id,
                  nghttp2_session_get_last_proc_stream_id(s->ngh), why);
    h2_session_goaway(s, nghttp2_session_get_last_proc_stream_id(s->ngh),
                      H2_ERR_NO_ERROR, why);
    h2_session_transit(s, H2_SEV_SHUTDOWN);
}

/* How long the shutdown notice stands: see H2_STOP_NOTICE_WAIT. */
static apr_interval_time_t notice_wait(h2_session *s)
{
    apr_interval_time_t wait = H2_STOP_NOTICE_RTTS * s->rtt;

    if (wait > H2_STOP_NOTICE_MAX) {
        wait = H2_STOP_NOTICE_MAX;
    }
    return wait > H2_STOP_NOTICE_WAIT? wait : H2_STOP_NOTICE_WAIT;
}

/* RFC 9113 6.8: a server that stops first says so with a GOAWAY naming the
 * highest possible stream. Requests the client sent before it saw the
 * notice are still served; after a few round trips the final GOAWAY names
 * the last stream taken, and nothing the client sent is lost. No PING
 * measures those round trips: python-h2 (under httpx) takes nothing but
 * GOAWAY after a GOAWAY, and h2o and nghttpx send none either. */
static void stop_softly(h2_session *s)
{
    if (s->stop >= H2_STOP_GOAWAY) {
        return;
    }
    if (s->stop < H2_STOP_NOTICE) {
        if (nghttp2_submit_shutdown_notice(s->ngh) == 0) {
            s->stop_final_at = apr_time_now() + notice_wait(s);
            h2_session_stopping(s, H2_STOP_NOTICE);
            ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21074)
                          "h2_session(%ld): server stopping, shutdown notice "
                          "sent; final GOAWAY in %ld ms", s->id,
                          (long)apr_time_msec(s->stop_final_at - apr_time_now()));
            return;
        }
    }
    else if (apr_time_now() < s->stop_final_at) {
        return;
    }
    shutdown_graceful(s, "server shutting down");
}

/* 1 while a shutdown notice stands before the final GOAWAY. */
static int stop_pending(h2_session *s)
{
    return s->stop == H2_STOP_NOTICE;
}

static int mpm_stopping(void)
{
    int state = AP_MPMQ_RUNNING;
    ap_mpm_query(AP_MPMQ_MPM_STATE, &state);
    return state == AP_MPMQ_STOPPING;
}

static int workers_busy(h2_session *s)
{
    return h2_x_c1_processing(s->xc) > 0 || s->new_first;
}

static int output_stalled(h2_session *s)
{
    h2_stream *stream;
    for (stream = s->streams; stream; stream = stream->next_all) {
        if (h2_x_c1_out(stream->x)->first && stream->state < H2_SS_CLOSED) {
            return 1;
        }
    }
    return 0;
}

/* When the client runs out of time for the frame or header block it
 * started (RequestReadTimeout's header stage), or 0 when it owes none. */
static apr_time_t owed_deadline(h2_session *s)
{
    apr_time_t since;
    apr_off_t bytes;
    if (!h2_frame_clock_owed(&s->clock, &since, &bytes)) {
        return 0;
    }
    return h2_read_deadline(&s->read_timeouts->header, since, bytes);
}

/* The client started a frame or header block and did not finish it in
 * time: a slow client holding the connection, as a request head trickled
 * over HTTP/1.1 would; mod_reqtimeout's header limit ends both. */
static void too_slow(h2_session *s)
{
    const h2_read_limit *lim = &s->read_timeouts->header;
    h2_session_fail(s, 0, H2_ERR_ENHANCE_YOUR_CALM, apr_psprintf(s->pool, "frame or header block not completed "
                                "within the header read timeout (%d-%ds, "
                                "MinRate %" APR_SIZE_T_FMT ")",
                                (int)apr_time_sec(lim->min),
                                (int)apr_time_sec(lim->max? lim->max : lim->min),
                                lim->rate));
}

/* How long a wait may last: at most timeout, and not past deadline (if
 * any); at least 1 ms. */
static apr_interval_time_t wait_until(apr_interval_time_t timeout, apr_time_t deadline)
{
    if (deadline) {
        apr_interval_time_t left = deadline - apr_time_now();
        if (left < timeout) timeout = left;
    }
    return timeout < apr_time_from_msec(1)? apr_time_from_msec(1) : timeout;
}

/* An idle session (no streams) waits for the client. Returns 1 when it
 * may park in the MPM instead: not while a shutdown notice stands before
 * the final GOAWAY, nor while the client owes the rest of a frame (the MPM's
 * keep-alive wait would start anew with every byte). */
static int wait_idle(h2_session *s, int how)
{
    apr_time_t deadline = owed_deadline(s);
    apr_status_t rv;

    h2_c1_io_set_lowat(&s->io, 0);      /* a blocking read wants every byte */
    if ((how & H2_RUN_MAY_PARK) && !stop_pending(s) && !deadline) {
        return 1;
    }
    /* with a shutdown notice out, wait only until the final GOAWAY is due */
    apr_socket_timeout_set(ap_get_conn_socket(s->c1), wait_until(
        stop_pending(s)? s->stop_final_at - apr_time_now() : s->keepalive_timeout,
        deadline));
    rv = read_input(s, APR_BLOCK_READ);
    apr_socket_timeout_set(ap_get_conn_socket(s->c1), s->timeout);
    if (rv == APR_SUCCESS) {
        h2_session_transit(s, H2_SEV_IO);
    }
    else if (deadline && apr_time_now() >= deadline
             && (APR_STATUS_IS_TIMEUP(rv) || APR_STATUS_IS_EAGAIN(rv))) {
        too_slow(s);
    }
    else if (APR_STATUS_IS_TIMEUP(rv) || APR_STATUS_IS_EAGAIN(rv)) {
        shutdown_graceful(s, stop_pending(s)? "server shutting down"
                                            : "idle timeout");
        h2_session_transit(s, H2_SEV_TIMEOUT);
    }
    else {
        h2_session_transit(s, APR_STATUS_IS_EOF(rv)? H2_SEV_EOF : H2_SEV_ERROR);
    }
    return 0;
}

static int turn_over(h2_session *s)
{
    return apr_time_now() - s->turn_start >= H2_C1_TURN;
}

/* How long a wait may last before the turn is over (at least 1ms). */
static apr_interval_time_t turn_left(h2_session *s)
{
    apr_interval_time_t left = s->turn_start + H2_C1_TURN - apr_time_now();
    return left < apr_time_from_msec(1)? apr_time_from_msec(1) : left;
}

/* Streams are in progress and nothing is to be done now: end a client
 * that is late with a frame or stalls for Timeout, else wait for input or
 * a worker. */
static void wait_busy(h2_session *s, int how)
{
    apr_time_t now = apr_time_now(), deadline = owed_deadline(s), early;
    apr_size_t lowat;

    if (deadline && now >= deadline) {
        too_slow(s);
        return;
    }
    if (now - s->last_client_io > s->timeout
        && (output_stalled(s) || !workers_busy(s))) {
        /* the client does not read what it asked for, or we wait for
         * nothing but the client (e.g. the rest of a frame) */
        ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, s->c1, APLOGNO(21020)
                      "h2_session(%ld): client stalled for Timeout, "
                      "closing", s->id);
        shutdown_graceful(s, "timeout");
        h2_session_transit(s, H2_SEV_TIMEOUT);
        return;
    }
    lowat = h2_session_recv_window_lowat(s);
    h2_c1_io_set_lowat(&s->io, lowat);
    early = h2_session_recv_window_early_ends(s);
    if (early && (!deadline || early < deadline)) {
        deadline = early;
    }
    if (stop_pending(s) && (!deadline || s->stop_final_at < deadline)) {
        deadline = s->stop_final_at;
    }
    wait_for_io(s, wait_until(s->window_waiters? H2_TINY_FRAME_RETRY
                              : lowat? H2_BULK_WAIT
                              : (how & H2_RUN_MAY_YIELD)? turn_left(s)
                              : H2_WAIT_SLICE, deadline));
}

static apr_status_t process(h2_session *s, int how)
{
    apr_status_t rv;

    s->turn_start = apr_time_now();
    s->input_empty_at = 0;      /* the MPM woke us: maybe for input */
    h2_status_c1_state(s->srow, s->c1, "busy");
    if (s->state == H2_SESS_INIT || s->state == H2_SESS_IDLE) {
        /* after a yield, the client's silence goes on counting */
        s->last_client_io = s->turn_start;
        h2_session_transit(s, s->state == H2_SESS_INIT? H2_SEV_START : H2_SEV_IO);
    }

    while (s->state != H2_SESS_DONE) {
        int progress = 0;

        h2_session_purge(s);
        if (stop_pending(s) || mpm_stopping()) {
            stop_softly(s);
        }

        rv = read_input(s, APR_NONBLOCK_READ);
        if (rv == APR_SUCCESS) {
            progress = 1;
        }
        else if (!APR_STATUS_IS_EAGAIN(rv)) {
            h2_session_transit(s, APR_STATUS_IS_EOF(rv)? H2_SEV_EOF : H2_SEV_ERROR);
            if (!APR_STATUS_IS_EOF(rv) && !s->c1->aborted) {
                /* a protocol error leaves a GOAWAY to be written */
                int p = 0;
                send_output(s, &p);
            }
            break;
        }
        h2_session_dispatch(s);
        if (h2_session_collect(s) > 0) {
            progress = 1;
        }
        h2_session_recv_window_early_ends(s);
        h2_session_retry_windows(s);
        if (send_output(s, &progress) != APR_SUCCESS) {
            h2_session_transit(s, H2_SEV_ERROR);
            break;
        }
        h2_x_c1_run_logs(s->xc);    /* what the flush settled */
        if (s->stop >= H2_STOP_CLOSE
            || (!nghttp2_session_want_read(s->ngh)
                && !nghttp2_session_want_write(s->ngh))) {
            h2_session_transit(s, H2_SEV_EOF);
            break;
        }
        if ((how & H2_RUN_MAY_YIELD) && turn_over(s)) {
            ap_log_cerror(APLOG_MARK, APLOG_TRACE1, 0, s->c1,
                          "h2_session(%ld): turn over, %d streams in workers: "
                          "the MPM thread goes back", s->id, h2_x_c1_processing(s->xc));
            h2_status_c1_state(s->srow, s->c1, "wait");
            return APR_INCOMPLETE;
        }
        if (progress) {
            h2_session_transit(s, H2_SEV_IO);
            continue;
        }

        h2_session_transit(s, (s->open_streams > 0 || h2_x_c1_processing(s->xc) > 0)?
                   H2_SEV_WAIT : H2_SEV_NO_IO);
        if (s->state == H2_SESS_IDLE) {
            h2_x_c1_idle(s->xc, 0);
            h2_ngmem_trim(&s->ngmem);
            h2_c1_io_idle(&s->io);
            h2_status_c1_state(s->srow, s->c1, "idle");
            if (wait_idle(s, how)) {
                return APR_EAGAIN;
            }
            h2_status_c1_state(s->srow, s->c1, "busy");
        }
        else if (s->state == H2_SESS_WAIT || s->state == H2_SESS_DRAIN) {
            wait_busy(s, how);
        }
    }

    /* final frames, e.g. a GOAWAY, then let httpd close */
    if (!s->c1->aborted) {
        int p = 0;
        send_output(s, &p);
    }
    h2_status_c1_state(s->srow, s->c1, "done");
    return APR_EOF;
}

void h2_session_refuse(h2_session *s, int code, const char *why)
{
    int p = 0;
    h2_session_fail(s, 0, (uint32_t)code, why);
    h2_session_transit(s, H2_SEV_ERROR);
    send_output(s, &p);
}

void h2_session_goodbye(h2_session *s, const char *why)
{
    if (s->stop < H2_STOP_GOAWAY && !s->c1->aborted) {
        int p = 0;
        shutdown_graceful(s, why);
        send_output(s, &p);
    }
}

apr_status_t h2_session_process(h2_session *s, int how)
{
    apr_status_t rv = process(s, how);
    h2_x_c1_run_logs(s->xc);    /* streams reset on the way out */
    /* Whatever the connection thread leaves for: workers get the body that
     * waited for a batch, and the MPM's polls (and httpd's lingering
     * close) want every byte. */
    h2_x_c1_body_due(s->xc, 0);
    h2_c1_io_set_lowat(&s->io, 0);
    return rv;
}
