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
/* The session: its state machine, its streams, creation and teardown. */

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
#include "h2_c1_idle.h"
#include "h2_c2.h"
#include "h2_session_int.h"
#include "h2_status.h"
#include "h2_util.h"

APLOG_USE_MODULE(http2);

/* The one place session states change, as the table in h2_lifecycle.c
 * says. */
void h2_session_transit(h2_session *s, h2_session_event ev)
{
    h2_session_state old = s->state;
    int n = h2_session_next(old, ev);

    if (n < 0) {
        ap_log_cerror(APLOG_MARK, APLOG_WARNING, 0, s->c1, APLOGNO(21092)
                      "h2_session(%ld): invalid transition %s -[%s]->",
                      s->id, h2_session_state_str(old), h2_session_event_str(ev));
        return;
    }
    if (n != (int)old) {
        s->state = (h2_session_state)n;
        if (s->xset.loglevel >= APLOG_TRACE1) {   /* several times a request */
            ap_log_cerror(APLOG_MARK, APLOG_TRACE1, 0, s->c1,
                          "h2_session(%ld): %s -[%s]-> %s (%d open, %d in workers)",
                          s->id, h2_session_state_str(old), h2_session_event_str(ev),
                          h2_session_state_str(s->state), s->open_streams,
                          h2_x_c1_processing(s->xc));
        }
    }
}

static void link_stream(h2_session *s, h2_stream *stream)
{
    stream->next_all = s->streams;
    if (s->streams) s->streams->prev_all = stream;
    s->streams = stream;
}

static void unlink_stream(h2_session *s, h2_stream *stream)
{
    if (stream->prev_all) stream->prev_all->next_all = stream->next_all;
    else s->streams = stream->next_all;
    if (stream->next_all) stream->next_all->prev_all = stream->prev_all;
    stream->prev_all = stream->next_all = NULL;
}

/* The one way a stream comes to be, so that every stream is in the list,
 * counted where on_stream_close() uncounts it, and found by nghttp2. */
h2_stream *h2_session_stream_open(h2_session *s, int32_t id, h2_stream_origin origin)
{
    h2_stream *stream = h2_stream_create(s, id, s->pool);

    link_stream(s, stream);
    s->open_streams++;
    if (origin == H2_ORIGIN_PUSH) {
        s->pushed_open++;
    }
    h2_session_ngcheck(s, id, origin == H2_ORIGIN_PUSH? "attach the pushed stream"
                                                      : "attach the stream",
                       nghttp2_session_set_stream_user_data(s->ngh, id, stream));
    if (origin == H2_ORIGIN_PUSH) {
        /* it is born promised: its request head is ours, not the client's */
        h2_stream_transit(stream, H2_SSEV_PROMISED);
    }
    return stream;
}

h2_c1_idler *h2_session_idler(h2_session *s)
{
    return &s->idle;
}

h2_stream *h2_session_stream(h2_session *s, int32_t id)
{
    return nghttp2_session_get_stream_user_data(s->ngh, id);
}

/* Into the list of streams waiting to be scheduled: after those of its
 * urgency or a more urgent one (RFC 9218), before the less urgent. */
static void new_insert(h2_session *s, h2_stream *stream)
{
    h2_stream *prev = NULL, *it;
    int u = stream->prio.urgency;

    if (!s->new_last || s->new_last->prio.urgency <= u) {
        prev = s->new_last;     /* the common case: all of one urgency */
    }
    else {
        for (it = s->new_first; it && it->prio.urgency <= u; it = it->next_new) {
            prev = it;
        }
    }
    stream->next_new = prev? prev->next_new : s->new_first;
    if (prev) prev->next_new = stream;
    else s->new_first = stream;
    if (s->new_last == prev) s->new_last = stream;
}

void h2_session_schedule_later(h2_session *s, h2_stream *stream)
{
    h2_x_req *xr = h2_x_c1_req(stream->x);

    /* all a worker will know of the stream, fixed from here on */
    xr->created = stream->created;
    xr->head = &stream->req;
    xr->has_body = stream->has_body_in;
    xr->head_in = stream->head_in;
    xr->refuse_status = stream->refuse_status;
    xr->pushed_on = stream->pushed_on;
    xr->push_enabled = s->push_on
        && nghttp2_session_get_remote_settings(s->ngh, NGHTTP2_SETTINGS_ENABLE_PUSH);
    if (stream->prio.urgency != H2_PRIO_URGENCY_DEFAULT) {
        h2_x_c1_set_urgency(stream->x, stream->prio.urgency);
    }
    h2_x_c1_pend(stream->x);
    h2_status_c1_stream_start(s->srow, stream->id, stream->req.method, stream->req.path);
    stream->status_counted = 1;
    stream->on_new = 1;
    new_insert(s, stream);
}

void h2_session_requeue(h2_session *s, h2_stream *stream)
{
    h2_stream *prev = NULL, *it;

    for (it = s->new_first; it && it != stream; it = it->next_new) {
        prev = it;
    }
    if (!it) {
        return;
    }
    if (prev) prev->next_new = stream->next_new;
    else s->new_first = stream->next_new;
    if (s->new_last == stream) s->new_last = prev;
    new_insert(s, stream);
}

void h2_session_purge_later(h2_session *s, h2_stream *stream)
{
    /* streams are freed between rounds, never inside nghttp2 callbacks;
     * h2_session_purge() takes them out of the lists in one pass per list,
     * as unlinking each one alone walks lists as long as the open
     * streams (quadratic at -m 100) */
    h2_stream_transit(stream, H2_SSEV_PURGE);
    h2_x_c1_forget(stream->x);
    unlink_stream(s, stream);
    stream->next_all = s->purge;
    s->purge = stream;
}

#define PURGED(stream) ((stream)->state == H2_SS_PURGED)

void h2_session_purge(h2_session *s)
{
    h2_stream *stream;
    int on_new = 0;

    for (stream = s->purge; stream; stream = stream->next_all) {
        on_new |= stream->on_new;
    }
    if (on_new) {
        H2_UNLIST(h2_stream, &s->new_first, next_new, PURGED, s->new_last);
    }
    if (s->purge) {
        h2_x_c1_purge(s->xc);
    }
    while (s->purge) {
        stream = s->purge;
        s->purge = stream->next_all;
        h2_session_send_wait_clear(s, stream);
        h2_stream_destroy(stream);
    }
}

void h2_session_end_streams(h2_session *s)
{
    h2_stream *stream;

    h2_x_c1_teardown_start(s->xc);
    for (stream = s->streams; stream; stream = stream->next_all) {
        h2_x_c1_abort(stream->x);
    }
    h2_x_c1_teardown_wait(s->xc);
}

static apr_status_t session_teardown(void *data)
{
    h2_session *s = data;
    h2_stream *stream;
    apr_size_t held;

    h2_c1_idle_unpark(&s->idle);
    h2_session_end_streams(s);
    h2_session_purge(s);
    while ((stream = s->streams) != NULL) {
        unlink_stream(s, stream);
        h2_stream_destroy(stream);
    }
    if ((held = h2_x_c1_mem_held(s->xc, NULL)) != 0 || s->hdr_budget.used) {
        /* every stream gave back what it held: anything left is a bug in
         * the accounting that bounds a connection's memory */
        ap_log_cerror(APLOG_MARK, APLOG_ERR, 0, s->c1, APLOGNO(21086)
                      "h2_session(%ld): memory budget off at the end: %"
                      APR_SIZE_T_FMT " body and response, %"
                      APR_SIZE_T_FMT " head bytes still counted", s->id,
                      held, s->hdr_budget.used);
    }
    h2_x_c1_idle(s->xc, 1);
    if (s->ngh) {
        nghttp2_session_del(s->ngh);
        s->ngh = NULL;
    }
    h2_ngmem_trim(&s->ngmem);
    /* whatever was not written is lost with the connection anyway */
    apr_brigade_cleanup(s->io.bb_out);
    s->io.buf_len = s->io.seg_start = 0;
    h2_c1_io_idle(&s->io);
    return APR_SUCCESS;
}

/* The limits and settings of s, read once from its server's config. */
static void read_config(h2_session *s)
{
    /* H2MaxSessionWorkers; by default, with several connections per
     * child, one gets at most half of its workers; a prefork child serves
     * only this one */
    int minw, maxw, idle_secs, threaded = h2_config_mpm_threaded();

    s->max_streams = (int)h2_config_sget(s->s, H2_CONF_MAX_STREAMS);
    s->window_size = (int)h2_config_sget(s->s, H2_CONF_WIN_SIZE);
    s->max_data_frame_len = (int)h2_config_sget(s->s, H2_CONF_MAX_DATA_FRAME_LEN);
    s->padding_bits = (int)h2_config_sget(s->s, H2_CONF_PADDING);
    s->push_on = (h2_config_sget(s->s, H2_CONF_PUSH) == 1);
    s->timeout = s->s->timeout;
    s->keepalive_timeout = s->s->keep_alive_timeout;
    s->idle.c1 = s->c1;
    s->idle.keepalive = s->keepalive_timeout;
    s->read_timeouts = h2_config_read_timeouts(s->s);

    h2_config_workers(s->s, &minw, &maxw, &idle_secs);
    s->xset.c1 = s->c1;
    s->xset.conn_id = s->id;
    s->xset.sbh = s->c1->sbh;
    s->xset.loglevel = ap_get_conn_module_loglevel(s->c1, APLOG_MODULE_INDEX);
    s->xset.max_processing = (int)h2_config_sget(s->s, H2_CONF_MAX_SESSION_WORKERS);
    if (s->xset.max_processing == H2_CONF_UNSET) {
        s->xset.max_processing = !threaded? maxw : (maxw / 2 > 1? maxw / 2 : 1);
    }
    else if (!threaded && s->xset.max_processing > maxw) {
        /* more would only wait in the child's queue, out of the session's
         * urgency order */
        s->xset.max_processing = maxw;
    }
    s->xset.threaded = threaded;
    /* what only the workers' side uses is read into its settings */
    s->xset.stream_max_mem = (apr_size_t)h2_config_sget(s->s, H2_CONF_STREAM_MAX_MEM);
    s->xset.stream_timeout = h2_config_sget(s->s, H2_CONF_STREAM_TIMEOUT);
    s->xset.output_buffering = (int)h2_config_sget(s->s, H2_CONF_OUTPUT_BUFFERING);
    s->xset.copy_files = (int)h2_config_sget(s->s, H2_CONF_COPY_FILES);
    s->xset.read_timeouts = s->read_timeouts;

    /* the same limits httpd applies to HTTP/1.1 request heads */
    s->hdr_limits.max_field_len = (apr_size_t)s->s->limit_req_fieldsize;
    s->hdr_limits.max_fields = s->s->limit_req_fields;
    s->hdr_limits.max_line_len = (apr_size_t)s->s->limit_req_line;
    s->hdr_limits.max_block_len = (apr_size_t)h2_config_sget(s->s, H2_CONF_MAX_HEADER_BLOCK);
    s->send_block_max = s->hdr_limits.max_block_len;
    if (!s->hdr_limits.max_block_len) {
        s->hdr_limits.max_block_len = (s->hdr_limits.max_fields? (apr_size_t)s->hdr_limits.max_fields : 100)
            * (s->hdr_limits.max_field_len + 32) + s->hdr_limits.max_line_len;
    }
    /* Per connection: two blocks of the largest size allowed, or a share
     * per stream, whichever is more; request bodies and responses up to
     * H2StreamMaxMemSize for every stream it may have open. */
    s->hdr_budget.max = 2 * s->hdr_limits.max_block_len;
    if (s->hdr_budget.max < (apr_size_t)s->max_streams * H2_CONN_HEAD_SHARE) {
        s->hdr_budget.max = (apr_size_t)s->max_streams * H2_CONN_HEAD_SHARE;
    }
    s->hdr_limits.budget = &s->hdr_budget;
    /* A WebSocket holds its worker while it is open: where the session
     * runs one stream at a time (prefork), it would stall the others for
     * as long. Not announced, clients open it over HTTP/1.1 instead. */
    s->hdr_limits.connect_protocol = (h2_config_sget(s->s, H2_CONF_WEBSOCKETS) == 1)
                                     && (threaded || s->xset.max_processing > 1);
    s->mem_max = (apr_size_t)s->max_streams * s->xset.stream_max_mem;
}

/* nghttp2's session for s, with our first SETTINGS and window queued. */
static apr_status_t ngh_create(h2_session *s)
{
    nghttp2_session_callbacks *cbs;
    nghttp2_option *opt;
    nghttp2_settings_entry settings[4];
    size_t nsettings = 3;
    apr_int64_t conn_win;
    int rv;

    if (!(cbs = h2_session_callbacks())) {
        return APR_ENOMEM;
    }
    if ((rv = nghttp2_option_new(&opt)) != 0) {
        nghttp2_session_callbacks_del(cbs);
        return APR_ENOMEM;
    }
    nghttp2_option_set_no_auto_window_update(opt, 1);
    nghttp2_option_set_max_settings(opt, 32);
    nghttp2_option_set_max_outbound_ack(opt, 1000);
    nghttp2_option_set_stream_reset_rate_limit(opt, H2_RESET_BACKSTOP_BURST,
                                               H2_RESET_BACKSTOP_RATE);
    nghttp2_option_set_max_continuations(opt, 8);
    if (s->send_block_max) {
        /* else nghttp2's 64 KB bound response heads, as in stock */
        nghttp2_option_set_max_send_header_block_length(opt, s->send_block_max);
    }
    /* Requests are checked as RFC 9113 8.1-8.3 say by h2_headers_check and
     * the callbacks (content-length, trailers); nghttp2 doing it again
     * cost 1.4k instructions per request. */
    nghttp2_option_set_no_http_messaging(opt, 1);
    h2_session_prio_options(opt);
    /* MaxMemFree bounds this cache like the others */
    h2_ngmem_init(&s->ngmem, h2_util_cache_max(16, 4096));
    rv = nghttp2_session_server_new3(&s->ngh, cbs, s, opt, &s->ngmem.mem);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cbs);
    if (rv == 0) {
        settings[0].settings_id = NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS;
        settings[0].value = (uint32_t)H2_NGH_STREAMS(s->max_streams);
        settings[1].settings_id = NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE;
        settings[1].value = (uint32_t)s->window_size;
        /* RFC 9218 priorities for clients that announce the same */
        settings[2].settings_id = NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES;
        settings[2].value = 1;
        if (s->hdr_limits.connect_protocol) {
            /* H2WebSockets: extended CONNECT (RFC 8441) */
            settings[3].settings_id = NGHTTP2_SETTINGS_ENABLE_CONNECT_PROTOCOL;
            settings[3].value = 1;
            nsettings = 4;
        }
        rv = nghttp2_submit_settings(s->ngh, NGHTTP2_FLAG_NONE, settings, nsettings);
        s->settings_at = apr_time_now();
    }
    /* The connection window covers what all streams may be granted: each
     * stream's own window bounds what it holds (h2_session_recv_window.c), and
     * the connection's is opened again as bytes arrive, so that it never
     * holds one stream back for another's. */
    conn_win = (apr_int64_t)s->max_streams * s->window_size + H2_BDP_GROWTH_MAX;
    if (conn_win > NGHTTP2_MAX_WINDOW_SIZE) conn_win = NGHTTP2_MAX_WINDOW_SIZE;
    if (rv == 0) {
        rv = nghttp2_session_set_local_window_size(s->ngh, NGHTTP2_FLAG_NONE, 0,
                                                   (int32_t)conn_win);
    }
    if (rv != 0) {
        ap_log_cerror(APLOG_MARK, APLOG_ERR, 0, s->c1, APLOGNO(21022)
                      "h2_session(%ld): nghttp2 session: %s", s->id,
                      nghttp2_strerror(rv));
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

/* The session shares the first block of the connection's pool (8 KB) with
 * what the MPM, the core and the other modules keep per connection, and
 * little room is left: at 1,520 bytes every idle connection took a second
 * block, 4 KB more each (bench/run.py scenario 3: 31.2 -> 35.2 KiB Pss per
 * idle h2c connection); at 1,016 it fits, at 1,272 it does not. What only
 * some connections use is made when first used instead; a field that takes
 * the struct past this limit fails the build. */
#define H2_SESSION_MAX_SIZE 1024
typedef char h2_session_fits_pool_block[
    (sizeof(struct h2_session) <= H2_SESSION_MAX_SIZE)? 1 : -1];

apr_status_t h2_session_create(h2_session **psession, conn_rec *c,
                               request_rec *r, server_rec *server)
{
    h2_session *s;
    apr_status_t rv;

    h2_c2_note_conn_thread();
    /* The session lives in the connection's pool: a pool of its own would
     * cost an 8 KB node per connection for a few hundred bytes. Nothing
     * grows in it per stream; streams have pools of their own. */
    s = apr_pcalloc(c->pool, sizeof(*s));
    s->c1 = c;
    s->id = c->id;
    s->s = r? r->server : (server? server : c->base_server);
    s->pool = c->pool;
    s->state = H2_SESS_INIT;
    s->is_tls = ap_ssl_conn_is_ssl(c);
    read_config(s);
    h2_abuse_init(&s->abuse, (int)h2_config_sget(s->s, H2_CONF_MAX_STREAM_ERRORS),
                  apr_time_now());
    h2_c1_io_init(&s->io, c, s->s, s->is_tls);
    h2_frame_clock_init(&s->clock, 1);
    if (!(s->xc = h2_x_c1_conn_create(s->pool, &s->xset))) {
        return APR_ENOMEM;
    }
    /* from here on, the teardown frees what was made */
    apr_pool_pre_cleanup_register(s->pool, s, session_teardown);
    if ((rv = ngh_create(s)) != APR_SUCCESS) {
        return rv;
    }
    s->srow = h2_status_c1_open(c, s->is_tls? H2_PROTO_TLS : H2_PROTO_CLEAR);
    if (r && h2_session_upgrade(s, r) != APR_SUCCESS) {
        return APR_EINVAL;
    }
    *psession = s;
    ap_log_cerror(APLOG_MARK, APLOG_DEBUG, 0, c, APLOGNO(21023)
                  "h2_session(%ld): started%s, %d max streams, window %d, "
                  "budgets: %" APR_SIZE_T_FMT " bytes of request heads, %"
                  APR_SIZE_T_FMT " of bodies and responses", c->id,
                  r? " by upgrade" : "", s->max_streams, s->window_size,
                  s->hdr_budget.max, s->mem_max);
    return APR_SUCCESS;
}
