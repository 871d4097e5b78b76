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
#include <apr_strings.h>
#include <httpd.h>
#include <http_core.h>
#include <http_config.h>
#include <http_log.h>
#include <http_protocol.h>
#include <http_request.h>
#include <util_filter.h>
#include <mod_core.h>

#include "h2.h"
#include "h2_config.h"
#include "h2_c2.h"
#include "h2_session.h"
#include "h2_stream.h"
#include "h2_request.h"
#include "h2_response.h"

APLOG_USE_MODULE(h2);

/* HTTP/2 responses are framed by h2: no HTTP/1.1 head formatting. Both
 * filters are found by their registration, not by name: this runs for
 * every request. */
static void setup_filters(request_rec *r)
{
    ap_filter_t *f;
    for (f = r->output_filters; f && f != r->connection->output_filters;
         f = f->next) {
        if (f->frec == ap_http_header_filter_handle) {
            ap_remove_output_filter(f);
            break;
        }
    }
    ap_add_output_filter_handle(h2_response_filter_handle, NULL, r, r->connection);
}

/* Decimal digits of v, written backwards ending at end; returns the start. */
static char *digits_before(char *end, unsigned long v)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return end;
}

static void setup_env(request_rec *r, struct h2_stream *stream)
{
    apr_table_t *e = r->subprocess_env;
    conn_rec *c1 = r->connection->master;
    /* "<connection id>-<stream id>"; the stream id is its tail */
    char *buf = apr_palloc(r->pool, 48), *end = buf + 47, *sid, *tag;

    *end = 0;
    sid = digits_before(end, (unsigned long)stream->id);
    tag = digits_before(sid - 1, (unsigned long)c1->id);
    sid[-1] = '-';
    apr_table_setn(e, "HTTP2", "on");
    apr_table_setn(e, "H2PUSH", "off");
    apr_table_setn(e, "H2_PUSH", "off");
    apr_table_setn(e, "H2_PUSHED", "");
    apr_table_setn(e, "H2_STREAM_ID", sid);
    apr_table_setn(e, "H2_STREAM_TAG", tag);
}

void h2_request_run(conn_rec *c2, h2_stream *stream, request_rec **pr)
{
    h2_req_head *req = &stream->req;
    request_rec *r;
    int status = HTTP_OK;

    r = ap_create_request(c2);
    *pr = r;
    r->request_time = stream->created;
    setup_filters(r);
    r->the_request = apr_pstrcat(r->pool, req->method, " ",
                                 req->path? req->path : req->authority,
                                 " HTTP/2.0", NULL);
    r->headers_in = apr_table_copy(r->pool, req->headers);
    ap_run_pre_read_request(r, c2);

    if (!ap_parse_request_line(r) || !ap_check_request_header(r)) {
        status = r->status? r->status : HTTP_BAD_REQUEST;
        if (status == HTTP_OK) status = HTTP_BAD_REQUEST;
    }
    else {
        if (stream->has_body_in && req->content_length < 0) {
            /* HTTP/2 frames the body, so it needs no length; modules that
             * forward or spool request bodies look for one of the two
             * framing headers before they read anything */
            apr_table_setn(r->headers_in, "Transfer-Encoding", "chunked");
        }
        setup_env(r, stream);
        status = ap_post_read_request(r);
        if (status == OK) {
            status = HTTP_OK;
        }
    }

    if (status != HTTP_OK) {
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, APLOGNO(21031)
                      "h2_request(%ld-%d): answered with %d before processing",
                      c2->master->id, stream->id, status);
        ap_die(status, r);
        ap_process_request_after_handler(r);
    }
    else {
        ap_process_request(r);
    }
    *pr = NULL;
}
