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
/* The h2c Upgrade: the HTTP/1.1 request that asked for it becomes stream 1. */

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
#include "h2_upgrade.h"
#include "h2_session_int.h"
#include "h2_util.h"

APLOG_USE_MODULE(http2);

/* Stream 1's request head from the HTTP/1.1 request r that asked for the
 * upgrade: its pseudo-headers and its fields but those of HTTP/1.1's
 * connection management. */
static void request_fields(h2_stream *stream, request_rec *r)
{
    const apr_array_header_t *hdrs;
    const apr_table_entry_t *e;
    int i;

    h2_req_head_add(&stream->req, ":method", 7, r->method, strlen(r->method));
    if (r->parsed_uri.scheme && r->parsed_uri.hostinfo) {
        /* absolute form (a forward proxy's request, RFC 9112 3.2.2): its
         * scheme and authority are the URI's, the path what follows */
        const char *path = apr_uri_unparse(stream->pool, &r->parsed_uri,
                                           APR_URI_UNP_OMITSITEPART);
        h2_req_head_add(&stream->req, ":scheme", 7, r->parsed_uri.scheme,
                        strlen(r->parsed_uri.scheme));
        h2_req_head_add(&stream->req, ":path", 5, path, strlen(path));
        h2_req_head_add(&stream->req, ":authority", 10, r->parsed_uri.hostinfo,
                        strlen(r->parsed_uri.hostinfo));
    }
    else {
        h2_req_head_add(&stream->req, ":scheme", 7, "http", 4);
        h2_req_head_add(&stream->req, ":path", 5, r->unparsed_uri, strlen(r->unparsed_uri));
        if (r->hostname) {
            const char *host = apr_table_get(r->headers_in, "Host");
            if (!host) host = r->hostname;
            h2_req_head_add(&stream->req, ":authority", 10, host, strlen(host));
        }
    }
    hdrs = apr_table_elts(r->headers_in);
    e = (const apr_table_entry_t *)hdrs->elts;
    for (i = 0; i < hdrs->nelts; ++i) {
        char *name;
        if (!e[i].key || !e[i].val) continue;
        name = apr_pstrdup(stream->pool, e[i].key);
        ap_str_tolower(name);
        if (!strcmp(name, "host") || !strcmp(name, "http2-settings")
            || !strcmp(name, "content-length")
            || h2_hdr_is_connection_specific(name, strlen(name))
            || (!strcmp(name, "te") && strcasecmp(e[i].val, "trailers"))) {
            continue;
        }
        h2_req_head_add(&stream->req, name, strlen(name), e[i].val, strlen(e[i].val));
    }
}

/* Stream 1 of an h2c upgrade is the HTTP/1.1 request that asked for it. */
apr_status_t h2_session_upgrade(h2_session *s, request_rec *r)
{
    const char *b64 = apr_table_get(r->headers_in, "HTTP2-Settings");
    h2_stream *stream;
    char *settings, *std;
    int len, rv, i;
    h2_upgrade_body *body = NULL;

    if (!b64) {
        return APR_EINVAL;
    }
    /* HTTP2-Settings is base64url without padding */
    std = apr_pstrdup(r->pool, b64);
    for (i = 0; std[i]; ++i) {
        if (std[i] == '-') std[i] = '+';
        else if (std[i] == '_') std[i] = '/';
    }
    settings = apr_palloc(r->pool, apr_base64_decode_len(std) + 1);
    len = apr_base64_decode(settings, std);
    rv = nghttp2_session_upgrade2(s->ngh, (const uint8_t *)settings, (size_t)len,
                                  r->header_only, NULL);
    if (rv != 0) {
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, APLOGNO(21021)
                      "h2_session(%ld): upgrade settings: %s", s->id,
                      nghttp2_strerror(rv));
        return APR_EINVAL;
    }
    stream = h2_session_stream_open(s, 1, H2_ORIGIN_UPGRADE);
    s->preface_due = 1;

    request_fields(stream, r);
    h2_stream_transit(stream, H2_SSEV_HEADERS_IN);

    /* the body came before the preface, the propose hook read it */
    if (apr_pool_userdata_get((void **)&body, H2_UPGRADE_BODY_KEY, r->pool) != APR_SUCCESS
        || (body && body->len == 0)) {
        body = NULL;
    }
    if (body) {
        char *cl = apr_off_t_toa(stream->pool, (apr_off_t)body->len);
        h2_req_head_add(&stream->req, "content-length", 14, cl, strlen(cl));
    }
    h2_stream_transit(stream, H2_SSEV_EOS_IN);
    if (h2_req_head_end(&stream->req) != H2_HDR_OK) {
        stream->answer_status = HTTP_BAD_REQUEST;
    }
    if (stream->answer_status) {
        h2_session_answer(s, stream, stream->answer_status);
    }
    else {
        s->last_stream_started = 1;
        h2_session_schedule_later(s, stream);
        if (body) {
            h2_x_c1_body_in(stream->x, body->data, body->len);
            stream->in_received = (apr_off_t)body->len;
        }
    }
    h2_x_c1_body_end(stream->x, NULL);
    return APR_SUCCESS;
}
