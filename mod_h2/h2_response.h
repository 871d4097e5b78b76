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
#ifndef H2_RESPONSE_H
#define H2_RESPONSE_H

#include <apr_buckets.h>
#include <httpd.h>
#include <util_filter.h>
#include "h2_handoff.h"

/* The response head of a request in HTTP/2 form. It replaces httpd's
 * HTTP_HEADER filter: instead of an HTTP/1.1 status line and header text
 * it sends one metadata bucket with status and fields down to the
 * secondary connection's output, followed by the body and, at the end,
 * a trailer bucket if the request has trailers. */

typedef struct h2_resp_meta {
    h2_hchunk_type type;    /* H2_HC_HEADERS, H2_HC_INTERIM, H2_HC_TRAILERS
                             * or H2_HC_RESET (status: the error code) */
    int status;
    apr_table_t *fields;
    h2_hfields hf;          /* fields serialized and checked, if built */
} h2_resp_meta;

extern const apr_bucket_type_t h2_bucket_type_resp;
#define H2_BUCKET_IS_RESP(e) ((e)->type == &h2_bucket_type_resp)

/* A metadata bucket carrying meta; fields (and what hf points to, if
 * given) must live as long as the bucket. */
apr_bucket *h2_bucket_resp_create(apr_bucket_alloc_t *list, h2_hchunk_type type,
                                  int status, apr_table_t *fields,
                                  const h2_hfields *hf);

/* What the response filter needs to know of the stream its request came
 * on. The code that runs the stream (h2_c2.c) tells it, so that the
 * filter asks the secondary connection nothing. */
typedef struct h2_resp_stream {
    int websocket;              /* opened by an extended CONNECT */
    const char *push_scheme;    /* not NULL: the stream may push, and these */
    const char *push_authority; /*   are its request's scheme and authority */
} h2_resp_stream;

/* The H2_RESPONSE protocol output filter. */
apr_status_t h2_response_filter(ap_filter_t *f, apr_bucket_brigade *bb);

/* The filter's registration, for adding it without a lookup by name. */
extern ap_filter_rec_t *h2_response_filter_handle;

/* Worker: add the filter to r, a request of the stream st tells of (copied:
 * it need not outlive the call). */
void h2_response_add_filter(request_rec *r, const h2_resp_stream *st);

/* The fields of a 101 that accepted a WebSocket, made those of the 200
 * that accepts it on a stream (RFC 8441 5): no handshake fields. */
void h2_response_ws_accepted(apr_table_t *fields);

/* r's request note: its 103 Early Hints promised the paths of its
 * location already (h2_c2.c), the final response does not again. */
#define H2_NOTE_PUSHED_EARLY "h2-pushed-early"

/* The paths r's location pushes of itself, as stock: its H2PushResource
 * paths ("!path": critical) and those its H2EarlyHint Link fields ask to
 * preload (of scheme://authority); NULL when there are none. Worker. */
apr_array_header_t *h2_response_config_pushes(request_rec *r, const char *scheme,
                                              const char *authority);

/* The fields of r's 103 Early Hints, in r's pool: a preload Link for each
 * H2PushResource path, then the H2EarlyHint fields, the values of a name
 * joined with ", " into one field (as stock sends them); NULL when the
 * location has none. Worker. */
apr_table_t *h2_response_hint_fields(request_rec *r);

/* The fields of a PUSH item for paths ("!path": critical), in r's pool,
 * or NULL when there are none or the client's accept-push-policy says
 * "none"; announce (if not NULL) gets the push-policy field the client
 * asked for. Worker. */
apr_table_t *h2_response_push_fields(request_rec *r, const apr_array_header_t *paths,
                                     apr_table_t *announce);

/* Parse an HTTP/1.1 interim response as ap_send_interim_response() writes
 * it ("HTTP/1.1 103 ...\r\nName: value\r\n\r\n"), or the 2xx head a
 * tunnel's handler writes the same way (mod_proxy_connect). 1 on success. */
int h2_response_parse_interim(apr_pool_t *p, const char *text, apr_size_t len,
                              int *pstatus, apr_table_t **pfields);

#endif
