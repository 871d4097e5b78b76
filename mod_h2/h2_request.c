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
/* A stream's request on its worker: the HTTP/2 request head made an httpd
 * request. */

#include <apr_strings.h>
#include <unistd.h>

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
#include "h2_x_worker.h"
#include "h2_request.h"
#include "h2_response.h"

APLOG_USE_MODULE(http2);

/* HTTP/2 responses are framed by h2: no HTTP/1.1 head formatting. Both
 * filters are found by their registration, not by name: this runs for
 * every request. */
static void setup_filters(request_rec *r, const h2_resp_stream *st)
{
    ap_filter_t *f;
    for (f = r->output_filters; f && f != r->connection->output_filters;
         f = f->next) {
        if (f->frec == ap_http_header_filter_handle) {
            ap_remove_output_filter(f);
            break;
        }
    }
    h2_response_add_filter(r, st);
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

/* this child's pid, taken once: getpid() is a system call per request */
static unsigned long child_pid;

void h2_request_child_init(void)
{
    child_pid = (unsigned long)getpid();
}

static void setup_env(request_rec *r, const h2_x_req *xr)
{
    apr_table_t *e = r->subprocess_env;
    /* "<pid>-<connection>-<stream id>" as stock has it, the connection
     * being its id when the session started (the event MPM renumbers a
     * connection that comes back on another thread); the stream id is
     * its tail */
    char *buf = apr_palloc(r->pool, 80), *end = buf + 63, *sid, *conn, *tag;
    /* the usual case is an empty table: nothing to replace, so adding
     * spares the key lookups */
    void (*put)(apr_table_t *, const char *, const char *) =
        apr_is_empty_table(e)? apr_table_addn : apr_table_setn;

    *end = 0;
    sid = digits_before(end, (unsigned long)xr->id);
    conn = digits_before(sid - 1, (unsigned long)xr->set->conn_id);
    tag = digits_before(conn - 1, child_pid? child_pid : (unsigned long)getpid());
    sid[-1] = conn[-1] = '-';
    put(e, "HTTP2", "on");
    put(e, "H2PUSH", xr->push_enabled? "on" : "off");
    put(e, "H2_PUSH", xr->push_enabled? "on" : "off");
    put(e, "H2_PUSHED", xr->pushed_on? "PUSHED" : "");
    buf[79] = 0;
    put(e, "H2_PUSHED_ON", xr->pushed_on?
        digits_before(buf + 79, (unsigned long)xr->pushed_on) : "");
    put(e, "H2_STREAM_ID", sid);
    put(e, "H2_STREAM_TAG", tag);
    if (xr->head->orig_host) {
        /* the host field :authority replaced */
        apr_table_setn(e, "H2_ORIGINAL_HOST", xr->head->orig_host);
    }
}

/* What ap_parse_request_line() makes of "<method> <target> HTTP/2.0",
 * without the formatting and scanning: the head passed h2_headers_check,
 * which rejects everything the line parser's strict checks look for in
 * the method and target (whitespace, controls, a target that is neither
 * a path nor "*" nor a CONNECT authority). What is left of those checks
 * is done here, alike. 0 with r->status set when httpd would refuse. */
static int set_request_line(request_rec *r, const h2_req_head *req,
                            const char *target)
{
    core_server_config *conf = ap_get_core_module_config(r->server->module_config);

    r->method = req->method;
    r->method_number = ap_method_number_of(r->method);
    if (r->method_number == M_GET && r->method[0] == 'H') {
        r->header_only = 1;     /* HEAD */
    }
    r->protocol = "HTTP/2.0";
    r->proto_num = HTTP_VERSION(2, 0);
    r->assbackwards = 0;
    ap_parse_uri(r, target);

    if (conf->http_methods == AP_HTTP_METHODS_REGISTERED
        && r->method_number == M_INVALID) {
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, APLOGNO(21071)
                      "h2_request: unregistered method '%s' "
                      "(HttpProtocolOptions RegisteredMethods)", r->method);
        r->status = HTTP_NOT_IMPLEMENTED;
        return 0;
    }
    if (r->status != HTTP_OK) {
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, APLOGNO(21072)
                      "h2_request: cannot parse the target '%s'", r->uri);
        return 0;
    }
    if (conf->http_conformance != AP_HTTP_CONFORMANCE_UNSAFE
        && (r->parsed_uri.fragment || r->parsed_uri.user || r->parsed_uri.password)) {
        ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, APLOGNO(21073)
                      "h2_request: the target must not carry a fragment "
                      "or user info");
        r->status = HTTP_BAD_REQUEST;
        return 0;
    }
    return 1;
}

/* The request target as HTTP/1.1 would carry it. Another scheme than
 * http(s) makes it an absolute URI, which httpd refuses unless a proxy
 * takes it; so does H2ProxyRequests, so that mod_proxy (ProxyRequests On)
 * sees a forward-proxy request where the authority is not ours. */
static const char *request_target(request_rec *r, const h2_req_head *req)
{
    if (req->path && req->scheme && req->authority && req->path[0] == '/'
        && ((strcasecmp(req->scheme, "http") && strcasecmp(req->scheme, "https"))
            || h2_config_sget(r->server, H2_CONF_PROXY_REQUESTS) == 1)) {
        return apr_pstrcat(r->pool, req->scheme, "://", req->authority,
                           req->path, NULL);
    }
    return req->path? req->path : req->authority;
}

/* 1 when r, an extended CONNECT for a WebSocket (made a GET with Upgrade
 * by h2_headers_check), went to a virtual host where H2WebSockets is off:
 * the connection's server announced them, the request's does not take
 * them. Answered 501 (not implemented here), as stock answers it. */
static int ws_refused(request_rec *r)
{
    if (h2_config_sget(r->server, H2_CONF_WEBSOCKETS) == 1) {
        return 0;
    }
    ap_log_rerror(APLOG_MARK, APLOG_INFO, 0, r, APLOGNO(21321)
                  "h2_request: WebSocket to %s on a virtual host with "
                  "H2WebSockets off, answering 501", r->uri);
    return 1;
}

void h2_request_run(conn_rec *c2, const h2_x_req *xr, const h2_request_env *env,
                    request_rec **pr)
{
    const h2_req_head *req = xr->head;
    request_rec *r;
    const char *target;
    int status = HTTP_OK;

    r = ap_create_request(c2);
    *pr = r;
    r->request_time = xr->created;
    setup_filters(r, &env->resp);
    target = request_target(r, req);
    r->the_request = apr_pstrcat(r->pool, req->method, " ", target,
                                 " HTTP/2.0", NULL);
    r->headers_in = apr_table_copy(r->pool, req->headers);
    env->begins(r);
    ap_run_pre_read_request(r, c2);

    if (xr->refuse_status) {
        /* over httpd's limits (logged when the head came in): the status
         * HTTP/1.1 gives, with httpd's error page */
        set_request_line(r, req, target);
        status = xr->refuse_status;
    }
    else if (!set_request_line(r, req, target) || !ap_check_request_header(r)) {
        status = r->status? r->status : HTTP_BAD_REQUEST;
        if (status == HTTP_OK) status = HTTP_BAD_REQUEST;
    }
    else if (req->websocket && ws_refused(r)) {
        status = HTTP_NOT_IMPLEMENTED;
    }
    else {
        if (req->websocket) {
            env->websocket(r);
        }
        else if (xr->has_body && req->content_length < 0) {
            /* HTTP/2 frames the body, so it needs no length; modules that
             * forward or spool request bodies look for one of the two
             * framing headers before they read anything */
            apr_table_setn(r->headers_in, "Transfer-Encoding", "chunked");
        }
        setup_env(r, xr);
        status = ap_post_read_request(r);
        if (status == OK) {
            status = HTTP_OK;
        }
    }

    if (status != HTTP_OK) {
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, APLOGNO(21031)
                      "h2_request(%ld-%d): answered with %d before processing",
                      c2->master->id, xr->id, status);
        ap_die(status, r);
        ap_process_request_after_handler(r);
    }
    else {
        ap_process_request(r);
    }
    *pr = NULL;
}
